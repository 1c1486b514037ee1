/*
 * Inside the session (session*.c): the state of one run and the calls its
 * files share. session.c: lifecycle; session_place.c: -d auto, --gpu auto,
 * NUMA binding; session_client.c and session_server.c: the choreography;
 * session_rows.c: repeats summed into rows; session_order.c: every path's
 * buffers held at once and the order of the timed repeats. Paths are reached through
 * path.h only, the peer through ctl.h only.
 */
#ifndef GDR_SESSION_INT_H
#define GDR_SESSION_INT_H

#include <signal.h>
#include <stdint.h>

#include "conn.h"
#include "ctl.h"
#include "cuda.h"
#include "decide.h"
#include "endpoint.h"
#include "loop.h"
#include "mem.h"
#include "options.h"
#include "path.h"
#include "proto.h"
#include "provenance.h"
#include "run.h"
#include "report.h"
#include "topo.h"

#define WHY 512

/* Per size: what both sides measured in every repeat. */
struct gdr_acc {
	double bps[GDR_REPEAT_MAX];
	double t0[GDR_REP_KEEP], t1[GDR_REP_KEEP]; /* each round's start and end (s) */
	double peak_bps;    /* 0: no repeat completed anything, so no peak */
	double dir_bps[2];  /* -b: client->server and server->client, summed over repeats */
	unsigned int apart; /* -b: repeats whose runs were too short to intersect (bidir.h) */
	double mps_sum, cpu_sum;
	uint64_t iters;
	unsigned int n;
};

/*
 * One requested path of the run (a --mem entry, once per --gpu-alloc for the
 * GPU paths): its buffers, and what its current size has gathered.
 */
struct gdr_sess_path {
	struct gdr_path p;
	unsigned int pi;       /* index into plan.pairs: the client's path and the server's */
	int alloc;	       /* enum gdr_gpu_alloc its GPU buffer is made with */
	int open;	       /* buffers held on this side */
	int ready;	       /* BUF exchanged: p.ok says whether both sides measure it */
	int skip_size;	       /* latency: the current size cannot run on the path */
	struct gdr_acc acc;    /* the current size's repeats */
	double *lat;	       /* latency, client: this path's samples of every repeat, us */
	double t_start, t_end; /* the current size: first repeat's start, last one's end (s) */
	double rep_t0, rep_t1; /* the repeat being measured: its start and end (s) */
	int order;	       /* the current size: position in the rotation at its first repeat */
	struct gdr_side_info peer_side; /* the peer's GPU, NIC, distance (its BUF) */
};

/* A bounce copy rate measured for the rows (session_rows.c), kept for the run. */
struct gdr_sess_copy {
	uint64_t chunk;
	int copy;	     /* enum gdr_bounce_copy */
	unsigned int blocks; /* sm launches */
	double gbps[2];	     /* D2H, H2D, GB/s; NAN when it failed */
	char why[160];	     /* why it failed */
};
#define GDR_SESS_COPIES 64

/* Where slot k of the run's timed repeats falls (gdr_sess_slot). */
struct gdr_slot {
	unsigned int entry; /* index into sess.paths */
	unsigned int size;  /* index into plan.sizes */
	unsigned int rep;
	unsigned int pos; /* position among the paths in this round */
};

/*
 * The rounds of each size (session_rounds.c, decide.h): fixed, or until the
 * client decides at a look of the rule; and what the current round is.
 */
struct gdr_sess_rounds {
	int decide;	    /* rounds until decided; else fixed */
	unsigned int fixed; /* the rounds of a size when fixed */
	struct gdr_decide rule;
	unsigned int k;	     /* the rows' looks: the rule's K, 1 when fixed */
	unsigned int family; /* the intervals of the run's verdict (decide.h) */
	int last;	     /* this round is the size's last (fixed rounds) */
	int checked;	     /* --validate checks the destination after this round */
	double size_t0;	     /* when the current size's first round began (s) */
	const char *stop;    /* why the current size's rounds ended (the rows' stop) */
};

