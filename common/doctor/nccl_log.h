/*
 * Reader for NCCL_DEBUG=INFO logs: which way NCCL's network transport
 * reached GPU memory (DMA-BUF, peer memory, not at all), and the lines that
 * say so. Formats from NCCL 2.4 to 2.30.7 and the 2.31 pre-release (the
 * per-GPU "GPU Direct RDMA ... for GPU" line changed shape several times;
 * docs/nccl-logs.md dates every line by NCCL's release tags).
 *
 * Lines are fed one at a time, so a log of any length reads in constant
 * memory; the conclusion is drawn by gdr_nccl_log_finish().
 *
 * Files: nccl_log.c (lines: reading, the fact names), nccl_log_prefix.c
 * (launcher and collector prefixes, records split over lines),
 * nccl_log_proc.c (processes: NCCL's "host:pid:tid [dev]", the devices a
 * record names), nccl_log_record.c (records: what each says),
 * nccl_log_event.c (network errors and NCCL's HINT lines, read as one
 * event), nccl_log_guide.c (lines guides quote that NCCL does not print),
 * nccl_log_verdict.c (the conclusion, per process and for the file),
 * nccl_log_fix.c (its cause and fix), nccl_log_print.c (text, JSON);
 * nccl_log_int.h is shared by them. NCCL's defaults per release come from
 * common/topo/nccl_settings.c.
 */
#ifndef GDR_NCCL_LOG_H
#define GDR_NCCL_LOG_H

#include <stddef.h>
#include <stdio.h>

enum gdr_nccl_path {
	GDR_NCCL_UNKNOWN = 0,
	GDR_NCCL_DMABUF,
	GDR_NCCL_PEERMEM,
	GDR_NCCL_NONE,
	GDR_NCCL_MIXED, /* processes in one file decided differently */
};

/* Facts the reader records, each with the first line that showed it. */
enum gdr_nccl_fact {
	NF_VERSION = 0,
	NF_NETWORK,    /* "Using network X" */
	NF_PLUGIN,     /* an external net plugin was loaded */
	NF_GPU_DMABUF, /* "DMA-BUF is available on GPU device N": a GPU capability */
	NF_HCA_GDR_ON, /* "NET/<net> : GPU Direct RDMA Enabled for HCA": NIC+driver capability */
	NF_HCA_GDR_OFF,
	NF_PAIR_GDR_ON, /* "GPU Direct RDMA Enabled for GPU x / HCA y (distance ...)" */
	NF_PAIR_GDR_OFF,
	NF_CHAN_GDR,	/* a network channel with /GDRDMA: GDR in use */
	NF_CHAN_NOGDR,	/* a network channel without it */
	NF_CHAN_SOCKET, /* a channel over NET/Socket */
	NF_RING_GDR_ON, /* "Connected all rings, use ring PXN x GDR 1" */
	NF_RING_GDR_OFF,
	NF_PLUGIN_GDR_OFF, /* plugin says it disabled GDR (aws-ofi-nccl) */
	NF_PLUGIN_DMABUF,  /* plugin says the NIC takes DMA-BUF */
	NF_PLUGIN_NO_DMABUF,
	NF_PLUGIN_PEERMEM, /* plugin says GDR via nvidia-peermem works */
	NF_ENV_DMABUF_OFF, /* NCCL_DMABUF_ENABLE set by environment to 0 */
	NF_ENV_IB_OFF,	   /* NCCL_IB_DISABLE set by environment to 1 */
	NF_ENV_GDR_LEVEL,
	NF_NO_IB_DEVICE,  /* "NET/IB : No device found." */
	NF_INIT,	  /* init reached the point where the DMA-BUF check prints */
	NF_HCA_OTHER_NET, /* an HCA GDR line of a transport other than the one in use */
	NF_GUIDE_LINE,	  /* a line guides quote that no NCCL release prints */
	NF_HCA_NO_MODULE, /* "GPU Direct RDMA Disabled for ... (no module...)": no peer-memory
			     module */
	NF_CHAN_LOCAL,	  /* an intra-node channel (P2P, SHM, NVLS, CollNet) */
	NF_SOCKET_USING,  /* "NET/Socket : Using [0]eth0" */
	NF_WARN,	  /* an "NCCL WARN" line */
	/* "NET/Socket : GPU Direct RDMA Disabled for HCA": the Socket transport's devices */
	NF_SOCKET_HCA,
	NF_NO_VERBS,	 /* "Failed to open libibverbs.so[.1]" / "Count not open libibverbs.so" */
	NF_NIC_DISTANCE, /* NCCL 2.4's "CUDA Dev 0[0], IB NIC distance :  PHB" */
	NF_CHAN_GDR_PCI, /* "/GDRDMA(PCI)": a PCIe-mapped DMA-BUF on a C2C system */
	NF_DATA_DIRECT,	 /* "Data Direct DMA Interface is detected for device" */
	NF_ENV_DATA_DIRECT_OFF, /* NCCL_IB_DATA_DIRECT set by environment to 0 */
	NF_MLOPART,		/* a GPU shown as "[MLOPart N]" in NCCL's topology */
	NF_ENV_MLOPART_ON,	/* NCCL_NET_GDR_MLOPART set by environment to 1 */
	NF_NET_ERROR,		/* a network error NCCL reported (nccl_log_event.c) */
	NF_HINT,		/* a "HINT: ..." line (NCCL 2.30.7 and later) */
	NF__COUNT
};

