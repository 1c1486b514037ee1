/*
 * The bounce engine's I/O: drives the state machine of bounce_sm.c with
 * CUDA copies on one stream and verbs on QP 0 (see bounce.h for the
 * protocol). Sends complete on the connection's data CQ, receives (the
 * peer's WRITE_WITH_IMM, readies, credits) on its control CQ, in the
 * control message slots, each given back with gdr_conn_repost().
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <time.h>
#include <stdio.h>
#include <string.h>

#include "bounce.h"
#include "conn.h"
#include "loop.h"
#include "proto.h"
#include "util.h"

/* wr_id of bounce sends: a tag no other engine uses, the kind, the low sequence bits. */
#define WRID_TAG      (0xB0C0ull << 48)
#define WRID_TAG_MASK (0xFFFFull << 48)
#define WRID_CREDIT   (1ull << 47)
#define WRID_END      (1ull << 46)
#define WRID_SEQ_MASK ((1ull << 40) - 1)
#define POLL_BATCH    16
/* Idle this long, then sleep instead of spinning (far above a chunk's time on real hardware). */
#define IDLE_SPIN_NS  50000
#define IDLE_SLEEP_MS 1

struct run {
	const struct gdr_bounce_res *res;
	const struct gdr_bounce_cfg *cfg;
	struct gdr_bounce_sm sm;
	struct ibv_qp *qp;
	int armed; /* a completion on the control CQ will wake the channel */
	char *why;
	size_t wlen;
};

static const char *role(const struct run *r)
{
	return r->sm.producer ? "producer" : "consumer";
}

/* The driver's last error names the call ("cuEventQuery: CUDA_ERROR_...: ..."). */
static int cuda_fail(struct run *r, int e)
{
	snprintf(r->why, r->wlen, "bounce %s: %s", role(r), gdr_cuda_last_error(r->res->cuda));
	return e < 0 ? e : -EIO;
}

static int start_copies(struct run *r, int *progress)
{
	const struct gdr_bounce_res *res = r->res;
	uint64_t c, off, len;
	unsigned int slot;
	int e;

	/* No ring here (bounce on the peer only): the NIC moves the buffer itself. */
	while (!res->ring && gdr_bounce_sm_can_copy(&r->sm, &c)) {
		gdr_bounce_sm_did_copy(&r->sm);
		gdr_bounce_sm_copy_done(&r->sm);
		*progress = 1;
	}
	while (res->ring && gdr_bounce_sm_can_copy(&r->sm, &c)) {
		gdr_bounce_sm_span(&r->sm, c, &off, &len, &slot);
		size_t soff = (size_t)slot * r->cfg->chunk;
		uint8_t *staging = res->ring + soff;
		uint64_t gpu = res->dptr + r->cfg->gpu_off + off;
		uint64_t mapped = res->ring_dptr + soff;

		/* SM: the kernel stores into (loads from) the ring through its mapping. */
		if (res->kernel)
			e = gdr_cuda_copy_kernel_launch(
			    res->cuda, res->kernel, r->sm.producer ? mapped : gpu,
			    r->sm.producer ? gpu : mapped, len, res->blocks, res->stream);
		else if (r->sm.producer)
			e = gdr_cuda_dtoh_async(res->cuda, staging, gpu, len, res->stream);
		else
			e = gdr_cuda_htod_async(res->cuda, gpu, staging, len, res->stream);
		if (e)
			return cuda_fail(r, e);
		e = gdr_cuda_event_record(res->cuda, res->events[slot], res->stream);
		if (e)
			return cuda_fail(r, e);
		gdr_bounce_sm_did_copy(&r->sm);
		*progress = 1;
	}
	return 0;
}

