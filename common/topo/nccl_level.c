/*
 * NCCL's GPUDirect RDMA decision, as net.cc's ncclTopoCheckGdr() makes it:
 * GDR is used when the GPU-NIC path type is at most NCCL_NET_GDR_LEVEL
 * (default PXB). NCCL hangs each host bridge under the CPU of its NUMA node,
 * so nvidia-smi's NODE is PHB to NCCL. NCCL_NET_GDR_READ decides whether the
 * NIC also reads GPU memory for sends; unset, NCCL enables it on compute
 * capability >= 8.0 (or with NVLink), which a topology does not tell.
 *
 * NCCL silently ignores a value it cannot parse; here that is an error, so a
 * typo is seen before a run rather than after.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nccl_settings.h"
#include "util.h"

static const char *const level_names[] = { "LOC", "PIX", "PXB", "PHB", "SYS" };

/* NCCL's levelsOldToNew[]: the numbers of NCCL < 2.4. */
static const enum gdr_nccl_level legacy[] = { GDR_NCCL_LOC, GDR_NCCL_PIX, GDR_NCCL_PXB,
					      GDR_NCCL_PHB, GDR_NCCL_SYS, GDR_NCCL_SYS };

const char *gdr_nccl_level_name(enum gdr_nccl_level l)
{
	return (unsigned int)l < GDR_ARRAY_SIZE(level_names) ? level_names[l] : "?";
}

int gdr_nccl_parse_level(const char *s, enum gdr_nccl_level *out, char *why, size_t wlen)
{
	unsigned int i;

	if (!s || !*s) {
		*out = gdr_nccl_default_level();
		return 0;
	}
	for (i = 0; i < GDR_ARRAY_SIZE(level_names); i++)
		if (!strcmp(s, level_names[i])) {
			*out = i;
			return 0;
		}
	/*
	 * Newer NCCL names. NVL/NVB/C2C are closer than any PCIe path, so for a
	 * GPU-NIC pair they allow nothing more than LOC; PXN and P2C sit between
	 * PXB and PHB in NCCL's order, and no PCIe class here falls between them.
	 */
	static const struct {
		const char *name;
		enum gdr_nccl_level level;
	} newer[] = { { "NVL", GDR_NCCL_LOC },
		      { "NVB", GDR_NCCL_LOC },
		      { "C2C", GDR_NCCL_LOC },
		      { "PXN", GDR_NCCL_PXB },
		      { "P2C", GDR_NCCL_PXB } };
	for (i = 0; i < GDR_ARRAY_SIZE(newer); i++)
		if (!strcmp(s, newer[i].name)) {
			*out = newer[i].level;
			return 0;
		}
	if (isdigit((unsigned char)s[0])) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(s, &end, 10);
		if (!*end && !errno) {
			/* NCCL clamps numbers past the table to its last entry. */
			*out = legacy[v < GDR_ARRAY_SIZE(legacy) ? v : GDR_ARRAY_SIZE(legacy) - 1];
			return 0;
		}
	}
	for (i = 0; i < GDR_ARRAY_SIZE(level_names); i++)
		if (!strcasecmp(s, level_names[i])) {
			snprintf(
			    why, wlen,
			    "NCCL_NET_GDR_LEVEL=%s: NCCL compares level names case-sensitively "
			    "and would ignore this; use %s",
			    s, level_names[i]);
			return -EINVAL;
		}
	snprintf(
	    why, wlen,
	    "NCCL_NET_GDR_LEVEL=%s: not a level (LOC, PIX, PXB, PHB, SYS, or a legacy number 0..5)",
	    s);
	return -EINVAL;
}

int gdr_nccl_parse_read(const char *s, int *out, char *why, size_t wlen)
{
	long v;
	int r = gdr_nccl_parse_long("NCCL_NET_GDR_READ", s, &v, why, wlen);

	if (r >= 0)
		*out = r ? -1 : v < 0 ? -1 : v > 0; /* NCCL: < 0 lets it decide per GPU */
	return r < 0 ? r : 0;
}

static const enum gdr_nccl_level as_nccl[] = {
	[GDR_TOPO_PIX] = GDR_NCCL_PIX, [GDR_TOPO_PXB] = GDR_NCCL_PXB,
	[GDR_TOPO_PHB] = GDR_NCCL_PHB, [GDR_TOPO_NODE] = GDR_NCCL_PHB,
	[GDR_TOPO_SYS] = GDR_NCCL_SYS,
};

enum gdr_nccl_level gdr_nccl_level_for(enum gdr_topo_class c)
{
	return (unsigned int)c < GDR_ARRAY_SIZE(as_nccl) ? as_nccl[c] : GDR_NCCL_SYS;
}

int gdr_nccl_would_use(const struct gdr_nccl_env *env, enum gdr_topo_class c)
{
	if ((unsigned int)c >= GDR_ARRAY_SIZE(as_nccl))
		return -1;
	return as_nccl[c] <= env->level;
}

const char *gdr_nccl_reason(const struct gdr_nccl_env *env, enum gdr_topo_class c, char *buf,
			    size_t len)
{
	const char *cls = gdr_topo_class_name(c);
	const char *lvl = gdr_nccl_level_name(env->level);
	const char *alias = c == GDR_TOPO_NODE ? " (PHB to NCCL)" : "";
	const char *rd = "";
	int use = gdr_nccl_would_use(env, c);

	if (use < 0)
		snprintf(buf, len, "distance unknown");
	else if (!use)
		snprintf(buf, len, "%s%s > %s", cls, alias, lvl);
	else {
		if (env->read == 0)
			rd = ", receives only (NCCL_NET_GDR_READ=0)";
		else if (env->read > 0)
			rd = ", sends and receives (NCCL_NET_GDR_READ=1)";
		snprintf(buf, len, "%s%s <= %s%s", cls, alias, lvl, rd);
	}
	return buf;
}

const char *gdr_nccl_verdict(const struct gdr_nccl_env *env, enum gdr_topo_class c, char *buf,
			     size_t len)
{
	char why[128];
	int use = gdr_nccl_would_use(env, c);

	gdr_nccl_reason(env, c, why, sizeof(why));
	snprintf(buf, len, "%s: %s",
		 use < 0 ? "NCCL's GPUDirect RDMA choice unknown"
		 : use	 ? "NCCL would use GPUDirect RDMA"
			 : "NCCL would not use GPUDirect RDMA",
		 why);
	return buf;
}
