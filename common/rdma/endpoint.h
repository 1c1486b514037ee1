/*
 * Where this side listens or connects: the options as given, then what the
 * placement resolved (-d auto, --gpu auto, the NIC's address). The options
 * themselves are never written after parsing; the session owns this struct.
 */
#ifndef GDR_ENDPOINT_H
#define GDR_ENDPOINT_H

#include "options.h"

struct gdr_endpoint {
	const char *server;    /* NULL: this side is the server */
	unsigned int port;     /* -p */
	const char *dev;       /* -d, or the NIC placement chose; NULL: rdma_cm picks */
	int ib_port;	       /* -i */
	const char *bind_addr; /* --bind, or -d's address */
	const char *gpu;       /* --gpu, or the bus id --gpu auto chose */
	char dev_buf[64], bind_buf[64], gpu_buf[64];
};

static inline void gdr_endpoint_from_opts(struct gdr_endpoint *ep, const struct gdr_opts *o)
{
	*ep = (struct gdr_endpoint){
		.server = o->server,
		.port = o->port,
		.dev = o->dev,
		.ib_port = o->ib_port,
		.bind_addr = o->bind_addr,
		.gpu = o->gpu,
	};
}

#endif
