#include "config.h"

#include "conn_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

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

double gdr_conn_remaining(double deadline)
{
	double r = deadline - gdr_now_s();
	return r > 0 ? r : 0;
}

int gdr_conn_stopped(const struct gdr_conn *c)
{
	return c->stop && *c->stop;
}

/*
 * Wait for the next CM event (up to deadline). The event is returned unacked in *ev.
 */
int gdr_conn_next_event(struct gdr_conn *c, double deadline, struct rdma_cm_event **ev, char *why,
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
		if (gdr_conn_stopped(c)) {
			snprintf(why, wlen, "interrupted");
			return -EINTR;
		}
		double left = gdr_conn_remaining(deadline);
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

int gdr_conn_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -errno : (fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0);
}

/*
 * rdma_cm's default ACK timeout can be so long (or, on some providers,
 * infinite) that a send to a dead peer never completes: ask for about 0.27 s
 * per try (4.096 us * 2^16), so that on a real HCA the 7 retries
 * (gdr_conn_fill_param) end within a few seconds. rxe takes a retry count of
 * 7 as "forever" (rxe_comp.c), so there a send to a dead peer never fails:
 * the waits' own deadlines and the liveness probe (probe.c) are what end it.
 */
void gdr_conn_set_ack_timeout(struct rdma_cm_id *id)
{
	uint8_t t = 16;

	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof(t)))
		gdr_dbg("rdma_set_option(ACK_TIMEOUT): %s", strerror(errno));
}

int gdr_conn_set_tos(struct rdma_cm_id *id, int tos, char *why, size_t wlen)
{
	uint8_t t = (uint8_t)tos;

	if (tos < 0)
		return 0;
	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &t, sizeof(t))) {
		int r = -errno;

		snprintf(why, wlen, "-T/--tos %d: rdma_set_option(RDMA_OPTION_ID_TOS): %s", tos,
			 strerror(-r));
		return r;
	}
	return 0;
}

int gdr_conn_check_mtu(struct rdma_cm_id *id, unsigned int mtu, char *why, size_t wlen)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	unsigned int got;

	if (!mtu || !id->qp)
		return 0;
	if (ibv_query_qp(id->qp, &a, IBV_QP_PATH_MTU, &ia)) {
		snprintf(why, wlen, "-m %u: ibv_query_qp: %s", mtu, strerror(errno));
		return -errno;
	}
	got = 128u << a.path_mtu; /* IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5 */
	if (got != mtu) {
		snprintf(why, wlen,
			 "-m %u: rdma_cm set the path MTU to %u (the port's active MTU, on RoCE "
			 "from the interface MTU); set that instead (ip link set DEV mtu)",
			 mtu, got);
		return -EINVAL;
	}
	return 0;
}

int gdr_conn_resolve(const char *what, const char *host, unsigned int port,
		     const struct addrinfo *hints, struct sockaddr_storage *out, char *why,
		     size_t wlen)
{
	struct addrinfo *res;
	char serv[8];
	int r;

	snprintf(serv, sizeof(serv), "%u", port);
	r = getaddrinfo(host, port ? serv : NULL, hints, &res);
	if (r) {
		snprintf(why, wlen, "%s: %s", what, gai_strerror(r));
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	memcpy(out, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

void gdr_conn_addr_str(const struct sockaddr *sa, char *out, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, host, sizeof(host));
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, host,
			  sizeof(host));
	gdr_strlcpy(out, host, len);
}

void gdr_conn_debug_qp(const struct gdr_conn *c)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (!c->id[0] || !c->id[0]->qp ||
	    ibv_query_qp(c->id[0]->qp, &a,
			 IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
			     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_CAP,
			 &ia))
		return;
	gdr_dbg("%s: QP %u: state %d, path MTU %d B, %u outstanding READs out, %u in, "
		"timeout %u, retry %u, rnr retry %u, send depth %u, inline %u B",
		c->nic, c->id[0]->qp->qp_num, (int)a.qp_state, 128 << a.path_mtu,
		a.max_rd_atomic, a.max_dest_rd_atomic, a.timeout, a.retry_cnt, a.rnr_retry,
		a.cap.max_send_wr, a.cap.max_inline_data);
}

int gdr_conn_traffic_class(const struct gdr_conn *c)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (!c->id[0] || !c->id[0]->qp || ibv_query_qp(c->id[0]->qp, &a, IBV_QP_AV, &ia) ||
	    !(a.ah_attr.is_global))
		return -1;
	return a.ah_attr.grh.traffic_class;
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
	gdr_conn_release_device(c);
	if (c->listen_id)
		rdma_destroy_id(c->listen_id);
	if (c->ch)
		rdma_destroy_event_channel(c->ch);
	memset(c, 0, sizeof(*c));
}
