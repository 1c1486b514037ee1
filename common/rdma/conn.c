#include "config.h"

#include "conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define RECV_SLOT(c, i) ((c)->ctrl_buf + (size_t)(1 + (i)) * GDR_CTRL_MAX)

static unsigned int nslots(const struct gdr_conn *c)
{
	return GDR_CTRL_SLOTS + c->extra_recv;
}

int gdr_check_device(const char *name, char *why, size_t wlen)
{
	struct ibv_device **list;
	int n = 0, found = 0;
	char names[256] = "";

	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		snprintf(why, wlen,
			 "no RDMA device found (is the HCA driver or rdma_rxe loaded? "
			 "see 'ibv_devices')");
		if (list)
			ibv_free_device_list(list);
		return -ENODEV;
	}
	for (int i = 0; i < n; i++) {
		const char *dn = ibv_get_device_name(list[i]);
		size_t l = strlen(names);

		if (name && !strcmp(dn, name))
			found = 1;
		snprintf(names + l, sizeof(names) - l, "%s%s", l ? ", " : "", dn);
	}
	ibv_free_device_list(list);
	if (name && !found) {
		snprintf(why, wlen, "-d %s: no such RDMA device (available: %s)", name, names);
		return -ENODEV;
	}
	return 0;
}

static double remaining(double deadline)
{
	double r = deadline - gdr_now_s();
	return r > 0 ? r : 0;
}

static int stopped(const struct gdr_conn *c)
{
	return c->stop && *c->stop;
}

/*
 * Wait for the next CM event (up to deadline). The event is returned unacked in *ev.
 */
static int next_event(struct gdr_conn *c, double deadline, struct rdma_cm_event **ev, char *why,
		      size_t wlen)
{
	for (;;) {
		if (rdma_get_cm_event(c->ch, ev) == 0)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			int e = errno;
			snprintf(why, wlen, "rdma_get_cm_event: %s", strerror(e));
			return -e;
		}
		if (stopped(c)) {
			snprintf(why, wlen, "interrupted");
			return -EINTR;
		}
		double left = remaining(deadline);
		if (left <= 0) {
			snprintf(why, wlen, "timed out");
			return -ETIMEDOUT;
		}
		struct pollfd pfd = { .fd = c->ch->fd, .events = POLLIN };
		int ms = left > 0.2 ? 200 : (int)(left * 1000) + 1;
		if (poll(&pfd, 1, ms) < 0 && errno != EINTR) {
			int e = errno;
			snprintf(why, wlen, "poll(rdma_cm channel): %s", strerror(e));
			return -e;
		}
	}
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -errno : (fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0);
}

