/*
 * gdr_doctor --live: which GPUDirect path (DMA-BUF, peer memory, both,
 * neither) this node and each of its processes use right now, read from the
 * kernel's own interfaces below --root (docs/usage-doctor.md#live-check):
 *   - dma-bufs: ROOT/sys/kernel/debug/dma_buf/bufinfo (debugfs;
 *     dma_buf_debug_show in drivers/dma-buf/dma-buf.c), each with the devices
 *     attached to it; an RDMA MR on a dma-buf attaches the NIC (or its
 *     data-direct function) and keeps the buffer listed after the fd is
 *     closed (live_bufinfo.c);
 *   - peer memory: ROOT/sys/kernel/mm/memory_peers/<client>/ (MLNX_OFED's
 *     peer-memory core; nvidia-peermem's clients are nv_mem and nv_mem_nc),
 *     else ROOT/sys/module/nvidia_peermem/refcnt (one reference per acquired
 *     MR) (live_peers.c);
 *   - RDMA MRs: the output of `rdma -j res show mr` (iproute2), run here or
 *     read from a file: device, length and the registering thread's id
 *     (live_mr.c);
 *   - processes: ROOT/proc/TID/status (Tgid, VmPin), cmdline, environ
 *     (NCCL_*), maps (libcuda, libnccl and its version string), fd and
 *     fdinfo (dma-buf fds held, exp_name) (live_proc.c).
 * live.c gathers them and draws the verdict, live_report.c prints it,
 * live_cluster.c writes the NFD labels and Prometheus gauges.
 */
#ifndef GDR_LIVE_H
#define GDR_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- dma-bufs (bufinfo) ---------------------------------------------------------------- */

#define GDR_LIVE_ATTACH_MAX 8 /* attachments kept by name per dma-buf (all are counted) */

struct gdr_live_dmabuf {
	uint64_t size;
	unsigned long ino;
	long count;			      /* file references */
	char exp_name[64];		      /* the exporter's name */
	char name[64];			      /* set by DMA_BUF_SET_NAME; "" for "<none>" */
	unsigned int nattach;		      /* devices attached */
	char attach[GDR_LIVE_ATTACH_MAX][48]; /* dev_name() of the first ones */
};

struct gdr_live_bufs {
	struct gdr_live_dmabuf *v;
	size_t n, cap;
};

/*
 * Parse bufinfo text. 0, -EINVAL when it is not bufinfo (why says which line),
 * -ENOMEM. Lines the kernel adds between a buffer and its attachments
 * (fences: dma_resv_describe) are skipped.
 */
int gdr_live_bufinfo_parse(const char *text, struct gdr_live_bufs *b, char *why, size_t wlen);
void gdr_live_bufs_free(struct gdr_live_bufs *b);
/*
 * Is exp_name the NVIDIA GPU driver's? "nv_dmabuf" (the open kernel module's
 * nv-dmabuf.c from 580.65.06 on) or "nvidia" (KBUILD_MODNAME, before).
 */
int gdr_live_nvidia_exporter(const char *exp_name);
extern const char *const gdr_live_nvidia_exporters[];

/* ---- peer memory ----------------------------------------------------------------------- */

#define GDR_LIVE_PEERS_MAX 16

struct gdr_live_peer {
	char name[64];
	char version[64];
	uint64_t alloc_mrs, dealloc_mrs, reg_pages, dereg_pages, reg_bytes, dereg_bytes;
	uint64_t free_callbacks;
	int complete; /* every counter read */
	int nvidia;   /* nv_mem or nv_mem_nc: nvidia-peermem's */
};

struct gdr_live_peers {
	int module;	/* ROOT/sys/module/nvidia_peermem exists */
	int dir;	/* ROOT/sys/kernel/mm/memory_peers exists */
	int dir_err;	/* why it could not be listed (-errno), 0 when it was */
	long refcnt;	/* -1 not read */
	int refcnt_err; /* -errno when not read */
	struct gdr_live_peer v[GDR_LIVE_PEERS_MAX];
	int n;
	int dropped;
};

