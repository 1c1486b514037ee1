/*
 * --loopback (issue 42): the one-node pre-job check. For every GPU-NIC pair
 * of this node (or those -d and --gpu name), a server child on the NIC's own
 * address and a client child, through the same NIC, every --mem
 * path; then one verdict line per pair and an exit status a health check can
 * use (docs/exit-status.md).
 */
#ifndef GDR_LOOPBACK_H
#define GDR_LOOPBACK_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "options.h"
#include "report.h"

#define GDR_LB_MAX_PAIRS 64

struct gdr_lb_pair {
	char dev[64];
	char gpu[64]; /* "" : no GPU (host paths only) */
};

/*
 * The pairs: -d's and --gpu's items by index (a one-item list applies to
 * every pair), or without -d every RDMA device under ROOT/sys/class/infiniband
 * whose port -i is ACTIVE. A pair's GPU is its --gpu item ("auto": the one
 * nearest its NIC) or none: a GPU path then takes the session's default, GPU
 * 0. 0, -EINVAL (usage: why says it) or -ENOENT (no device: why says so).
 */
int gdr_lb_pairs(const struct gdr_opts *o, const char *root, struct gdr_lb_pair *pairs,
		 unsigned int max, unsigned int *n, char *why, size_t wlen);

/*
 * One pair's verdict from its client rows: ok when the client and the server
 * ended with 0 and every path of mem[nmem] has rows, all "ok". line gets
 * "loopback GPU 0 <-> mlx5_0: ok (host 23.1, dmabuf 22.8 Gb/s)" (the best
 * bw_avg_gbps of each path, 3 digits; latency rows: "ok (host 3.2, bounce 5.0 us
 * p50)", the lowest lat_p50_us to 0.1 us) or "...: FAIL: dmabuf: <cause>; ...". client_rc
 * and server_cause (NULL: the server ended well) say how the two sides
 * ended. bad (NULL: not wanted) gets bit m set for each mem[m] that failed
 * (every one when a side failed). 0 ok, 1 failed.
 */
int gdr_lb_verdict(const struct gdr_lb_pair *p, const enum gdr_mem_kind *mem, unsigned int nmem,
		   const struct gdr_result *rows, unsigned int nrows, int client_rc,
		   const char *server_cause, char *line, size_t len, unsigned int *bad);

/*
 * The --nfd labels of a loopback run of TOOL ("write-bw", "read-lat", ...)
 * over npairs pairs, nok of them ok, each mem[m] failed in some pair when bit
 * m of bad is set: gdrperf.loopback-TOOL=pass|fail, gdrperf.loopback-TOOL.PATH
 * =pass|fail, gdrperf.loopback-TOOL.pairs=N, ...pairs-ok=N (a features.d file).
 */
void gdr_lb_nfd(FILE *out, const char *tool, const enum gdr_mem_kind *mem, unsigned int nmem,
		unsigned int npairs, unsigned int nok, unsigned int bad);

/* Run every pair; the exit status (0 every pair ok, 1 one failed, 2 usage). */
int gdr_loopback_run(const struct gdr_opts *o, volatile sig_atomic_t *stop);

#endif