/* PD, CQs and control buffer on the device the first id landed on. */
static int setup_device(struct gdr_conn *c, struct rdma_cm_id *id, const char *want_dev,
			int ib_port, char *why, size_t wlen)
{
	struct ibv_port_attr pa;
	struct ibv_device_attr da;
	size_t len = (size_t)(1 + nslots(c)) * GDR_CTRL_MAX;
	int e;

	c->verbs = id->verbs;
	c->port_num = id->port_num;
	gdr_strlcpy(c->nic, ibv_get_device_name(id->verbs->device), sizeof(c->nic));
	if (want_dev && strcmp(want_dev, c->nic)) {
		snprintf(
		    why, wlen,
		    "the connection goes over %s, not -d %s: use an address that belongs to %s",
		    c->nic, want_dev, want_dev);
		return -ENODEV;
	}
	if (ib_port && ib_port != c->port_num)
		gdr_warn("%s: rdma_cm uses port %u, not -i %d", c->nic, c->port_num, ib_port);
	if (ibv_query_device(c->verbs, &da)) {
		e = errno;
		snprintf(why, wlen, "%s: ibv_query_device: %s", c->nic, strerror(e));
		return -e;
	}
	if ((int)c->tx_depth + 4 > da.max_qp_wr) {
		snprintf(why, wlen, "%s: tx depth %u exceeds the device's max_qp_wr %d", c->nic,
			 c->tx_depth, da.max_qp_wr);
		return -EINVAL;
	}
	if (ibv_query_port(c->verbs, c->port_num, &pa)) {
		e = errno;
		snprintf(why, wlen, "%s: ibv_query_port(%u): %s", c->nic, c->port_num, strerror(e));
		return -e;
	}
	if (pa.state != IBV_PORT_ACTIVE) {
		snprintf(why, wlen, "%s port %u is %s, not ACTIVE", c->nic, c->port_num,
			 ibv_port_state_str(pa.state));
		return -ENETDOWN;
	}
	c->max_msg_sz = pa.max_msg_sz;
	c->pd = ibv_alloc_pd(c->verbs);
	if (!c->pd) {
		e = errno ? errno : ENOMEM;
		gdr_explain_reg_errno(e, len, why, wlen);
		char tmp[256];
		snprintf(tmp, sizeof(tmp), "%s: ibv_alloc_pd: %s", c->nic, why);
		gdr_strlcpy(why, tmp, wlen);
		return -e;
	}
	c->ctrl_ch = ibv_create_comp_channel(c->verbs);
	if (!c->ctrl_ch || set_nonblock(c->ctrl_ch->fd)) {
		e = errno ? errno : ENOMEM;
		snprintf(why, wlen, "%s: ibv_create_comp_channel: %s", c->nic, strerror(e));
		return -e;
	}
	c->data_cq =
	    ibv_create_cq(c->verbs, (int)(c->nqps * (c->tx_depth + 4) + 16), NULL, NULL, 0);
	c->ctrl_cq =
	    c->data_cq ? ibv_create_cq(c->verbs, (int)(nslots(c) + 16), NULL, c->ctrl_ch, 0) : NULL;
	if (!c->data_cq || !c->ctrl_cq) {
		e = errno ? errno : ENOMEM;
		char expl[200];
		gdr_explain_reg_errno(e, 0, expl, sizeof(expl));
		snprintf(why, wlen, "%s: ibv_create_cq: %s", c->nic, expl);
		return -e;
	}
	if (posix_memalign((void **)&c->ctrl_buf, 4096, len)) {
		snprintf(why, wlen, "out of memory for control buffers");
		return -ENOMEM;
	}
	memset(c->ctrl_buf, 0, len);
	c->ctrl_mr = ibv_reg_mr(c->pd, c->ctrl_buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!c->ctrl_mr) {
		e = errno ? errno : ENOMEM;
		char expl[200];
		gdr_explain_reg_errno(e, len, expl, sizeof(expl));
		snprintf(why, wlen, "%s: ibv_reg_mr(control, %zu B): %s", c->nic, len, expl);
		return -e;
	}
	return 0;
}

int gdr_conn_repost(struct gdr_conn *c, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)RECV_SLOT(c, slot),
		.length = GDR_CTRL_MAX,
		.lkey = c->ctrl_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(c->id[0]->qp, &wr, &bad) ? -errno : 0;
}

static int create_qp(struct gdr_conn *c, struct rdma_cm_id *id, unsigned int index, char *why,
		     size_t wlen)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = c->data_cq,
		.recv_cq = c->ctrl_cq,
		.cap = {
			.max_send_wr = c->tx_depth + 4,
			.max_recv_wr = index == 0 ? nslots(c) : 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = c->want_inline,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
	};

	int rc = rdma_create_qp(id, c->pd, &attr);

	/* Inline is an optimisation (latency tools): a device without it gets a plain QP. */
	if (rc && attr.cap.max_inline_data) {
		attr.cap.max_inline_data = 0;
		rc = rdma_create_qp(id, c->pd, &attr);
	}
	if (rc) {
		int e = errno;
		snprintf(why, wlen, "%s: rdma_create_qp (QP %u, depth %u): %s", c->nic, index,
			 c->tx_depth, strerror(e));
		return -e;
	}
	if (index == 0)
		c->max_inline = attr.cap.max_inline_data;
	c->id[index] = id;
	if (index == 0) {
		/* Receives are posted before the connection exists so no SEND can find none. */
		for (unsigned int s = 0; s < nslots(c); s++) {
			int r = gdr_conn_repost(c, s);
			if (r) {
				snprintf(why, wlen, "%s: ibv_post_recv(control): %s", c->nic,
					 strerror(-r));
				return r;
			}
		}
	}
	return 0;
}

