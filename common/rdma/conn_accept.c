/* The server side of rdma_cm: listen, then accept every QP of one client. */
#include "config.h"

#include "conn_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

static void reject_with(struct rdma_cm_id *id, int code, const char *text)
{
	struct gdr_msg m = { .type = GDR_MSG_ERROR };
	uint8_t buf[64];
	int n;

	/* Private data of a reject is small (IB: 148 B); a short reason fits. */
	m.u.error.code = code;
	snprintf(m.u.error.text, sizeof(m.u.error.text), "%.40s", text);
	n = gdr_msg_encode(&m, buf, sizeof(buf));
	rdma_reject(id, n > 0 ? buf : NULL, n > 0 ? (uint8_t)n : 0);
}

/*
 * Server: forget one half-made connection of the client being accepted (its
 * attempt failed, or the client gave it up and retried). With none left the
 * device resources go too, so that the next client starts from scratch (it
 * may come with another depth, QP count or device).
 */
static void forget_client_if_none(struct gdr_conn *c)
{
	for (unsigned int k = 0; k < GDR_MAX_QPS; k++)
		if (c->id[k])
			return;
	gdr_conn_release_device(c);
	c->nqps = 0;
}

static void forget_id(struct gdr_conn *c, unsigned int i, uint64_t *est)
{
	if (c->id[i]->qp)
		rdma_destroy_qp(c->id[i]);
	rdma_destroy_id(c->id[i]);
	c->id[i] = NULL;
	*est &= ~(1ull << i);
	gdr_conn_drain(c);
	forget_client_if_none(c);
}

static int find_id(const struct gdr_conn *c, const struct rdma_cm_id *id)
{
	for (unsigned int i = 0; i < GDR_MAX_QPS; i++)
		if (c->id[i] == id)
			return (int)i;
	return -1;
}

static unsigned int popcount64(uint64_t v)
{
	unsigned int n = 0;

	for (; v; v &= v - 1)
		n++;
	return n;
}

/* The listening id on --bind (or any address) and ep->port. */
static int listen_on(struct gdr_conn *c, const struct gdr_endpoint *ep, char *why, size_t wlen)
{
	struct sockaddr_storage ss;
	int r;

	c->ch = rdma_create_event_channel();
	if (!c->ch || gdr_conn_set_nonblock(c->ch->fd)) {
		r = -(errno ? errno : ENODEV);
		snprintf(why, wlen, "rdma_create_event_channel: %s (is rdma_ucm loaded?)",
			 strerror(-r));
		return r;
	}
	if (rdma_create_id(c->ch, &c->listen_id, c, RDMA_PS_TCP)) {
		r = -errno;
		snprintf(why, wlen, "rdma_create_id: %s", strerror(-r));
		return r;
	}
	/* The server's own -T (the client's ToS rides in the path it connects with). */
	r = gdr_conn_set_tos(c->listen_id, ep->tos, why, wlen);
	if (r)
		return r;
	memset(&ss, 0, sizeof(ss));
	if (ep->bind_addr) {
		const struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
		char what[128];

		snprintf(what, sizeof(what), "--bind %.100s", ep->bind_addr);
		r = gdr_conn_resolve(what, ep->bind_addr, ep->port, &hints, &ss, why, wlen);
		if (r)
			return r;
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)ep->port);
		sin->sin_addr.s_addr = htonl(INADDR_ANY);
	}
	if (rdma_bind_addr(c->listen_id, (struct sockaddr *)&ss)) {
		r = -errno;
		/* rdma_cm says EADDRNOTAVAIL, not EADDRINUSE, for a taken wildcard port. */
		if (r == -EADDRINUSE || (r == -EADDRNOTAVAIL && !ep->bind_addr))
			snprintf(why, wlen, "port %u is already in use (another gdrperf server?)",
				 ep->port);
		else if (r == -EADDRNOTAVAIL)
			snprintf(why, wlen,
				 "--bind %s port %u: %s (not an address of an RDMA device, "
				 "or the port is taken)",
				 ep->bind_addr, ep->port, strerror(-r));
		else
			snprintf(why, wlen, "rdma_bind_addr(%s port %u): %s",
				 ep->bind_addr ? ep->bind_addr : "any", ep->port, strerror(-r));
		return r;
	}
	if (rdma_listen(c->listen_id, 8)) {
		r = -errno;
		snprintf(why, wlen, "rdma_listen(port %u): %s", ep->port, strerror(-r));
		return r;
	}
	c->listening = 1;
	gdr_dbg("listening on port %u", ep->port);
	return 0;
}

/*
 * One connect request (ev, acked here). 0: handled, the server goes on
 * listening (accepted, or refused with a warning); -errno: the accept is over.
 */
