/*
 * The control channel as the session sees it: typed send and receive of
 * proto messages with timeouts, over any transport that implements the three
 * operations (the RDMA connection, ctl_conn.c; an in-memory pair in the unit
 * tests). What comes back has been bounded by gdr_msg_decode().
 */
#ifndef GDR_CTL_H
#define GDR_CTL_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

struct gdr_conn;

struct gdr_ctl_ops {
	/* 0 or -errno with why filled. */
	int (*send)(void *ctx, const struct gdr_msg *m, char *why, size_t wlen);
	/*
	 * The next message within timeout seconds: 0, -ETIMEDOUT, -ECONNRESET
	 * (peer gone), -EINTR, -EPROTO/-EBADMSG (malformed). long_wait: the
	 * peer may rightly stay silent that long (a repeat is running): check
	 * meanwhile that it is still alive.
	 */
	int (*recv)(void *ctx, struct gdr_msg *m, double timeout, int long_wait, char *why,
		    size_t wlen);
	/* An ERROR to the peer, best effort (it may be gone); bounded by a short timeout. */
	void (*send_error)(void *ctx, int code, const char *text);
};

struct gdr_ctl {
	const struct gdr_ctl_ops *ops;
	void *ctx;
	const char *peer;      /* its address, for messages */
	const char *peer_role; /* "server" or "client" */
};

/* The control channel over an established connection; client: this side is the client. */
void gdr_ctl_over_conn(struct gdr_ctl *ctl, struct gdr_conn *c, int client);

int gdr_ctl_send(struct gdr_ctl *ctl, const struct gdr_msg *m, char *why, size_t wlen);
/*
 * Receive the next message within timeout seconds; it must be of type want
 * (0: any). An ERROR from the peer ends the run: its code (or -EIO), why
 * naming the peer and its reason; another type is -EPROTO.
 */
int gdr_ctl_expect(struct gdr_ctl *ctl, struct gdr_msg *m, uint16_t want, double timeout,
		   int long_wait, char *why, size_t wlen);
void gdr_ctl_send_error(struct gdr_ctl *ctl, int code, const char *text);

#endif
