#include "config.h"

#include "lat_loop.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "conn.h"
#include "cycles.h"
#include "loop.h"
#include "util.h"

#define WRID_LAT 0x4c4154ull /* "LAT": our own data WRs */

/*
 * Spins between two clock reads in a wait: without a TSC clocksource (a VM
 * on HPET) clock_gettime is a system call that would slow every spin. At 256
 * a 64-byte READ on Soft-RoCE under TCG paid one every other sample (11%
 * over ib_read_lat's median); 4096 keeps the stall check within well under a
 * millisecond on hardware.
 */
#define SPINS_PER_CHECK 4096

struct lat {
	struct gdr_conn *c;
	const struct gdr_lat_cfg *cfg;
	uint64_t last_progress;
	unsigned int spins;
	int progressed; /* a message since the last clock read: last_progress moves then */
	struct gdr_pace pace;
	unsigned int outstanding; /* signaled WRs not yet completed */
	unsigned int send_flags;  /* IBV_SEND_SIGNALED, and IBV_SEND_INLINE when it fits */
	char *why;
	size_t wlen;
};

static const char *verb(const struct lat *l)
{
	return l->cfg->write ? "RDMA WRITE" : "RDMA READ";
}

/* The slow checks of every wait: stop, stall, peer gone (the clock every SPINS_PER_CHECK). */
static int check_alive(struct lat *l, const char *waiting_for)
{
	uint64_t now;

	if (l->cfg->stop && *l->cfg->stop) {
		snprintf(l->why, l->wlen, "interrupted");
		return -EINTR;
	}
	if (++l->spins < SPINS_PER_CHECK)
		return 0;
	l->spins = 0;
	now = gdr_now_ns();
	if (l->progressed) {
		l->progressed = 0;
		l->last_progress = now;
	}
	if (!gdr_pace_due(&l->pace, now))
		return 0;
	if (now - l->last_progress > (uint64_t)(l->cfg->stall_timeout * 1e9)) {
		snprintf(l->why, l->wlen, "latency: no %s for %g s (peer dead or link down?)",
			 waiting_for, l->cfg->stall_timeout);
		return -ETIMEDOUT;
	}
	if (l->cfg->conn && l->pace.ticks % 10 == 0 && gdr_conn_poll_cm(l->cfg->conn)) {
		snprintf(l->why, l->wlen, "peer disconnected during the latency run");
		return -ECONNRESET;
	}
	return 0;
}

/* Take our send completions; with block, until none is outstanding. */
static int reap_sends(struct lat *l, int block)
{
	struct ibv_wc wc[8];
	int n, r;

	while (l->outstanding) {
		n = ibv_poll_cq(l->c->data_cq, 8, wc);
		if (n < 0) {
			snprintf(l->why, l->wlen, "ibv_poll_cq failed");
			return -EIO;
		}
		for (int k = 0; k < n; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				snprintf(l->why, l->wlen,
					 "%s completion error: %s (vendor error 0x%x)%s", verb(l),
					 ibv_wc_status_str(wc[k].status), wc[k].vendor_err,
					 wc[k].status == IBV_WC_RETRY_EXC_ERR ||
						 wc[k].status == IBV_WC_WR_FLUSH_ERR
					     ? ": the peer is gone or unreachable"
					     : "");
				return -ECONNRESET;
			}
			if (wc[k].wr_id == WRID_LAT)
				l->outstanding--;
		}
		if (!block || !l->outstanding)
			return 0;
		if (n == 0 && (r = check_alive(l, "send completion")))
			return r;
	}
	return 0;
}

static int post(struct lat *l, uint32_t seq)
{
	const struct gdr_lat_cfg *cfg = l->cfg;
	struct ibv_sge sge = { .addr = cfg->laddr, .length = cfg->size, .lkey = cfg->lkey };
	struct ibv_send_wr wr = {
		.wr_id = WRID_LAT,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = !cfg->write ? IBV_WR_RDMA_READ
			  : cfg->imm  ? IBV_WR_RDMA_WRITE_WITH_IMM
				      : IBV_WR_RDMA_WRITE,
		.send_flags = l->send_flags,
		.imm_data = htonl(seq),
		.wr.rdma = { .remote_addr = cfg->raddr, .rkey = cfg->rkey },
	}, *bad;
	int r;

	/* A send queue of one message at a time: the previous one's completion first. */
	if ((r = reap_sends(l, 1)))
		return r;
	if (ibv_post_send(l->c->id[0]->qp, &wr, &bad)) {
		int e = errno ? errno : EIO;
		snprintf(l->why, l->wlen, "QP 0: ibv_post_send(%s): %s", verb(l), strerror(e));
		return -e;
	}
	l->outstanding++;
	return 0;
}

/* WRITE: until the peer's message seq (stamp) has arrived. */
static int wait_message(struct lat *l, uint32_t seq, uint8_t stamp)
{
	const struct gdr_lat_cfg *cfg = l->cfg;
	struct gdr_conn *c = l->c;
	struct ibv_wc wc;
	int n, r;

	for (;;) {
		if (!cfg->imm) {
			if (*cfg->dst_last == stamp)
				break;
		} else {
			/* One at a time: what follows the last message belongs to the session. */
			n = ibv_poll_cq(c->ctrl_cq, 1, &wc);
			if (n < 0) {
				snprintf(l->why, l->wlen, "ibv_poll_cq(receive) failed");
				return -EIO;
			}
			if (n == 1) {
				if (wc.status != IBV_WC_SUCCESS) {
					snprintf(l->why, l->wlen,
						 "latency: receive from %s failed: %s (peer gone?)",
						 c->peer, ibv_wc_status_str(wc.status));
					c->peer_gone = 1;
					return -ECONNRESET;
				}
				uint32_t got = ntohl(wc.imm_data);
				int is_imm = wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM;
				int rr = gdr_conn_repost(c, (unsigned int)wc.wr_id);
				if (rr) {
					snprintf(l->why, l->wlen, "%s: ibv_post_recv(control): %s",
						 c->nic, strerror(-rr));
					return rr;
				}
				if (!is_imm || got != seq) {
					snprintf(
					    l->why, l->wlen,
					    "latency: expected %s message %u from %s, got %s %u",
					    verb(l), seq, c->peer,
					    is_imm ? "message" : "a control message", got);
					return -EPROTO;
				}
				break;
			}
		}
		if ((r = reap_sends(l, 0)) || (r = check_alive(l, "message from the peer")))
			return r;
	}
	l->progressed = 1;
	return 0;
}

