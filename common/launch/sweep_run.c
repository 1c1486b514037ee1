/*
 * --sweep: this rank runs every round of the schedule (sweep.c), as the
 * server or the client of that round's peer. Each round starts when rank 0
 * says so over the sweep's channel (sweep_chan.c), so that every pair of a
 * round measures at the same time and no node is in two pairs at once. A
 * pair that fails becomes a failed row and the sweep goes on; so does a node
 * whose process is gone: rank 0 drops it, and its peers write failed rows
 * for their pairs with it without trying. Rank 0 prints the matrix from the
 * gathered rows.
 */
#include "config.h"

#include "launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "sweep.h"
#include "sweep_chan.h"
#include "util.h"

_Static_assert(GDR_LAUNCH_ADDR_MAX == 64, "node names are the matrix's 64-byte names");

struct round {
	struct gdr_launched *x;
	unsigned int peer;
	int rows;
};

/* No barrier before each measurement in a sweep: the round barrier starts the pairs. */
static int no_point(void *ctx, char *why, size_t wlen)
{
	(void)ctx;
	(void)why;
	(void)wlen;
	return 0;
}

/* Rows name both nodes, so that the matrix can be built from any rank's file. */
static void keep(void *ctx, const struct gdr_result *r)
{
	struct round *rc = ctx;
	struct gdr_result row = *r;

	gdr_strlcpy(row.host, rc->x->names[rc->x->l.rank], sizeof(row.host));
	gdr_strlcpy(row.peer, rc->x->names[rc->peer], sizeof(row.peer));
	(void)gdr_rows_add(&rc->x->mine, &row);
	rc->rows++;
}

/* A pair that did not measure: one failed row per path, naming the cause. */
static void failed_rows(struct gdr_launched *x, const struct gdr_opts *o, unsigned int peer,
			int serves, const char *why)
{
	for (unsigned int i = 0; i < o->nmem; i++) {
		struct gdr_result r;

		gdr_result_init(&r);
		gdr_strlcpy(r.host, x->names[x->l.rank], sizeof(r.host));
		gdr_strlcpy(r.peer, x->names[peer], sizeof(r.peer));
		gdr_strlcpy(r.role, serves ? "server" : "client", sizeof(r.role));
		gdr_strlcpy(r.verb, gdr_verb_name(o->verb), sizeof(r.verb));
		gdr_strlcpy(r.path, gdr_mem_kind_name(o->mem[i]), sizeof(r.path));
		gdr_strlcpy(r.status, "failed", sizeof(r.status));
		gdr_strlcpy(r.note, why, sizeof(r.note));
		if (o->label)
			gdr_strlcpy(r.label, o->label, sizeof(r.label));
		(void)gdr_rows_add(&x->mine, &r);
	}
}

/*
 * How long a round may take: every path, size and repeat of the plan at its
 * duration, or its bytes at 1 MB/s (the session's own floor), each with
 * --timeout, on top of the connection. Only a stuck pair reaches it.
 */
double gdr_sweep_round_bound(const struct gdr_opts *o, double duration)
{
	double t = 4 * o->timeout;

	for (unsigned int k = 0; k < o->nsizes; k++) {
		double one =
		    duration > 0 ? duration : (double)o->sizes[k] * (double)o->iters * o->qps / 1e6;

		t += (double)o->nmem * o->repeat * (one + o->timeout);
	}
	return t;
}