struct sess {
	const struct gdr_opts *o;  /* as parsed: never written */
	const struct gdr_run *run; /* port, server, files, label, hooks (run.h) */
	struct gdr_endpoint ep;	   /* where: the options, then placement */
	struct gdr_conn conn;
	struct gdr_ctl ctl; /* the control channel over conn */
	int client;
	struct gdr_plan plan;
	struct gdr_path_env penv; /* what the paths see: plan, role, QPs */
	struct gdr_mem_env env;
	struct gdr_cuda *cuda;
	struct gdr_gpu gpu;
	int cuda_tried;
	char cuda_why[256];
	struct gdr_csv *csv;
	struct gdr_json *json;
	struct gdr_prom_rows *prom;
	struct gdr_topo_pair topo; /* GPU-NIC placement for the CSV columns */
	int have_topo;
	struct gdr_topo *topo_t; /* loaded on first use */
	int topo_tried;
	struct gdr_provenance prov;  /* kernel, libibverbs, NIC firmware for the rows */
	struct gdr_sess_path *paths; /* every requested path, in the plan's order */
	unsigned int npaths;
	struct gdr_sess_path *cur;     /* the path being measured or reported */
	const struct gdr_mem *cur_mem; /* cur's buffer, for its rows; NULL if skipped */
	int held;		       /* this side holds every path's buffers at once */
	int rotate;		       /* both do: paths take turns each repeat (session_order.c) */
	char major_note[GDR_TEXT_MAX]; /* path-major: why, in every row's note */
	struct gdr_sess_rounds rounds; /* how many rounds each size takes (session_rounds.c) */
	uint64_t t0_ns;		       /* the run began (t_start_s, t_end_s) */
	volatile sig_atomic_t *stop;
	const struct gdr_path_ops *path_ops; /* NULL: the real paths; unit tests: a fake */
	/* Bounce ceilings: each copy rate measured once. */
	struct gdr_sess_copy copies[GDR_SESS_COPIES];
	unsigned int ncopies;
	char why[WHY];
};

/* session.c */
int gdr_sess_send(struct sess *s, const struct gdr_msg *m);
/* The next message, of type want, within --timeout (an ERROR from the peer ends the run). */
int gdr_sess_recv(struct sess *s, struct gdr_msg *m, uint16_t want);
/* The wait for a DONE that lasts as long as the repeat: the peer is probed meanwhile. */
int gdr_sess_recv_repeat(struct sess *s, struct gdr_msg *m, uint16_t want, uint64_t size);
/*
 * One bandwidth repeat of p (p->ops->run); with --pin, this thread pinned to
 * the CPU it runs on for the repeat (pin.h).
 */
int gdr_sess_run_bw(struct sess *s, struct gdr_path *p, uint64_t size, struct gdr_loop_out *lo);
/* launch (launch.h): every launched pair waits for all the others before each START. */
int gdr_sess_sync_point(struct sess *s);
/*
 * After the BUF exchange, on both sides: a path either side skipped is one
 * skipped row per size (its launch points pass in its turns); else the source
 * is filled for --validate. 0, or -errno with s->why.
 */
int gdr_sess_path_begin(struct sess *s, struct gdr_path *p);
/* Once the plan is known: GPU, topology line, the table header; the paths' view. */
void gdr_sess_prepare(struct sess *s);
void gdr_sess_ensure_cuda(struct sess *s);
/* The table's flags: the options', and per-side paths (path:remote) when the plan has them. */
int gdr_sess_table(const struct sess *s);
/* Is allocator a the first --gpu-alloc asks for (the host path runs with that one only)? */
int gdr_sess_first_alloc(const struct sess *s, int a);
/* The path of combination pi on this side (peer 0) or the peer's (peer 1). */
enum gdr_mem_kind gdr_sess_kind(const struct sess *s, unsigned int pi, int peer);
/* Open the buffers of e (the GPU first, when the path needs one). */
void gdr_sess_path_open(struct sess *s, struct gdr_sess_path *e);
void gdr_sess_path_close(struct sess *s, struct gdr_sess_path *e);
/* latency: a size this path cannot run is one skipped row on both sides, no exchange. */
void gdr_sess_skip_lat_size(struct sess *s, const struct gdr_path *p, uint64_t size);

/* session_order.c */
/*
 * Slot k (0 .. npaths * nsizes * repeat - 1) of the timed repeats. rotate:
 * size by size, repeat by repeat, every path once per round, round r
 * starting at path r mod npaths (round r = size * repeat + repeat index);
 * else path by path (path-major).
 */
void gdr_sess_slot(int rotate, unsigned int npaths, unsigned int nsizes, unsigned int repeat,
		   unsigned int k, struct gdr_slot *out);
/* The run's paths from the plan and --gpu-alloc (s->paths); 0 or -ENOMEM. */
int gdr_sess_paths_build(struct sess *s);
/*
 * Open every path's buffers at once (s->held = 1). A path that fails for
 * want of memory while others are open, yet opens alone, means they do not
 * fit together: all are closed again, s->held = 0, and major_note says so.
 */