/* One stream: copies finish in issue order, so only the oldest event needs asking. */
static int reap_copies(struct run *r, int *progress)
{
	while (r->sm.copy_done < r->sm.copy_issued) {
		unsigned int slot = (unsigned int)(r->sm.copy_done % r->sm.slots);
		int q = gdr_cuda_event_query(r->res->cuda, r->res->events[slot]);

		if (q < 0)
			return cuda_fail(r, q);
		if (q == 0)
			break;
		gdr_bounce_sm_copy_done(&r->sm);
		*progress = 1;
	}
	return 0;
}

static int post(struct run *r, struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad;

	wr->send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(r->qp, wr, &bad)) {
		int e = errno ? errno : EIO;
		snprintf(r->why, r->wlen, "bounce %s: ibv_post_send(%s): %s", role(r), what,
			 strerror(e));
		return -e;
	}
	return 0;
}

/* Where chunk c is on this side: its staging slot, or (no ring) its place in the buffer. */
static uint64_t local_addr(const struct run *r, uint64_t off, unsigned int slot)
{
	if (!r->res->ring)
		return r->res->dptr + r->cfg->gpu_off + off;
	return (uintptr_t)(r->res->ring + (size_t)slot * r->cfg->chunk);
}

/* And on the peer's: its slot, or (a passive peer) its place in the peer's buffer. */
static uint64_t remote_addr(const struct run *r, uint64_t off, unsigned int slot)
{
	return r->cfg->raddr + (r->cfg->peer_passive ? off : (uint64_t)slot * r->cfg->chunk);
}

static int start_sends(struct run *r, int *progress)
{
	const struct gdr_bounce_res *res = r->res;
	uint64_t c, off, len, v;
	unsigned int slot;
	int e;

	while (gdr_bounce_sm_can_post(&r->sm, &c)) {
		struct ibv_sge sge;
		struct ibv_send_wr wr = { .wr_id = WRID_TAG | (c & WRID_SEQ_MASK) };
		const char *what;

		gdr_bounce_sm_span(&r->sm, c, &off, &len, &slot);
		sge = (struct ibv_sge){ .addr = local_addr(r, off, slot),
					.length = (uint32_t)len,
					.lkey = res->lkey };
		if (r->sm.write || !r->sm.producer) {
			/* A passive peer takes no immediate: it consumes none of its receives. */
			wr.opcode = !r->sm.write	   ? IBV_WR_RDMA_READ
				    : r->cfg->peer_passive ? IBV_WR_RDMA_WRITE
							   : IBV_WR_RDMA_WRITE_WITH_IMM;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.wr.rdma.remote_addr = remote_addr(r, off, slot);
			wr.wr.rdma.rkey = r->cfg->rkey;
			what = r->sm.write ? "RDMA WRITE with immediate" : "RDMA READ";
		} else {
			wr.opcode = IBV_WR_SEND_WITH_IMM; /* ready: no payload */
			what = "ready notice";
		}
		wr.imm_data = htobe32((uint32_t)c);
		e = post(r, &wr, what);
		if (e)
			return e;
		gdr_bounce_sm_did_post(&r->sm);
		*progress = 1;
	}
	while (gdr_bounce_sm_can_credit(&r->sm, &v)) {
		struct ibv_send_wr wr = {
			.wr_id = WRID_TAG | WRID_CREDIT | (v & WRID_SEQ_MASK),
			.opcode = IBV_WR_SEND_WITH_IMM,
			.imm_data = htobe32((uint32_t)v),
		};

		e = post(r, &wr, "credit");
		if (e)
			return e;
		gdr_bounce_sm_did_credit(&r->sm, v);
		*progress = 1;
	}
	/*
	 * Duration mode's end notice (bounce.h): zero-length, the opcode this
	 * direction never uses otherwise. A zero-length RDMA WRITE touches no
	 * memory and needs no access right on the peer's buffer (IBTA C9-88).
	 */
	while (gdr_bounce_sm_can_end(&r->sm, &v)) {
		struct ibv_send_wr wr = {
			.wr_id = WRID_TAG | WRID_END | (v & WRID_SEQ_MASK),
			.opcode = r->sm.write ? IBV_WR_SEND_WITH_IMM : IBV_WR_RDMA_WRITE_WITH_IMM,
			.imm_data = htobe32((uint32_t)v),
		};

		if (!r->sm.write) {
			wr.wr.rdma.remote_addr = r->cfg->raddr;
			wr.wr.rdma.rkey = r->cfg->rkey;
		}
		e = post(r, &wr, "end notice");
		if (e)
			return e;
		gdr_bounce_sm_did_end(&r->sm);
		*progress = 1;
	}
	return 0;
}