static void fill_conn_param(struct gdr_conn *c, struct rdma_conn_param *p, const void *pdata,
			    uint8_t plen)
{
	struct ibv_device_attr da;

	memset(p, 0, sizeof(*p));
	p->responder_resources = 16;
	p->initiator_depth = 16;
	if (!ibv_query_device(c->verbs, &da)) {
		p->responder_resources =
		    (uint8_t)(da.max_qp_rd_atom < 255 ? da.max_qp_rd_atom : 255);
		p->initiator_depth =
		    (uint8_t)(da.max_qp_init_rd_atom < 255 ? da.max_qp_init_rd_atom : 255);
	}
	p->retry_count = 7;
	p->rnr_retry_count = 7;
	p->private_data = pdata;
	p->private_data_len = plen;
}

/*
 * A refused attempt's QP flushes its posted receives into the shared CQs;
 * once the QP is destroyed nothing more can arrive, so drop them here or the
 * next control receive would read a flush as a dead peer.
 */
static void drain(struct gdr_conn *c)
{
	struct ibv_wc wc[16];

	if (c->ctrl_cq)
		while (ibv_poll_cq(c->ctrl_cq, 16, wc) > 0)
			;
	if (c->data_cq)
		while (ibv_poll_cq(c->data_cq, 16, wc) > 0)
			;
}

/* PD, CQs, control buffer and completion channel: what setup_device made. */
static void release_device(struct gdr_conn *c)
{
	if (c->ctrl_mr)
		ibv_dereg_mr(c->ctrl_mr);
	c->ctrl_mr = NULL;
	free(c->ctrl_buf);
	c->ctrl_buf = NULL;
	if (c->ctrl_cq) {
		if (c->ctrl_events)
			ibv_ack_cq_events(c->ctrl_cq, c->ctrl_events);
		ibv_destroy_cq(c->ctrl_cq);
	}
	c->ctrl_cq = NULL;
	c->ctrl_events = 0;
	if (c->data_cq)
		ibv_destroy_cq(c->data_cq);
	c->data_cq = NULL;
	if (c->ctrl_ch)
		ibv_destroy_comp_channel(c->ctrl_ch);
	c->ctrl_ch = NULL;
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	c->pd = NULL;
	c->verbs = NULL;
}

/*
 * rdma_cm's default ACK timeout can be so long (or, on some providers,
 * infinite) that a send to a dead peer never completes: ask for about 0.27 s
 * per try (4.096 us * 2^16), so 7 retries end within a few seconds.
 */
static void set_ack_timeout(struct rdma_cm_id *id)
{
	uint8_t t = 16;

	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof(t)))
		gdr_dbg("rdma_set_option(ACK_TIMEOUT): %s", strerror(errno));
}

static void addr_str(const struct sockaddr *sa, char *out, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, host, sizeof(host));
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, host,
			  sizeof(host));
	gdr_strlcpy(out, host, len);
}

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
	release_device(c);
	c->nqps = 0;
}

