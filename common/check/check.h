/*
 * One check's record: its status, the value it saw, the fix, and which
 * GPUDirect path it rules out (blocks) or shows working (proves), on which
 * side of the path. gdr_doctor (common/doctor) and the PCIe health checks
 * gdr_topo shares (common/topo/pcie_health.c) both write these records; this
 * folder sits below both, so neither calls up into the other.
 */
#ifndef GDR_CHECK_H
#define GDR_CHECK_H

#include <stddef.h>
#include <stdio.h>

enum gdr_check_status {
	GDR_CHECK_PASS = 0,
	GDR_CHECK_WARN,
	GDR_CHECK_FAIL, /* the only status that may block a path */
	GDR_CHECK_NA,	/* not known here (not probed, no file): never blocks */
	GDR_CHECK_INFO, /* a fact that needs no action (a path not needed) */
};

/* Which path a check blocks when it fails, or proves when it passes (a bit mask). */
#define GDR_BLOCK_DMABUF  0x1
#define GDR_BLOCK_PEERMEM 0x2
#define GDR_BLOCK_BOTH	  (GDR_BLOCK_DMABUF | GDR_BLOCK_PEERMEM)

/* Which data paths a check's finding slows down (a bit mask; BLOCK bits reused). */
#define GDR_PATH_DMABUF	 GDR_BLOCK_DMABUF
#define GDR_PATH_PEERMEM GDR_BLOCK_PEERMEM
#define GDR_PATH_HOST	 0x4
#define GDR_PATH_BOUNCE	 0x8

/* The end of a path a check is about: the GPU and its driver, or the RDMA NIC. */
enum gdr_check_side {
	GDR_SIDE_GPU = 0,
	GDR_SIDE_NIC,
};

/* 8 GPUs x 8 NICs make 384 PCIe pair checks. */
#define GDR_CHECK_MAX 512

struct gdr_check {
	char name[48]; /* "kernel", "gpu0.dmabuf", "mlx5_0.port1" */
	enum gdr_check_status status;
	char value[512];     /* what was seen */
	char fix[256];	     /* what to do; empty when nothing to do */
	char brief[160];     /* a blocker as the verdict words it: "cause (fix)"; "" = value */
	unsigned int blocks; /* GDR_BLOCK_* this check rules out; only with GDR_CHECK_FAIL */
	unsigned int proves; /* GDR_BLOCK_* whose side this check shows working when it passes */
	enum gdr_check_side side; /* the side blocks and proves are about */
	unsigned int affects;	  /* GDR_PATH_* a warn/fail slows down (PCIe checks); 0 = none */
};

/* A list of checks read below root (the PCIe health checks write one). */
struct gdr_check_list {
	const char *root;		 /* "/" or a fixture tree */
	unsigned long long buffer_bytes; /* GPU memory one run registers (BAR1 check) */
	struct gdr_check checks[GDR_CHECK_MAX];
	unsigned int nchecks;
	unsigned int dropped;	   /* checks that did not fit */
	struct gdr_check overflow; /* written by gdr_check_add when the list is full */
};

/* root NULL or "" means "/". */
void gdr_check_list_init(struct gdr_check_list *l, const char *root);
/* Append a check (a full list keeps the first GDR_CHECK_MAX and counts the rest). */
struct gdr_check *gdr_check_add(struct gdr_check_list *l, const char *name,
				enum gdr_check_status status, unsigned int blocks);
/*
 * The slot gdr_check_add and gdr_doctor_add fill: checks[*n] zeroed and named,
 * or overflow (and *dropped counted) when the array of max is full. A check
 * given blocks is a fail, whatever status was asked: only fail blocks a path.
 */
struct gdr_check *gdr_check_slot(struct gdr_check *checks, unsigned int max, unsigned int *n,
				 unsigned int *dropped, struct gdr_check *overflow,
				 const char *name, enum gdr_check_status status,
				 unsigned int blocks);

void gdr_check_value(struct gdr_check *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void gdr_check_fix(struct gdr_check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gdr_check_brief(struct gdr_check *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "pass", "warn", "fail", "n-a", "info". */
const char *gdr_check_status_name(enum gdr_check_status s);
/* "gpu", "nic". */
const char *gdr_check_side_name(enum gdr_check_side s);
/* A check's JSON members `"status": ..., "value": ..., "fix": ...` (no braces). */
void gdr_check_json_fields(FILE *out, const struct gdr_check *c);
/* "dmabuf,peermem,host,bounce" for a GDR_PATH_* mask into buf. */
const char *gdr_paths_name(unsigned int paths, char *buf, size_t len);
/* A GDR_PATH_* mask as a JSON array of names: ["dmabuf", "peermem"]. */
void gdr_paths_json(FILE *out, unsigned int paths);

#endif