static int reap_sends(struct run *r, int *progress)
{
	struct ibv_wc wc[POLL_BATCH];
	int n = ibv_poll_cq(r->cfg->conn->data_cq, POLL_BATCH, wc);

	if (n < 0) {
		snprintf(r->why, r->wlen, "bounce %s: ibv_poll_cq(send) failed", role(r));
		return -EIO;
	}
	for (int k = 0; k < n; k++) {
		int e;

		if (wc[k].status != IBV_WC_SUCCESS) {
			snprintf(r->why, r->wlen,
				 "bounce %s: send completion error: %s (vendor error 0x%x)%s",
				 role(r), ibv_wc_status_str(wc[k].status), wc[k].vendor_err,
				 wc[k].status == IBV_WC_RETRY_EXC_ERR ||
					 wc[k].status == IBV_WC_WR_FLUSH_ERR
				     ? ": the peer is gone or unreachable"
				     : "");
			return -ECONNRESET;
		}
		if ((wc[k].wr_id & WRID_TAG_MASK) != WRID_TAG) {
			if (wc[k].wr_id == GDR_WRID_CTRL || wc[k].wr_id == GDR_WRID_PROBE)
				continue; /* a control send that completed late */
			snprintf(r->why, r->wlen,
				 "bounce %s: foreign send completion (wr_id 0x%llx)", role(r),
				 (unsigned long long)wc[k].wr_id);
			return -EPROTO;
		}
		if (wc[k].wr_id & WRID_CREDIT) {
			e = gdr_bounce_sm_credit_done(&r->sm, r->why, r->wlen);
		} else if (wc[k].wr_id & WRID_END) {
			e = gdr_bounce_sm_end_done(&r->sm, r->why, r->wlen);
		} else if ((wc[k].wr_id & WRID_SEQ_MASK) != (r->sm.completed & WRID_SEQ_MASK)) {
			/* RC completes a QP's sends in order; anything else is a bug. */
			snprintf(r->why, r->wlen,
				 "bounce %s: send completion for chunk %llu, expected %llu",
				 role(r), (unsigned long long)(wc[k].wr_id & WRID_SEQ_MASK),
				 (unsigned long long)(r->sm.completed & WRID_SEQ_MASK));
			e = -EPROTO;
		} else {
			e = gdr_bounce_sm_post_done(&r->sm, r->why, r->wlen);
		}
		if (e)
			return e;
		*progress = 1;
	}
	return 0;
}

/* A control message in the middle of the run: the peer gave up, say why. */
static int control_message(struct run *r, const struct ibv_wc *wc)
{
	struct gdr_conn *c = r->cfg->conn;
	struct gdr_msg m;
	char mwhy[160];
	const uint8_t *buf = c->ctrl_buf + (size_t)(1 + wc->wr_id) * GDR_CTRL_MAX;

	if (gdr_msg_decode(buf, wc->byte_len, &m, mwhy, sizeof(mwhy))) {
		snprintf(r->why, r->wlen, "bounce %s: undecodable message from %s: %s", role(r),
			 c->peer, mwhy);
		return -EPROTO;
	}
	if (m.type == GDR_MSG_ERROR) {
		snprintf(r->why, r->wlen, "%s: %s", c->peer, m.u.error.text);
		return m.u.error.code ? m.u.error.code : -EIO;
	}
	if (m.type == GDR_MSG_DONE && m.u.meas.status) {
		snprintf(r->why, r->wlen, "client %s: %s", c->peer, m.u.meas.text);
		return m.u.meas.status;
	}
	snprintf(r->why, r->wlen, "bounce %s: protocol error: %s from %s during the run", role(r),
		 gdr_msg_type_name(m.type), c->peer);
	return -EPROTO;
}

