/* The client side of rdma_cm: resolve, connect every QP, retry with backoff. */
#include "config.h"

#include "conn_int.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static int resolve(struct gdr_conn *c, struct rdma_cm_id *id, const struct sockaddr *src,
		   const struct sockaddr *dst, double deadline, char *why, size_t wlen)
{
	struct rdma_cm_event *ev;
	int r, ms = (int)(gdr_conn_remaining(deadline) * 1000);

	if (ms < 100)
		ms = 100;
	if (ms > 2000)
		ms = 2000;
	if (rdma_resolve_addr(id, (struct sockaddr *)src, (struct sockaddr *)dst, ms)) {
		r = -errno;
		snprintf(why, wlen, "rdma_resolve_addr(%s): %s", c->peer, strerror(-r));
		return r;
	}
	r = gdr_conn_next_event(c, deadline, &ev, why, wlen);
	if (r)
		return r;
	if (ev->event != RDMA_CM_EVENT_ADDR_RESOLVED) {
		snprintf(why, wlen, "cannot resolve %s to a local RDMA device (%s, status %d)",
			 c->peer, rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
		return -EHOSTUNREACH;
	}
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, ms)) {
		r = -errno;
		snprintf(why, wlen, "rdma_resolve_route(%s): %s", c->peer, strerror(-r));
		return r;
	}
	r = gdr_conn_next_event(c, deadline, &ev, why, wlen);
	if (r)
		return r;
	if (ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED) {
		snprintf(why, wlen, "no route to %s (%s, status %d)", c->peer,
			 rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
		return -EHOSTUNREACH;
	}
	rdma_ack_cm_event(ev);
	return 0;
}

/* One connect attempt of QP index. 0, -EAGAIN (retry later) or a fatal -errno. */
static int connect_one(struct gdr_conn *c, const struct gdr_endpoint *ep,
		       const struct sockaddr *src, const struct sockaddr *dst, unsigned int index,
		       double deadline, char *why, size_t wlen)
{
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;
	struct rdma_conn_param param;
	struct gdr_hello h = {
		.version = GDR_PROTO_VERSION,
		.nqps = (uint16_t)c->nqps,
		.qp_index = (uint16_t)index,
		.tx_depth = (uint16_t)c->tx_depth,
		.extra_recv = (uint16_t)c->extra_recv,
		.session = c->session,
	};
	uint8_t hello[GDR_HELLO_LEN];
	int r;

	if (rdma_create_id(c->ch, &id, c, RDMA_PS_TCP)) {
		r = -errno;
		snprintf(why, wlen, "rdma_create_id: %s", strerror(-r));
		return r;
	}
	r = gdr_conn_set_tos(id, ep->tos, why, wlen);
	if (r)
		goto out_destroy_id;
	r = resolve(c, id, src, dst, deadline, why, wlen);
	if (r)
		goto out_destroy_id;
	if (!c->pd) {
		r = gdr_conn_setup_device(c, id, ep->dev, (ep->ib_port != 1) ? ep->ib_port : 0, why,
					  wlen);
		if (r)
			goto out_destroy_id;
	} else if (id->verbs != c->verbs) {
		snprintf(why, wlen, "QP %u resolved to another device than QP 0", index);
		r = -ENODEV;
		goto out_destroy_id;
	}
	gdr_conn_set_ack_timeout(id);
	r = gdr_conn_create_qp(c, id, index, why, wlen);
	if (r)
		goto out_destroy_id;
	gdr_hello_encode(&h, hello, sizeof(hello));
	gdr_conn_fill_param(c, &param, hello, sizeof(hello));
	if (rdma_connect(id, &param)) {
		r = -errno;
		snprintf(why, wlen, "rdma_connect(%s): %s", c->peer, strerror(-r));
		goto out_destroy_qp;
	}
	r = gdr_conn_next_event(c, deadline, &ev, why, wlen);
	if (r)
		goto out_destroy_qp;
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		rdma_ack_cm_event(ev);
		r = gdr_conn_check_mtu(id, ep->mtu, why, wlen);
		if (!r)
			return 0;
		rdma_disconnect(id);
		goto out_destroy_qp;
	case RDMA_CM_EVENT_REJECTED: {
		struct gdr_msg m;
		char mwhy[128];
		const uint8_t *pd = ev->param.conn.private_data;

		/* A gdrperf server says why; a bare reject means nobody listens yet. */
		size_t plen = ev->param.conn.private_data_len;
		size_t mlen =
		    pd && plen >= 12 ? 12 + (pd[8] | pd[9] << 8 | (size_t)pd[10] << 16) : 0;

		if (mlen && mlen <= plen && gdr_msg_decode(pd, mlen, &m, mwhy, sizeof(mwhy)) == 0 &&
		    m.type == GDR_MSG_ERROR) {
			snprintf(why, wlen, "server %s refused the connection: %s", c->peer,
				 m.u.error.text);
			r = m.u.error.code ? m.u.error.code : -ECONNREFUSED;
			if (r == -EBUSY)
				r = -EAGAIN;
		} else {
			snprintf(why, wlen, "no gdrperf server on %s port %u (connection rejected)",
				 c->peer, ep->port);
			r = -EAGAIN;
		}
		break;
	}
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		snprintf(why, wlen, "server %s port %u unreachable (%s, status %d)", c->peer,
			 ep->port, rdma_event_str(ev->event), ev->status);
		r = -EAGAIN;
		break;
	default:
		snprintf(why, wlen, "unexpected %s while connecting to %s",
			 rdma_event_str(ev->event), c->peer);
		r = -EPROTO;
		break;
	}
	rdma_ack_cm_event(ev);