/* Read memory_peers and the module's refcnt below root; fills p, never fails. */
void gdr_live_peers_read(const char *root, struct gdr_live_peers *p);
/* A client's live MRs and bytes (the counters are monotonic: registered - deregistered). */
uint64_t gdr_live_peer_mrs(const struct gdr_live_peer *c);
uint64_t gdr_live_peer_bytes(const struct gdr_live_peer *c);

/* ---- RDMA MRs (rdma -j res show mr) ---------------------------------------------------- */

struct gdr_live_mr {
	char dev[64]; /* ifname */
	uint32_t mrn;
	uint64_t len;  /* mrlen */
	uint32_t pid;  /* the registering thread; 0 when the kernel gave none */
	char comm[64]; /* comm: the thread's, or a kernel user's name */
};

struct gdr_live_mrs {
	struct gdr_live_mr *v;
	size_t n, cap;
};

/* Parse `rdma -j res show mr` output. 0, -EINVAL (why says what), -ENOMEM. */
int gdr_live_mr_parse(const char *json, size_t len, struct gdr_live_mrs *m, char *why, size_t wlen);
void gdr_live_mrs_free(struct gdr_live_mrs *m);

/* ---- processes ------------------------------------------------------------------------- */

#define GDR_LIVE_PROC_DEVS 8
#define GDR_LIVE_PROC_FDS  8

struct gdr_live_proc_dev {
	char dev[64];
	unsigned int mrs;
	uint64_t bytes;
};

struct gdr_live_proc_fd {
	int fd;
	unsigned long ino;
	uint64_t size;
	char exp_name[64];
};

struct gdr_live_proc {
	int pid;	   /* the process (Tgid); the thread's id when status was unreadable */
	int status_err;	   /* -errno when ROOT/proc/PID/status could not be read */
	char command[64];  /* Name: of the process */
	char cmdline[256]; /* argv joined by spaces; "" unreadable */
	int threads[8];	   /* registering threads other than the process itself */
	int nthreads;
	int64_t vmpin_kb; /* -1 unknown */
	/* MRs */
	unsigned int mrs;
	uint64_t mr_bytes;
	struct gdr_live_proc_dev dev[GDR_LIVE_PROC_DEVS];
	int ndev;
	/* what it maps (maps readable: maps_err 0) */
	int maps_err;
	int cuda;	       /* maps libcuda.so */
	char nccl_lib[256];    /* the libnccl it maps; "" none */
	char nccl_version[64]; /* "2.27.3+cuda12.9"; "" not found */
	int nccl_err;	       /* -errno when the library could not be read */
	/* NCCL_* of its environment */
	int environ_err;
	char nccl_env[1024]; /* "NCCL_A=1 NCCL_B=x" */
	/* dma-buf fds it holds now */
	int fd_err;
	int ndmabuf; /* dma-buf fds */
	struct gdr_live_proc_fd fds[GDR_LIVE_PROC_FDS];
};

/* Fill p for process pid below root (status, cmdline, environ, maps, fds). */
void gdr_live_proc_read(const char *root, int pid, struct gdr_live_proc *p);
/* How many dma-buf fds process pid holds (links /dmabuf:...), or -errno. */
int gdr_live_proc_dmabuf_fds(const char *root, int pid);
/* The Tgid of a thread from ROOT/proc/TID/status; 0 or -errno. */
int gdr_live_tgid(const char *root, int tid, int *tgid);
/* "NCCL version 2.27.3+cuda12.9" in buf[0..len): the version after the words, or -ENOENT. */
int gdr_live_nccl_version(const char *buf, size_t len, char *ver, size_t vlen);
/* Fields of /proc/PID/status text: "Tgid", "VmPin" (kB), ...; 0 or -ENOENT. */
int gdr_live_status_field(const char *status, const char *name, char *val, size_t vlen);

/* ---- the whole check ------------------------------------------------------------------- */

/* The state of one interface the check reads. */
enum gdr_live_src_state {
	GDR_LIVE_SRC_READ = 0,
	GDR_LIVE_SRC_NOT_NEEDED, /* nothing there to read (e.g. no peer-memory module) */
	GDR_LIVE_SRC_MISSING,	 /* not there, and what it would tell is unknown */
	GDR_LIVE_SRC_PARTIAL,	 /* read, but part of it was hidden (other PID namespaces) */
};