static int on_request(struct gdr_conn *c, const struct gdr_endpoint *ep, struct rdma_cm_event *ev,
		      uint64_t *est, char *why, size_t wlen)
{
	struct rdma_cm_id *id = ev->id;
	struct gdr_hello h;
	char hwhy[160];
	struct rdma_conn_param param;
	const uint8_t *pd = ev->param.conn.private_data;
	uint8_t plen = ev->param.conn.private_data_len;
	int r;

	r = gdr_hello_decode(pd, pd ? plen : 0, &h, hwhy, sizeof(hwhy));
	rdma_ack_cm_event(ev);
	if (r) {
		reject_with(id, r, hwhy);
		rdma_destroy_id(id);
		/* The caller reports it: one line per bad client. */
		if (r == -EPROTO) {
			snprintf(why, wlen, "%s", hwhy);
			return r;
		}
		gdr_warn("rejected a connect request: %s", hwhy);
		return 0;
	}
	if (c->nqps == 0) {
		c->nqps = h.nqps;
		c->session = h.session;
		c->tx_depth = h.tx_depth;
		c->extra_recv = h.extra_recv;
		gdr_conn_addr_str(rdma_get_peer_addr(id), c->peer, sizeof(c->peer));
		r = gdr_conn_setup_device(c, id, ep->dev, (ep->ib_port != 1) ? ep->ib_port : 0, why,
					  wlen);
		if (r) {
			reject_with(id, r, "server cannot use its device");
			rdma_destroy_id(id);
			return r;
		}
	} else if (h.session != c->session || h.nqps != c->nqps || id->verbs != c->verbs ||
		   (*est & (1ull << h.qp_index))) {
		reject_with(id, -EBUSY, "server busy with another client");
		rdma_destroy_id(id);
		return 0;
	} else if (c->id[h.qp_index]) {
		/*
		 * The same client asks again for a QP we accepted but never
		 * saw established: it gave that attempt up (we were slow to
		 * answer), so the new request replaces it.
		 */
		gdr_dbg("client %s retried QP %u: dropping the stale attempt", c->peer, h.qp_index);
		if (c->id[h.qp_index]->qp)
			rdma_destroy_qp(c->id[h.qp_index]);
		rdma_destroy_id(c->id[h.qp_index]);
		c->id[h.qp_index] = NULL;
		gdr_conn_drain(c);
	}
	gdr_conn_set_ack_timeout(id);
	r = gdr_conn_create_qp(c, id, h.qp_index, why, wlen);
	if (r) {
		/*
		 * Most often the client gave this request up while we were
		 * slow (rdma_cm then refuses to move the QP to INIT): the
		 * server goes on listening either way.
		 */
		gdr_warn("client %s: %s; still listening", c->peer, why);
		reject_with(id, r, "server cannot create a QP");
		if (c->id[h.qp_index] == id) {
			forget_id(c, h.qp_index, est);
		} else {
			rdma_destroy_id(id);
			forget_client_if_none(c);
		}
		return 0;
	}
	gdr_conn_fill_param(c, &param, NULL, 0);
	if (rdma_accept(id, &param)) {
		/* The client gave this attempt up before we answered. */
		gdr_warn("client %s: rdma_accept(QP %u): %s; still listening", c->peer, h.qp_index,
			 strerror(errno));
		forget_id(c, h.qp_index, est);
	}
	return 0;
}

/* Any other CM event while accepting (ev, acked here): 0, or -ENODEV when the device went. */
static int on_event(struct gdr_conn *c, struct rdma_cm_event *ev, uint64_t *est, char *why,
		    size_t wlen)
{
	enum rdma_cm_event_type type = ev->event;
	int status = ev->status;
	int qi = find_id(c, ev->id);

	rdma_ack_cm_event(ev);
	switch (type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		if (qi >= 0)
			*est |= 1ull << qi;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		/*
		 * A client that gives up an attempt (it waited too long for
		 * us, or died) is not the end of the server: forget what was
		 * built for it and keep listening until the deadline.
		 */
		if (qi < 0)
			break;
		gdr_warn("client %s: QP %d went away before the connection was "
			 "complete (%s, status %d); still listening",
			 c->peer, qi, rdma_event_str(type), status);
		forget_id(c, (unsigned int)qi, est);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		snprintf(why, wlen, "%s: device removed", c->nic);
		return -ENODEV;
	default:
		gdr_dbg("ignoring %s", rdma_event_str(type));
		break;
	}
	return 0;
}

int gdr_conn_accept(struct gdr_conn *c, const struct gdr_opts *o, const struct gdr_endpoint *ep,
		    volatile sig_atomic_t *stop, char *why, size_t wlen)
{
	struct rdma_cm_event *ev;
	/* A --persistent server waits for its next client as long as it takes. */
	double deadline = gdr_now_s() + (o->persistent ? 1e9 : o->timeout);
	uint64_t est = 0; /* which of the client's QPs are established */
	int r;

	memset(c, 0, sizeof(*c));
	c->timeout = o->timeout;
	c->stop = stop;
	c->want_inline = o->latency ? GDR_CONN_LAT_INLINE : 0;
	r = gdr_check_device(ep->dev, why, wlen);
	if (!r)
		r = listen_on(c, ep, why, wlen);
	while (!r && (c->nqps == 0 || popcount64(est) < c->nqps)) {
		r = gdr_conn_next_event(c, deadline, &ev, why, wlen);
		if (r == -ETIMEDOUT)
			snprintf(why, wlen, "no client connected within %g s (--timeout)",
				 o->timeout);
		if (r)
			break;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			r = on_request(c, ep, ev, &est, why, wlen);
		else
			r = on_event(c, ev, &est, why, wlen);
	}
	return r;
}