static void forget_id(struct gdr_conn *c, unsigned int i, uint64_t *est)
{
	if (c->id[i]->qp)
		rdma_destroy_qp(c->id[i]);
	rdma_destroy_id(c->id[i]);
	c->id[i] = NULL;
	*est &= ~(1ull << i);
	drain(c);
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

int gdr_conn_accept(struct gdr_conn *c, const struct gdr_opts *o, volatile sig_atomic_t *stop,
		    char *why, size_t wlen)
{
	struct sockaddr_storage ss;
	struct rdma_cm_event *ev;
	/* A --persistent server waits for its next client as long as it takes. */
	double deadline = gdr_now_s() + (o->persistent ? 1e9 : o->timeout);
	uint64_t est = 0; /* which of the client's QPs are established */
	int r;

	memset(c, 0, sizeof(*c));
	c->timeout = o->timeout;
	c->stop = stop;
	c->want_inline = o->latency ? GDR_CONN_LAT_INLINE : 0;
	r = gdr_check_device(o->dev, why, wlen);
	if (r)
		return r;
	c->ch = rdma_create_event_channel();
	if (!c->ch || set_nonblock(c->ch->fd)) {
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
	memset(&ss, 0, sizeof(ss));
	if (o->bind_addr) {
		struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *res;
		char port[8];

		snprintf(port, sizeof(port), "%u", o->port);
		r = getaddrinfo(o->bind_addr, port, &hints, &res);
		if (r) {
			snprintf(why, wlen, "--bind %s: %s", o->bind_addr, gai_strerror(r));
			return -EINVAL;
		}
		memcpy(&ss, res->ai_addr, res->ai_addrlen);
		freeaddrinfo(res);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)o->port);
		sin->sin_addr.s_addr = htonl(INADDR_ANY);
	}
	if (rdma_bind_addr(c->listen_id, (struct sockaddr *)&ss)) {
		r = -errno;
		/* rdma_cm says EADDRNOTAVAIL, not EADDRINUSE, for a taken wildcard port. */
		if (r == -EADDRINUSE || (r == -EADDRNOTAVAIL && !o->bind_addr))
			snprintf(why, wlen, "port %u is already in use (another gdrperf server?)",
				 o->port);
		else if (r == -EADDRNOTAVAIL)
			snprintf(why, wlen,
				 "--bind %s port %u: %s (not an address of an RDMA device, "
				 "or the port is taken)",
				 o->bind_addr, o->port, strerror(-r));
		else
			snprintf(why, wlen, "rdma_bind_addr(%s port %u): %s",
				 o->bind_addr ? o->bind_addr : "any", o->port, strerror(-r));
		return r;
	}
	if (rdma_listen(c->listen_id, 8)) {
		r = -errno;
		snprintf(why, wlen, "rdma_listen(port %u): %s", o->port, strerror(-r));
		return r;
	}
	c->listening = 1;
	gdr_dbg("listening on port %u", o->port);

	while (c->nqps == 0 || popcount64(est) < c->nqps) {
		r = next_event(c, deadline, &ev, why, wlen);
		if (r == -ETIMEDOUT)
			snprintf(why, wlen, "no client connected within %g s (--timeout)",
				 o->timeout);
		if (r)
			return r;
		struct rdma_cm_id *id = ev->id;
		enum rdma_cm_event_type type = ev->event;

		if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			struct gdr_hello h;
			char hwhy[160];
			struct rdma_conn_param param;
			const uint8_t *pd = ev->param.conn.private_data;
			uint8_t plen = ev->param.conn.private_data_len;

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
				continue;
			}
			if (c->nqps == 0) {
				c->nqps = h.nqps;
				c->session = h.session;
				c->tx_depth = h.tx_depth;
				c->extra_recv = h.extra_recv;
				addr_str(rdma_get_peer_addr(id), c->peer, sizeof(c->peer));
				r = setup_device(c, id, o->dev, (o->ib_port != 1) ? o->ib_port : 0,
						 why, wlen);
				if (r) {
					reject_with(id, r, "server cannot use its device");
					rdma_destroy_id(id);
					return r;
				}
			} else if (h.session != c->session || h.nqps != c->nqps ||
				   id->verbs != c->verbs || (est & (1ull << h.qp_index))) {
				reject_with(id, -EBUSY, "server busy with another client");
				rdma_destroy_id(id);
				continue;
			} else if (c->id[h.qp_index]) {
				/*
				 * The same client asks again for a QP we accepted but never
				 * saw established: it gave that attempt up (we were slow to
				 * answer), so the new request replaces it.
				 */
				gdr_dbg("client %s retried QP %u: dropping the stale attempt",
					c->peer, h.qp_index);
				if (c->id[h.qp_index]->qp)
					rdma_destroy_qp(c->id[h.qp_index]);
				rdma_destroy_id(c->id[h.qp_index]);
				c->id[h.qp_index] = NULL;
				drain(c);
			}
			set_ack_timeout(id);
			r = create_qp(c, id, h.qp_index, why, wlen);
			if (r) {
				/*
				 * Most often the client gave this request up while we were
				 * slow (rdma_cm then refuses to move the QP to INIT): the
				 * server goes on listening either way.
				 */
				gdr_warn("client %s: %s; still listening", c->peer, why);
				reject_with(id, r, "server cannot create a QP");
				if (c->id[h.qp_index] == id) {
					forget_id(c, h.qp_index, &est);
				} else {
					rdma_destroy_id(id);
					forget_client_if_none(c);
				}
				continue;
			}
			fill_conn_param(c, &param, NULL, 0);
			if (rdma_accept(id, &param)) {
				/* The client gave this attempt up before we answered. */
				gdr_warn("client %s: rdma_accept(QP %u): %s; still listening",
					 c->peer, h.qp_index, strerror(errno));
				forget_id(c, h.qp_index, &est);
			}
			continue;
		}
		int status = ev->status;
		int qi = find_id(c, id);
		rdma_ack_cm_event(ev);
		switch (type) {
		case RDMA_CM_EVENT_ESTABLISHED:
			if (qi >= 0)
				est |= 1ull << qi;
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
			forget_id(c, (unsigned int)qi, &est);
			break;
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			snprintf(why, wlen, "%s: device removed", c->nic);
			return -ENODEV;
		default:
			gdr_dbg("ignoring %s", rdma_event_str(type));
			break;
		}
	}
	return 0;
}