enum gdr_live_src_id {
	GDR_LIVE_SRC_BUFINFO = 0,
	GDR_LIVE_SRC_PEERS,
	GDR_LIVE_SRC_REFCNT,
	GDR_LIVE_SRC_MRS,
	GDR_LIVE_SRC_PROCS,
	GDR_LIVE_SRC_N
};

struct gdr_live_src {
	const char *key; /* "bufinfo", "memory_peers", "refcnt", "rdma_mr", "processes" */
	enum gdr_live_src_state state;
	char path[256];	  /* where it was read from */
	char detail[320]; /* what was read, or why not */
	char adds[256];	  /* missing: what it would add */
	char how[256];	  /* missing: how to get it */
};

#define GDR_LIVE_MAX_PROCS 256
#define GDR_LIVE_MAX_DEVS  32

/* NVIDIA dma-bufs attached to one device. */
struct gdr_live_devuse {
	char dev[48];  /* dev_name() from bufinfo: a PCI address */
	char rdma[64]; /* the RDMA device whose PCI function it is; "" none */
	unsigned int attachments;
	uint64_t bytes;
};

/* Another exporter's dma-bufs (not the NVIDIA driver's). */
struct gdr_live_other {
	char exp_name[64];
	unsigned int bufs, attached;
	uint64_t bytes;
	char first_dev[48]; /* a device one of them is attached to */
};

struct gdr_live {
	const char *root;
	char host[128];
	int live_root; /* root is "/": this machine */
	struct gdr_live_src src[GDR_LIVE_SRC_N];
	/* dma-bufs */
	struct gdr_live_bufs bufs;
	unsigned int nv_bufs, nv_attached, nv_attachments;
	uint64_t nv_bytes, nv_attached_bytes;
	struct gdr_live_devuse devs[GDR_LIVE_MAX_DEVS];
	int ndevs;
	struct gdr_live_other others[8];
	int nothers;
	/* peer memory */
	struct gdr_live_peers peers;
	int64_t peer_mrs;   /* -1 unknown */
	int64_t peer_bytes; /* -1 unknown (refcnt alone gives no bytes) */
	/* MRs and their processes */
	struct gdr_live_mrs mrs;
	unsigned int mrs_kernel; /* MRs of kernel users */
	unsigned int mrs_hidden; /* user MRs without a pid: another PID namespace, or the
				    registering thread has exited */
	uint64_t mr_bytes;
	struct gdr_live_proc *procs;
	int nprocs;
	int procs_dropped;   /* processes past GDR_LIVE_MAX_PROCS, each counted once */
	int dropped_pid[64]; /* the first of them, to count each once */
	int host_pidns;	     /* ROOT/proc/2 is kthreadd: the node's PID namespace */
	/* verdict: 1 in use, 0 not, -1 unknown */
	int dmabuf, peermem;
	int gpu_procs_no_gdr; /* GPU processes holding MRs while neither path is in use */
	int64_t est_dmabuf;   /* Σ per-process DMA-BUF estimates; -1 none */
	char verdict[512];
	char dmabuf_line[512];
	char peer_line[512];
	char warning[256];
};

/*
 * Gather everything below root (NULL or "/": this machine). mr_json: the
 * output of `rdma -j res show mr` read from a file by the caller, or NULL to
 * run rdma here (only when root is "/"; a tree has no netlink).
 */
void gdr_live_init(struct gdr_live *l, const char *root);
void gdr_live_gather(struct gdr_live *l, const char *mr_json, size_t mr_len, const char *mr_from);
void gdr_live_free(struct gdr_live *l);
/* "dmabuf", "peermem", "both", "none", or NULL when not known. */
const char *gdr_live_in_use(const struct gdr_live *l);
/* --expect: 0 met, 1 not met, 3 cannot be decided (exit_status.h); expect is enum gdr_expect. */
int gdr_live_expect(const struct gdr_live *l, int expect, char *why, size_t wlen);

/* Outputs. */
void gdr_live_print(FILE *out, const struct gdr_live *l, int quiet);
void gdr_live_json(FILE *out, const struct gdr_live *l);
void gdr_live_nfd(FILE *out, const struct gdr_live *l);
struct gdr_prom;
int gdr_live_prom(struct gdr_prom *p, const struct gdr_live *l);

#endif
