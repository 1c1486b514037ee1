/*
 * A path: how this side's buffers for one --mem kind are made, described to
 * the peer and driven for one timed repeat. One table of functions per
 * engine, as the mem vtable is one per registration: path_rdma.c (RDMA
 * WRITE/READ straight into the registered buffer: loop.c, lat_loop.c) and
 * path_bounce.c (the staged pipeline of bounce.c). The session calls the
 * table and knows no path by name.
 *
 * Every path has per QP a source half and a destination half (src_len,
 * dst_len bytes, validate.h), written and checked by path.c for --validate.
 */
#ifndef GDR_PATH_H
#define GDR_PATH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "mem.h"
#include "options.h"
#include "proto.h"
#include "validate.h"

struct gdr_conn;
struct gdr_loop_out;

/* What a path needs from the session: fixed for the plan. */
struct gdr_path_env {
	const struct gdr_plan *plan;
	int client;	       /* this side is the client (it times the run) */
	struct gdr_conn *conn; /* the data QPs */
	const struct gdr_mem_env *menv;
	double timeout; /* --timeout: a stall this long is a failure */
	volatile sig_atomic_t *stop;
	const struct gdr_path_ops *ops; /* NULL: gdr_path_ops_for(kind); tests: a fake */
};

struct gdr_path {
	const struct gdr_path_ops *ops;
	const struct gdr_path_env *env;
	enum gdr_mem_kind kind;
	enum gdr_mem_kind peer_kind; /* the peer's path of this combination (issue 48) */
	struct gdr_mem mem;
	int ok;			 /* 0: skipped on this side or the peer's, reason in skip */
	int err;		 /* skipped here: the -errno of the allocation, when it failed */
	size_t src_len, dst_len; /* per QP: the source half, then the destination half */
	struct gdr_remote_buf remote[GDR_MAX_QPS];
	/* --validate: the destination read back, and what source and poison must be. */
	uint8_t *tmp, *want_src, *want_poison;
	char skip[512];
};

struct gdr_path_ops {
	/* Receive WRs beyond the control slots the path consumes itself (at connect). */
	unsigned int (*recv_slots)(const struct gdr_opts *o);
	/* QPs that carry its data, of the plan's. */
	unsigned int (*qps)(const struct gdr_plan *plan);
	/* The side that does not issue the verb still drives every repeat (its half). */
	int passive_runs;
	/*
	 * Allocate and register this side's buffers (src_len, dst_len set):
	 * p->ok = 1, or p->ok = 0 and p->skip saying why the path is skipped here.
	 */
	void (*open)(struct gdr_path *p);
	/* The BUF message that tells the peer where to reach us. */
	void (*describe)(const struct gdr_path *p, struct gdr_msg_buf *out);
	/* Bytes the peer must have registered for QP q. */
	uint64_t (*need)(const struct gdr_path *p, unsigned int q);
	/* The slots of --validate for messages of size. */
	void (*layout)(const struct gdr_path *p, uint64_t size, struct gdr_vlayout *l);
	/* Bandwidth: one repeat of this side. 0 or -errno with why. */
	int (*run)(struct gdr_path *p, uint64_t size, struct gdr_loop_out *out, char *why,
		   size_t wlen);
	/* Latency: one repeat; the client stores plan->iters samples (us), the server NULL. */
	int (*run_lat)(struct gdr_path *p, uint64_t size, double *samples, char *why, size_t wlen);
	/* Latency: before the peer may write (START/ACK); may be NULL. */
	void (*lat_arm)(const struct gdr_path *p, uint64_t size);
	/* Latency: 1 (why filled) when this size cannot run on the path. */
	int (*lat_skip)(const struct gdr_path *p, uint64_t size, char *why, size_t wlen);
	/* What a latency sample is; the note of a measured bandwidth row (NULL: none). */
	const char *(*lat_note)(const struct gdr_path *p);
	const char *(*row_note)(const struct gdr_path *p, char *buf, size_t len);
};

