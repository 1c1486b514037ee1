/*
 * One run of a session: what it takes besides the options, which are frozen
 * once parsed. gdr_run_from_opts gives the run a program started by hand
 * makes; a launcher (launch_setup.c) makes this rank's: its pair's port, its
 * GPU and NIC, its server, its label, no file of its own (rank 0 writes the
 * rows) and its sync hooks; a sweep (sweep_run.c) makes one per round. The
 * session then resolves placement into its own struct gdr_endpoint.
 */
#ifndef GDR_RUN_H
#define GDR_RUN_H

#include <stddef.h>

#include "options.h"

struct gdr_endpoint;
struct gdr_result;

/*
 * Launched pairs (launch.h). rendezvous: once, after placement and before
 * connecting: the server publishes the address it listens on, the client
 * learns its server's (the launcher's copy of the run it handed out points
 * at it). point: on both sides before every measurement (each START), so
 * that pairs measure together. 0 or -errno. row (may be NULL): every result
 * row, kept for rank 0 to gather.
 */
struct gdr_sync {
	/*
	 * ep: where this rank listens or connects, after placement. failed:
	 * NULL, or why this rank cannot run (it still takes part, to tell its peer).
	 */
	int (*rendezvous)(void *ctx, const struct gdr_opts *o, const struct gdr_endpoint *ep,
			  const char *failed, char *why, size_t wlen);
	int (*point)(void *ctx, char *why, size_t wlen);
	void (*row)(void *ctx, const struct gdr_result *r);
	void *ctx;
	/*
	 * Pairs measured at once whose points are one barrier: their rounds must
	 * stay in step, so rounds until decided (decide.h) are fixed for them.
	 * 0 or 1: this pair alone.
	 */
	unsigned int pairs;
};

struct gdr_run {
	const char *server;	/* NULL: this side serves */
	unsigned int port;	/* the rdma_cm port */
	const char *dev;	/* -d as given or this rank's item of it; NULL: rdma_cm picks */
	const char *gpu;	/* --gpu as given or this rank's item of it; NULL: none */
	const char *label;	/* the rows' label column; NULL: none */
	const char *csv, *json; /* the files this process writes; NULL: none */
	const char *prom;	/* --prom, written whole at the end like json */
	double duration;	/* -D, or the one --time-budget chose; 0: iteration mode */
	const struct gdr_sync *sync; /* the launcher's hooks; NULL when run by hand */
	const char *row_note;	     /* ahead of every row's note (--loopback); NULL: none */
	/*
	 * A server started by hand with --mem: its own side (issue 48), as in
	 * perftest; NULL (a launched or --loopback server) adopts the client's.
	 */
	const enum gdr_mem_kind *server_mem;
	unsigned int server_nmem;
};

/* The run the options describe, for a program started by hand. */
static inline void gdr_run_from_opts(struct gdr_run *r, const struct gdr_opts *o)
{
	*r = (struct gdr_run){
		.server = o->server,
		.port = o->port,
		.dev = o->dev,
		.gpu = o->gpu,
		.label = o->label,
		.csv = o->csv,
		.json = o->json,
		.prom = o->prom,
		.duration = o->duration,
	};
	if (!o->server && (o->set & GDR_SET_MEM)) {
		r->server_mem = o->mem;
		r->server_nmem = o->nmem;
	}
}

#endif