static int resolve(struct gdr_conn *c, struct rdma_cm_id *id, const struct sockaddr *src,
		   const struct sockaddr *dst, double deadline, char *why, size_t wlen)
{
	struct rdma_cm_event *ev;
	int r, ms = (int)(remaining(deadline) * 1000);

	if (ms < 100)
		ms = 100;
	if (ms > 2000)
		ms = 2000;
	if (rdma_resolve_addr(id, (struct sockaddr *)src, (struct sockaddr *)dst, ms)) {
		r = -errno;
		snprintf(why, wlen, "rdma_resolve_addr(%s): %s", c->peer, strerror(-r));
		return r;
	}
	r = next_event(c, deadline, &ev, why, wlen);
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
	r = next_event(c, deadline, &ev, why, wlen);
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
static int connect_one(struct gdr_conn *c, const struct gdr_opts *o, const struct sockaddr *src,
		       const struct sockaddr *dst, unsigned int index, double deadline, char *why,
		       size_t wlen)
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
	r = resolve(c, id, src, dst, deadline, why, wlen);
	if (r)
		goto out_destroy_id;
	if (!c->pd) {
		r = setup_device(c, id, o->dev, (o->ib_port != 1) ? o->ib_port : 0, why, wlen);
		if (r)
			goto out_destroy_id;
	} else if (id->verbs != c->verbs) {
		snprintf(why, wlen, "QP %u resolved to another device than QP 0", index);
		r = -ENODEV;
		goto out_destroy_id;
	}
	set_ack_timeout(id);
	r = create_qp(c, id, index, why, wlen);
	if (r)
		goto out_destroy_id;
	gdr_hello_encode(&h, hello, sizeof(hello));
	fill_conn_param(c, &param, hello, sizeof(hello));
	if (rdma_connect(id, &param)) {
		r = -errno;
		snprintf(why, wlen, "rdma_connect(%s): %s", c->peer, strerror(-r));
		goto out_destroy_qp;
	}
	r = next_event(c, deadline, &ev, why, wlen);
	if (r)
		goto out_destroy_qp;
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		rdma_ack_cm_event(ev);
		return 0;
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
				 c->peer, o->port);
			r = -EAGAIN;
		}
		break;
	}
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		snprintf(why, wlen, "server %s port %u unreachable (%s, status %d)", c->peer,
			 o->port, rdma_event_str(ev->event), ev->status);
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
	drain(c);
out_destroy_id:
	rdma_destroy_id(id);
	return r;
}

