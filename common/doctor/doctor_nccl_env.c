/*
 * gdr_doctor NCCL environment pitfalls: variables in this process's
 * environment (a pod's, when run as an init container) that keep NCCL off
 * GPUDirect RDMA even on a node that supports it. They do not change the
 * node verdict; they say why NCCL would not use what the node offers.
 */
#include "config.h"

#include "doctor.h"
#include "nccl_settings.h"
#include "topo.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int node_dmabuf_ok(const struct gdr_doctor *doc)
{
	for (unsigned int i = 0; i < doc->nchecks; i++)
		if (doc->checks[i].blocks & GDR_BLOCK_DMABUF)
			return 0;
	return 1;
}

/* refused GPU i whose nearest NIC is of a class in lo..hi */
static int in(const struct gdr_nccl_judgement *j, int i, int lo, int hi)
{
	return i < j->ngpu && j->gpu[i].use == 0 && (int)j->gpu[i].nearest.cls >= lo &&
	       (int)j->gpu[i].nearest.cls <= hi;
}

/* "GPU0-3, GPU6": the refused GPUs with a nearest NIC of class lo..hi; returns how many. */
static int gpu_list(const struct gdr_nccl_judgement *j, int lo, int hi, char *buf, size_t len)
{
	int idx[64], n = 0, all = 0;

	/* Past 64 GPUs the list is cut; the count stays exact. */
	for (int i = 0; i < j->ngpu; i++)
		if (in(j, i, lo, hi) && all++ < (int)GDR_ARRAY_SIZE(idx))
			idx[n++] = i;
	gdr_topo_gpu_ranges(idx, n, buf, len);
	return all;
}

/* "GPU0-3: nearest NIC NODE (PHB to NCCL) > PXB; GPU6: nearest NIC SYS > PXB" */
static void refused_text(const struct gdr_nccl_judgement *j, const struct gdr_nccl_env *env,
			 char *buf, size_t len)
{
	char list[160], why[128];
	size_t off = 0;

	buf[0] = '\0';
	for (int c = GDR_TOPO_PIX; c < GDR_TOPO_UNKNOWN; c++) {
		int assumed = 0;

		if (!gpu_list(j, c, c, list, sizeof(list)) || off >= len)
			continue;
		for (int i = 0; i < j->ngpu; i++)
			assumed |= in(j, i, c, c) && gdr_topo_pair_assumed(&j->gpu[i].nearest);
		off += snprintf(buf + off, len - off, "%s%s: nearest NIC %s%s", off ? "; " : "", list,
				gdr_nccl_reason(env, c, why, sizeof(why)),
				assumed ? " (SYS assumed: NUMA node unknown)" : "");
	}
}

/*
 * NCCL_NET_GDR_LEVEL, set or not: NCCL's effective level against each GPU's
 * nearest NIC on the given topology (--topology-xml) or this machine. 1 when
 * the distances were measured and the check is added, 0 when they were not.
 */
static int judge_level(struct gdr_doctor *doc, const struct gdr_nccl_env *env, const char *val)
{
	struct gdr_nccl_judgement j;
	struct gdr_topo *t;
	struct gdr_check *c;
	char why[256], what[64], bad[512], list[160], near[160], sys[160], fix[32];

	if (gdr_nccl_node_topo(&t, doc->topology_xml, doc->root, why, sizeof(why)))
		return 0;
	if (gdr_nccl_judge_topo(t, env, &j)) {
		gdr_topo_free(t);
		return 0;
	}
	gdr_topo_free(t);
	if (!j.measured) {
		gdr_nccl_judgement_free(&j);
		return 0;
	}
	if (val)
		snprintf(what, sizeof(what), "%s", val);
	else
		snprintf(what, sizeof(what), "unset (NCCL's default %s)",
			 gdr_nccl_level_name(env->level));
	if (!j.refused) {
		c = gdr_doctor_add(doc, "NCCL_NET_GDR_LEVEL", GDR_CHECK_PASS, 0);
		gdr_check_value(c, "%s: every GPU's nearest NIC is at %s or closer (%d GPUs)", what,
				gdr_nccl_level_name(env->level), j.measured);
		gdr_nccl_judgement_free(&j);
		return 1;
	}
	refused_text(&j, env, bad, sizeof(bad));
	gpu_list(&j, GDR_TOPO_PIX, GDR_TOPO_SYS, list, sizeof(list));
	c = gdr_doctor_add(doc, "NCCL_NET_GDR_LEVEL", GDR_CHECK_FAIL, 0);
	gdr_check_value(c, "%s: NCCL would not use GPUDirect RDMA for %d of %d GPUs: %s", what,
			j.refused, j.measured, bad);
	/*
	 * The setting that enables it, never "unset" a value that is already the
	 * default. SYS crosses NUMA nodes: offer the nearer level first when some
	 * GPUs need only that, and say what SYS would add.
	 */
	if (j.need == GDR_NCCL_SYS && gpu_list(&j, GDR_TOPO_PIX, GDR_TOPO_NODE, near, sizeof(near))) {
		gpu_list(&j, GDR_TOPO_SYS, GDR_TOPO_SYS, sys, sizeof(sys));
		gdr_check_fix(c, "export NCCL_NET_GDR_LEVEL=PHB (GPUDirect RDMA for %s); SYS would "
				 "add %s, across NUMA nodes, often slower than without",
			      near, sys);
	} else {
		gdr_check_fix(c, "export %s (GPUDirect RDMA for %s)%s",
			      gdr_nccl_enable_text(j.need, fix, sizeof(fix)), list,
			      j.need == GDR_NCCL_SYS ? "; SYS crosses NUMA nodes, often slower than "
						       "without: a NIC on the GPU's NUMA node is better"
						     : "");
	}
	gdr_nccl_judgement_free(&j);
	return 1;
}