void gdr_sess_paths_hold(struct sess *s);
/* After the first BUF exchange: both sides hold all: rotate; else path-major, said once. */
void gdr_sess_paths_mode(struct sess *s, int peer_held);
void gdr_sess_paths_free(struct sess *s);
/* Make e the path being measured: its buffer for the rows, its allocator. */
void gdr_sess_set_cur(struct sess *s, struct gdr_sess_path *e);
/* Seconds since the run began, on this side's clock. */
double gdr_sess_elapsed(const struct sess *s, uint64_t ns);
/*
 * The timed repeats, slot by slot, on either side: each entry's first slot
 * brings its BUF exchange (ready), each size's first repeat its begin, each
 * size's last repeat its row. repeat: the side's part of one START..RESULT.
 */
struct gdr_sess_side {
	int (*ready)(struct sess *s, unsigned int entry);
	int (*begin_size)(struct sess *s, struct gdr_sess_path *e, uint64_t size);
	int (*repeat)(struct sess *s, struct gdr_sess_path *e, unsigned int entry, uint64_t size,
		      unsigned int rep);
	/*
	 * Rounds until decided, after round `rounds` of size index si when it
	 * is a look: ROUND from the client (its decision), ROUND to the server.
	 * *more: another round; when 0 the size's rows are out on return.
	 */
	int (*look)(struct sess *s, unsigned int si, unsigned int rounds, int *more);
};
int gdr_sess_run_slots(struct sess *s, const struct gdr_sess_side *side);
/* Each path's row of size index si (every entry, or only entry `only` when >= 0). */
void gdr_sess_end_size(struct sess *s, unsigned int si, int only);

/* session_rounds.c */
/* After the first BUF exchange: fixed rounds or rounds until decided, said once. */
void gdr_sess_rounds_mode(struct sess *s);
/*
 * The client's look after round `rounds`: GDR_ROUND_MORE, or why the size
 * stops (every path's ratio to the reference decided, the rule's last round,
 * --time-per-size spent, nothing to decide), as ROUND carries it.
 */
unsigned int gdr_sess_rounds_decide(struct sess *s, unsigned int rounds);
/* A measured row's rounds: how many, the rule's K, why they stopped, each one's numbers. */
/*
 * A size's rounds are over (ROUND said stop, on either side): its rows, then
 * one line under them that says how many rounds it took and why they ended.
 */
void gdr_sess_rounds_end(struct sess *s, unsigned int si, unsigned int rounds, unsigned int stop);
void gdr_sess_rounds_fill(const struct sess *s, struct gdr_result *r, const struct gdr_acc *a);

/* session_place.c */
struct gdr_topo *gdr_sess_topo(struct sess *s);
void gdr_sess_describe_topology(struct sess *s);
int gdr_sess_place(struct sess *s);
void gdr_sess_bind_near_nic(struct sess *s);

/* session_rows.c */
/* ref_ns, unc_ns: the repeat's reference on this side, for -b (bidir.h). */
void gdr_sess_meas_from_loop(struct gdr_msg_meas *m, const struct gdr_loop_out *lo, uint64_t ref_ns,
			     uint64_t unc_ns);
void gdr_sess_emit_measured(struct sess *s, const struct gdr_path *p, uint64_t size,
			    const char *status, const char *note);
void gdr_sess_emit_lat(struct sess *s, const struct gdr_path *p, uint64_t size, const double *us,
		       const char *status, const char *note);
void gdr_sess_emit_skipped(struct sess *s, const struct gdr_path *p);
void gdr_sess_emit_row(struct sess *s, const struct gdr_result *r);
void gdr_sess_row_common(struct sess *s, struct gdr_result *r, const struct gdr_path *p,
			 uint64_t size);
/* What this side's BUF tells the peer of it for a path of kind (the peer's *_remote columns). */
void gdr_sess_side_info(struct sess *s, enum gdr_mem_kind kind, struct gdr_side_info *si);
/*
 * A bounce row's ceiling (docs/bounce.md): the copy rate at the row's chunk,
 * measured on first use per chunk and copy mode; the server calls it before
 * its last RESULT so that the two sides never measure at once.
 */
const struct gdr_sess_copy *gdr_sess_bounce_copy(struct sess *s, uint64_t size);
/* Add one repeat; a validation mismatch on either side ends the size as failed. */
int gdr_sess_record_repeat(struct sess *s, const struct gdr_path *p, uint64_t size,
			   const struct gdr_msg_meas *cli, const struct gdr_msg_meas *srv);
/* The note of a measured row of p. */
const char *gdr_sess_row_note(const struct gdr_path *p, char *buf, size_t len);

/* session_client.c, session_server.c */
int gdr_sess_client_run(struct sess *s);
int gdr_sess_server_run(struct sess *s);

#endif
