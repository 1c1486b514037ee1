/*
 * Launch under mpirun, mpiexec (Hydra), srun or a PMIx launcher: which rank
 * this process is, which pair it belongs to, and (with MPI) the rendezvous
 * that brings each server's address to its client and starts pairs together.
 */
#ifndef GDR_LAUNCH_H
#define GDR_LAUNCH_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "options.h"
#include "report.h"
#include "run.h"

/* The largest rank count we accept: bounds the parsing, far above any real job. */
#define GDR_LAUNCH_MAX_SIZE (1 << 20)
/* One published server address, NUL included. */
#define GDR_LAUNCH_ADDR_MAX 64

enum gdr_launcher {
	GDR_LAUNCHER_NONE = 0,
	GDR_LAUNCHER_OMPI,  /* OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK */
	GDR_LAUNCHER_HYDRA, /* PMI_RANK / PMI_SIZE / MPI_LOCALRANKID (MPICH, Intel MPI) */
	GDR_LAUNCHER_PMIX,  /* PMIX_RANK, size from another launcher's variables */
	GDR_LAUNCHER_SLURM, /* SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID */
};

struct gdr_launch {
	enum gdr_launcher kind;
	int rank, size;
	int local_rank;	      /* -1: the launcher does not say */
	const char *rank_var; /* the variable the rank came from, for messages */
};

/* Reads one environment variable; NULL when unset. */
typedef const char *(*gdr_getenv_fn)(void *ctx, const char *name);

/*
 * Detect the launcher from the environment (get == NULL reads the real one).
 * 0 with kind NONE when no launcher variable is set, 0 with the rank when one
 * is, -EINVAL with why naming the variable when a value is not a number in
 * range, a variable of a pair is missing, or two launchers disagree.
 */
int gdr_launch_detect(struct gdr_launch *l, gdr_getenv_fn get, void *ctx, char *why, size_t wlen);
const char *gdr_launcher_name(enum gdr_launcher k);

/* A rank's place in the pairing: ranks 0..N-1 serve, rank i+N connects to rank i. */
struct gdr_pair_role {
	int server;
	unsigned int pair, npairs;
	int peer_rank;
};

/* 0, or -EINVAL when the size is odd (or 1) with why saying how to launch. */
int gdr_launch_role(const struct gdr_launch *l, struct gdr_pair_role *r, char *why, size_t wlen);

/*
 * Item index of a comma-separated list: 0, -ERANGE when the list is shorter
 * (a one-item list applies to every index), -EINVAL for an empty item,
 * -ENAMETOOLONG when the item does not fit out.
 */
int gdr_list_item(const char *list, unsigned int index, char *out, size_t len);
/* Number of items in a comma-separated list (1 for a list without commas). */
unsigned int gdr_list_count(const char *list);

/* MPI rendezvous; every call fails with -ENOSYS in a build without MPI. */
struct gdr_mpi;
int gdr_mpi_available(void);
int gdr_mpi_init(struct gdr_mpi **m, int *argc, char ***argv, char *why, size_t wlen);
int gdr_mpi_rank(const struct gdr_mpi *m, int *rank, int *size);
/*
 * Gather every rank's string (at most GDR_LAUNCH_ADDR_MAX - 1 chars) into
 * all[size]; gives up after timeout seconds or when *stop is set.
 */
int gdr_mpi_allgather_addr(struct gdr_mpi *m, const char *mine, char (*all)[GDR_LAUNCH_ADDR_MAX],
			   double timeout, volatile sig_atomic_t *stop, char *why, size_t wlen);
/* A barrier that gives up after timeout seconds or when *stop is set. */
int gdr_mpi_barrier(struct gdr_mpi *m, double timeout, volatile sig_atomic_t *stop, char *why,
		    size_t wlen);
/*
 * Gather every rank's bytes at rank 0, on a communicator of its own (so that
 * it never matches a barrier that a failed rank skipped), polled like the
 * barrier and given up after timeout seconds. On rank 0, *all (free it) holds
 * every rank's bytes one after another and lens[size] their lengths; elsewhere
 * *all is NULL.
 */
int gdr_mpi_gather(struct gdr_mpi *m, const void *mine, int len, char **all, int *lens,
		   double timeout, char *why, size_t wlen);
/* Rank 0's *v to every rank, bounded the same way. */
int gdr_mpi_bcast_int(struct gdr_mpi *m, int *v, double timeout, char *why, size_t wlen);
void gdr_mpi_finalize(struct gdr_mpi *m);
void gdr_mpi_abort(struct gdr_mpi *m, int code);

/*
 * Rows gathered at rank 0 (launch_gather.c). Each rank keeps the rows its
 * session reports and its exit status; at the end they travel to rank 0 as
 * one packed buffer (a header, then the rows as struct gdr_result: every rank
 * runs the same build, which the header checks), and rank 0 alone writes the
 * CSV and JSON and prints every pair's rows and the node-to-node sum.
 */
struct gdr_rank_rows {
	int status; /* the rank's exit status, 0 ok; -1: it sent nothing usable */
	unsigned int nrows, cap;
	struct gdr_result *rows;
	int lost; /* rows that did not fit in memory */
};