extern const struct gdr_path_ops gdr_path_rdma_ops;
extern const struct gdr_path_ops gdr_path_bounce_ops;

/*
 * The table that runs kind on this side against peer_kind on the other: the
 * bounce pipeline when either side stages (bounce on one side only: that
 * side stages, the other's buffer is registered directly; path_bounce.c).
 */
const struct gdr_path_ops *gdr_path_ops_for(enum gdr_mem_kind kind, enum gdr_mem_kind peer_kind);
/*
 * Latency on a registered buffer, no staging (path_rdma.c): the RDMA paths'
 * run_lat, and the bounce path's on the side whose buffer is registered directly.
 */
int gdr_path_rdma_run_lat(struct gdr_path *p, uint64_t size, double *samples, char *why,
			  size_t wlen);
/* Does the run tell each side's own path (GDR_SIDES_* not SAME): skip notes name the side. */
int gdr_path_per_side(const struct gdr_path_env *e);
/* WRITE latency: arrival told by the immediate (either side's buffer is not host memory). */
int gdr_path_lat_imm(const struct gdr_path *p);
/* Receive slots the paths of o->mem need (gdr_conn_connect). */
unsigned int gdr_paths_recv_slots(const struct gdr_opts *o);

/* ---- the session's calls (path.c) ------------------------------------------------------- */

/*
 * Open kind's buffers (p zeroed first) for a combination with the peer's
 * peer_kind; on a skip p->ok = 0 and p->skip says why.
 */
void gdr_path_open(struct gdr_path *p, enum gdr_mem_kind kind, enum gdr_mem_kind peer_kind,
		   const struct gdr_path_env *env);
void gdr_path_close(struct gdr_path *p);
/* This side's BUF message. */
void gdr_path_describe(const struct gdr_path *p, struct gdr_msg *m);
/*
 * Take the peer's BUF: 0 (p->ok = 0 when the peer skips), or -EPROTO with
 * why. With per-side paths a skip names the side: "server (remote): ...".
 */
int gdr_path_accept(struct gdr_path *p, const struct gdr_msg_buf *peer, char *why, size_t wlen);
/* --validate: the pattern into the sources, poison into the destinations. */
int gdr_path_fill(struct gdr_path *p, char *why, size_t wlen);
int gdr_path_poison(struct gdr_path *p, char *why, size_t wlen);
/*
 * --validate: n = messages the writer issued per QP, warmup included. 0 with
 * m->valid = 1; -EILSEQ with m->valid = -1 and the lost message in m; other
 * -errno (why) when the destination cannot be read.
 */
int gdr_path_check(struct gdr_path *p, uint64_t size, uint64_t n, struct gdr_msg_meas *m, char *why,
		   size_t wlen);

/* The buffers of the plan on the path's memory, for ops->open: p->ok = 1, or p->skip. */
void gdr_path_alloc(struct gdr_path *p);
/* ops that most paths share: the buffer halves as they are. */
void gdr_path_describe_halves(const struct gdr_path *p, struct gdr_msg_buf *out);
uint64_t gdr_path_need_half(const struct gdr_path *p, unsigned int q);

/* Roles (WRITE latency is a ping-pong: both sides write into the other). */
int gdr_path_issues_verb(const struct gdr_path_env *e);
int gdr_path_peer_issues(const struct gdr_path_env *e);
int gdr_path_fills_src(const struct gdr_path_env *e);
int gdr_path_checks_dst(const struct gdr_path_env *e);
int gdr_path_is_write(const struct gdr_path_env *e);

static inline size_t gdr_path_src_off(const struct gdr_path *p, unsigned int qp)
{
	return (size_t)qp * (p->src_len + p->dst_len);
}

static inline size_t gdr_path_dst_off(const struct gdr_path *p, unsigned int qp)
{
	return gdr_path_src_off(p, qp) + p->src_len;
}

#endif
