/*
 * NCCL's effective GPUDirect settings, the one place gdr_topo, gdr_doctor and
 * the NCCL-log comparison take them from: NCCL_NET_GDR_LEVEL,
 * NCCL_NET_GDR_READ, NCCL_DMABUF_ENABLE and NCCL_NET_GDR_C2C with NCCL's
 * defaults when unset, and per GPU what NCCL would decide on a topology and
 * the setting that would enable GPUDirect RDMA where it would not.
 */
#ifndef GDR_NCCL_SETTINGS_H
#define GDR_NCCL_SETTINGS_H

#include <stddef.h>

#include "topo.h"

/* NCCL's defaults when a variable is unset (see nccl_settings.c for the releases). */
#define GDR_NCCL_DEFAULT_LEVEL GDR_NCCL_PXB
#define GDR_NCCL_DEFAULT_DMABUF 1
#define GDR_NCCL_DEFAULT_C2C 1

/* One variable: its name, NCCL's default now, and the releases that changed it. */
struct gdr_nccl_setting_doc {
	const char *var;	/* "NCCL_NET_GDR_LEVEL" */
	const char *deflt;	/* "PXB" */
	const char *history;	/* "2.4.2: ...; 2.6.4: ..." */
};
/* The four settings, in a fixed order; *n is set to their count. */
const struct gdr_nccl_setting_doc *gdr_nccl_setting_docs(int *n);

/* An integer variable as NCCL_PARAM reads it: 1 unset (NULL or ""), 0 set (*v), -EINVAL. */
int gdr_nccl_parse_long(const char *var, const char *s, long *v, char *why, size_t wlen);
/* NCCL_DMABUF_ENABLE and NCCL_NET_GDR_C2C: NULL or "" = unset (-1), else 0 or 1. */
int gdr_nccl_parse_flag(const char *var, const char *s, int *out, char *why, size_t wlen);
/* The effective value: the variable's, or NCCL's default. */
int gdr_nccl_dmabuf_on(const struct gdr_nccl_env *env);
int gdr_nccl_c2c_on(const struct gdr_nccl_env *env);

/* The lowest NCCL_NET_GDR_LEVEL under which NCCL uses GPUDirect RDMA at class c. */
enum gdr_nccl_level gdr_nccl_level_for(enum gdr_topo_class c);

/* One GPU: its nearest NIC and NCCL's decision for it. */
struct gdr_nccl_gpu {
	struct gdr_topo_pair nearest; /* cls GDR_TOPO_UNKNOWN: not measured */
	int use;		      /* 1 would use GDR, 0 would not, -1 unknown */
	enum gdr_nccl_level need;     /* lowest level that enables it (use >= 0) */
};

/* Every GPU of a topology judged under one set of settings. */
struct gdr_nccl_judgement {
	int ngpu;		  /* GPUs in the topology */
	int measured;		  /* of them, with a nearest NIC on PCI */
	int refused;		  /* of them, NCCL would not use GDR for */
	enum gdr_nccl_level need; /* the level that enables every refused GPU */
	struct gdr_nccl_gpu *gpu; /* [ngpu] */
};

/* 0, or -ENOMEM. Free with gdr_nccl_judgement_free(). */
int gdr_nccl_judge_topo(const struct gdr_topo *t, const struct gdr_nccl_env *env,
			struct gdr_nccl_judgement *j);
void gdr_nccl_judgement_free(struct gdr_nccl_judgement *j);

/*
 * The topology a node check should judge: xml, or this machine when root is
 * NULL or "/". -ENOENT (why says so) for a fixture root without xml, whose
 * node is not this machine; otherwise gdr_topo_load()'s result.
 */
int gdr_nccl_node_topo(struct gdr_topo **t, const char *xml, const char *root, char *why,
		       size_t wlen);

/*
 * "NCCL_NET_GDR_LEVEL=PHB": the setting that enables GPUDirect RDMA at level
 * need. Returns buf.
 */
const char *gdr_nccl_enable_text(enum gdr_nccl_level need, char *buf, size_t len);

#endif