struct gdr_nccl_line {
	unsigned long lineno; /* 0: never seen */
	char text[320];	      /* a 2.30 WARN with its timestamp and function runs past 240 */
};

/*
 * The GPUs and RDMA NICs a process's lines name as its own: GPUs by NCCL's
 * busId ("busId 81000" in the Init lines, "for GPU 81000 / HCA" and
 * "for GPU/0-81000" in the GPU Direct RDMA lines; 0x81000 = 0000:81:00.0),
 * NICs from "NET/IB : Using [0]mlx5_0:1/IB" and "... for HCA 0 'mlx5_0'".
 * Channel lines are not read: they name the peers' GPUs too.
 */
#define GDR_NCCL_MAX_DEVS 16

struct gdr_nccl_devs {
	unsigned long long gpu[GDR_NCCL_MAX_DEVS];
	unsigned long gpu_line[GDR_NCCL_MAX_DEVS]; /* the first line naming it */
	unsigned int ngpu;
	char nic[GDR_NCCL_MAX_DEVS][32];
	unsigned long nic_line[GDR_NCCL_MAX_DEVS];
	unsigned int nnic;
	unsigned int dropped; /* beyond GDR_NCCL_MAX_DEVS */
};

/* What one process (or the whole file) showed. */
struct gdr_nccl_facts {
	char version[48];	    /* "2.21.5+cuda12.4" */
	int vmajor, vminor, vpatch; /* -1 when unknown */
	char network[64];	    /* "IB", "Socket", "IBext_v8", "Libfabric" */
	char chan_net[64];	    /* transport named in the network channel lines */
	char plugin[160];
	char gdr_level[16];
	char distance[48]; /* last "distance X <= Y" seen */
	char nic_dist[64]; /* NCCL 2.4's "NIC distance" classes, one per NIC: "PHB SYS" */
	int chan_dev;	   /* the NIC of the first network channel ("via NET/IB/1"), -1 */
	int guide_kind;	   /* which guide line (nccl_log_guide.c), 0: none */
	struct gdr_nccl_devs devs;
	unsigned int count[NF__COUNT];
	struct gdr_nccl_line first[NF__COUNT];
};

struct gdr_nccl_verdict {
	enum gdr_nccl_path path;
	char reason[480];
	enum gdr_nccl_fact cited[4];
	struct gdr_nccl_line cited_line[4];
	unsigned int ncited;
	/* Why, in a few words, and what to do (nccl_log_fix.c); fix is "" when nothing to fix. */
	char cause[240];
	char fix[512];
	struct gdr_nccl_line cause_line; /* the line that shows the cause; lineno 0: none */
};

/* Why the log ended where it did: picks the cause and the fix (nccl_log_fix.c). */
enum gdr_nccl_cause {
	NC_GDR_DMABUF = 0,    /* GDR in use through DMA-BUF */
	NC_GDR_OLD_NCCL,      /* peer memory: NCCL before DMA-BUF support */
	NC_GDR_ENV_NODMABUF,  /* peer memory: NCCL_DMABUF_ENABLE=0 */
	NC_GDR_PLUGIN,	      /* peer memory: the plugin has no DMA-BUF registration */
	NC_GDR_NO_GPU_DMABUF, /* peer memory: init without "DMA-BUF is available" */
	NC_GDR_UNDECIDED,     /* GDR in use, registration not in the log */
	NC_NO_SOCKET,	      /* no GDR: the Socket transport */
	NC_NO_PLUGIN,	      /* no GDR: the plugin disabled it */
	NC_NO_GDR,	      /* no GDR: find the disabled line that says why */
	NC_UNDECIDED,	      /* nothing decides */
	NC_RING_FLAG_ONLY,    /* only "Connected all rings ... GDR 1" */
	NC_PAIR_ONLY,	      /* only "GPU Direct RDMA Enabled for GPU ...": a decision, not use */
};