static void check_gdr_level(struct gdr_doctor *doc, const char *val)
{
	struct gdr_nccl_env env = { .level_set = 1, .read = -1 };
	struct gdr_check *c;
	char why[256];

	if (gdr_nccl_parse_level(val, &env.level, why, sizeof(why))) {
		c = gdr_doctor_add(doc, "NCCL_NET_GDR_LEVEL", GDR_CHECK_WARN, 0);
		gdr_check_value(c, "%s", why);
		gdr_check_fix(c, "unset it (NCCL's default is %s) or use one of the names",
			      gdr_nccl_level_name(gdr_nccl_default_level()));
		return;
	}
	if (judge_level(doc, &env, val))
		return;
	if (env.level == GDR_NCCL_LOC) {
		c = gdr_doctor_add(doc, "NCCL_NET_GDR_LEVEL", GDR_CHECK_FAIL, 0);
		gdr_check_value(c, "%s: GPUDirect RDMA disabled for every GPU/NIC pair", val);
		gdr_check_fix(c,
			      "unset NCCL_NET_GDR_LEVEL (NCCL's default %s), or set it to the "
			      "GPU-NIC distance gdr_topo shows",
			      gdr_nccl_level_name(gdr_nccl_default_level()));
		return;
	}
	c = gdr_doctor_add(doc, "NCCL_NET_GDR_LEVEL",
			   env.level <= GDR_NCCL_PIX ? GDR_CHECK_WARN : GDR_CHECK_PASS, 0);
	gdr_check_value(c,
			"%s: GDR only for GPU-NIC pairs at %s or closer (distances not measured "
			"here: see gdr_topo, or --topology-xml)",
			val, gdr_nccl_level_name(env.level));
	if (env.level <= GDR_NCCL_PIX)
		gdr_check_fix(c, "check with gdr_topo that every GPU's NIC is at %s or closer",
			      gdr_nccl_level_name(env.level));
}

/* NCCL_NET_GDR_C2C=0: NICs a Grace CPU reaches over C2C lose GPUDirect RDMA. */
static void check_c2c(struct gdr_doctor *doc, const char *val)
{
	struct gdr_check *c;
	char why[256], deflt[96];
	int on;

	/* NCCL's default and since when, from the one table (nccl_settings.c). */
	gdr_nccl_default_text("NCCL_NET_GDR_C2C", deflt, sizeof(deflt));
	if (gdr_nccl_parse_flag("NCCL_NET_GDR_C2C", val, &on, why, sizeof(why))) {
		c = gdr_doctor_add(doc, "NCCL_NET_GDR_C2C", GDR_CHECK_WARN, 0);
		gdr_check_value(c, "%s", why);
		gdr_check_fix(c, "unset it (NCCL's default is %s) or set 0 or 1", deflt);
		return;
	}
	if (on)
		return;
	c = gdr_doctor_add(doc, "NCCL_NET_GDR_C2C", GDR_CHECK_WARN, 0);
	gdr_check_value(c,
			"%s: on a Grace node, NCCL will not use GPUDirect RDMA to NICs the "
			"CPU reaches over C2C (default %s)",
			val, deflt);
	gdr_check_fix(c, "unset NCCL_NET_GDR_C2C");
}

