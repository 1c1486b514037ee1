/*
 * The NCCL log reader's cause -> fix map: for the branch the judge took
 * (nccl_log_verdict.c), the line that shows why, the cause in a few words
 * and what to change. Every "disabled" line NCCL (or a plugin) prints has
 * its fix here; a log that does not say why gets the NCCL_DEBUG_SUBSYS that
 * would.
 *
 * Facts from NVIDIA/nccl's source at its release tags:
 *  - "GPU Direct RDMA Disabled for HCA %d '%s' (no module)": net_ib.cc, 2.5
 *    to 2.12 (2.4: "... for GPU %d[%d] / HCA %d '%s' (no module or not
 *    supported by GPU)"); gone from 2.13.4, the first release with DMA-BUF.
 *  - "NET/%s : GPU Direct RDMA Disabled for HCA %d '%s'" (topo.cc): the NIC
 *    takes neither CUDA pointers (peer memory) nor DMA-BUF.
 *  - "Disabled for GPU ... (distance %d >= %d)" (2.4, 2.5: disabled when
 *    distance >= level, NCCL_NET_GDR_LEVEL read as a number) and "(distance
 *    %d > %d)" (2.6 on: disabled when distance > level, names accepted);
 *    the numbering of the path types changed in 2.6, 2.8, 2.12, 2.26, 2.27.
 */
#include "config.h"

#include "nccl_log.h"
#include "nccl_settings.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUBSYS_HINT "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET"

/* NCCL's path types by value, per range of releases (src/graph/topo.h, src/include/graph.h). */
struct level_table {
	int from, to; /* minor versions of 2.x, inclusive */
	int ge;	      /* 1: disabled when distance >= level (2.4, 2.5) */
	const char *name[10];
};