#define GDR_NCCL_MAX_PROCS 64
/* A log is read up to this many bytes (a stream such as /dev/zero ends there). */
#define GDR_NCCL_MAX_BYTES    (4ULL << 30)
#define GDR_NCCL_MAX_VERSIONS 4
#define GDR_NCCL_MAX_WARNS    16
#define GDR_NCCL_MAX_EVENTS   8

/*
 * A network error NCCL reported in a WARN line (a work completion's
 * status, a failed ibv_modify_qp), with the "HINT:" lines NCCL 2.30.7 and
 * later print right after it: one event, not several causes.
 */
struct gdr_nccl_event {
	struct gdr_nccl_line line; /* the first WARN of this kind from this process */
	char what[40];		   /* "IBV_WC_LOC_PROT_ERR", "ibv_modify_qp ETIMEDOUT" */
	int kind;		   /* nccl_log_event.c's table */
	int proc;		   /* index in procs, -1: none */
	unsigned int repeats;	   /* later WARNs of the same kind from the process */
	unsigned int hints;	   /* HINT lines after it */
	unsigned long hint_first, hint_last;
};

struct gdr_nccl_proc {
	char id[96];	 /* "host:pid" as the log prints it; "" when lines carry no prefix */
	char launch[64]; /* launcher's tag ("rank 1,0", "pod/x/c", "pid=12"); "" when none */
	int dev;	 /* first CUDA device in "[N]", -1 when absent */
	unsigned long long devs; /* every device 0..63 seen for this process */
	unsigned int chan_net, chan_gdr;
	int gpu_dmabuf;
	unsigned int seg; /* bare "NCCL version" lines seen before the process's first line */
	struct gdr_nccl_facts facts;
	struct gdr_nccl_verdict verdict;
};

/* Launcher/collector prefix and split-record state (nccl_log_prefix.c). */
struct gdr_nccl_pending {
	int valid, nccl;
	int whole; /* a record printed whole (the version banner): never continued */
	unsigned int parts;
	unsigned long lineno;
	char launch[64];
	char text[512];
};

struct gdr_nccl_log {
	unsigned long lines, nccl_lines;
	unsigned long prefixed_lines, joined_lines;
	/* The whole file, every process together (version: the first one seen). */
	char version[48];
	int vmajor, vminor, vpatch;
	char network[64];
	char chan_net[64];
	char plugin[160];
	char gdr_level[16];
	char distance[48];
	struct gdr_nccl_facts all;	/* every line */
	struct gdr_nccl_facts bare;	/* lines with no process prefix */
	struct gdr_nccl_facts overflow; /* processes beyond GDR_NCCL_MAX_PROCS */
	char versions[GDR_NCCL_MAX_VERSIONS][48];
	unsigned int nversions, versions_dropped;
	/* Bare "NCCL version" lines in order: seg_version[i] follows the i-th one. */
	char seg_version[GDR_NCCL_MAX_VERSIONS + 1][48];
	struct gdr_nccl_line seg_line[GDR_NCCL_MAX_VERSIONS + 1];
	unsigned int nseg;
	struct gdr_nccl_proc procs[GDR_NCCL_MAX_PROCS];
	unsigned int nprocs, procs_dropped;
	struct gdr_nccl_pending pending;
	/* Conclusion. */
	enum gdr_nccl_path path;
	char reason[480];
	enum gdr_nccl_fact cited[4];
	struct gdr_nccl_line cited_line[4];
	unsigned int ncited;
	unsigned int procs_decided; /* processes whose own lines decide */
	/* Added with the cause/fix lead (the conclusion's, as in gdr_nccl_verdict). */
	char cause[240];
	char fix[512];
	struct gdr_nccl_line cause_line;
	/* Every "NCCL WARN" line, in order (the first GDR_NCCL_MAX_WARNS). */
	struct gdr_nccl_line warns[GDR_NCCL_MAX_WARNS];
	unsigned int nwarns, warns_dropped;
	/* Network errors with their HINT lines, in order (nccl_log_event.c). */
	struct gdr_nccl_event events[GDR_NCCL_MAX_EVENTS];
	unsigned int nevents, events_dropped;
	unsigned int hints_alone; /* HINT lines after no error of their process */
};