int gdr_conn_connect(struct gdr_conn *c, const struct gdr_opts *o, volatile sig_atomic_t *stop,
		     char *why, size_t wlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV }, *res;
	struct sockaddr_storage dst, src;
	double deadline = gdr_now_s() + o->timeout;
	double backoff = 0.1;
	char port[8], refused[256] = "";
	int r;

	memset(c, 0, sizeof(*c));
	c->timeout = o->timeout;
	c->stop = stop;
	c->want_inline = o->latency ? GDR_CONN_LAT_INLINE : 0;
	c->nqps = o->qps;
	c->tx_depth = o->tx_depth;
	c->extra_recv = o->bounce_slots * 2 + 8;
	gdr_strlcpy(c->peer, o->server, sizeof(c->peer));
	r = gdr_check_device(o->dev, why, wlen);
	if (r)
		return r;
	{
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		c->session = (uint32_t)(ts.tv_nsec ^ ts.tv_sec ^ ((uint32_t)getpid() << 16));
	}
	snprintf(port, sizeof(port), "%u", o->port);
	r = getaddrinfo(o->server, port, &hints, &res);
	if (r) {
		snprintf(why, wlen, "server '%s': %s", o->server, gai_strerror(r));
		return -EHOSTUNREACH;
	}
	memcpy(&dst, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	addr_str((struct sockaddr *)&dst, c->peer, sizeof(c->peer));
	/* --bind on a client: the source address, which is how rdma_cm picks the NIC. */
	if (o->bind_addr) {
		struct addrinfo sh = { .ai_family = dst.ss_family, .ai_flags = AI_NUMERICHOST };

		r = getaddrinfo(o->bind_addr, NULL, &sh, &res);
		if (r) {
			snprintf(why, wlen, "--bind %s: %s", o->bind_addr, gai_strerror(r));
			return -EINVAL;
		}
		memcpy(&src, res->ai_addr, res->ai_addrlen);
		freeaddrinfo(res);
	}

	c->ch = rdma_create_event_channel();
	if (!c->ch || set_nonblock(c->ch->fd)) {
		r = -(errno ? errno : ENODEV);
		snprintf(why, wlen, "rdma_create_event_channel: %s (is rdma_ucm loaded?)",
			 strerror(-r));
		return r;
	}
	for (unsigned int i = 0; i < c->nqps; i++) {
		for (;;) {
			r = connect_one(c, o, o->bind_addr ? (struct sockaddr *)&src : NULL,
					(struct sockaddr *)&dst, i, deadline, why, wlen);
			if (r != -EAGAIN)
				break;
			gdr_strlcpy(refused, why, sizeof(refused));
			if (stopped(c)) {
				snprintf(why, wlen, "interrupted");
				return -EINTR;
			}
			if (remaining(deadline) <= backoff) {
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
					 c->peer, o->port, o->timeout);
			return r;
		}
	}
	return 0;
}

