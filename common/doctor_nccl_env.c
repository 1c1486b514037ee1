/*
 * gdr_doctor NCCL environment pitfalls: variables in this process's
 * environment (a pod's, when run as an init container) that keep NCCL off
 * GPUDirect RDMA even on a node that supports it. They do not change the
 * node verdict; they say why NCCL would not use what the node offers.
 */
#include "config.h"

#include "doctor.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* NCCL's path types in its own order (graph/topo.h); the legacy integers index this list. */
static const char *const gdr_levels[] = { "LOC", "NVL", "PIX", "PXB", "PHB", "SYS" };

int gdr_nccl_gdr_level_parse(const char *s)
{
	char *end;
	long v;

	for (size_t i = 0; i < GDR_ARRAY_SIZE(gdr_levels); i++)
		if (!strcasecmp(s, gdr_levels[i]))
			return (int)i;
	/* Newer NCCL knows more names; they sit between the ones above. */
	if (!strcasecmp(s, "NVB") || !strcasecmp(s, "C2C"))
		return 1;
	if (!strcasecmp(s, "P2C") || !strcasecmp(s, "PXN"))
		return 3;
	if (!strcasecmp(s, "NODE"))
		return 4;
	v = strtol(s, &end, 10);
	if (*s && !*end && v >= 0 && v < (long)GDR_ARRAY_SIZE(gdr_levels))
		return (int)v;
	return -1;
}

static int node_dmabuf_ok(const struct gdr_doctor *doc)
{
	for (unsigned int i = 0; i < doc->nchecks; i++)
		if (doc->checks[i].blocks & GDR_BLOCK_DMABUF)
			return 0;
	return 1;
}

static void check_gdr_level(struct gdr_doctor *doc, const char *val)
{
	int lvl = gdr_nccl_gdr_level_parse(val);
	struct gdr_check *c;

	if (lvl < 0) {
		c = gdr_doctor_add(doc, "NCCL_NET_GDR_LEVEL", GDR_CHECK_WARN, 0);
		gdr_check_value(c, "%s: not a level NCCL knows (LOC NVL PIX PXB PHB SYS)", val);
		gdr_check_fix(c, "unset it (NCCL's default is PXB) or use one of the names");
		return;
	}
	if (lvl == 0) {
		c = gdr_doctor_add(doc, "NCCL_NET_GDR_LEVEL", GDR_CHECK_FAIL, 0);
		gdr_check_value(c, "%s: GPUDirect RDMA disabled for every GPU/NIC pair", val);
		gdr_check_fix(c, "unset NCCL_NET_GDR_LEVEL, or set it to the GPU-NIC distance "
				 "gdr_topo shows");
		return;
	}
	/*
	 * Hook for the topology module: once common/topo.h is in the tree, compare
	 * lvl with the distance of each GPU to its nearest NIC and fail when a pair
	 * is farther than the level allows. Until then only the name is checked.
	 */
	c = gdr_doctor_add(doc, "NCCL_NET_GDR_LEVEL", lvl <= 2 ? GDR_CHECK_WARN : GDR_CHECK_PASS,
			   0);
	gdr_check_value(c,
			"%s: GDR only for GPU-NIC pairs at %s or closer (distances not measured "
			"here: see gdr_topo)",
			val, gdr_levels[lvl]);
	if (lvl <= 2)
		gdr_check_fix(c, "check with gdr_topo that every GPU's NIC is at %s or closer",
			      gdr_levels[lvl]);
}

void gdr_doctor_nccl_env_checks(struct gdr_doctor *doc)
{
	const char *v;
	struct gdr_check *c;
	unsigned int before = doc->nchecks;

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
	if (v && atoi(v) == 0) {
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
	if (v && *v)
		check_gdr_level(doc, v);
	v = getenv("NCCL_NET_GDR_READ");
	if (v && *v) {
		int on = atoi(v) != 0;

		c = gdr_doctor_add(doc, "NCCL_NET_GDR_READ", on ? GDR_CHECK_PASS : GDR_CHECK_WARN,
				   0);
		gdr_check_value(
		    c, "%s: %s", v,
		    on ? "the NIC reads send buffers from GPU memory"
		       : "sends are staged through host memory (receives still use GDR)");
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