void gdr_nccl_log_init(struct gdr_nccl_log *log);
/* Feed one line (with or without its newline). */
void gdr_nccl_log_line(struct gdr_nccl_log *log, const char *line);
/* Draw the conclusion from what was fed. */
void gdr_nccl_log_finish(struct gdr_nccl_log *log);
/* Init, feed every line of in, finish. 0 or -errno (read error). */
int gdr_nccl_log_read(FILE *in, struct gdr_nccl_log *log);

/* Is it an NCCL log at all? */
int gdr_nccl_log_is_nccl(const struct gdr_nccl_log *log);
const char *gdr_nccl_path_name(enum gdr_nccl_path p);
/* "2.21.5+cuda12.4" -> 2, 21, 5 (patch -1 when absent); 0, or -EINVAL with all -1
 * when it does not start with MAJOR.MINOR of plain digits (at most 4 each). */
int gdr_nccl_parse_version(const char *s, int *major, int *minor, int *patch);
const char *gdr_nccl_fact_name(enum gdr_nccl_fact f);
/* NCCL's busId (0x81000) as a PCI bus id ("0000:81:00.0"); returns buf. */
const char *gdr_nccl_busid_text(unsigned long long id, char *buf, size_t len);
/* Add the devices of from to to, each once (the union of several processes'). */
void gdr_nccl_devs_merge(struct gdr_nccl_devs *to, const struct gdr_nccl_devs *from);

void gdr_nccl_log_print(FILE *out, const struct gdr_nccl_log *log, const char *name);
/* --quiet: "name: conclusion (cause)". */
void gdr_nccl_log_quiet(FILE *out, const struct gdr_nccl_log *log, const char *name);
/* One JSON object with trailing newline. */
void gdr_nccl_log_json(FILE *out, const struct gdr_nccl_log *log, const char *name);

/* Internal to the reader's files. */
/*
 * Strip launcher and collector prefixes from line into body (NUL-terminated,
 * no newline); the launcher's rank or pod tag goes to launch ("" if none).
 * Returns how many prefixes were stripped.
 */
int gdr_nccl_strip_prefix(const char *line, char *body, size_t blen, char *launch, size_t llen);
/* Does body (prefixes stripped) begin a record, rather than continue one cut by a wrap? */
int gdr_nccl_starts_record(const char *body);
/* Parse one whole record (nccl_log.c). */
void gdr_nccl_log_record(struct gdr_nccl_log *log, unsigned long lineno, const char *launch,
			 const char *text);
/* Flush a pending split record (nccl_log_prefix.c). */
void gdr_nccl_log_flush(struct gdr_nccl_log *log);
/* Judge one fact set (nccl_log_verdict.c). */
void gdr_nccl_judge(const struct gdr_nccl_facts *f, struct gdr_nccl_verdict *v);
/* Set v's cause, fix and cause line for why the judge concluded (nccl_log_fix.c). */
void gdr_nccl_explain(const struct gdr_nccl_facts *f, struct gdr_nccl_verdict *v,
		      enum gdr_nccl_cause why);
/* Append printf-style to the string in buf (len bytes in all), cut to fit (nccl_log_fix.c). */
void gdr_nccl_catf(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The event in words: the error, NCCL's own hint for it, what the other HINT lines are. */
void gdr_nccl_event_explain(const struct gdr_nccl_event *e, char *buf, size_t len);
/* Is the file's (or a fact set's) NCCL release before the one named ("2.13.4")? 0 when unknown. */
int gdr_nccl_before(const struct gdr_nccl_facts *f, const char *release);
/* Guide lines (nccl_log_guide.c): kind (1..) when msg is one, else 0. */
int gdr_nccl_guide_kind(const char *msg);
/* What the guide line claims and what NCCL prints instead, for this version. */
void gdr_nccl_guide_explain(int kind, int vmajor, int vminor, int vpatch, int plugin, char *buf,
			    size_t len);

#endif