/* Keep a copy of r; -ENOMEM counts it in lost. */
int gdr_rows_add(struct gdr_rank_rows *rr, const struct gdr_result *r);
void gdr_rows_free(struct gdr_rank_rows *rr);
/* rr as one buffer (free it) for gdr_mpi_gather; -ENOMEM or -EOVERFLOW. */
int gdr_rows_pack(const struct gdr_rank_rows *rr, void **buf, size_t *len);
/* Check and copy a packed buffer; -EPROTO with why when it is not one of ours. */
int gdr_rows_unpack(const void *buf, size_t len, struct gdr_rank_rows *rr, char *why, size_t wlen);

/* One line of the node-to-node table: one verb, path and size over every pair. */
struct gdr_agg {
	char verb[8], path[16];
	char
	    path_server[16]; /* per-side runs (issue 48): path is the client's, this the server's */
	uint64_t size_bytes;
	double total_gbps;   /* sum of the contributing pairs' bw_avg_gbps */
	unsigned int npairs; /* pairs that contributed */
	char left_out[512];  /* "pair 1: skipped (reason); ..." for the others */
};

/*
 * The node-to-node sums over ranks[nranks] (nranks = 2 * npairs; rank k < npairs
 * serves pair k, rank k + npairs is its client). Per pair the client's row counts
 * (the server's when the client has none), as scripts/gdr-ab --aggregate does.
 * Lines in order of first appearance; *out (free it) holds *n of them.
 */
int gdr_rows_aggregate(const struct gdr_rank_rows *ranks, unsigned int nranks, struct gdr_agg **out,
		       unsigned int *n);
/* Rank 0's report: every pair's rows, then the aggregate table (Gb/s or MB/s). */
void gdr_rows_print(FILE *out, const struct gdr_rank_rows *ranks, unsigned int nranks, int gbits);

/* What the bench main keeps of a launch. */
struct gdr_launched {
	/* What this rank's session runs with (run.h); the options stay as parsed. */
	struct gdr_run run;
	struct gdr_launch l;
	struct gdr_pair_role role;
	struct gdr_mpi *mpi;
	struct gdr_sync sync;
	double timeout;
	volatile sig_atomic_t *stop;
	char server[GDR_LAUNCH_ADDR_MAX];
	char gpu[64], dev[64];
	char label[192];
	/* With MPI: rows go to rank 0, which alone writes these (--csv, --json). */
	int gather;
	const char *csv_path, *json_path;
	struct gdr_csv *csv;
	struct gdr_json *json;
	const char *prom_path; /* --prom, written like --json */
	struct gdr_prom_rows *prom;
	struct gdr_rank_rows mine;
	int gbits;
	/* --sweep: one rank per node; names and server addresses of every rank. */
	int sweep;
	unsigned int nodes;
	char (*names)[GDR_LAUNCH_ADDR_MAX];
	char (*addrs)[GDR_LAUNCH_ADDR_MAX];
	double outlier;
	/*
	 * The sweep's TCP channel to rank 0 (sweep_chan.h), which runs the rounds
	 * with or without MPI; alive[nodes]: 0 once a node's process is gone.
	 */
	struct gdr_chan *chan;
	unsigned char *alive;
	double bound; /* the longest a round may take (sweep_run.c) */
};

/*
 * This rank's run (x->run) from the options and the launch: role, port, GPU,
 * device, server address, sync hook, label, the files only rank 0 writes and
 * the -D a sweep's --time-budget chose. x->run is gdr_run_from_opts(o) when
 * there is no launcher or a SERVER was given; o is only read. 0 to run, or
 * -errno after printing the cause (exit 2 for usage, 1 otherwise: *usage says).
 */
int gdr_launch_setup(struct gdr_launched *x, const struct gdr_opts *o, int *argc, char ***argv,
		     volatile sig_atomic_t *stop, int *usage);
/*
 * End of the run. With MPI after a session, every rank (failed ones too) sends
 * its rows and status to rank 0, which writes them; then MPI_Finalize, or
 * MPI_Abort when any rank failed (its barriers may be left unmatched). A
 * sweep gathers through its channel instead and returns the job's verdict
 * (0 when every rank and pair ran), which is this process's exit status.
 */
int gdr_launch_finish(struct gdr_launched *x, int status);

/*
 * --sweep (sweep_run.c): every round of the schedule, this rank serving or
 * connecting to that round's peer, a barrier between rounds; a pair that
 * fails is a failed row and the sweep goes on. 0 when every pair ran.
 */
int gdr_sweep_run(struct gdr_launched *x, const struct gdr_opts *o, volatile sig_atomic_t *stop);
/* How long one round may take for the plan in o at -D duration (its bound, see sweep_run.c). */
double gdr_sweep_round_bound(const struct gdr_opts *o, double duration);
/* Rank 0: the node x node matrix and the slow nodes, from every rank's rows. */
void gdr_sweep_print(const struct gdr_launched *x, const struct gdr_rank_rows *ranks);

#endif
