/* Command line of gdr_write_bw / gdr_read_bw: one table, one struct. */
#ifndef GDR_OPTIONS_H
#define GDR_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mem.h"

enum gdr_verb { GDR_VERB_WRITE = 0, GDR_VERB_READ = 1 };

#define GDR_MAX_QPS	 64
#define GDR_MAX_SIZES	 40
#define GDR_DEFAULT_PORT 18515
/* --repeat and the plan accept 1..this; the session keeps one sample per repeat. */
#define GDR_REPEAT_MAX 10000
/*
 * Rounds until decided (--repeat MIN:MAX, decide.h): the default range when
 * two or more paths run and --repeat is not given.
 */
#define GDR_ROUNDS_MIN 5
#define GDR_ROUNDS_MAX 40

/* Which plan fields were given explicitly (a server compares these with the client's plan). */
enum {
	GDR_SET_SIZE = 1u << 0,
	GDR_SET_ITERS = 1u << 1,
	GDR_SET_DURATION = 1u << 2,
	GDR_SET_QPS = 1u << 3,
	GDR_SET_TX_DEPTH = 1u << 4,
	GDR_SET_POST_LIST = 1u << 5,
	GDR_SET_CQ_MOD = 1u << 6,
	GDR_SET_BIDIR = 1u << 7,
	GDR_SET_MEM = 1u << 8,
	GDR_SET_REPEAT = 1u << 9,
	GDR_SET_WARMUP = 1u << 10,
	GDR_SET_VALIDATE = 1u << 11,
	GDR_SET_BOUNCE = 1u << 12,
	GDR_SET_PIN = 1u << 13, /* --pin or --no-pin */
	GDR_SET_TOS = 1u << 14, /* -T/--tos or --tclass */
	GDR_SET_GPU_ALLOC = 1u << 15,
	GDR_SET_DMABUF_MAPPING = 1u << 16,
	GDR_SET_RELAXED = 1u << 17, /* --disable_pcie_relaxed */
	GDR_SET_DATA_DIRECT = 1u << 18,
	GDR_SET_LOOPBACK = 1u << 19,   /* --loopback */
	GDR_SET_DECIDE = 1u << 20,     /* --alpha, --margin or --time-per-size */
	GDR_SET_MEM_REMOTE = 1u << 21, /* --mem-remote, or --mem LOCAL:REMOTE */
};

/*
 * One combination of paths (issue 48): the client's side and the server's,
 * each an enum gdr_mem_kind. Every combination of the four paths at most.
 */
struct gdr_mem_pair {
	unsigned char client, server;
};
#define GDR_MAX_PAIRS (GDR_MEM__COUNT * GDR_MEM__COUNT)

/* perftest options accepted without effect (-v says why, once): struct gdr_opts.perftest_noop. */
enum {
	GDR_NOOP_RDMA_CM = 1u << 0,	/* -R: rdma_cm is always used */
	GDR_NOOP_CPU_FREQ = 1u << 1,	/* -F: gdrperf never checks the CPU frequency */
	GDR_NOOP_REPORT_BOTH = 1u << 2, /* --report-both: both sides print the row */
	GDR_NOOP_CPU_UTIL = 1u << 3,	/* --cpu_util: the cpu_util column is always filled */
};