static int hook(struct lat *l, int (*fn)(void *), const char *what)
{
	int r = fn ? fn(l->cfg->hooks.ctx) : 0;

	if (r)
		snprintf(l->why, l->wlen, "latency: %s: %s", what, strerror(-r));
	return r;
}

static int write_initiator(struct lat *l, double *samples)
{
	const struct gdr_lat_cfg *cfg = l->cfg;
	uint8_t stamp = 0;
	int r;

	for (uint64_t i = 0; i < cfg->warmup + cfg->iters; i++) {
		uint64_t t0 = gdr_cycles();

		stamp = gdr_lat_stamp(stamp);
		if ((r = hook(l, cfg->hooks.before_send, "copy to the staging buffer")))
			return r;
		if (cfg->src_last)
			*cfg->src_last = stamp;
		if ((r = post(l, (uint32_t)i)) || (r = wait_message(l, (uint32_t)i, stamp)))
			return r;
		if ((r = hook(l, cfg->hooks.after_recv, "copy from the staging buffer")))
			return r;
		if (i >= cfg->warmup && samples)
			samples[i - cfg->warmup] =
			    (double)(gdr_cycles() - t0); /* scaled by the caller */
	}
	return reap_sends(l, 1);
}

static int write_responder(struct lat *l)
{
	const struct gdr_lat_cfg *cfg = l->cfg;
	uint8_t stamp = 0;
	int r;

	for (uint64_t i = 0; i < cfg->warmup + cfg->iters; i++) {
		stamp = gdr_lat_stamp(stamp);
		if ((r = wait_message(l, (uint32_t)i, stamp)) ||
		    (r = hook(l, cfg->hooks.after_recv, "copy from the staging buffer")) ||
		    (r = hook(l, cfg->hooks.before_send, "copy to the staging buffer")))
			return r;
		if (cfg->src_last)
			*cfg->src_last = stamp;
		if ((r = post(l, (uint32_t)i)))
			return r;
	}
	return reap_sends(l, 1);
}

static int read_initiator(struct lat *l, double *samples)
{
	const struct gdr_lat_cfg *cfg = l->cfg;
	int r;

	for (uint64_t i = 0; i < cfg->warmup + cfg->iters; i++) {
		uint64_t t0 = gdr_cycles();

		if ((r = post(l, (uint32_t)i)) || (r = reap_sends(l, 1)))
			return r;
		if ((r = hook(l, cfg->hooks.after_recv, "copy from the staging buffer")))
			return r;
		l->progressed = 1;
		if (i >= cfg->warmup && samples)
			samples[i - cfg->warmup] =
			    (double)(gdr_cycles() - t0); /* scaled by the caller */
	}
	return 0;
}

/*
 * perftest's choice (DEF_INLINE_WRITE, 220 bytes, for its WRITE latency; none
 * for GPU memory): a small WRITE from host memory travels inside the work
 * request, so the NIC (or rxe) does not fetch it from the MR first. Only
 * where the CPU may read the source: host memory, not a GPU path (imm).
 */
static unsigned int send_flags(const struct gdr_conn *c, const struct gdr_lat_cfg *cfg)
{
	unsigned int f = IBV_SEND_SIGNALED;

	if (cfg->write && !cfg->imm && !cfg->hooks.before_send && cfg->size <= c->max_inline)
		f |= IBV_SEND_INLINE;
	return f;
}

int gdr_lat_run(struct gdr_conn *c, const struct gdr_lat_cfg *cfg, double *samples_us, char *why,
		size_t wlen)
{
	struct lat l = { .c = c, .cfg = cfg, .why = why, .wlen = wlen };
	struct gdr_cyc_cal cal;
	int r;

	if (cfg->size == 0 || cfg->iters == 0 || (cfg->write && !cfg->imm && !cfg->dst_last) ||
	    (cfg->initiator && !samples_us)) {
		snprintf(why, wlen, "latency: bad parameters");
		return -EINVAL;
	}
	l.send_flags = send_flags(c, cfg);
	l.last_progress = gdr_now_ns();
	l.pace.next_ns = l.last_progress + GDR_PACE_NS;
	if (!cfg->initiator)
		return cfg->write ? write_responder(&l) : 0;
	gdr_cyc_begin(&cal);
	r = cfg->write ? write_initiator(&l, samples_us) : read_initiator(&l, samples_us);
	if (r)
		return r;
	{
		uint64_t c1 = gdr_cycles(), ns1 = gdr_now_ns();

		gdr_cyc_end(&cal, ns1, c1);
	}
	/* Cycles to microseconds; a WRITE sample is half its round trip. */
	double scale = cal.ns_per_cycle / (cfg->write ? 2e3 : 1e3);
	for (uint64_t i = 0; i < cfg->iters; i++)
		samples_us[i] *= scale;
	return 0;
}
