/*
 * Where this side listens or connects: the run as given (run.h), then what
 * the placement resolved (-d auto, --gpu auto, the NIC's address). Neither
 * the options nor the run are written after they are made; the session owns
 * this struct.
 */
#ifndef GDR_ENDPOINT_H
#define GDR_ENDPOINT_H

#include "options.h"
#include "run.h"

struct gdr_endpoint {
	const char *server;    /* NULL: this side is the server */
	unsigned int port;     /* -p */
	const char *dev;       /* -d, or the NIC placement chose; NULL: rdma_cm picks */
	int ib_port;	       /* -i */
	const char *bind_addr; /* --bind, or -d's address */
	const char *gpu;       /* --gpu, or the bus id --gpu auto chose */
	int tos;	       /* -T/--tos: set on every rdma_cm id; -1 = rdma_cm's default */
	unsigned int mtu;      /* -m: the path MTU a connection must get; 0 = any */
	char dev_buf[64], bind_buf[64], gpu_buf[64];
};

/* Before placement: the run's server, port, NIC and GPU, the options' -i and --bind. */
static inline void gdr_endpoint_init(struct gdr_endpoint *ep, const struct gdr_opts *o,
				     const struct gdr_run *run)
{
	*ep = (struct gdr_endpoint){
		.server = run->server,
		.port = run->port,
		.dev = run->dev,
		.ib_port = o->ib_port,
		.bind_addr = o->bind_addr,
		.gpu = run->gpu,
		.tos = o->tos,
		.mtu = o->mtu,
	};
}

#endif
