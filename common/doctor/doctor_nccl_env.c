/*
 * gdr_doctor NCCL environment pitfalls: variables in this process's
 * environment (a pod's, when run as an init container) that keep NCCL off
 * GPUDirect RDMA even on a node that supports it. They do not change the
 * node verdict; they say why NCCL would not use what the node offers.
 */
#include "config.h"

#include "doctor.h"
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

/*
 * GPU-NIC pairs NCCL_NET_GDR_LEVEL rules out: each GPU with its nearest NIC,
 * from --topology-xml, or from this machine when --root is the live system.
 * Returns the number of GPUs measured; the first offender is described in bad.
 */
static int measure_level(const struct gdr_doctor *doc, const struct gdr_nccl_env *env, char *bad,
			 size_t blen, int *offenders)
{
	struct gdr_topo *t;
	struct gdr_topo_pair p;
	char why[256];
	int measured = 0;

	*offenders = 0;
	if (!doc->topology_xml && doc->root && strcmp(doc->root, "/"))
		return 0; /* a fixture root: this machine's topology would be the wrong one */
	if (gdr_topo_load(&t, doc->topology_xml, doc->root, why, sizeof(why)))
		return 0;
	for (int i = 0; i < gdr_topo_gpu_count(t); i++) {
		const struct gdr_topo_gpu *g = gdr_topo_gpu(t, i);

		if (gdr_topo_nearest_nic(t, g->bus_id, NULL, NULL, &p) || p.cls == GDR_TOPO_UNKNOWN)
			continue;
		measured++;
		if (!gdr_nccl_would_use(env, p.cls) && (*offenders)++ == 0)
			snprintf(bad, blen, "GPU%d (%s)'s nearest NIC %s is %s", i, g->bus_id,
				 p.nic, gdr_topo_class_name(p.cls));
	}
	gdr_topo_free(t);
	return measured;
}

static void check_gdr_level(struct gdr_doctor *doc, const char *val)
{
	struct gdr_nccl_env env = { .level_set = 1, .read = -1 };
	struct gdr_check *c;
	char why[256], bad[256];
	int measured, offenders;

	if (gdr_nccl_parse_level(val, &env.level, why, sizeof(why))) {
		c = gdr_doctor_add(doc, "NCCL_NET_GDR_LEVEL", GDR_CHECK_WARN, 0);
		gdr_check_value(c, "%s", why);
		gdr_check_fix(c, "unset it (NCCL's default is PXB) or use one of the names");
		return;
	}
	if (env.level == GDR_NCCL_LOC) {
		c = gdr_doctor_add(doc, "NCCL_NET_GDR_LEVEL", GDR_CHECK_FAIL, 0);
		gdr_check_value(c, "%s: GPUDirect RDMA disabled for every GPU/NIC pair", val);
		gdr_check_fix(c, "unset NCCL_NET_GDR_LEVEL, or set it to the GPU-NIC distance "
				 "gdr_topo shows");
		return;
	}
	measured = measure_level(doc, &env, bad, sizeof(bad), &offenders);
	if (offenders) {
		c = gdr_doctor_add(doc, "NCCL_NET_GDR_LEVEL", GDR_CHECK_FAIL, 0);
		gdr_check_value(c,
				"%s is too strict for %d of %d GPUs: %s, so NCCL will not use "
				"GPUDirect RDMA there",
				val, offenders, measured, bad);
		gdr_check_fix(c, "unset NCCL_NET_GDR_LEVEL or raise it to the distances gdr_topo "
				 "shows");
		return;
	}
	if (measured) {
		c = gdr_doctor_add(doc, "NCCL_NET_GDR_LEVEL", GDR_CHECK_PASS, 0);
		gdr_check_value(c, "%s: every GPU's nearest NIC is at %s or closer (%d GPUs)", val,
				gdr_nccl_level_name(env.level), measured);
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