static int on_receive(struct run *r, const struct ibv_wc *wc)
{
	uint32_t imm = be32toh(wc->imm_data);

	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		if (r->sm.write && !r->sm.producer)
			return gdr_bounce_sm_announce(&r->sm, imm, r->why, r->wlen);
		if (!r->sm.write) /* READ: the end notice, or the producer's answer to ours */
			return gdr_bounce_sm_peer_end(&r->sm, imm, r->why, r->wlen);
		snprintf(r->why, r->wlen,
			 "bounce %s: protocol error: unexpected RDMA WRITE with immediate",
			 role(r));
		return -EPROTO;
	}
	if (wc->opcode != IBV_WC_RECV) {
		snprintf(r->why, r->wlen, "bounce %s: unexpected receive opcode %d", role(r),
			 (int)wc->opcode);
		return -EPROTO;
	}
	if (!(wc->wc_flags & IBV_WC_WITH_IMM))
		return control_message(r, wc);
	if (wc->byte_len != 0) {
		snprintf(
		    r->why, r->wlen,
		    "bounce %s: protocol error: unexpected SEND with immediate (%u B, imm %" PRIu32
		    ")",
		    role(r), wc->byte_len, imm);
		return -EPROTO;
	}
	if (r->sm.write && !r->sm.producer) /* WRITE: the producer's end notice */
		return gdr_bounce_sm_peer_end(&r->sm, imm, r->why, r->wlen);
	if (r->sm.producer)
		return gdr_bounce_sm_credit(&r->sm, imm, r->why, r->wlen);
	return gdr_bounce_sm_announce(&r->sm, imm, r->why, r->wlen);
}

static int reap_receives(struct run *r, int *progress)
{
	struct gdr_conn *c = r->cfg->conn;
	struct ibv_wc wc[POLL_BATCH];
	int want, n;

	/*
	 * Never take more receives than the run can still bring: what follows
	 * them (DONE, the next START's ACK) belongs to the session. A consumer
	 * expects one per chunk, a producer at least one credit.
	 */
	want = (int)gdr_bounce_sm_receives(&r->sm, POLL_BATCH);
	if (!want)
		return 0;
	n = ibv_poll_cq(c->ctrl_cq, want, wc);
	if (n < 0) {
		snprintf(r->why, r->wlen, "bounce %s: ibv_poll_cq(receive) failed", role(r));
		return -EIO;
	}
	for (int k = 0; k < n; k++) {
		int e;

		if (wc[k].status != IBV_WC_SUCCESS) {
			snprintf(r->why, r->wlen,
				 "bounce %s: receive from %s failed: %s (peer gone?)", role(r),
				 c->peer, ibv_wc_status_str(wc[k].status));
			c->peer_gone = 1;
			return -ECONNRESET;
		}
		if (wc[k].wr_id >= GDR_CTRL_SLOTS + c->extra_recv) {
			snprintf(r->why, r->wlen,
				 "bounce %s: receive completion for unknown slot %llu", role(r),
				 (unsigned long long)wc[k].wr_id);
			return -EPROTO;
		}
		e = on_receive(r, &wc[k]);
		int rr = gdr_conn_repost(c, (unsigned int)wc[k].wr_id);
		if (e)
			return e;
		if (rr) {
			snprintf(r->why, r->wlen, "%s: ibv_post_recv(control): %s", c->nic,
				 strerror(-rr));
			return rr;
		}
		*progress = 1;
	}
	return 0;
}

