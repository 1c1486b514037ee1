#include "config.h"

#include "loop.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "util.h"

#define QP_SHIFT   48
#define COUNT_MASK ((1ull << QP_SHIFT) - 1)
#define POLL_BATCH 16

struct qstate {
	uint64_t posted, done, target;
	int last_signaled;
	struct ibv_send_wr *wr;
	struct ibv_sge *sge;
};

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

int gdr_loop_signal(uint64_t posted, unsigned int k, uint64_t done, uint64_t target,
		    const struct gdr_loop_cfg *cfg)
{
	uint64_t end = posted + k;
	uint64_t room = cfg->tx_depth - (end - done);
	uint64_t next = min_u64(cfg->post_list, target - end);

	if (end / cfg->cq_mod != posted / cfg->cq_mod)
		return 1;
	if (end == target)
		return 1;
	/* The window closes after this chain: only a completion can reopen it. */
	return room < next;
}

static int post_chain(struct qstate *q, unsigned int qi, const struct gdr_loop_cfg *cfg,
		      struct ibv_qp *qp, char *why, size_t wlen)
{
	uint64_t need = min_u64(cfg->post_list, q->target - q->posted);
	uint64_t room = cfg->tx_depth - (q->posted - q->done);
	struct ibv_send_wr *bad;
	unsigned int k = (unsigned int)need;

	if (need == 0 || room < need)
		return 0;
	for (unsigned int j = 0; j < k; j++) {
		q->wr[j].next = j + 1 < k ? &q->wr[j + 1] : NULL;
		q->wr[j].send_flags = 0;
	}
	q->last_signaled = gdr_loop_signal(q->posted, k, q->done, q->target, cfg);
	if (q->last_signaled) {
		q->wr[k - 1].send_flags = IBV_SEND_SIGNALED;
		q->wr[k - 1].wr_id = ((uint64_t)qi << QP_SHIFT) | (q->posted + k);
	}
	if (ibv_post_send(qp, q->wr, &bad)) {
		int e = errno ? errno : EIO;
		snprintf(why, wlen, "QP %u: ibv_post_send: %s", qi, strerror(e));
		return -e;
	}
	q->posted += k;
	return 1;
}

/* Run until every QP has completed its target (or the clock says stop in duration mode). */
static int phase(struct ibv_cq *cq, const struct gdr_loop_qp *qps, unsigned int nqps,
		 struct qstate *qs, uint64_t per_qp, double duration,
		 const struct gdr_loop_cfg *cfg, struct gdr_loop_out *out, char *why, size_t wlen)
{
	struct ibv_wc wc[POLL_BATCH];
	uint64_t start = gdr_now_ns(), last_progress = start, now;
	uint64_t seg_t[GDR_LOOP_SEGMENTS + 1], seg_d[GDR_LOOP_SEGMENTS + 1];
	uint64_t total_target = per_qp * nqps, total_done = 0;
	uint64_t stall_ns = (uint64_t)(cfg->stall_timeout * 1e9);
	uint64_t end_ns = duration > 0 ? start + (uint64_t)(duration * 1e9) : 0;
	unsigned int seg = 1, finished = 0;
	struct gdr_pace pace = { .next_ns = start + GDR_PACE_NS };
	int r;

	seg_t[0] = start;
	seg_d[0] = 0;
	for (unsigned int i = 0; i < nqps; i++) {
		qs[i].posted = qs[i].done = 0;
		qs[i].target = duration > 0 ? UINT64_MAX : per_qp;
		qs[i].last_signaled = 1;
	}
	while (finished < nqps) {
		for (unsigned int i = 0; i < nqps; i++) {
			while ((r = post_chain(&qs[i], i, cfg, qps[i].qp, why, wlen)) == 1)
				;
			if (r < 0)
				return r;
		}
		int n = ibv_poll_cq(cq, POLL_BATCH, wc);
		if (n < 0) {
			snprintf(why, wlen, "ibv_poll_cq failed");
			return -EIO;
		}
		for (int k = 0; k < n; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				snprintf(why, wlen, "%s completion error: %s (vendor error 0x%x)%s",
					 cfg->opcode == IBV_WR_RDMA_READ ? "RDMA READ"
									 : "RDMA WRITE",
					 ibv_wc_status_str(wc[k].status), wc[k].vendor_err,
					 wc[k].status == IBV_WC_RETRY_EXC_ERR ||
						 wc[k].status == IBV_WC_WR_FLUSH_ERR
					     ? ": the peer is gone or unreachable"
					     : "");
				return -ECONNRESET;
			}
			if (wc[k].wr_id == GDR_WRID_CTRL || wc[k].wr_id == GDR_WRID_PROBE)
				continue;
			unsigned int qi = (unsigned int)(wc[k].wr_id >> QP_SHIFT);
			uint64_t cnt = wc[k].wr_id & COUNT_MASK;
			if (qi >= nqps || cnt <= qs[qi].done || cnt > qs[qi].posted) {
				snprintf(why, wlen, "unexpected completion (QP %u, count %llu)", qi,
					 (unsigned long long)cnt);
				return -EPROTO;
			}
			total_done += cnt - qs[qi].done;
			qs[qi].done = cnt;
			if (cnt == qs[qi].target)
				finished++;
		}
		now = gdr_now_ns();
		if (n > 0)
			last_progress = now;
		if (n > 0 && seg <= GDR_LOOP_SEGMENTS && !end_ns &&
		    total_done * GDR_LOOP_SEGMENTS >= total_target * seg) {
			seg_t[seg] = now;
			seg_d[seg] = total_done;
			seg++;
		}
		if (end_ns && seg <= GDR_LOOP_SEGMENTS &&
		    now >= start + (end_ns - start) * seg / GDR_LOOP_SEGMENTS) {
			seg_t[seg] = now;
			seg_d[seg] = total_done;
			seg++;
		}
		if (end_ns && now >= end_ns) {
			/* Time is up: finish with one signaled request per QP if needed. */
			end_ns = 0;
			finished = 0;
			for (unsigned int i = 0; i < nqps; i++) {
				qs[i].target = qs[i].posted + (qs[i].last_signaled ? 0 : 1);
				if (qs[i].done == qs[i].target)
					finished++;
			}
		}
		if (cfg->stop && *cfg->stop) {
			snprintf(why, wlen, "interrupted");
			return -EINTR;
		}
		if (gdr_pace_due(&pace, now)) {
			if (now - last_progress > stall_ns) {
				snprintf(why, wlen,
					 "no completion for %g s (peer dead or link down?)",
					 cfg->stall_timeout);
				return -ETIMEDOUT;
			}
			if (cfg->conn && pace.ticks % 10 == 0 && gdr_conn_poll_cm(cfg->conn)) {
				snprintf(why, wlen, "peer disconnected during the measurement");
				return -ECONNRESET;
			}
		}
	}
	now = gdr_now_ns();
	if (!out)
		return 0;
	out->elapsed_ns = now - start;
	out->msgs = total_done;
	out->iters = UINT64_MAX;
	for (unsigned int i = 0; i < nqps; i++)
		out->iters = min_u64(out->iters, qs[i].done);
	out->bytes = total_done * cfg->size;
	out->peak_bps = 0;
	if (seg <= GDR_LOOP_SEGMENTS) {
		seg_t[seg] = now;
		seg_d[seg] = total_done;
		seg++;
	}
	for (unsigned int s = 1; s < seg; s++) {
		uint64_t dt = seg_t[s] - seg_t[s - 1];
		if (dt > 0 && seg_d[s] > seg_d[s - 1]) {
			double bps = (double)(seg_d[s] - seg_d[s - 1]) * cfg->size * 1e9 / dt;
			if (bps > out->peak_bps)
				out->peak_bps = bps;
		}
	}
	return 0;
}