out_destroy_qp:
	rdma_destroy_qp(id);
	c->id[index] = NULL;
	gdr_conn_drain(c);
out_destroy_id:
	rdma_destroy_id(id);
	return r;
}

int gdr_conn_connect(struct gdr_conn *c, const struct gdr_opts *o, const struct gdr_endpoint *ep,
		     unsigned int extra_recv, volatile sig_atomic_t *stop, char *why, size_t wlen)
{
	const struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct sockaddr_storage dst, src;
	double deadline = gdr_now_s() + o->timeout;
	double backoff = 0.1;
	char what[128], refused[256] = "";
	int r;

	memset(c, 0, sizeof(*c));
	c->timeout = o->timeout;
	c->stop = stop;
	c->want_inline = o->latency ? GDR_CONN_LAT_INLINE : 0;
	c->nqps = o->qps;
	c->tx_depth = o->tx_depth;
	c->extra_recv = extra_recv;
	gdr_strlcpy(c->peer, ep->server, sizeof(c->peer));
	r = gdr_check_device(ep->dev, why, wlen);
	if (r)
		return r;
	{
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		c->session = (uint32_t)(ts.tv_nsec ^ ts.tv_sec ^ ((uint32_t)getpid() << 16));
	}
	snprintf(what, sizeof(what), "server '%.100s'", ep->server);
	if (gdr_conn_resolve(what, ep->server, ep->port, &hints, &dst, why, wlen))
		return -EHOSTUNREACH;
	gdr_conn_addr_str((struct sockaddr *)&dst, c->peer, sizeof(c->peer));
	/* --bind on a client: the source address, which is how rdma_cm picks the NIC. */
	if (ep->bind_addr) {
		/* A name too (perftest's --source_ip takes one), in the server's family. */
		const struct addrinfo sh = { .ai_family = dst.ss_family };

		snprintf(what, sizeof(what), "--bind %.100s", ep->bind_addr);
		r = gdr_conn_resolve(what, ep->bind_addr, 0, &sh, &src, why, wlen);
		if (r)
			return r;
	}

	c->ch = rdma_create_event_channel();
	if (!c->ch || gdr_conn_set_nonblock(c->ch->fd)) {
		r = -(errno ? errno : ENODEV);
		snprintf(why, wlen, "rdma_create_event_channel: %s (is rdma_ucm loaded?)",
			 strerror(-r));
		return r;
	}
	for (unsigned int i = 0; i < c->nqps; i++) {
		for (;;) {
			r = connect_one(c, ep, ep->bind_addr ? (struct sockaddr *)&src : NULL,
					(struct sockaddr *)&dst, i, deadline, why, wlen);
			if (r != -EAGAIN)
				break;
			gdr_strlcpy(refused, why, sizeof(refused));
			if (gdr_conn_stopped(c)) {
				snprintf(why, wlen, "interrupted");
				return -EINTR;
			}
			if (gdr_conn_remaining(deadline) <= backoff) {
				char tmp[256];
				snprintf(tmp, sizeof(tmp), "%s; gave up after %g s (--timeout)",
					 why, o->timeout);
				gdr_strlcpy(why, tmp, wlen);
				return -ETIMEDOUT;
			}
			gdr_dbg("connect: %s; retrying in %.1f s", why, backoff);
			struct timespec ts = { .tv_sec = (time_t)backoff,
					       .tv_nsec =
						   (long)((backoff - (time_t)backoff) * 1e9) };
			nanosleep(&ts, NULL);
			backoff = backoff * 2 > 1.0 ? 1.0 : backoff * 2;
		}
		if (r) {
			/* The deadline fell inside an attempt: say why the earlier ones failed. */
			if (r == -ETIMEDOUT && !strcmp(why, "timed out") && refused[0])
				snprintf(why, wlen, "%s; gave up after %g s (--timeout)", refused,
					 o->timeout);
			else if (r == -ETIMEDOUT && !strcmp(why, "timed out"))
				snprintf(why, wlen, "could not connect to %s port %u within %g s",
					 c->peer, ep->port, o->timeout);
			return r;
		}
	}
	return 0;
}
