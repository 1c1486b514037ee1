/*
 * gdr_doctor: which GPUDirect RDMA path this node can use, and why not.
 *
 * Each check records a status, the value it saw and the fix, and may block
 * one or both GPUDirect paths; the verdict is computed from what the checks
 * blocked. Every file is read below doc->root so that fixture trees can
 * stand in for a node.
 *
 * Files: doctor_report.c (check list, text/JSON output), doctor_verdict.c
 * (per-path readiness, blockers, the verdict's words),
 * doctor_node.c (kernel, driver, peer memory, rdma-core, memlock),
 * doctor_gpu.c (per-GPU PCI facts and CUDA attributes), doctor_nic.c (RDMA
 * devices), doctor_nccl_env.c (NCCL environment pitfalls), pcie_health.c
 * (PCIe configuration space per GPU-NIC pair, BAR1, NIC firmware). The check
 * record itself is common/check/check.h.
 */
#ifndef GDR_DOCTOR_H
#define GDR_DOCTOR_H

#include <stddef.h>
#include <stdio.h>

#include "check.h"  /* the check record, shared with the PCIe health checks */
#include "writer.h" /* gdr_json_str: the one JSON escaper */

/* What --expect asks for. */
enum gdr_expect {
	GDR_EXPECT_NONE = 0,
	GDR_EXPECT_DMABUF,
	GDR_EXPECT_PEERMEM,
	GDR_EXPECT_ANY,
};

#define GDR_DOCTOR_MAX_DEVS 64

struct gdr_doctor {
	const char *root;	  /* "/" or a fixture tree */
	const char *topology_xml; /* hwloc XML for the distance checks; NULL = live */
	struct gdr_check checks[GDR_CHECK_MAX];
	unsigned int nchecks;
	unsigned int dropped;	   /* checks that did not fit */
	struct gdr_check overflow; /* written by gdr_doctor_add when the list is full */
	/* Facts the later checks use. */
	char kernel_release[128];
	char host[128];		 /* the node's host name; "" unknown */
	char driver_version[64]; /* "580.159.04"; "" when no driver */
	int open_module;	 /* the driver is the open kernel module */
	int nvidia_gpus;	 /* NVIDIA GPUs on the PCI bus; -1 when PCI is not readable */
	int cuda_version;	 /* cuDriverGetVersion, 0 unknown */
	int dmabuf_usable_gpu;	 /* some GPU reported DMA_BUF_SUPPORTED=1 (-1 unknown) */
	int dmabuf_node_ok;	 /* kernel and driver allow DMA-BUF (-1 unknown) */
	int peermem_loaded;
	int nic_count;
	unsigned long long buffer_bytes; /* GPU memory one run registers (BAR1 check) */
	/* The GPUs (PCI bus ids, bus order) and RDMA devices the checks found (nccl-vs-node). */
	char gpu_bdf[GDR_DOCTOR_MAX_DEVS][16];
	int ngpu_bdf;
	char nic_name[GDR_DOCTOR_MAX_DEVS][64];
	int nnic_name;
};

/* Fill doc with every check; root NULL means "/". */
void gdr_doctor_init(struct gdr_doctor *doc, const char *root);
void gdr_doctor_run(struct gdr_doctor *doc);

/* Individual groups (each appends its checks). */
void gdr_doctor_node_checks(struct gdr_doctor *doc);
void gdr_doctor_gpu_checks(struct gdr_doctor *doc);
void gdr_doctor_nic_checks(struct gdr_doctor *doc);
void gdr_doctor_nccl_env_checks(struct gdr_doctor *doc);
/* Append a check (a full list keeps the first GDR_CHECK_MAX and counts the rest). */
struct gdr_check *gdr_doctor_add(struct gdr_doctor *doc, const char *name,
				 enum gdr_check_status status, unsigned int blocks);
/* One path's readiness; a side's state too. Ordered from best to worst. */
enum gdr_path_state {
	GDR_STATE_READY = 0,  /* usable, and the deciding checks were probed */
	GDR_STATE_POSSIBLE,   /* nothing rules it out, but a deciding check was not probed */
	GDR_STATE_BLOCKED,    /* a failed check rules it out */
	GDR_STATE_NOT_NEEDED, /* nvidia-peermem not loaded where DMA-BUF works on the GPU side */
};

#define GDR_VERDICT_MAX_BLOCKERS 16