int gdr_loop_run(struct ibv_cq *cq, const struct gdr_loop_qp *qps, unsigned int nqps,
		 const struct gdr_loop_cfg *cfg, struct gdr_loop_out *out, char *why, size_t wlen)
{
	struct qstate *qs;
	int r = -ENOMEM;

	if (nqps == 0 || cfg->post_list == 0 || cfg->post_list > cfg->tx_depth ||
	    cfg->cq_mod == 0 || cfg->cq_mod > cfg->tx_depth) {
		snprintf(why, wlen, "loop: bad parameters");
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	qs = calloc(nqps, sizeof(*qs));
	if (!qs)
		goto out;
	for (unsigned int i = 0; i < nqps; i++) {
		qs[i].wr = calloc(cfg->post_list, sizeof(*qs[i].wr));
		qs[i].sge = calloc(cfg->post_list, sizeof(*qs[i].sge));
		if (!qs[i].wr || !qs[i].sge)
			goto out_free;
		for (unsigned int j = 0; j < cfg->post_list; j++) {
			qs[i].sge[j] = (struct ibv_sge){ .addr = qps[i].laddr,
							 .length = cfg->size,
							 .lkey = qps[i].lkey };
			qs[i].wr[j] = (struct ibv_send_wr){
				.sg_list = &qs[i].sge[j],
				.num_sge = 1,
				.opcode = cfg->opcode,
				.wr.rdma = { .remote_addr = qps[i].raddr, .rkey = qps[i].rkey },
			};
		}
	}
	if (cfg->warmup) {
		r = phase(cq, qps, nqps, qs, cfg->warmup, 0, cfg, NULL, why, wlen);
		if (r)
			goto out_free;
	}
	double cpu0 = gdr_cpu_seconds();
	r = phase(cq, qps, nqps, qs, cfg->iters, cfg->duration, cfg, out, why, wlen);
	if (!r && out->elapsed_ns)
		out->cpu_pct = (gdr_cpu_seconds() - cpu0) * 1e11 / out->elapsed_ns;
out_free:
	for (unsigned int i = 0; i < nqps; i++) {
		free(qs[i].wr);
		free(qs[i].sge);
	}
	free(qs);
out:
	if (r == -ENOMEM)
		snprintf(why, wlen, "loop: out of memory");
	return r;
}
