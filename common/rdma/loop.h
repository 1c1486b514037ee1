/*
 * The post/poll engine for RDMA WRITE and READ: -q QPs sharing one CQ,
 * -t outstanding requests per QP, -l requests per ibv_post_send, one
 * signaled request every -Q (and whenever the window would otherwise close).
 */
#ifndef GDR_LOOP_H
#define GDR_LOOP_H

#include <infiniband/verbs.h>
#include <signal.h>
#include <stdint.h>

#include "bidir.h"

struct gdr_conn;

struct gdr_loop_qp {
	struct ibv_qp *qp;
	uint64_t laddr;
	uint32_t lkey;
	uint64_t raddr;
	uint32_t rkey;
	/*
	 * --validate: message k of a run (warmup included) uses local slot
	 * k mod lslots and remote slot k mod rslots, cfg->stride bytes apart,
	 * so that every message lands at its own place (validate.h). 0 or 1:
	 * every message at laddr/raddr.
	 */
	unsigned int lslots, rslots;
};

struct gdr_loop_cfg {
	enum ibv_wr_opcode opcode; /* IBV_WR_RDMA_WRITE or IBV_WR_RDMA_READ */
	uint32_t size;
	uint64_t iters;	 /* per QP; ignored when duration > 0 */
	double duration; /* seconds */
	unsigned int tx_depth, post_list, cq_mod;
	uint64_t stride;      /* bytes between slots (lslots/rslots > 1) */
	unsigned int warmup;  /* untimed messages per QP first */
	double stall_timeout; /* no completion for this long = failure */
	volatile sig_atomic_t *stop;
	struct gdr_conn *conn; /* watched for a disconnect; may be NULL */
};

/*
 * The slow checks of a busy loop (stall, peer disconnected) are paced by the
 * clock, not by iterations: an iteration takes well under a microsecond on
 * an HCA but can take tens of milliseconds on a loaded Soft-RoCE VM, where
 * "every 1024 iterations" meant a SIGINT waited out the whole -D.
 */
#define GDR_PACE_NS 100000000ull /* 0.1 s */
struct gdr_pace {
	uint64_t next_ns;
	unsigned long ticks;
};
/* 1 when at least GDR_PACE_NS passed since the last time it said 1. */
static inline int gdr_pace_due(struct gdr_pace *p, uint64_t now)
{
	if (now < p->next_ns)
		return 0;
	p->next_ns = now + GDR_PACE_NS;
	p->ticks++;
	return 1;
}

struct gdr_loop_out {
	uint64_t iters; /* messages completed per QP (every QP completes as many) */
	uint64_t msgs;	/* all QPs */
	uint64_t bytes;
	uint64_t elapsed_ns;
	/*
	 * Best rate over the whole run and its windows of at least
	 * GDR_PEAK_CQES_PER_QP completions per QP, counting only messages posted
	 * inside the window (stats.h), bytes/s; NAN when nothing completed.
	 */
	double peak_bps;
	double cpu_pct;		/* this process's CPU time / wall time, percent of one core */
	struct gdr_timeline tl; /* -b: completed bytes over the run (bidir.h), CLOCK_MONOTONIC ns */
};

/* A peak window spans at least this many completions per QP. */
#define GDR_PEAK_CQES_PER_QP 4

int gdr_loop_run(struct ibv_cq *cq, const struct gdr_loop_qp *qps, unsigned int nqps,
		 const struct gdr_loop_cfg *cfg, struct gdr_loop_out *out, char *why, size_t wlen);

/*
 * Signaling rule, exposed for tests: should the last request of a chain of k
 * posted after `posted` requests (of target, `done` completed) be signaled?
 * *unsignaled counts the requests posted since the last signaled one (a
 * counter, not a division per post); it is updated.
 */
int gdr_loop_signal(unsigned int *unsignaled, uint64_t posted, unsigned int k, uint64_t done,
		    uint64_t target, const struct gdr_loop_cfg *cfg);

#endif
