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

/*
 * NCCL's defaults, per release: the one table (nccl_settings.c) that
 * gdr_topo's settings block, gdr_doctor's NCCL checks and the NCCL log
 * reader take them from. One entry is one default from a release on.
 */
struct gdr_nccl_default {
	const char *var;   /* "NCCL_NET_GDR_C2C" */
	const char *since; /* the first release with this default, "2.27.3" (tag v2.27.3-1) */
	const char *value; /* "1" */
	const char *what;  /* what NCCL does with it then */
};
/* Every entry, by variable and then by release; *n is set to their count. */
const struct gdr_nccl_default *gdr_nccl_defaults(size_t *n);
/* var's default in release major.minor.patch (major < 0: the newest); NULL when var is not in it.
 */
const struct gdr_nccl_default *gdr_nccl_default_in(const char *var, int major, int minor,
						   int patch);
/* The first release that reads var ("2.13.4"); NULL when the table has none. */
const char *gdr_nccl_since(const char *var);
/* major.minor.patch (patch < 0 counts as 0) against "2.13.4": < 0 before, 0 same, > 0 after. */
int gdr_nccl_release_cmp(int major, int minor, int patch, const char *release);
/* "2.13.4: 1, new" and the later changes, "; "-separated; returns buf. */
const char *gdr_nccl_history(const char *var, char *buf, size_t len);
/* "1 since NCCL 2.27.3, 0 before": the newest default, since when, what before; returns buf. */
const char *gdr_nccl_default_text(const char *var, char *buf, size_t len);
/* The release series (2.19) of var's newest default: 0, or -ENOENT when var has none. */
int gdr_nccl_newest_series(const char *var, int *major, int *minor);
/* The newest defaults as the values the judgments use. */
enum gdr_nccl_level gdr_nccl_default_level(void);
int gdr_nccl_default_flag(const char *var);

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
