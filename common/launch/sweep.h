/*
 * Cluster sweep: which node pairs measure in which round, and what the
 * gathered rows say about the nodes (a node x node matrix, the slow ones).
 * Pure functions, no I/O but the printer: sweep_run.c drives the rounds.
 */
#ifndef GDR_SWEEP_H
#define GDR_SWEEP_H

#include <stddef.h>
#include <stdio.h>

#include "report.h"

enum gdr_sweep_mode {
	GDR_SWEEP_FIXED = 0, /* 2N ranks, rank i serves rank i+N: no rounds */
	GDR_SWEEP_PAIRS,     /* every unordered node pair once (twice with both) */
	GDR_SWEEP_RING,	     /* node i sends to node i+1 (mod M) */
};

/* "fixed" / "pairs" / "ring" -> mode; -EINVAL otherwise. */
int gdr_sweep_mode_parse(const char *s);
const char *gdr_sweep_mode_name(enum gdr_sweep_mode m);

/* The most nodes a sweep takes: far above any cluster, bounds the matrix. */
#define GDR_SWEEP_MAX_NODES 4096

/*
 * Rounds a sweep of m nodes takes. pairs: m - 1 for even m, m for odd m (a
 * round is a perfect matching, or all but one node for odd m: the fewest
 * rounds that hold m(m-1)/2 pairs with each node in at most one pair per
 * round). ring: 1 for m = 2, 2 for even m, 3 for odd m (a rank serves or
 * connects to one peer at a time, so node i's two ring edges fall in
 * different rounds). both: every round again with the roles swapped.
 * 0 for m < 2 or a fixed sweep.
 */
unsigned int gdr_sweep_rounds(enum gdr_sweep_mode mode, unsigned int m, int both);

/*
 * Node's part in round r: its peer (-1: it sits this round out) and whether
 * it serves. The client sends the data for WRITE (it writes into the
 * server's memory) and receives it for READ. In a pairs sweep the lower
 * node serves in the first pass; in a ring node i + 1 serves node i.
 */
int gdr_sweep_peer(enum gdr_sweep_mode mode, unsigned int m, int both, unsigned int round,
		   unsigned int node, int *serves);

/*
 * How long a sweep takes, and the -D that makes it fit a --time-budget. A
 * round is, per path in --mem, the connection and buffer exchange (counted
 * as GDR_SWEEP_SETUP_S: about a second on real hardware) and nsizes x repeat
 * measurements of -D seconds; the rounds follow one another.
 */
#define GDR_SWEEP_SETUP_S 1.0
/* The shortest -D a budget may choose: below it a measurement is mostly its start. */
#define GDR_SWEEP_MIN_D 0.1
double gdr_sweep_time(unsigned int rounds, unsigned int nmem, unsigned int nsizes,
		      unsigned int repeat, double duration);
/*
 * The longest -D (in hundredths of a second, at most 86400) with which
 * gdr_sweep_time() stays within budget; 0 with *duration, -ERANGE with why
 * when even GDR_SWEEP_MIN_D does not fit, -EINVAL for a zero count.
 */
int gdr_sweep_budget(double budget, unsigned int rounds, unsigned int nmem, unsigned int nsizes,
		     unsigned int repeat, double *duration, char *why, size_t wlen);

/* One cell of the node x node matrix: data sent from node `from` to node `to`. */
struct gdr_sweep_cell {
	double gbps; /* median Gb/s of the row; < 0: not measured */
	int failed;  /* the pair ran and failed (or was skipped) */
};

/* The matrix of one verb and path at one size, and what it says. */
struct gdr_sweep_view {
	char verb[8], path[16];
	unsigned long long size_bytes; /* the largest size measured for this verb and path */
	unsigned int m;
	struct gdr_sweep_cell *cell; /* m x m, [from * m + to] */
};

struct gdr_sweep_report {
	unsigned int m;
	char (*node)[64]; /* node names, index = node number */
	char (*nic)[64];  /* each node's NIC and GPU as its rows name them */
	char (*gpu)[64];
	unsigned int nviews;
	struct gdr_sweep_view *views;
};

/*
 * Build the report from every rank's rows (rows whose host and peer are
 * node names from names[m]; a client row is the measurement, a server row is
 * used only when the client sent none). Rows of other hosts are ignored.
 * 0, -ENOMEM, or -EINVAL for m out of range.
 */
int gdr_sweep_report_build(struct gdr_sweep_report *rep, const char (*names)[64], unsigned int m,
			   const struct gdr_result *rows, size_t nrows);
void gdr_sweep_report_free(struct gdr_sweep_report *rep);

/* A node judged slow in one view. */
struct gdr_sweep_outlier {
	unsigned int node;
	double node_gbps; /* median of the node's measured cells */
	double ref_gbps;  /* median of the cells without the node */
};

/*
 * Nodes of view v whose median cell is below ratio x the median of the cells
 * that do not involve them. Against the others, not against all pairs: with
 * 3 nodes one slow node is in 2 of the 3 pairs, and the median of all pairs
 * is its own slow value. Fills out[] (room for v->m) and returns the count;
 * a node with no cell, or no cell without it (m = 2), is never named.
 */
unsigned int gdr_sweep_outliers(const struct gdr_sweep_view *v, double ratio,
				struct gdr_sweep_outlier *out);

/* Rank 0's summary: one matrix per view, then the slow nodes with their NIC and GPU. */
void gdr_sweep_report_print(FILE *out, const struct gdr_sweep_report *rep, double ratio);

#endif