void gdr_doctor_nccl_env_checks(struct gdr_doctor *doc)
{
	const char *v;
	struct gdr_check *c;
	unsigned int before = doc->nchecks;
	char why[256];
	int on;

	v = getenv("NCCL_NET_PLUGIN");
	if (v && !strcasecmp(v, "none")) {
		c = gdr_doctor_add(doc, "NCCL_NET_PLUGIN", GDR_CHECK_WARN, 0);
		gdr_check_value(c, "none: external net plugins (HPC-X IBext, aws-ofi-nccl) are not "
				   "loaded; where the fabric needs one, NCCL falls back to sockets "
				   "(no RDMA)");
		gdr_check_fix(c, "unset NCCL_NET_PLUGIN unless sockets are intended");
	}
	v = getenv("NCCL_NET");
	if (v && !strcasecmp(v, "Socket")) {
		c = gdr_doctor_add(doc, "NCCL_NET", GDR_CHECK_FAIL, 0);
		gdr_check_value(c, "Socket: NCCL uses TCP sockets between nodes, no RDMA");
		gdr_check_fix(c, "unset NCCL_NET (or set it to IB)");
	}
	v = getenv("NCCL_IB_DISABLE");
	if (v && atoi(v) == 1) {
		c = gdr_doctor_add(doc, "NCCL_IB_DISABLE", GDR_CHECK_FAIL, 0);
		gdr_check_value(
		    c, "1: NCCL's IB/RoCE transport is off, inter-node traffic uses sockets");
		gdr_check_fix(c, "unset NCCL_IB_DISABLE");
	}
	v = getenv("NCCL_DMABUF_ENABLE");
	if (v && *v && gdr_nccl_parse_flag("NCCL_DMABUF_ENABLE", v, &on, why, sizeof(why))) {
		/* NCCL reads garbage as its default (1): say so rather than guess 0. */
		c = gdr_doctor_add(doc, "NCCL_DMABUF_ENABLE", GDR_CHECK_WARN, 0);
		gdr_check_value(c, "%s; NCCL would use its default, 1", why);
		gdr_check_fix(c, "unset NCCL_DMABUF_ENABLE, or set 0 or 1");
	} else if (v && *v && !on) {
		int ok = node_dmabuf_ok(doc);

		c = gdr_doctor_add(doc, "NCCL_DMABUF_ENABLE", ok ? GDR_CHECK_WARN : GDR_CHECK_PASS,
				   0);
		gdr_check_value(
		    c, "0: NCCL will not use DMA-BUF%s",
		    ok ? " although this node supports it (peer memory or no GDR instead)"
		       : " (this node cannot anyway)");
		if (ok)
			gdr_check_fix(c, "unset NCCL_DMABUF_ENABLE");
	}
	v = getenv("NCCL_NET_GDR_LEVEL");
	if (v && *v) {
		check_gdr_level(doc, v);
	} else {
		/* Unset is NCCL's default, which a topology can still rule out. */
		struct gdr_nccl_env env = { .level = gdr_nccl_default_level(), .read = -1 };

		judge_level(doc, &env, NULL);
	}
	v = getenv("NCCL_NET_GDR_C2C");
	if (v && *v)
		check_c2c(doc, v);
	v = getenv("NCCL_NET_GDR_READ");
	if (v && *v && gdr_nccl_parse_read(v, &on, why, sizeof(why))) {
		/* NCCL reads garbage as unset: it decides per GPU. */
		c = gdr_doctor_add(doc, "NCCL_NET_GDR_READ", GDR_CHECK_WARN, 0);
		gdr_check_value(c, "%s; NCCL would decide per GPU, as when unset", why);
		gdr_check_fix(c, "unset NCCL_NET_GDR_READ, or set 0 or 1");
	} else if (v && *v) {
		int maj, min;
		char per_gpu[128];

		gdr_nccl_newest_series("NCCL_NET_GDR_READ", &maj, &min);
		snprintf(per_gpu, sizeof(per_gpu),
			 "NCCL decides per GPU, as when unset (reads on compute capability >= 8.0 "
			 "from NCCL %d.%d, or with NVLink)",
			 maj, min);
		c = gdr_doctor_add(doc, "NCCL_NET_GDR_READ", on ? GDR_CHECK_PASS : GDR_CHECK_WARN,
				   0);
		gdr_check_value(c, "%s: %s", v,
				on > 0	 ? "the NIC reads send buffers from GPU memory"
				: on < 0 ? per_gpu
					 : "sends are staged through host memory (receives still "
					   "use GDR)");
		if (!on)
			gdr_check_fix(
			    c,
			    "unset NCCL_NET_GDR_READ unless reads from GPU memory are slow here");
	}
	if (doc->nchecks == before) {
		c = gdr_doctor_add(doc, "nccl-env", GDR_CHECK_PASS, 0);
		gdr_check_value(c, "no NCCL variable that affects GPUDirect RDMA is set");
	}
}
