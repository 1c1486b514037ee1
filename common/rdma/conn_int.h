/*
 * Inside the connection (conn*.c, ctl_conn.c, probe.c): what the files of the
 * transport share and nothing outside it calls.
 */
#ifndef GDR_CONN_INT_H
#define GDR_CONN_INT_H

#include "conn.h"

/* Seconds left until deadline, never negative. */
double gdr_conn_remaining(double deadline);
/* Has the caller's stop flag been raised? */
int gdr_conn_stopped(const struct gdr_conn *c);
/* Wait for the next CM event (up to deadline); the event is returned unacked in *ev. */
int gdr_conn_next_event(struct gdr_conn *c, double deadline, struct rdma_cm_event **ev, char *why,
			size_t wlen);
int gdr_conn_set_nonblock(int fd);
void gdr_conn_set_ack_timeout(struct rdma_cm_id *id);
/* -T/--tos on an id before it resolves a route (tos < 0: nothing). 0 or -errno with why. */
int gdr_conn_set_tos(struct rdma_cm_id *id, int tos, char *why, size_t wlen);
/* -m: 0 when mtu is 0 or the QP's path MTU; else -EINVAL naming both. */
int gdr_conn_check_mtu(struct rdma_cm_id *id, unsigned int mtu, char *why, size_t wlen);
void gdr_conn_addr_str(const struct sockaddr *sa, char *out, size_t len);
/*
 * The first address getaddrinfo gives for host (and port; 0: none) with
 * hints, into out. 0, or -EINVAL with why "what: the resolver's text".
 */
struct addrinfo;
struct sockaddr_storage;
int gdr_conn_resolve(const char *what, const char *host, unsigned int port,
		     const struct addrinfo *hints, struct sockaddr_storage *out, char *why,
		     size_t wlen);

/* conn_dev.c: PD, CQs and control buffer on the device the first id landed on. */
int gdr_conn_setup_device(struct gdr_conn *c, struct rdma_cm_id *id, const char *want_dev,
			  int ib_port, char *why, size_t wlen);
int gdr_conn_create_qp(struct gdr_conn *c, struct rdma_cm_id *id, unsigned int index, char *why,
		       size_t wlen);
void gdr_conn_fill_param(struct gdr_conn *c, struct rdma_conn_param *p, const void *pdata,
			 uint8_t plen);
void gdr_conn_drain(struct gdr_conn *c);
void gdr_conn_release_device(struct gdr_conn *c);

/* probe.c: the liveness probe gdr_ctrl_recv runs while it waits. */
int gdr_probe_post(struct gdr_conn *c);
int gdr_probe_reap(struct gdr_conn *c, char *why, size_t wlen);

#endif