struct gdr_path_verdict {
	unsigned int path;	     /* GDR_BLOCK_DMABUF or GDR_BLOCK_PEERMEM */
	enum gdr_path_state state;   /* the path as a whole */
	enum gdr_path_state side[2]; /* by enum gdr_check_side */
	char evidence[2][192];	     /* per side: what shows it working, or what was not probed */
	unsigned int
	    blocker[GDR_VERDICT_MAX_BLOCKERS]; /* indexes into doc->checks, GPU side first */
	unsigned int nblockers;
	char line[1024]; /* "GPU side ready (...); blocked: no RDMA device (...)" */
};

struct gdr_verdict {
	int dmabuf; /* usable (ready or possible, not probed): 1/0 */
	int peermem;
	struct gdr_path_verdict paths[2]; /* best path first */
	char scope[192];		  /* "this machine (host vm)", "the tree below DIR ..." */
	char text[352];			  /* one line: the best answer, or the first blocker */
};

void gdr_doctor_verdict(const struct gdr_doctor *doc, struct gdr_verdict *v);
/* "DMA-BUF", "nvidia-peermem"; "dmabuf", "peermem". */
const char *gdr_path_title(unsigned int path);
const char *gdr_path_key(unsigned int path);
/* "ready", "possible, not probed", "blocked", "not needed". */
const char *gdr_path_state_name(enum gdr_path_state s);
/* After every check: the peermem check's status in the light of DMA-BUF (info, warn). */
void gdr_doctor_finish(struct gdr_doctor *doc);

/* "dmabuf" -> GDR_EXPECT_DMABUF; -EINVAL otherwise. */
int gdr_expect_parse(const char *s);
const char *gdr_expect_name(enum gdr_expect e);
/* Does the verdict satisfy expect? (GDR_EXPECT_NONE: always.) */
int gdr_verdict_meets(const struct gdr_verdict *v, enum gdr_expect e);

/* The verdict block: "verdict (SCOPE): text" and one line per path, wrapped to 80 columns. */
void gdr_doctor_print_verdict(FILE *out, const struct gdr_verdict *v);
void gdr_doctor_print(FILE *out, const struct gdr_doctor *doc, const struct gdr_verdict *v);
/* JSON object {"root":..., "checks":[...], "verdict":{...}} with trailing newline. */
void gdr_doctor_json(FILE *out, const struct gdr_doctor *doc, const struct gdr_verdict *v);

/*
 * For the cluster outputs (doctor_cluster.c, docs/cluster-outputs.md): NCCL's
 * effective NCCL_NET_GDR_LEVEL ("PXB"), the worst distance from a GPU to its
 * nearest NIC ("NODE") and for how many GPUs NCCL would use GPUDirect RDMA
 * ("all", "some", "none"); "" where not known (a level NCCL does not name,
 * distances not measured).
 */
struct gdr_doctor_nccl {
	char gdr_level[8];
	char gpu_nic_worst[8];
	char nccl_gdr[8];
};
void gdr_doctor_nccl_summary(const struct gdr_doctor *doc, struct gdr_doctor_nccl *s);
/* The verdict as NFD feature lines (name=value, one a line). */
void gdr_doctor_nfd(FILE *out, const struct gdr_doctor *doc, const struct gdr_verdict *v);
struct gdr_prom;
/* Every check and path state as Prometheus families; 0 or p's error. */
int gdr_doctor_prom(struct gdr_prom *p, const struct gdr_doctor *doc, const struct gdr_verdict *v);

/* The node's name: the live one (root "/"), or the tree's own (proc, then /etc/hostname). */
void gdr_doctor_host(const char *root, char *host, size_t len);
/* Parse "5.15.0-91-generic" into major/minor; 0 or -EINVAL. */
int gdr_kernel_version_parse(const char *release, int *major, int *minor);
/* Extract the driver version and flavour from /proc/driver/nvidia/version text. */
int gdr_nvidia_version_parse(const char *text, char *version, size_t vlen, int *open_module);
/* Look up CONFIG_<name> in kernel config text: 'y', 'm', 'n' (absent or "is not set"). */
char gdr_kconfig_lookup(const char *text, const char *name);
/* Parse "Max locked memory" from /proc/PID/limits text: soft limit in bytes, UINT64_MAX =
 * unlimited. */
int gdr_limits_memlock_parse(const char *text, unsigned long long *soft);

#endif
