#include "config.h"

#include "loop.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "cycles.h"
#include "stats.h"
#include "util.h"

#define QP_SHIFT   48
#define COUNT_MASK ((1ull << QP_SHIFT) - 1)
#define POLL_BATCH 16
/*
 * Polls and posted messages between two reads of CLOCK_MONOTONIC. Posts
 * count too: on Soft-RoCE a post runs the transport inline in the system
 * call (milliseconds for a 64 KiB message under TCG), so 64 polls that each
 * refilled a window of 100 took tens of seconds, and -D 1 ran past the
 * peer's timeout.
 */
#define CLOCK_EVERY 64

struct qstate {
	uint64_t posted, done, target;
	int last_signaled;
	unsigned int unsignaled;   /* requests since the last signaled one */
	unsigned int lslot, rslot; /* --validate: the next message's slots */
	struct ibv_send_wr *wr;	   /* post_list requests, linked once */
	struct ibv_sge *sge;
};

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

int gdr_loop_signal(unsigned int *unsignaled, uint64_t posted, unsigned int k, uint64_t done,
		    uint64_t target, const struct gdr_loop_cfg *cfg)
{
	uint64_t end = posted + k;
	uint64_t room = cfg->tx_depth - (end - done);
	uint64_t next = min_u64(cfg->post_list, target - end);
	int sig = *unsignaled + k >= cfg->cq_mod || end == target ||
		  /* The window closes after this chain: only a completion can reopen it. */
		  room < next;

	*unsignaled = sig ? 0 : *unsignaled + k;
	return sig;
}

/* --validate: point the chain's requests at their own slots (counters, no division). */
static void place_chain(struct qstate *q, unsigned int k, const struct gdr_loop_qp *lq,
			const struct gdr_loop_cfg *cfg)
{
	for (unsigned int j = 0; j < k; j++) {
		q->sge[j].addr = lq->laddr + q->lslot * cfg->stride;
		q->wr[j].wr.rdma.remote_addr = lq->raddr + q->rslot * cfg->stride;
		if (++q->lslot >= lq->lslots)
			q->lslot = 0;
		if (++q->rslot >= lq->rslots)
			q->rslot = 0;
	}
}

static int post_chain(struct qstate *q, unsigned int qi, const struct gdr_loop_cfg *cfg,
		      const struct gdr_loop_qp *lq, char *why, size_t wlen)
{
	uint64_t need = min_u64(cfg->post_list, q->target - q->posted);
	uint64_t room = cfg->tx_depth - (q->posted - q->done);
	struct ibv_send_wr *bad, *last;
	unsigned int k = (unsigned int)need;
	int r = 0;

	if (need == 0 || room < need)
		return 0;
	if (lq->lslots > 1 || lq->rslots > 1)
		place_chain(q, k, lq, cfg);
	last = &q->wr[k - 1];
	/* The chain is linked once; a short last chain is cut here and mended below. */
	last->next = NULL;
	q->last_signaled = gdr_loop_signal(&q->unsignaled, q->posted, k, q->done, q->target, cfg);
	if (q->last_signaled) {
		last->send_flags = IBV_SEND_SIGNALED;
		last->wr_id = ((uint64_t)qi << QP_SHIFT) | (q->posted + k);
	}
	if (ibv_post_send(lq->qp, q->wr, &bad)) {
		int e = errno ? errno : EIO;
		snprintf(why, wlen, "QP %u: ibv_post_send: %s", qi, strerror(e));
		r = -e;
	} else {
		q->posted += k;
		r = 1;
	}
	last->send_flags = 0;
	if (k < cfg->post_list)
		last->next = last + 1;
	return r;
}

/* Duration mode, time is up: every QP ends at the same count, its last request signaled. */
static unsigned int close_duration(struct qstate *qs, unsigned int nqps)
{
	uint64_t end = 0;
	unsigned int finished = 0;

	for (unsigned int i = 0; i < nqps; i++)
		if (qs[i].posted > end)
			end = qs[i].posted;
	for (unsigned int i = 0; i < nqps; i++)
		if (qs[i].posted == end && !qs[i].last_signaled)
			end++;
	for (unsigned int i = 0; i < nqps; i++) {
		qs[i].target = end;
		if (qs[i].done == end)
			finished++;
	}
	return finished;
}

/*
 * -b: the run's time line (bidir.h) from the peak's observations, in
 * CLOCK_MONOTONIC nanoseconds; it starts at the run's start and ends at its
 * end, both read from that clock.
 */
static void timeline_from_peak(struct gdr_timeline *tl, const struct gdr_peak *p,
			       const struct gdr_cyc_cal *cal, uint32_t size, uint64_t start,
			       uint64_t end)
{
	memset(tl, 0, sizeof(*tl));
	gdr_timeline_add(tl, (int64_t)start, 0);
	for (unsigned int i = 1; i < p->n && p->pt[i].t_ns < p->last.t_ns; i++)
		gdr_timeline_add(tl, (int64_t)gdr_cyc_ns(cal, p->pt[i].t_ns), p->pt[i].done * size);
	gdr_timeline_add(tl, (int64_t)end, p->last.done * size);
}

