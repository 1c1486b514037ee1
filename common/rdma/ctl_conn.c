/* The control channel over the connection: SEND/RECV of proto messages on QP 0. */
#include "config.h"

#include "conn_int.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctl.h"
#include "util.h"

int gdr_conn_repost(struct gdr_conn *c, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)gdr_conn_slot(c, slot),
		.length = GDR_CTRL_MAX,
		.lkey = c->ctrl_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(c->id[0]->qp, &wr, &bad) ? -errno : 0;
}

/*
 * Our send neither completed nor failed in time, or failed: if the peer's
 * ERROR came in meanwhile, the peer's reason is the one to give. Seen under
 * load on Soft-RoCE: a server refused a PLAN, said why and closed, and the
 * acknowledgement of the PLAN never reached the client, whose send then hung
 * until --timeout (rxe retries it forever: conn.c). Only on the way out:
 * while a send is still in flight, what the receive CQ holds belongs to
 * whoever reads next (a bounce or latency loop takes its own receives from
 * it). Returns 0 when no ERROR was there.
 */
static int peer_error_instead(struct gdr_conn *c, const struct gdr_msg *sent, char *why,
			      size_t wlen)
{
	struct ibv_wc wc;
	struct gdr_msg m;
	char mwhy[128];

	while (ibv_poll_cq(c->ctrl_cq, 1, &wc) == 1) {
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id >= gdr_conn_slots(c) ||
		    wc.opcode != IBV_WC_RECV || (wc.wc_flags & IBV_WC_WITH_IMM))
			continue;
		if (gdr_msg_decode(gdr_conn_slot(c, wc.wr_id), wc.byte_len, &m, mwhy,
				   sizeof(mwhy)) ||
		    m.type != GDR_MSG_ERROR)
			continue;
		snprintf(why, wlen, "%s: %s (its answer to our %s came; our send did not complete)",
			 c->peer, m.u.error.text, gdr_msg_type_name(sent->type));
		return m.u.error.code < 0 ? m.u.error.code : -EIO;
	}
	return 0;
}

/*
 * The peer disconnected while our send had no completion. rxe retries an
 * unacknowledged send forever (conn.c), and a peer that is gone acknowledges
 * nothing, so the completion may never come: seen once under load on
 * Soft-RoCE, where the server took the client's BYE and closed, and the BYE
 * never completed (its acknowledgement lost, most likely); the client then
 * waited for --timeout and failed a run that was complete. A BYE is the last word of a finished plan (every RESULT is in) and
 * the server disconnects only after it, or when it gives up, and then it says
 * why first: with no ERROR from the peer, a BYE counts as delivered. Any
 * other message is not: the peer will not answer it. Returns 0 (delivered)
 * or < 0 with why set.
 */
static int peer_left(struct gdr_conn *c, const struct gdr_msg *sent, char *why, size_t wlen)
{
	int pe = peer_error_instead(c, sent, why, wlen);

	if (pe)
		return pe;
	if (sent->type == GDR_MSG_BYE) {
		gdr_dbg("%s: %s disconnected before our BYE completed; every result is in: done",
			c->nic, c->peer);
		return 0;
	}
	snprintf(why, wlen, "peer %s disconnected before our %s completed", c->peer,
		 gdr_msg_type_name(sent->type));
	return -ECONNRESET;
}