struct gdr_opts {
	enum gdr_verb verb;
	const char *server;    /* NULL: this process is the server */
	const char *dev;       /* -d: verbs device name, NULL = whatever rdma_cm picks */
	int ib_port;	       /* -i */
	unsigned int port;     /* -p: rdma_cm port */
	const char *bind_addr; /* --bind: server listens on this address only */
	uint64_t sizes[GDR_MAX_SIZES];
	unsigned int nsizes;
	uint64_t iters;	 /* -n */
	double duration; /* -D seconds; 0 = iteration mode */
	unsigned int qps, tx_depth, post_list, cq_mod;
	int bidir;
	int gid_index; /* -x; -1 = let rdma_cm choose */
	int tos;       /* -T/--tos, --tclass: the IP ToS byte (RoCE traffic class); -1 = default */
	unsigned int
	    mtu; /* -m: the path MTU the run needs (256..4096); 0 = whatever rdma_cm sets */
	unsigned int perftest_noop; /* GDR_NOOP_*: perftest options given that change nothing */
	int gbits;		    /* --report_gbits */
	int wide;		    /* --wide: the table's median, min and max columns too */
	enum gdr_mem_kind
	    mem[GDR_MEM__COUNT]; /* this side's paths (LOCAL:REMOTE: each LOCAL once) */
	unsigned int nmem;
	/* --mem-remote: the server's side, named by the client; 0 = not named (docs/usage-bw.md) */
	enum gdr_mem_kind mem_remote[GDR_MEM__COUNT];
	unsigned int nmem_remote;
	/* --mem LOCAL:REMOTE,...: the combinations as listed; 0 = --mem is a plain list */
	struct gdr_mem_pair mem_pairs[GDR_MAX_PAIRS];
	unsigned int npairs;
	const char *gpu; /* --gpu N|BDF|auto; NULL = none */
	unsigned int repeat;	 /* --repeat N, or MAX of MIN:MAX */
	unsigned int repeat_min; /* MIN of --repeat MIN:MAX: rounds until decided; == repeat: fixed */
	double alpha;		 /* --alpha: the verdict's family-wise error rate (0.01) */
	double margin;		 /* --margin: the zone 1 -+ margin a ratio is decided against */
	double size_time;	 /* --time-per-size: seconds of rounds per size; 0 = no budget */
	unsigned int warmup; /* warm-up iterations before each timed repeat */
	int validate;
	uint64_t bounce_chunk; /* 0 until parsed: --bounce-copy's default cap (bounce.h) */
	unsigned int bounce_slots;
	int bounce_copy;	    /* enum gdr_bounce_copy: --bounce-copy */
	unsigned int bounce_blocks; /* --bounce-blocks: SM copy kernel blocks */
	const char *csv, *json, *label;
	/* --prom: the rows as Prometheus metrics (docs/cluster-outputs.md) */
	const char *prom;
	double timeout; /* seconds for connect and for any wait on the peer */
	const char *topology_xml;
	int hugepages;
	int no_bind;
	int pin; /* which bandwidth repeats pin their polling thread: enum gdr_pin_mode (pin.h) */
	int persistent; /* server: serve one client after another until a signal */
	int verbose;
	const char *peer;   /* --peer HOST[,HOST...]: server of each launched pair */
	int no_launch;	    /* --launch=none: ignore mpirun/srun variables */
	int no_mpi;	    /* --launch=no-mpi: launched pairs without MPI calls */
	int sweep;	    /* enum gdr_sweep_mode: --sweep, 0 = fixed pairs */
	int sweep_both;	    /* --sweep-both: every pair in both directions */
	double outlier;	    /* --outlier: slow-node threshold (default 0.9) */
	double time_budget; /* --time-budget: seconds for the whole sweep; 0 = none */
	/* GPU paths (docs/gpu-paths.md): in the plan, the server adopts the client's. */
	unsigned int gpu_allocs; /* --gpu-alloc: bit per enum gdr_gpu_alloc (default memalloc) */
	int dmabuf_pcie;	 /* --dmabuf-mapping=pcie */
	int no_relaxed;		 /* --disable_pcie_relaxed */
	int data_direct;	 /* --use_data_direct */
	unsigned int set;	 /* GDR_SET_* bits given on the command line */
	int latency;		 /* gdr_write_lat / gdr_read_lat (set by their main) */
	int loopback;		 /* --loopback: both sides on this node, per GPU-NIC pair */
	/* --nfd: with --loopback, its outcome as node-feature-discovery labels */
	const char *nfd;
};

/*
 * Parse argv. Returns 0 to run, 1 when --help/--version was printed (exit 0),
 * or -EINVAL after printing "PROG: OPTION VALUE: reason" (exit 2).
 */
int gdr_opts_parse(struct gdr_opts *o, enum gdr_verb verb, int argc, char **argv);
/* The same for gdr_VERB_lat when latency (its own --help). */
int gdr_opts_parse_tool(struct gdr_opts *o, enum gdr_verb verb, int latency, int argc, char **argv);
void gdr_opts_usage(FILE *out, enum gdr_verb verb);
/* The same, the --nfd labels named for gdr_VERB_lat when latency. */
void gdr_opts_usage_tool(FILE *out, enum gdr_verb verb, int latency);

/* "64K" -> 65536. Suffixes K, M, G (powers of two), optional trailing B/iB. 0 or -EINVAL. */
int gdr_parse_size(const char *s, uint64_t *out);
/* Fill sizes with the powers of two from min to max (min, max rounded as given). */
int gdr_sizes_range(uint64_t min, uint64_t max, uint64_t *sizes, unsigned int *n);

const char *gdr_verb_name(enum gdr_verb v);
/* The run's paths: every --mem entry, the GPU ones once per --gpu-alloc (host once). */
unsigned int gdr_opts_entries(const struct gdr_opts *o);

/* The table flags (report.h GDR_TABLE_*) of --report_gbits and --wide. */
static inline int gdr_opts_table(const struct gdr_opts *o)
{
	return (o->gbits ? 1 : 0) | (o->wide ? 2 : 0);
}

#endif