static const struct level_table tables[] = {
	{ 4, 5, 1, { "PIX", "PXB", "PHB", "NODE", "SYS" } },
	{ 6, 7, 0, { "LOC", "NVL", "PIX", "PXB", "PHB", "SYS" } },
	{ 8, 11, 0, { "LOC", "NVL", "NVB", "PIX", "PXB", "PHB", "SYS" } },
	{ 12, 25, 0, { "LOC", "NVL", "NVB", "PIX", "PXB", "PXN", "PHB", "SYS" } },
	{ 26, 26, 0, { "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "PXN", "PHB", "SYS" } },
	/* 2.27.3 had PXN 6, P2C 7; 2.27.5 on swap them. */
	{ 27, 99, 0, { "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS" } },
};

static const char *level_name(const struct level_table *t, int d)
{
	if (d < 0 || d >= (int)GDR_ARRAY_SIZE(t->name) || !t->name[d])
		return NULL;
	return t->name[d];
}

static int table_pxb(const struct level_table *t)
{
	for (int i = 0; i < (int)GDR_ARRAY_SIZE(t->name) && t->name[i]; i++)
		if (!strcmp(t->name[i], "PXB"))
			return i;
	return -1;
}

void gdr_nccl_catf(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/*
 * Could the line's threshold lim be this numbering's value of the job's level
 * (NCCL_NET_GDR_LEVEL as logged, or the default PXB when the log sets none)?
 */
static int level_fits(const struct level_table *t, const struct gdr_nccl_facts *f, int lim)
{
	const char *n = level_name(t, lim);

	if (t->ge)
		return 1; /* 2.4, 2.5: the level is a number */
	if (!f->gdr_level[0])
		return table_pxb(t) == lim;
	if (f->gdr_level[0] >= '0' && f->gdr_level[0] <= '9')
		return 1;
	return n && !strcmp(n, f->gdr_level);
}

/*
 * The fix for a "Disabled for GPU ... (distance D > L)" line: the level that
 * enables the pair, named as the log's NCCL release names it.
 */
static void distance_fix(const struct gdr_nccl_facts *f, const char *line, char *fix, size_t len)
{
	const char *d = strstr(line, "(distance ");
	int dist, lim, ge;
	char op[3] = "";

	if (!d || sscanf(d + 10, "%d %2[<>=] %d", &dist, op, &lim) != 3) {
		gdr_nccl_catf(
		    fix, len,
		    "raise NCCL_NET_GDR_LEVEL to the GPU-NIC distance gdr_topo shows (PHB or SYS)");
		return;
	}
	ge = !strcmp(op, ">=");
	if (f->vmajor == 2 && f->vminor >= 0) {
		for (size_t i = 0; i < GDR_ARRAY_SIZE(tables); i++) {
			const struct level_table *t = &tables[i];
			const char *n = level_name(t, dist);

			if (f->vminor < t->from || f->vminor > t->to || !n)
				continue;
			if (t->ge) {
				gdr_nccl_catf(
				    fix, len,
				    "raise NCCL_NET_GDR_LEVEL above the pair's distance: "
				    "NCCL_NET_GDR_LEVEL=%d (NCCL %s reads a number and needs "
				    "distance < level; distance %d is %s in its numbering, the "
				    "class "
				    "NCCL 2.6 and later call %s, where NCCL_NET_GDR_LEVEL=%s)",
				    dist + 1, f->version, dist, n, !strcmp(n, "NODE") ? "PHB" : n,
				    !strcmp(n, "NODE") ? "PHB" : n);
			} else {
				gdr_nccl_catf(
				    fix, len,
				    "raise NCCL_NET_GDR_LEVEL to %s (distance %d is %s in NCCL "
				    "%s's "
				    "numbering; the level is %d%s)",
				    n, dist, n, f->version, lim,
				    f->gdr_level[0] ? ", set by the job" : ", NCCL's default PXB");
			}
			return;
		}
	}
	/*
	 * No version in the log: every numbering the line's format allows whose
	 * value of the job's level is the line's threshold (all of them when
	 * none is), equal neighbours merged.
	 */
	int fits = 0, shown = 0;

	for (size_t i = 0; i < GDR_ARRAY_SIZE(tables); i++)
		fits += tables[i].ge == ge && level_fits(&tables[i], f, lim);
	gdr_nccl_catf(fix, len, "raise NCCL_NET_GDR_LEVEL to the class of distance %d:", dist);
	for (size_t i = 0; i < GDR_ARRAY_SIZE(tables); i++) {
		const struct level_table *t = &tables[i];
		const char *n = level_name(t, dist);
		int to = t->to;

		if (t->ge != ge || !n)
			continue;
		if (fits && !level_fits(t, f, lim))
			continue;
		while (i + 1 < GDR_ARRAY_SIZE(tables) && tables[i + 1].ge == ge &&
		       level_name(&tables[i + 1], dist) &&
		       !strcmp(level_name(&tables[i + 1], dist), n) &&
		       (!fits || level_fits(&tables[i + 1], f, lim)))
			to = tables[++i].to;
		gdr_nccl_catf(fix, len, "%s %s in NCCL 2.%d", shown++ ? "," : "", n, t->from);
		if (to == 99)
			gdr_nccl_catf(fix, len, " and later");
		else if (to != t->from)
			gdr_nccl_catf(fix, len, " to 2.%d", to);
		if (ge)
			gdr_nccl_catf(fix, len, " (a number there: NCCL_NET_GDR_LEVEL=%d)",
				      dist + 1);
	}
	if (!shown)
		gdr_nccl_catf(fix, len, " no NCCL numbering has it; use the class gdr_topo shows");
	if (fits && !ge)
		gdr_nccl_catf(
		    fix, len,
		    " (no NCCL version in the log; only these numberings give %s, the %s level, "
		    "the line's value %d)",
		    f->gdr_level[0] ? f->gdr_level : "PXB", f->gdr_level[0] ? "job's" : "default",
		    lim);
	else
		gdr_nccl_catf(fix, len, " (no NCCL version in the log)");
}

static void cause_line(const struct gdr_nccl_facts *f, struct gdr_nccl_verdict *v,
		       enum gdr_nccl_fact x)
{
	if (f->count[x])
		v->cause_line = f->first[x];
	else if (v->ncited)
		v->cause_line = v->cited_line[0];
}

/* What DMA-BUF needs, its first NCCL release from NCCL's defaults table (nccl_settings.c). */
static const char *dmabuf_needs(char *buf, size_t len)
{
	snprintf(buf, len, "NCCL >= %s, NCCL_DMABUF_ENABLE=1, open kernel module, kernel >= 5.12",
		 gdr_nccl_since("NCCL_DMABUF_ENABLE"));
	return buf;
}

/* The numbering of NCCL 2.4 and 2.5, whose NCCL_NET_GDR_LEVEL is a number. */
static const struct level_table *numeric_table(void)
{
	return &tables[0];
}

/* The first default of var in NCCL's defaults table (nccl_settings.c). */
static const struct gdr_nccl_default *first_default(const char *var)
{
	int r[3] = { 0, 0, 0 };

	sscanf(gdr_nccl_since(var), "%d.%d.%d", &r[0], &r[1], &r[2]);
	return gdr_nccl_default_in(var, r[0], r[1], r[2]);
}

static int numeric_release(const struct gdr_nccl_facts *f, const char *line)
{
	if (f->vmajor == 2 && f->vminor >= 0)
		return f->vminor >= numeric_table()->from && f->vminor <= numeric_table()->to;
	return (line && strstr(line, "(distance ") && strstr(line, " >= ")) ||
	       f->count[NF_NIC_DISTANCE];
}

/*
 * NCCL_NET_GDR_LEVEL's default in the log's release, from NCCL's defaults
 * table (nccl_settings.c): 2 (PHB's number) in 2.4 and 2.5, PXB from 2.6,
 * P2C from 2.29.2 while NCCL_NET_GDR_C2C is on.
 */
static const char *default_level(const struct gdr_nccl_facts *f, const char *line, char *buf,
				 size_t len)
{
	const struct gdr_nccl_default *d;

	if (numeric_release(f, line))
		d = first_default("NCCL_NET_GDR_LEVEL");
	else if (f->vmajor >= 0)
		d = gdr_nccl_default_in("NCCL_NET_GDR_LEVEL", f->vmajor, f->vminor, f->vpatch);
	else
		d = NULL;
	if (!d && !numeric_release(f, line) && f->vmajor < 0) {
		/* No release in the log: the class every release from 2.6 on uses for PCIe pairs.
		 */
		snprintf(buf, len, "%s", gdr_nccl_level_name(gdr_nccl_default_level()));
	} else if (!d) {
		snprintf(buf, len, "unknown");
	} else if (numeric_release(f, line)) {
		const char *n = level_name(numeric_table(), atoi(d->value));

		snprintf(buf, len, "%s, %s in NCCL 2.4 and 2.5", d->value, n ? n : "?");
	} else if (!strcmp(d->value, "P2C")) {
		snprintf(buf, len, "P2C, which is PXB for PCIe pairs");
	} else {
		snprintf(buf, len, "%s", d->value);
	}
	return buf;
}

/*
 * NCCL 2.4 and 2.5 read NCCL_NET_GDR_LEVEL as a number (NCCL_PARAM,
 * strtoll) and use GDR when the distance is below it: the fix for distance
 * dist is dist + 1. A name reads as 0 there, GDR off for every pair.
 */
static void numeric_fix(int dist, const char *version, char *fix, size_t len)
{
	const char *n = level_name(numeric_table(), dist);

	gdr_nccl_catf(fix, len,
		      "NCCL_NET_GDR_LEVEL=%d (NCCL %s reads a number and uses GPUDirect RDMA "
		      "when the distance is below it; %s is %d in its numbering; a name such as "
		      "PHB reads as 0 there and turns GDR off for every pair)%s",
		      dist + 1, version[0] ? version : "2.4/2.5", n ? n : "the distance", dist,
		      n && !strcmp(n, "SYS") ? "; SYS crosses NUMA nodes, often slower than "
					       "without GDR"
					     : "");
}

/*
 * NCCL 2.4's "CUDA Dev 0[0], IB NIC distance :  PHB": GDR is off when the
 * distance of the NIC in use (the channels' "NET/IB/<n>", else the nearest)
 * is not below the level. 1 when it explains the log.
 */
static int explain_nic_distance(const struct gdr_nccl_facts *f, struct gdr_nccl_verdict *v)
{
	const struct level_table *t = numeric_table();
	int dist = -1, level, nic = 0;
	char deflt[64];

	for (const char *p = f->nic_dist; *p; nic++) {
		size_t w = strcspn(p, " ");
		int d = -1;

		for (int i = 0; i < (int)GDR_ARRAY_SIZE(t->name) && t->name[i]; i++)
			if (strlen(t->name[i]) == w && !strncmp(p, t->name[i], w))
				d = i;
		if (d >= 0 && (nic == f->chan_dev || (f->chan_dev < 0 && (dist < 0 || d < dist))))
			dist = d;
		p += w;
		p += strspn(p, " ");
	}
	level = atoi(f->gdr_level[0] ? f->gdr_level : first_default("NCCL_NET_GDR_LEVEL")->value);
	if (dist < 0 || dist < level)
		return 0;
	cause_line(f, v, NF_NIC_DISTANCE);
	snprintf(v->cause, sizeof(v->cause),
		 "the GPU-NIC distance %s (%d) is not below NCCL_NET_GDR_LEVEL (%s): NCCL 2.4 "
		 "uses no GPUDirect RDMA there",
		 level_name(t, dist) ? level_name(t, dist) : "?", dist,
		 f->gdr_level[0] ? f->gdr_level : default_level(f, NULL, deflt, sizeof(deflt)));
	numeric_fix(dist, f->version, v->fix, sizeof(v->fix));
	return 1;
}

/* NCCL 2.30.7 and later: no GDR for a GPU in MLOPart mode unless NCCL_NET_GDR_MLOPART=1. */
static int explain_mlopart(const struct gdr_nccl_facts *f, struct gdr_nccl_verdict *v)
{
	const char *since = gdr_nccl_since("NCCL_NET_GDR_MLOPART");

	if (!f->count[NF_MLOPART] || f->count[NF_ENV_MLOPART_ON] || gdr_nccl_before(f, since))
		return 0;
	cause_line(f, v, NF_MLOPART);
	snprintf(v->cause, sizeof(v->cause),
		 "the GPU is in MLOPart mode: NCCL %s and later use no GPUDirect RDMA on it "
		 "(NCCL_NET_GDR_MLOPART default %s)",
		 since, gdr_nccl_default_in("NCCL_NET_GDR_MLOPART", -1, 0, 0)->value);
	snprintf(v->fix, sizeof(v->fix), "set NCCL_NET_GDR_MLOPART=1");
	return 1;
}

/* Nothing in the log says why: the rerun that would, as the log's release prints it. */
static void explain_unsaid(const struct gdr_nccl_facts *f, struct gdr_nccl_verdict *v)
{
	char deflt[64];
	const char *trace = "2.30.3";

	cause_line(f, v, NF_ENV_GDR_LEVEL);
	snprintf(v->cause, sizeof(v->cause), "no /GDRDMA, and no line of the log says why%s%s%s",
		 f->gdr_level[0] ? " (the job sets NCCL_NET_GDR_LEVEL=" : "", f->gdr_level,
		 f->gdr_level[0] ? ")" : "");
	default_level(f, NULL, deflt, sizeof(deflt));
	if (numeric_release(f, NULL)) {
		snprintf(
		    v->fix, sizeof(v->fix),
		    "rerun with " SUBSYS_HINT ": NCCL %s prints each GPU/NIC pair's decision "
		    "(\"... (distance X >= Y)\"); if the distance is not below "
		    "NCCL_NET_GDR_LEVEL (%s %s), set the number above it as gdr_topo shows: "
		    "NCCL_NET_GDR_LEVEL=3 for PHB, 4 for NODE, 5 for SYS (NCCL 2.4 and 2.5 read a "
		    "number; a name such as PHB reads as 0 there, GDR off for every pair)",
		    f->version[0] ? f->version : "2.4/2.5", f->gdr_level[0] ? "set to" : "default",
		    f->gdr_level[0] ? f->gdr_level : deflt);
		return;
	}
	/* From v2.30.3-1 paths.cc logs the per-pair decision at TRACE only (a debug build). */
	if (f->vmajor >= 0 && !gdr_nccl_before(f, trace)) {
		snprintf(v->fix, sizeof(v->fix),
			 "rerun with " SUBSYS_HINT ",GRAPH: NCCL %s and later print each NIC's GDR "
			 "support but the per-pair decision only at TRACE; gdr_topo shows the "
			 "GPU-NIC distance: if beyond NCCL_NET_GDR_LEVEL (%s %s), set "
			 "NCCL_NET_GDR_LEVEL=PHB (or SYS)",
			 trace, f->gdr_level[0] ? "set to" : "default",
			 f->gdr_level[0] ? f->gdr_level : deflt);
		if (!gdr_nccl_before(f, gdr_nccl_since("NCCL_NET_GDR_MLOPART")))
			gdr_nccl_catf(
			    v->fix, sizeof(v->fix),
			    "; a GPU shown as \"[MLOPart N]\" needs NCCL_NET_GDR_MLOPART=1");
		return;
	}
	snprintf(v->fix, sizeof(v->fix),
		 "rerun with " SUBSYS_HINT ": NCCL then prints each GPU/NIC pair's decision "
		 "(\"GPU Direct RDMA Disabled for GPU ... (distance X > Y)\") and each NIC's GDR "
		 "support; if the distance is beyond NCCL_NET_GDR_LEVEL (%s %s), set "
		 "NCCL_NET_GDR_LEVEL=PHB (or SYS) as gdr_topo shows",
		 f->gdr_level[0] ? "set to" : "default", f->gdr_level[0] ? f->gdr_level : deflt);
}

/* GDR not used: the first disabled line that says why, else the NCCL_DEBUG_SUBSYS that would. */
static void explain_no_gdr(const struct gdr_nccl_facts *f, struct gdr_nccl_verdict *v)
{
	const unsigned int *n = f->count;
	char needs[160], deflt[64];

	if (n[NF_HCA_NO_MODULE]) {
		cause_line(f, v, NF_HCA_NO_MODULE);
		snprintf(v->cause, sizeof(v->cause),
			 "no peer-memory module: GPUDirect RDMA disabled for the HCA");
		snprintf(v->fix, sizeof(v->fix),
			 "load nvidia-peermem (modprobe nvidia-peermem) or move to DMA-BUF "
			 "(%s; this line comes from NCCL 2.4 to 2.12, which have no DMA-BUF path)",
			 dmabuf_needs(needs, sizeof(needs)));
		return;
	}
	if (n[NF_HCA_GDR_OFF] && !n[NF_HCA_GDR_ON]) {
		cause_line(f, v, NF_HCA_GDR_OFF);
		snprintf(v->cause, sizeof(v->cause),
			 "the NIC takes neither peer memory nor DMA-BUF: GDR disabled for the HCA");
		snprintf(v->fix, sizeof(v->fix),
			 "load nvidia-peermem, or enable DMA-BUF (%s, a NIC driver with "
			 "ibv_reg_dmabuf_mr); gdr_doctor on the node shows which is missing",
			 dmabuf_needs(needs, sizeof(needs)));
		return;
	}
	if (n[NF_PAIR_GDR_OFF]) {
		cause_line(f, v, NF_PAIR_GDR_OFF);
		snprintf(v->cause, sizeof(v->cause),
			 "the GPU-NIC distance is beyond NCCL_NET_GDR_LEVEL (%s %s)",
			 f->gdr_level[0] ? "set to" : "its default,",
			 f->gdr_level[0]
			     ? f->gdr_level
			     : default_level(f, v->cause_line.text, deflt, sizeof(deflt)));
		distance_fix(f, v->cause_line.text, v->fix, sizeof(v->fix));
		return;
	}
	if (n[NF_NIC_DISTANCE] && explain_nic_distance(f, v))
		return;
	if (explain_mlopart(f, v))
		return;
	explain_unsaid(f, v);
}

static void explain_socket(const struct gdr_nccl_facts *f, struct gdr_nccl_verdict *v)
{
	const unsigned int *n = f->count;

	if (n[NF_ENV_IB_OFF]) {
		cause_line(f, v, NF_ENV_IB_OFF);
		snprintf(v->cause, sizeof(v->cause),
			 "NCCL_IB_DISABLE=1: Socket transport (TCP), no GPUDirect RDMA");
		snprintf(v->fix, sizeof(v->fix), "unset NCCL_IB_DISABLE (or set it to 0)");
		return;
	}
	if (n[NF_NO_VERBS]) {
		cause_line(f, v, NF_NO_VERBS);
		snprintf(v->cause, sizeof(v->cause),
			 "no libibverbs: NCCL's IB transport could not start, Socket transport "
			 "(TCP), no GPUDirect RDMA");
		snprintf(v->fix, sizeof(v->fix),
			 "install libibverbs (rdma-core) and the NIC's provider (libmlx5) where "
			 "the job runs, in the container image too; ibv_devices must list the NIC");
		return;
	}
	if (n[NF_NO_IB_DEVICE]) {
		cause_line(f, v, NF_NO_IB_DEVICE);
		snprintf(v->cause, sizeof(v->cause),
			 "no RDMA device found: Socket transport (TCP), no GPUDirect RDMA");
		snprintf(v->fix, sizeof(v->fix),
			 "make the RDMA NIC visible: load its driver (mlx5_ib) and ib_uverbs, pass "
			 "/dev/infiniband into the container; ibv_devices must list it");
		return;
	}
	/* The Socket transport's own line, when it is the one that shows it. */
	cause_line(f, v, n[NF_NETWORK] || !n[NF_SOCKET_HCA] ? NF_NETWORK : NF_SOCKET_HCA);
	snprintf(v->cause, sizeof(v->cause),
		 "Socket transport (TCP through host memory), no GPUDirect RDMA; the log does "
		 "not say why NCCL's IB transport was not used");
	snprintf(v->fix, sizeof(v->fix),
		 "check NCCL_NET (not Socket) and NCCL_IB_DISABLE, and that ibv_devices lists "
		 "an RDMA NIC; rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,NET: NET/IB's "
		 "lines then say why");
}

static void explain_plugin_off(const struct gdr_nccl_facts *f, struct gdr_nccl_verdict *v)
{
	cause_line(f, v, NF_PLUGIN_GDR_OFF);
	if (strstr(v->cause_line.text, "disable CUDA API usage")) {
		snprintf(v->cause, sizeof(v->cause),
			 "aws-ofi-nccl disabled GDR: its provider would not give up CUDA calls");
		snprintf(v->fix, sizeof(v->fix),
			 "update libfabric and aws-ofi-nccl so that the provider accepts "
			 "FI_OPT_CUDA_API_PERMITTED=false; on EFA, also an instance type that "
			 "offers GPUDirect RDMA");
		return;
	}
	snprintf(v->cause, sizeof(v->cause), "the net plugin disabled GPUDirect RDMA");
	snprintf(v->fix, sizeof(v->fix),
		 "see the plugin's line for its reason; rerun with " SUBSYS_HINT
		 " for the plugin's NIC lines");
}

void gdr_nccl_explain(const struct gdr_nccl_facts *f, struct gdr_nccl_verdict *v,
		      enum gdr_nccl_cause why)
{
	char needs[160];

	v->cause[0] = v->fix[0] = '\0';
	memset(&v->cause_line, 0, sizeof(v->cause_line));
	switch (why) {
	case NC_GDR_DMABUF:
		cause_line(f, v, NF_GPU_DMABUF);
		snprintf(v->cause, sizeof(v->cause), "GPUDirect RDMA through DMA-BUF");
		break;
	case NC_GDR_OLD_NCCL:
		cause_line(f, v, NF_VERSION);
		snprintf(v->cause, sizeof(v->cause), "peer memory: NCCL %s predates DMA-BUF (%s)",
			 f->version, gdr_nccl_since("NCCL_DMABUF_ENABLE"));
		snprintf(v->fix, sizeof(v->fix),
			 "none needed for GPUDirect; for DMA-BUF instead of nvidia-peermem: %s",
			 dmabuf_needs(needs, sizeof(needs)));
		break;
	case NC_GDR_ENV_NODMABUF:
		cause_line(f, v, NF_ENV_DMABUF_OFF);
		snprintf(v->cause, sizeof(v->cause), "peer memory: NCCL_DMABUF_ENABLE=0");
		snprintf(v->fix, sizeof(v->fix),
			 "none needed for GPUDirect; for DMA-BUF: unset NCCL_DMABUF_ENABLE");
		break;
	case NC_GDR_PLUGIN:
		cause_line(f, v,
			   f->count[NF_PLUGIN_NO_DMABUF] ? NF_PLUGIN_NO_DMABUF : NF_PLUGIN_PEERMEM);
		snprintf(v->cause, sizeof(v->cause),
			 "peer memory: the net plugin registers no DMA-BUF for this NIC");
		snprintf(v->fix, sizeof(v->fix),
			 "none needed for GPUDirect; for DMA-BUF: a plugin release and NIC driver "
			 "with DMA-BUF registration");
		break;
	case NC_GDR_NO_GPU_DMABUF:
		cause_line(f, v, NF_INIT);
		snprintf(v->cause, sizeof(v->cause),
			 "peer memory: NCCL %s found no DMA-BUF on the GPU during init",
			 f->version);
		snprintf(v->fix, sizeof(v->fix),
			 "none needed for GPUDirect; for DMA-BUF: open kernel module, kernel >= "
			 "5.12, CUDA >= 11.7, NCCL_DMABUF_ENABLE not 0");
		break;
	case NC_GDR_UNDECIDED:
		cause_line(f, v, NF_CHAN_GDR);
		snprintf(v->cause, sizeof(v->cause),
			 "GPUDirect RDMA in use; DMA-BUF or peer memory is not in the log");
		snprintf(v->fix, sizeof(v->fix),
			 "none needed for GPUDirect; to see which: " SUBSYS_HINT
			 " (\"DMA-BUF is available on GPU device N\" at INIT)");
		break;
	case NC_NO_SOCKET:
		explain_socket(f, v);
		break;
	case NC_NO_PLUGIN:
		explain_plugin_off(f, v);
		break;
	case NC_NO_GDR:
		explain_no_gdr(f, v);
		break;
	case NC_PAIR_ONLY:
		cause_line(f, v, NF_PAIR_GDR_ON);
		snprintf(v->cause, sizeof(v->cause),
			 "only NCCL's per-pair GDR decision, no network connection shown%s",
			 f->count[NF_CHAN_LOCAL] ? " (SHM/P2P channels only)" : "");
		snprintf(v->fix, sizeof(v->fix),
			 "run across two nodes with " SUBSYS_HINT
			 ": the network channel lines (/GDRDMA or not) decide");
		break;
	case NC_RING_FLAG_ONLY:
		cause_line(f, v, NF_RING_GDR_ON);
		snprintf(v->cause, sizeof(v->cause),
			 "only \"GDR 1\" on \"Connected all rings\": NCCL's initial value, not "
			 "proof%s",
			 f->count[NF_CHAN_LOCAL] ? " (single-node: SHM/P2P channels only)" : "");
		snprintf(v->fix, sizeof(v->fix),
			 "run across two nodes with " SUBSYS_HINT
			 ": the network channel lines (/GDRDMA or not) decide");
		break;
	case NC_UNDECIDED:
		/* The lines cited are not a cause; a guide's line is. */
		if (f->count[NF_GUIDE_LINE])
			v->cause_line = f->first[NF_GUIDE_LINE];
		snprintf(v->cause, sizeof(v->cause), "%s",
			 f->count[NF_GUIDE_LINE] ? "only lines quoted from guides, not NCCL's"
			 : f->count[NF_CHAN_LOCAL]
			     ? "no network channel line (intra-node channels only)"
			     : "no network channel line and no GPUDirect decision in the log");
		snprintf(
		    v->fix, sizeof(v->fix),
		    "rerun with " SUBSYS_HINT
		    " across nodes and keep the whole log: the channel lines (/GDRDMA or not), "
		    "\"DMA-BUF is available\" and the GDR lines per GPU/HCA decide");
		break;
	}
}