int gdr_ctrl_send(struct gdr_conn *c, const struct gdr_msg *m, char *why, size_t wlen)
{
	struct ibv_sge sge = { .addr = (uintptr_t)c->ctrl_buf, .lkey = c->ctrl_mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = GDR_WRID_CTRL,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	double deadline = gdr_now_s() + c->timeout;
	int n, gone = 0;

	n = gdr_msg_encode(m, c->ctrl_buf, GDR_CTRL_MAX);
	if (n < 0) {
		snprintf(why, wlen, "cannot encode %s: %s", gdr_msg_type_name(m->type),
			 strerror(-n));
		return n;
	}
	sge.length = (uint32_t)n;
	if (ibv_post_send(c->id[0]->qp, &wr, &bad)) {
		int e = errno;
		snprintf(why, wlen, "%s: ibv_post_send(%s): %s", c->nic, gdr_msg_type_name(m->type),
			 strerror(e));
		return -e;
	}
	for (unsigned long spins = 0;; spins++) {
		n = ibv_poll_cq(c->data_cq, 1, &wc);
		if (n < 0) {
			snprintf(why, wlen, "%s: ibv_poll_cq failed", c->nic);
			return -EIO;
		}
		if (n == 1) {
			if (wc.status != IBV_WC_SUCCESS) {
				int pe = peer_error_instead(c, m, why, wlen);

				if (pe)
					return pe;
				snprintf(why, wlen, "sending %s to %s failed: %s (peer gone?)",
					 gdr_msg_type_name(m->type), c->peer,
					 ibv_wc_status_str(wc.status));
				return -ECONNRESET;
			}
			if (wc.wr_id == GDR_WRID_CTRL)
				return 0;
			continue; /* a late data completion: already accounted for */
		}
		if ((spins & 1023) == 1023) {
			/*
			 * A disconnect is acted on after one more round of polls:
			 * our completion may have been queued just before it.
			 */
			if (gone)
				return peer_left(c, m, why, wlen);
			gone = gdr_conn_poll_cm(c) != 0;
			if (gdr_now_s() > deadline) {
				int pe = peer_error_instead(c, m, why, wlen);

				if (pe)
					return pe;
				snprintf(why, wlen, "sending %s to %s: no completion within %g s",
					 gdr_msg_type_name(m->type), c->peer, c->timeout);
				return -ETIMEDOUT;
			}
			if (gdr_conn_stopped(c)) {
				snprintf(why, wlen, "interrupted");
				return -EINTR;
			}
			struct timespec ts = { .tv_nsec = 20000 };
			nanosleep(&ts, NULL);
		}
	}
}

void gdr_ctrl_send_error(struct gdr_conn *c, int code, const char *text)
{
	struct gdr_msg m = { .type = GDR_MSG_ERROR };
	char why[128];
	double saved = c->timeout;

	if (!c->id[0] || !c->ctrl_mr || c->peer_gone)
		return;
	m.u.error.code = code < 0 && code > -4096 ? code : -EIO;
	gdr_strlcpy(m.u.error.text, text, sizeof(m.u.error.text));
	c->timeout = saved < 2 ? saved : 2;
	gdr_ctrl_send(c, &m, why, sizeof(why));
	c->timeout = saved;
}

int gdr_ctrl_recv(struct gdr_conn *c, struct gdr_msg *m, double timeout, char *why, size_t wlen)
{
	double deadline = gdr_now_s() + timeout;
	double next_probe = gdr_now_s() + GDR_PROBE_S;
	struct ibv_wc wc;
	int n, r, armed = 0, last_look = 0;

	for (;;) {
		n = ibv_poll_cq(c->ctrl_cq, 1, &wc);
		if (n < 0) {
			snprintf(why, wlen, "%s: ibv_poll_cq(control) failed", c->nic);
			return -EIO;
		}
		if (n == 1) {
			if (wc.status != IBV_WC_SUCCESS) {
				snprintf(why, wlen, "control channel to %s failed: %s (peer gone?)",
					 c->peer, ibv_wc_status_str(wc.status));
				c->peer_gone = 1;
				return -ECONNRESET;
			}
			if (wc.wr_id >= gdr_conn_slots(c) || wc.opcode != IBV_WC_RECV ||
			    (wc.wc_flags & IBV_WC_WITH_IMM)) {
				snprintf(why, wlen,
					 "unexpected receive completion (slot %llu, opcode %d) "
					 "while waiting for a control message",
					 (unsigned long long)wc.wr_id, (int)wc.opcode);
				return -EPROTO;
			}
			r = gdr_msg_decode(gdr_conn_slot(c, wc.wr_id), wc.byte_len, m, why, wlen);
			int rr = gdr_conn_repost(c, (unsigned int)wc.wr_id);
			/*
			 * The peer just spoke: a probe still in flight is forgotten
			 * (whoever polls the data CQ next drops its completion).
			 */
			c->probing = 0;
			if (r)
				return r;
			if (rr) {
				snprintf(why, wlen, "%s: ibv_post_recv(control): %s", c->nic,
					 strerror(-rr));
				return rr;
			}
			return 0;
		}
		if (!armed) {
			/* Arm, then poll again: a completion may have raced the arming. */
			if (ibv_req_notify_cq(c->ctrl_cq, 0)) {
				snprintf(why, wlen, "%s: ibv_req_notify_cq failed", c->nic);
				return -EIO;
			}
			armed = 1;
			continue;
		}
		if (gdr_conn_poll_cm(c)) {
			/*
			 * A peer sends its last message (BYE), sees it complete and
			 * disconnects: both can happen between our empty poll above
			 * and this look at the CM channel. Its message is on the CQ
			 * before the disconnect (and before the flushed receives):
			 * look once more before calling it gone.
			 */
			if (!last_look) {
				last_look = 1;
				continue;
			}
			snprintf(why, wlen, "peer %s disconnected", c->peer);
			return -ECONNRESET;
		}
		if (gdr_conn_stopped(c)) {
			snprintf(why, wlen, "interrupted");
			return -EINTR;
		}
		r = c->probe || c->probing ? gdr_probe_reap(c, why, wlen) : 0;
		if (r)
			return r;
		if (c->probe && !c->probing && gdr_now_s() >= next_probe) {
			r = gdr_probe_post(c);
			if (r)
				gdr_dbg("%s: liveness probe: ibv_post_send: %s", c->nic,
					strerror(-r));
			next_probe = gdr_now_s() + GDR_PROBE_S;
		}
		double left = gdr_conn_remaining(deadline);
		if (left <= 0) {
			snprintf(why, wlen, "no message from %s within %g s (peer dead or stuck?)",
				 c->peer, timeout);
			return -ETIMEDOUT;
		}
		struct pollfd pfd[2] = {
			{ .fd = c->ctrl_ch->fd, .events = POLLIN },
			{ .fd = c->ch->fd, .events = POLLIN },
		};
		/* The data CQ has no channel: wake up now and then to reap the probe. */
		double nap = c->probing ? 0.1 : 0.5;
		int ms = left > nap ? (int)(nap * 1000) : (int)(left * 1000) + 1;
		if (poll(pfd, 2, ms) < 0 && errno != EINTR) {
			r = -errno;
			snprintf(why, wlen, "poll(control): %s", strerror(-r));
			return r;
		}
		if (pfd[0].revents & POLLIN) {
			struct ibv_cq *cq;
			void *ctx;

			if (ibv_get_cq_event(c->ctrl_ch, &cq, &ctx) == 0) {
				c->ctrl_events++;
				armed = 0;
			}
		}
	}
}

/* ---- the gdr_ctl interface over the connection (ctl.h) ---------------------------------- */

static int conn_send(void *ctx, const struct gdr_msg *m, char *why, size_t wlen)
{
	return gdr_ctrl_send(ctx, m, why, wlen);
}

static int conn_recv(void *ctx, struct gdr_msg *m, double timeout, int long_wait, char *why,
		     size_t wlen)
{
	struct gdr_conn *c = ctx;
	int r;

	c->probe = long_wait;
	r = gdr_ctrl_recv(c, m, timeout, why, wlen);
	c->probe = 0;
	/*
	 * A peer that says why it gives up disconnects next: that is not a
	 * dead peer, so closing still says goodbye.
	 */
	if (!r && m->type == GDR_MSG_ERROR)
		c->peer_gone = 0;
	return r;
}

static void conn_send_error(void *ctx, int code, const char *text)
{
	gdr_ctrl_send_error(ctx, code, text);
}

static const struct gdr_ctl_ops conn_ops = {
	.send = conn_send,
	.recv = conn_recv,
	.send_error = conn_send_error,
};

void gdr_ctl_over_conn(struct gdr_ctl *ctl, struct gdr_conn *c, int client)
{
	ctl->ops = &conn_ops;
	ctl->ctx = c;
	ctl->peer = c->peer;
	ctl->peer_role = client ? "server" : "client";
}