/* Run until every QP has completed its target (or the clock says stop in duration mode). */
static int phase(struct ibv_cq *cq, const struct gdr_loop_qp *qps, unsigned int nqps,
		 struct qstate *qs, uint64_t per_qp, double duration,
		 const struct gdr_loop_cfg *cfg, struct gdr_loop_out *out, char *why, size_t wlen)
{
	struct ibv_wc wc[POLL_BATCH];
	struct gdr_cyc_cal cal;
	uint64_t start, last_progress, now;
	uint64_t total_done = 0, total_posted = 0, cqes = 0;
	uint64_t stall_ns = (uint64_t)(cfg->stall_timeout * 1e9);
	uint64_t end_ns;
	unsigned int finished = 0, unclocked = 0; /* polls and posts since the clock */
	int progressed = 0;
	struct gdr_pace pace;
	struct gdr_peak *peak = NULL;
	int r = 0;

	if (out) {
		peak = malloc(sizeof(*peak));
		if (!peak) {
			snprintf(why, wlen, "loop: out of memory");
			return -ENOMEM;
		}
		gdr_peak_init(peak, (uint64_t)GDR_PEAK_CQES_PER_QP * nqps);
	}
	gdr_cyc_begin(&cal);
	start = last_progress = cal.ns0;
	end_ns = duration > 0 ? start + (uint64_t)(duration * 1e9) : 0;
	pace.next_ns = start + GDR_PACE_NS;
	pace.ticks = 0;
	if (peak)
		gdr_peak_add(peak, cal.c0, 0, 0, 0);
	for (unsigned int i = 0; i < nqps; i++) {
		qs[i].posted = qs[i].done = 0;
		qs[i].target = duration > 0 ? UINT64_MAX : per_qp;
		qs[i].last_signaled = 1;
		qs[i].unsignaled = 0;
	}
	while (finished < nqps) {
		for (unsigned int i = 0; i < nqps; i++) {
			uint64_t before = qs[i].posted;

			/* The rest waits for the clock (below), a poll away. */
			while (unclocked < CLOCK_EVERY &&
			       (r = post_chain(&qs[i], i, cfg, &qps[i], why, wlen)) == 1)
				unclocked += cfg->post_list;
			total_posted += qs[i].posted - before;
			if (r < 0)
				goto out;
		}
		int n = ibv_poll_cq(cq, POLL_BATCH, wc);
		if (n < 0) {
			snprintf(why, wlen, "ibv_poll_cq failed");
			r = -EIO;
			goto out;
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
				r = -ECONNRESET;
				goto out;
			}
			if (wc[k].wr_id == GDR_WRID_CTRL || wc[k].wr_id == GDR_WRID_PROBE)
				continue;
			unsigned int qi = (unsigned int)(wc[k].wr_id >> QP_SHIFT);
			uint64_t cnt = wc[k].wr_id & COUNT_MASK;
			if (qi >= nqps || cnt <= qs[qi].done || cnt > qs[qi].posted) {
				snprintf(why, wlen, "unexpected completion (QP %u, count %llu)", qi,
					 (unsigned long long)cnt);
				r = -EPROTO;
				goto out;
			}
			total_done += cnt - qs[qi].done;
			qs[qi].done = cnt;
			cqes++;
			if (cnt == qs[qi].target)
				finished++;
		}
		/*
		 * A poll that found completions stamps them with the cycle counter
		 * (cycles.h); CLOCK_MONOTONIC is read every CLOCK_EVERY polls or
		 * posted messages only:
		 * the stall, duration and disconnect checks need only coarse time,
		 * and on a VM without a usable TSC clock_gettime is a system call
		 * that competes with the kernel's Soft-RoCE work (perftest's loop
		 * reads the cycle counter only).
		 */
		if (n > 0) {
			progressed = 1;
			if (peak)
				gdr_peak_add(peak, gdr_cycles(), total_posted, total_done, cqes);
		}
		if (++unclocked < CLOCK_EVERY) {
			if (cfg->stop && *cfg->stop) {
				snprintf(why, wlen, "interrupted");
				r = -EINTR;
				goto out;
			}
			continue;
		}
		unclocked = 0;
		now = gdr_now_ns();
		if (progressed) {
			progressed = 0;
			last_progress = now;
		}
		if (end_ns && now >= end_ns) {
			end_ns = 0;
			finished = close_duration(qs, nqps);
		}
		if (cfg->stop && *cfg->stop) {
			snprintf(why, wlen, "interrupted");
			r = -EINTR;
			goto out;
		}
		if (gdr_pace_due(&pace, now)) {
			if (now - last_progress > stall_ns) {
				snprintf(why, wlen,
					 "no completion for %g s (peer dead or link down?)",
					 cfg->stall_timeout);
				r = -ETIMEDOUT;
				goto out;
			}
			if (cfg->conn && pace.ticks % 10 == 0 && gdr_conn_poll_cm(cfg->conn)) {
				snprintf(why, wlen, "peer disconnected during the measurement");
				r = -ECONNRESET;
				goto out;
			}
		}
	}
	{
		uint64_t c_end = gdr_cycles();

		now = gdr_now_ns();
		gdr_cyc_end(&cal, now, c_end);
		r = 0;
		if (!out)
			goto out;
		gdr_peak_add(peak, c_end, total_posted, total_done, cqes);
	}
	out->elapsed_ns = now - start;
	out->msgs = total_done;
	out->iters = UINT64_MAX;
	for (unsigned int i = 0; i < nqps; i++)
		out->iters = min_u64(out->iters, qs[i].done);
	out->bytes = total_done * cfg->size;
	/* The peak's stamps are cycles: its rate per cycle, in time. */
	out->peak_bps = gdr_peak_rate(peak) * cfg->size / cal.ns_per_cycle;
	timeline_from_peak(&out->tl, peak, &cal, cfg->size, start, now);
out:
	free(peak);
	return r;
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
				.next = j + 1 < cfg->post_list ? &qs[i].wr[j + 1] : NULL,
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