int gdr_sweep_run(struct gdr_launched *x, const struct gdr_opts *o, volatile sig_atomic_t *stop)
{
	unsigned int m = x->nodes, me = (unsigned int)x->l.rank;
	unsigned int rounds = gdr_sweep_rounds(o->sweep, m, o->sweep_both);
	char why[512], label[256];
	int bad = 0;

	x->bound = gdr_sweep_round_bound(o, x->run.duration);
	printf("sweep: %s, %u nodes, %u round(s)%s; this rank is node %s\n",
	       gdr_sweep_mode_name(o->sweep), m, rounds, o->sweep_both ? ", both directions" : "",
	       x->names[me]);
	fflush(stdout);
	for (unsigned int k = 0; k < rounds && !(stop && *stop); k++) {
		struct gdr_run ro = x->run;
		struct round rc = { .x = x };
		struct gdr_sync sync = { .point = no_point, .row = keep, .ctx = &rc };
		int serves, peer, r;

		if (gdr_chan_round(x->chan, k, x->bound, x->alive, why, sizeof(why))) {
			/* Without rank 0 nobody gathers: the rest of the sweep is lost. */
			gdr_err("sweep: round %u: %s; the sweep stops here", k + 1, why);
			return 1;
		}
		peer = gdr_sweep_peer(o->sweep, m, o->sweep_both, k, me, &serves);
		if (peer < 0) {
			printf("sweep: round %u of %u: node %s sits this round out\n", k + 1,
			       rounds, x->names[me]);
			fflush(stdout);
			continue;
		}
		rc.peer = (unsigned int)peer;
		ro.sync = &sync;
		/*
		 * Each server its own port (nodes of one host may share an address),
		 * and not the one of the round before: nothing late from the last
		 * connection can reach this one.
		 */
		ro.port = o->port + (k % 2) * m + (serves ? me : (unsigned int)peer);
		ro.server = serves ? NULL : x->addrs[peer];
		snprintf(label, sizeof(label), "%s%ssweep round %u", o->label ? o->label : "",
			 o->label ? "; " : "", k + 1);
		ro.label = label;
		printf("sweep: round %u of %u: node %s %s node %s (port %u)\n", k + 1, rounds,
		       x->names[me], serves ? "serves" : "connects to", x->names[peer], ro.port);
		fflush(stdout);
		if (!x->alive[peer]) {
			snprintf(why, sizeof(why), "round %u: node %s is gone (rank 0 lost it: %s)",
				 k + 1, x->names[peer],
				 x->addrs[peer][0] == '!'
				     ? x->addrs[peer] + 1
				     : "its process ended or stopped answering");
			gdr_err("sweep: %s", why);
			failed_rows(x, o, (unsigned int)peer, serves, why);
			bad = 1;
			continue;
		}
		if (!serves && x->addrs[peer][0] == '!') {
			snprintf(why, sizeof(why), "node %s has no address: %s", x->names[peer],
				 x->addrs[peer] + 1);
			gdr_err("sweep: round %u: %s", k + 1, why);
			failed_rows(x, o, (unsigned int)peer, serves, why);
			bad = 1;
			continue;
		}
		r = gdr_session_run(o, &ro, stop);
		if (r && !(stop && *stop)) {
			snprintf(why, sizeof(why), "round %u: the pair with node %s failed%s",
				 k + 1, x->names[peer],
				 rc.rows ? " after some rows" : " (see this node's messages)");
			failed_rows(x, o, (unsigned int)peer, serves, why);
			bad = 1;
		}
	}
	return bad || (stop && *stop);
}

void gdr_sweep_print(const struct gdr_launched *x, const struct gdr_rank_rows *ranks)
{
	struct gdr_sweep_report rep;
	struct gdr_result *all;
	size_t n = 0;

	for (unsigned int k = 0; k < x->nodes; k++)
		n += ranks[k].nrows;
	all = calloc(n ? n : 1, sizeof(*all));
	if (!all) {
		gdr_err("sweep: out of memory for %zu rows", n);
		return;
	}
	n = 0;
	for (unsigned int k = 0; k < x->nodes; k++) {
		/* A rank that died has no rows (and no array): memcpy must not see NULL. */
		if (ranks[k].nrows)
			memcpy(all + n, ranks[k].rows, ranks[k].nrows * sizeof(*all));
		n += ranks[k].nrows;
	}
	if (gdr_sweep_report_build(&rep, (const char(*)[64])x->names, x->nodes, all, n)) {
		gdr_err("sweep: out of memory for the matrix");
	} else {
		gdr_sweep_report_print(stdout, &rep, x->outlier);
		gdr_sweep_report_free(&rep);
	}
	free(all);
}