/*
 * Nothing to do for a while: sleep rather than spin, so that the driver's
 * copy threads (and, in a VM, the emulated NIC) get the CPU. With a copy in
 * flight, sleep on it (the pipeline needs it next anyway). With receives
 * expected, sleep on the control CQ's channel (armed first, then polled
 * once more, so no completion slips in between), at most IDLE_SLEEP_MS since
 * send completions do not wake it. Else (only sends in flight) a short nap.
 */
static int idle_wait(struct run *r)
{
	struct gdr_conn *c = r->cfg->conn;

	if (r->sm.copy_done < r->sm.copy_issued) {
		unsigned int slot = (unsigned int)(r->sm.copy_done % r->sm.slots);
		int e = gdr_cuda_event_sync(r->res->cuda, r->res->events[slot]);

		return e ? cuda_fail(r, e) : 0;
	}
	if (gdr_bounce_sm_receives(&r->sm, 1) && c->ctrl_ch) {
		struct pollfd pfd = { .fd = c->ctrl_ch->fd, .events = POLLIN };
		struct ibv_cq *cq;
		void *ctx;

		if (!r->armed) {
			if (ibv_req_notify_cq(c->ctrl_cq, 0)) {
				snprintf(r->why, r->wlen, "%s: ibv_req_notify_cq failed", c->nic);
				return -EIO;
			}
			r->armed = 1;
			return 0;
		}
		if (poll(&pfd, 1, IDLE_SLEEP_MS) > 0 &&
		    ibv_get_cq_event(c->ctrl_ch, &cq, &ctx) == 0) {
			c->ctrl_events++;
			r->armed = 0;
		}
		return 0;
	}
	struct timespec ts = { .tv_nsec = 20000 };
	nanosleep(&ts, NULL);
	return 0;
}

static void describe_state(const struct run *r, char *buf, size_t len)
{
	const struct gdr_bounce_sm *sm = &r->sm;
	uint64_t f = sm->first;
	char total[32] = "open-ended: "; /* duration mode, end not known yet */

	if (!sm->open)
		snprintf(total, sizeof(total), "%" PRIu64 " chunks: ", sm->total - f);
	snprintf(buf, len,
		 "%scopied %" PRIu64 "/%" PRIu64 ", posted %" PRIu64 ", completed %" PRIu64
		 ", %s %" PRIu64 ", credited %" PRIu64,
		 total, sm->copy_done - f, sm->copy_issued - f, sm->posted - f, sm->completed - f,
		 sm->producer ? "credits" : "announced", sm->peer - f, sm->credited - f);
}

int gdr_bounce_run(const struct gdr_bounce_res *res, const struct gdr_bounce_cfg *cfg,
		   struct gdr_loop_out *out, char *why, size_t wlen)
{
	struct run r = { .res = res, .cfg = cfg, .why = why, .wlen = wlen };
	uint64_t start = 0, end = 0, now, last_progress, timed;
	uint64_t stall_ns = (uint64_t)(cfg->stall_timeout * 1e9);
	uint64_t idle_since = 0;
	double cpu0 = gdr_cpu_seconds();
	int e;