int gdr_conn_poll_cm(struct gdr_conn *c)
{
	struct rdma_cm_event *ev;

	if (c->peer_gone)
		return -ECONNRESET;
	while (c->ch && rdma_get_cm_event(c->ch, &ev) == 0) {
		enum rdma_cm_event_type t = ev->event;
		rdma_ack_cm_event(ev);
		if (t == RDMA_CM_EVENT_DISCONNECTED || t == RDMA_CM_EVENT_DEVICE_REMOVAL ||
		    t == RDMA_CM_EVENT_TIMEWAIT_EXIT) {
			c->peer_gone = 1;
			return -ECONNRESET;
		}
	}
	return 0;
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
	int n;

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
			if (gdr_now_s() > deadline) {
				snprintf(why, wlen, "sending %s to %s: no completion within %g s",
					 gdr_msg_type_name(m->type), c->peer, c->timeout);
				return -ETIMEDOUT;
			}
			if (stopped(c)) {
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

/*
 * Liveness probe: a zero-byte RDMA WRITE needs no rkey or address on the
 * responder (IBTA C9-88), consumes no receive and wakes no process there; it
 * is acknowledged by the peer's RDMA stack while the peer's QP exists (even
 * when the process is stopped), and fails with a retry error, or stays
 * unacknowledged, once the peer or the path is gone. Its completion lands in
 * the data CQ; the loops and gdr_ctrl_send skip it (GDR_WRID_PROBE).
 */
static int probe_post(struct gdr_conn *c)
{
	struct ibv_send_wr wr = {
		.wr_id = GDR_WRID_PROBE,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (ibv_post_send(c->id[0]->qp, &wr, &bad))
		return -errno;
	c->probing = 1;
	c->probe_sent = gdr_now_s();
	return 0;
}

/*
 * Reap data-CQ completions without waiting: late ones of a finished loop
 * are dropped (already accounted for), a failed one means the peer is gone.
 */
static int probe_reap(struct gdr_conn *c, char *why, size_t wlen)
{
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(c->data_cq, 1, &wc)) == 1) {
		if (wc.wr_id == GDR_WRID_PROBE)
			c->probing = 0;
		if (wc.status != IBV_WC_SUCCESS) {
			snprintf(why, wlen, "peer %s stopped responding (%s on a liveness probe)",
				 c->peer, ibv_wc_status_str(wc.status));
			c->peer_gone = 1;
			return -ECONNRESET;
		}
	}
	if (n < 0) {
		snprintf(why, wlen, "%s: ibv_poll_cq(data) failed", c->nic);
		return -EIO;
	}
	/*
	 * The transport's own verdict (retry exceeded) may never come: rxe, for
	 * one, retries a lost request forever. A live peer's RDMA stack answers
	 * within a round trip whatever its process is doing.
	 */
	if (c->probing && gdr_now_s() - c->probe_sent > GDR_PROBE_DEAD_S) {
		snprintf(why, wlen,
			 "peer %s stopped responding (a liveness probe got no acknowledgement "
			 "in %g s: host down or network cut?)",
			 c->peer, GDR_PROBE_DEAD_S);
		c->peer_gone = 1;
		return -ECONNRESET;
	}
	return 0;
}

int gdr_ctrl_recv(struct gdr_conn *c, struct gdr_msg *m, double timeout, char *why, size_t wlen)
{
	double deadline = gdr_now_s() + timeout;
	double next_probe = gdr_now_s() + GDR_PROBE_S;
	struct ibv_wc wc;
	int n, r, armed = 0;

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
			if (wc.wr_id >= nslots(c) || wc.opcode != IBV_WC_RECV ||
			    (wc.wc_flags & IBV_WC_WITH_IMM)) {
				snprintf(why, wlen,
					 "unexpected receive completion (slot %llu, opcode %d) "
					 "while waiting for a control message",
					 (unsigned long long)wc.wr_id, (int)wc.opcode);
				return -EPROTO;
			}
			r = gdr_msg_decode(RECV_SLOT(c, wc.wr_id), wc.byte_len, m, why, wlen);
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
			snprintf(why, wlen, "peer %s disconnected", c->peer);
			return -ECONNRESET;
		}
		if (stopped(c)) {
			snprintf(why, wlen, "interrupted");
			return -EINTR;
		}
		r = c->probe || c->probing ? probe_reap(c, why, wlen) : 0;
		if (r)
			return r;
		if (c->probe && !c->probing && gdr_now_s() >= next_probe) {
			r = probe_post(c);
			if (r)
				gdr_dbg("%s: liveness probe: ibv_post_send: %s", c->nic,
					strerror(-r));
			next_probe = gdr_now_s() + GDR_PROBE_S;
		}
		double left = remaining(deadline);
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

void gdr_conn_close(struct gdr_conn *c)
{
	for (unsigned int i = 0; i < GDR_MAX_QPS; i++)
		if (c->id[i] && !c->peer_gone)
			rdma_disconnect(c->id[i]);
	for (unsigned int i = 0; i < GDR_MAX_QPS; i++) {
		if (!c->id[i])
			continue;
		if (c->id[i]->qp)
			rdma_destroy_qp(c->id[i]);
		rdma_destroy_id(c->id[i]);
		c->id[i] = NULL;
	}
	release_device(c);
	if (c->listen_id)
		rdma_destroy_id(c->listen_id);
	if (c->ch)
		rdma_destroy_event_channel(c->ch);
	memset(c, 0, sizeof(*c));
}
