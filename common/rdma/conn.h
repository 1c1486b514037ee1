/*
 * The connection: rdma_cm connect/accept with timeouts and retries, one
 * rdma_cm id and RC QP per -q, a shared PD, a data CQ (send side of every QP,
 * busy-polled by the loops) and a control CQ (receive side, with a completion
 * channel so that a waiting side sleeps instead of spinning).
 * Control messages travel as SEND/RECV on QP 0 (ctl_conn.c; ctl.h is the
 * typed interface the session uses). Files: conn.c (events, close),
 * conn_dev.c (PD, CQs, QPs), conn_accept.c, conn_connect.c, probe.c.
 */
#ifndef GDR_CONN_H
#define GDR_CONN_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <signal.h>
#include <stdint.h>

#include "endpoint.h"
#include "options.h"
#include "proto.h"

#define GDR_CTRL_SLOTS 16
#define GDR_WRID_CTRL  (~0ull)
#define GDR_WRID_PROBE (~1ull)
/* Silence on the control channel after which the waiting side probes its peer. */
#define GDR_PROBE_S 1.0
/* An unacknowledged probe this old means the peer is gone (see probe_reap). */
#define GDR_PROBE_DEAD_S 10.0

#define GDR_CONN_LAT_INLINE 220

struct gdr_conn {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	struct rdma_cm_id *id[GDR_MAX_QPS];
	unsigned int nqps;
	unsigned int tx_depth;
	unsigned int extra_recv; /* receive WRs beyond the control slots (bounce) */
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ctrl_ch;
	struct ibv_cq *data_cq;
	struct ibv_cq *ctrl_cq;
	unsigned int ctrl_events; /* CQ events to ack */
	struct ibv_mr *ctrl_mr;
	uint8_t *ctrl_buf; /* send slot, then GDR_CTRL_SLOTS + extra_recv receive slots */
	uint32_t session;
	uint32_t max_msg_sz;
	uint8_t port_num;
	char nic[64];
	char peer[64];
	double timeout;
	volatile sig_atomic_t *stop;
	int peer_gone;
	int probe;	   /* gdr_ctrl_recv may probe the peer (set around long waits) */
	int probing;	   /* a liveness probe is in flight (see gdr_ctrl_recv) */
	double probe_sent; /* when it was posted */
	int listening;	   /* server: got as far as rdma_listen */
	/*
	 * Latency tools: inline bytes asked for the QPs (perftest's 220 for its
	 * WRITE latency) and what QP 0 got (0: none; the bandwidth tools ask none,
	 * as perftest's bandwidth tests).
	 */
	unsigned int want_inline, max_inline;
};

/* Receive WRs on QP 0: the control slots, then the extra ones a path asked for. */
static inline unsigned int gdr_conn_slots(const struct gdr_conn *c)
{
	return GDR_CTRL_SLOTS + c->extra_recv;
}

/* Receive slot i's buffer (slot 0 of ctrl_buf is the send slot). */
static inline uint8_t *gdr_conn_slot(const struct gdr_conn *c, unsigned int i)
{
	return c->ctrl_buf + (size_t)(1 + i) * GDR_CTRL_MAX;
}

/* Server: listen on ep, wait (up to o->timeout) for one client and accept all its QPs. */
int gdr_conn_accept(struct gdr_conn *c, const struct gdr_opts *o, const struct gdr_endpoint *ep,
		    volatile sig_atomic_t *stop, char *why, size_t wlen);
/*
 * Client: connect o->qps QPs to ep->server, retrying with backoff until
 * o->timeout. extra_recv: receive slots beyond the control ones that the
 * paths of the plan consume themselves (gdr_paths_recv_slots, path.h); the
 * server learns the number from the hello.
 */
int gdr_conn_connect(struct gdr_conn *c, const struct gdr_opts *o, const struct gdr_endpoint *ep,
		     unsigned int extra_recv, volatile sig_atomic_t *stop, char *why, size_t wlen);
void gdr_conn_close(struct gdr_conn *c);

int gdr_ctrl_send(struct gdr_conn *c, const struct gdr_msg *m, char *why, size_t wlen);
/*
 * Wait for the next control message; -ETIMEDOUT, -ECONNRESET (peer gone), -EINTR (signal).
 * With c->probe set it probes the peer while it waits (a zero-byte RDMA WRITE
 * on QP 0, after GDR_PROBE_S of silence): a peer whose host died or whose path was cut
 * sends no disconnect; it stops acknowledging and is reported within
 * GDR_PROBE_DEAD_S (or the transport's retry time), not at the end of timeout.
 */
/* -v: QP 0's attributes as the device set them (path MTU, READ depth, retries). */
void gdr_conn_debug_qp(const struct gdr_conn *c);
/*
 * The traffic class QP 0 got (the IP ToS byte on RoCE: -T/--tos, else the
 * default), as ibv_query_qp reads it; -1 when unknown or without a GRH (IB).
 */
int gdr_conn_traffic_class(const struct gdr_conn *c);
int gdr_ctrl_recv(struct gdr_conn *c, struct gdr_msg *m, double timeout, char *why, size_t wlen);
/* Send an ERROR message, best effort (the peer may be gone). */
void gdr_ctrl_send_error(struct gdr_conn *c, int code, const char *text);
/*
 * Receive slots: every receive WR on QP 0 has a GDR_CTRL_MAX buffer (slot i,
 * wr_id i), so a control SEND can never land in a buffer-less WR. Engines that
 * consume receives themselves (bounce: WRITE_WITH_IMM, SEND_WITH_IMM credits)
 * poll ctrl_cq and give each slot back with gdr_conn_repost().
 */
int gdr_conn_repost(struct gdr_conn *c, unsigned int slot);

/* Non-blocking: has the peer disconnected? 0 or -ECONNRESET. */
int gdr_conn_poll_cm(struct gdr_conn *c);

/* Check that RDMA devices exist and that name (if any) is one of them. */
int gdr_check_device(const char *name, char *why, size_t wlen);

#endif
