/*
 * gdr_doctor: which GPUDirect RDMA path this node can use, and why not.
 *
 * Each check records a status, the value it saw and the fix, and may block
 * one or both GPUDirect paths; the verdict is computed from what the checks
 * blocked. Every file is read below doc->root so that fixture trees can
 * stand in for a node.
 *
 * Files: doctor_report.c (check list, verdict, text/JSON output),
 * doctor_node.c (kernel, driver, peer memory, rdma-core, memlock),
 * doctor_gpu.c (per-GPU PCI facts and CUDA attributes), doctor_nic.c (RDMA
 * devices), doctor_nccl_env.c (NCCL environment pitfalls), pcie_health.c
 * (PCIe configuration space per GPU-NIC pair, BAR1, NIC firmware).
 */
#ifndef GDR_DOCTOR_H
#define GDR_DOCTOR_H

#include <stddef.h>
#include <stdio.h>

#include "writer.h" /* gdr_json_str: the one JSON escaper */

enum gdr_check_status {
	GDR_CHECK_PASS = 0,
	GDR_CHECK_WARN,
	GDR_CHECK_FAIL,
	GDR_CHECK_NA,
};

/* Which path a check blocks when it fails (a bit mask). */
#define GDR_BLOCK_DMABUF  0x1
#define GDR_BLOCK_PEERMEM 0x2
#define GDR_BLOCK_BOTH	  (GDR_BLOCK_DMABUF | GDR_BLOCK_PEERMEM)

/* Which data paths a check's finding slows down (a bit mask; BLOCK bits reused). */
#define GDR_PATH_DMABUF	 GDR_BLOCK_DMABUF
#define GDR_PATH_PEERMEM GDR_BLOCK_PEERMEM
#define GDR_PATH_HOST	 0x4
#define GDR_PATH_BOUNCE	 0x8

/* 8 GPUs x 8 NICs make 384 PCIe pair checks. */
#define GDR_DOCTOR_MAX_CHECKS 512

struct gdr_check {
	char name[48]; /* "kernel", "gpu0.dmabuf", "mlx5_0.port1" */
	enum gdr_check_status status;
	char value[256];      /* what was seen */
	char fix[256];	      /* what to do; empty when nothing to do */
	unsigned int blocks;  /* GDR_BLOCK_* this check blocks */
	unsigned int affects; /* GDR_PATH_* a warn/fail slows down (PCIe checks); 0 = none */
};

/* What --expect asks for. */
enum gdr_expect {
	GDR_EXPECT_NONE = 0,
	GDR_EXPECT_DMABUF,
	GDR_EXPECT_PEERMEM,
	GDR_EXPECT_ANY,
};

struct gdr_doctor {
	const char *root;	  /* "/" or a fixture tree */
	const char *topology_xml; /* hwloc XML for the distance checks; NULL = live */
	struct gdr_check checks[GDR_DOCTOR_MAX_CHECKS];
	unsigned int nchecks;
	unsigned int dropped;	   /* checks that did not fit */
	struct gdr_check overflow; /* written by gdr_doctor_add when the list is full */
	/* Facts the later checks use. */
	char kernel_release[128];
	int dmabuf_usable_gpu; /* some GPU reported DMA_BUF_SUPPORTED=1 (-1 unknown) */
	int dmabuf_node_ok;    /* kernel and driver allow DMA-BUF (-1 unknown) */
	int peermem_loaded;
	int nic_count;
	unsigned long long buffer_bytes; /* GPU memory one run registers (BAR1 check) */
};

/* Fill doc with every check; root NULL means "/". */
void gdr_doctor_init(struct gdr_doctor *doc, const char *root);
void gdr_doctor_run(struct gdr_doctor *doc);

/* Individual groups (each appends its checks). */
void gdr_doctor_node_checks(struct gdr_doctor *doc);
void gdr_doctor_gpu_checks(struct gdr_doctor *doc);
void gdr_doctor_nic_checks(struct gdr_doctor *doc);
void gdr_doctor_nccl_env_checks(struct gdr_doctor *doc);
/* PCIe health per GPU x NIC pair, BAR1, NIC firmware (pcie_health.c). */
void gdr_doctor_pcie_checks(struct gdr_doctor *doc);
/*
 * The PCIe checks of one pair (gdr_topo): PAIR.acs ... PAIR.ceiling appended to doc,
 * read below doc->root. 0, or -errno when the GPU or the NIC is not on PCI there.
 */
int gdr_pcie_pair_checks(struct gdr_doctor *doc, const char *pair_name, const char *gpu_bdf,
			 const char *nic);
/* "dmabuf,peermem,host,bounce" for a GDR_PATH_* mask into buf. */
const char *gdr_paths_name(unsigned int paths, char *buf, size_t len);

/* Append a check (a full list keeps the first GDR_DOCTOR_MAX_CHECKS and counts the rest). */
struct gdr_check *gdr_doctor_add(struct gdr_doctor *doc, const char *name,
				 enum gdr_check_status status, unsigned int blocks);
void gdr_check_value(struct gdr_check *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void gdr_check_fix(struct gdr_check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

const char *gdr_check_status_name(enum gdr_check_status s);
/* A check's JSON members `"status": ..., "value": ..., "fix": ...` (no braces). */
void gdr_check_json_fields(FILE *out, const struct gdr_check *c);

struct gdr_verdict {
	int dmabuf; /* usable: 1/0 */
	int peermem;
	char text[352]; /* exactly one of the four verdict lines of the issue */
};

void gdr_doctor_verdict(const struct gdr_doctor *doc, struct gdr_verdict *v);

/* "dmabuf" -> GDR_EXPECT_DMABUF; -EINVAL otherwise. */
int gdr_expect_parse(const char *s);
const char *gdr_expect_name(enum gdr_expect e);
/* Does the verdict satisfy expect? (GDR_EXPECT_NONE: always.) */
int gdr_verdict_meets(const struct gdr_verdict *v, enum gdr_expect e);

void gdr_doctor_print(FILE *out, const struct gdr_doctor *doc, const struct gdr_verdict *v);
/* JSON object {"root":..., "checks":[...], "verdict":{...}} with trailing newline. */
void gdr_doctor_json(FILE *out, const struct gdr_doctor *doc, const struct gdr_verdict *v);

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