	memset(out, 0, sizeof(*out));
	if (!cfg->conn || !cfg->conn->id[0] || !cfg->conn->id[0]->qp) {
		snprintf(why, wlen, "bounce: no connection");
		return -EINVAL;
	}
	r.qp = cfg->conn->id[0]->qp;
	if (cfg->peer_passive && (!cfg->peer_direct || cfg->rlen < cfg->size)) {
		snprintf(why, wlen,
			 "bounce: the peer's buffer has %" PRIu64 " B, a %" PRIu64
			 " B message needed",
			 cfg->rlen, cfg->size);
		return -EPROTO;
	}
	if (!cfg->peer_direct && cfg->rlen < (uint64_t)res->slots * res->chunk) {
		snprintf(why, wlen,
			 "bounce: the peer's staging ring has %" PRIu64 " B, %u x %zu needed",
			 cfg->rlen, res->slots, res->chunk);
		return -EPROTO;
	}
	if (cfg->chunk == 0 || cfg->chunk > res->chunk) {
		snprintf(why, wlen, "bounce: chunk %" PRIu64 " B does not fit a %zu B staging slot",
			 cfg->chunk, res->chunk);
		return -EINVAL;
	}
	if (gdr_bounce_sm_init(&r.sm, cfg->write, cfg->producer, cfg->size, cfg->chunk, res->slots,
			       cfg->tx_depth, 0, cfg->warmup, cfg->iters)) {
		snprintf(why, wlen,
			 "bounce: bad parameters (size %" PRIu64 ", %" PRIu64 " messages)",
			 cfg->size, cfg->iters);
		return -EINVAL;
	}
	if (cfg->peer_passive)
		gdr_bounce_sm_passive_peer(&r.sm);
	uint64_t dur_ns = cfg->duration > 0 ? (uint64_t)(cfg->duration * 1e9) : 0;
	if (dur_ns && gdr_bounce_sm_open(&r.sm)) {
		snprintf(why, wlen, "bounce: cannot open a duration-mode run");
		return -EINVAL;
	}
	now = last_progress = gdr_now_ns();
	struct gdr_pace pace = { .next_ns = now + GDR_PACE_NS };
	for (unsigned long spin = 0; !gdr_bounce_sm_finished(&r.sm); spin++) {
		int progress = 0;

		if ((e = reap_copies(&r, &progress)) || (e = reap_sends(&r, &progress)) ||
		    (e = reap_receives(&r, &progress)))
			return e;
		/* The clock starts before the first timed chunk can. */
		if (!start && gdr_bounce_sm_timed_started(&r.sm))
			start = gdr_now_ns();
		if ((e = start_copies(&r, &progress)) || (e = start_sends(&r, &progress)))
			return e;
		now = gdr_now_ns();
		if (progress) {
			last_progress = now;
			idle_since = 0;
		} else if (!idle_since) {
			idle_since = gdr_now_ns();
		} else if ((spin & 15) == 0 && gdr_now_ns() - idle_since > IDLE_SPIN_NS) {
			if ((e = idle_wait(&r)))
				return e;
			now = gdr_now_ns();
		}
		/* The timed side (the client) ends the run at the next message boundary. */
		if (dur_ns && start && r.sm.open && cfg->timed && now - start >= dur_ns)
			(void)gdr_bounce_sm_close(&r.sm);
		if (start && !end && gdr_bounce_sm_delivered(&r.sm) == r.sm.total)
			end = now;
		if (cfg->stop && *cfg->stop) {
			snprintf(why, wlen, "interrupted");
			return -EINTR;
		}
		if (gdr_pace_due(&pace, now)) {
			if (now - last_progress > stall_ns) {
				char st[200];

				describe_state(&r, st, sizeof(st));
				snprintf(why, wlen, "bounce %s: no progress for %g s (%s)",
					 role(&r), cfg->stall_timeout, st);
				return -ETIMEDOUT;
			}
			if (pace.ticks % 10 == 0 && gdr_conn_poll_cm(cfg->conn)) {
				snprintf(why, wlen, "peer disconnected during the bounce run");
				return -ECONNRESET;
			}
		}
	}
	if (!end)
		end = gdr_now_ns();
	timed = r.sm.total - r.sm.barrier;
	out->iters = timed / r.sm.cpm;
	out->msgs = out->iters;
	out->bytes = out->iters * cfg->size;
	out->elapsed_ns = end - start;
	if (out->elapsed_ns)
		out->cpu_pct = (gdr_cpu_seconds() - cpu0) * 1e11 / out->elapsed_ns;
	return 0;
}
