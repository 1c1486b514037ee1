/* Doctor vs NCCL: what the node predicts against what an NCCL log shows NCCL did. */
#include "config.h"

#include "doctor_vs_nccl.h"
#include "nccl_settings.h"
#include "topo.h"
#include "util.h"

#include <hwloc.h>
#include <string.h>
#include <strings.h>

/* GPU-NIC pairs the job's NCCL_NET_GDR_LEVEL allows, from the topology doctor would read. */
struct distances {
	int measured, allowed; /* GPUs measured; of them, within the level */
	char level[8];
	char first_far[160]; /* the first GPU whose nearest NIC is beyond the level */
};

static void measure(const struct gdr_doctor *doc, const struct gdr_nccl_log *log,
		    struct distances *d)
{
	struct gdr_nccl_env env = { .level = GDR_NCCL_DEFAULT_LEVEL, .read = -1 };
	struct gdr_nccl_judgement j;
	struct gdr_topo *t;
	char why[256];

	memset(d, 0, sizeof(*d));
	/* The job's level as NCCL logged it; unlogged, NCCL's default. */
	if (log->gdr_level[0] &&
	    gdr_nccl_parse_level(log->gdr_level, &env.level, why, sizeof(why)) == 0)
		env.level_set = 1;
	gdr_strlcpy(d->level, gdr_nccl_level_name(env.level), sizeof(d->level));
	if (gdr_nccl_node_topo(&t, doc->topology_xml, doc->root, why, sizeof(why)))
		return;
	if (gdr_nccl_judge_topo(t, &env, &j) == 0) {
		d->measured = j.measured;
		d->allowed = j.measured - j.refused;
		for (int i = 0; i < j.ngpu && !d->first_far[0]; i++)
			if (j.gpu[i].use == 0)
				snprintf(d->first_far, sizeof(d->first_far),
					 "GPU%d's nearest NIC %s is %s", i, j.gpu[i].nearest.nic,
					 gdr_topo_class_name(j.gpu[i].nearest.cls));
		gdr_nccl_judgement_free(&j);
	}
	gdr_topo_free(t);
}

static const char *node_offers(const struct gdr_verdict *v)
{
	return v->dmabuf && v->peermem ? "DMA-BUF and nvidia-peermem"
	       : v->dmabuf	       ? "DMA-BUF"
	       : v->peermem	       ? "nvidia-peermem"
				       : "no GPUDirect path";
}

/* NCCL's first release with DMA-BUF (2.13.4 was the first 2.13). */
static int before_dmabuf(const struct gdr_nccl_log *log)
{
	return log->vmajor >= 0 &&
	       (log->vmajor < 2 || (log->vmajor == 2 && log->vminor < GDR_NCCL_DMABUF_MINOR));
}

static void used_peermem(struct gdr_check *c, const struct gdr_verdict *v,
			 const struct gdr_nccl_log *log)
{
	const unsigned int *n = log->all.count;

	if (!v->dmabuf && v->peermem) {
		c->status = GDR_CHECK_PASS;
		gdr_check_value(c, "NCCL used nvidia-peermem, the one path the node offers");
		return;
	}
	c->status = GDR_CHECK_WARN;
	if (!v->dmabuf) {
		gdr_check_value(c,
				"NCCL used peer memory although the node view has no usable "
				"nvidia-peermem (%s)",
				v->text);
		gdr_check_fix(c,
			      "check that the log comes from this node (and --root is its tree)");
	} else if (n[NF_ENV_DMABUF_OFF]) {
		gdr_check_value(c,
				"NCCL used peermem although DMA-BUF is available: the job set "
				"NCCL_DMABUF_ENABLE=0 (log line %lu)",
				log->all.first[NF_ENV_DMABUF_OFF].lineno);
		gdr_check_fix(c, "unset NCCL_DMABUF_ENABLE in the job");
	} else if (before_dmabuf(log)) {
		gdr_check_value(c,
				"NCCL used peermem although DMA-BUF is available: NCCL %s predates "
				"DMA-BUF support (" GDR_NCCL_DMABUF_SINCE ")",
				log->version);
		gdr_check_fix(c, "use NCCL " GDR_NCCL_DMABUF_SINCE " or later");
	} else if (n[NF_PLUGIN_NO_DMABUF] || (n[NF_PLUGIN_PEERMEM] && !n[NF_PLUGIN_DMABUF])) {
		gdr_check_value(c, "NCCL used peermem although DMA-BUF is available: the net "
				   "plugin does not register DMA-BUF");
		gdr_check_fix(c, "update the net plugin (aws-ofi-nccl, HPC-X) to one with DMA-BUF");
	} else {
		gdr_check_value(c, "NCCL used peermem although DMA-BUF is available: "
				   "NCCL_DMABUF_ENABLE=0, or the job's container saw no DMA-BUF "
				   "(no \"DMA-BUF is available\" line in the log)");
		gdr_check_fix(c, "check NCCL_DMABUF_ENABLE and the CUDA driver inside the job");
	}
}

static void used_none(struct gdr_check *c, const struct gdr_verdict *v,
		      const struct gdr_nccl_log *log, const struct distances *d)
{
	const unsigned int *n = log->all.count;

	if (!v->dmabuf && !v->peermem) {
		c->status = GDR_CHECK_PASS;
		gdr_check_value(c, "NCCL used no GPUDirect RDMA, as the node predicts (%s)",
				v->text);
		return;
	}
	if (d->measured && d->allowed == 0) {
		c->status = GDR_CHECK_PASS;
		gdr_check_value(c,
				"NCCL used no GPUDirect RDMA, as the distances predict: %s, beyond "
				"NCCL_NET_GDR_LEVEL=%s (%d of %d GPUs)",
				d->first_far, d->level, d->measured - d->allowed, d->measured);
		gdr_check_fix(c, "raise NCCL_NET_GDR_LEVEL to the distance gdr_topo shows, or use "
				 "a NIC closer to the GPU");
		return;
	}
	c->status = GDR_CHECK_WARN;
	if (n[NF_CHAN_SOCKET] || !strcmp(log->network, "Socket")) {
		gdr_check_value(c,
				"NCCL used Socket although the node offers %s: NCCL_IB_DISABLE=1, "
				"NCCL_NET=Socket, or no RDMA device in the job's container%s",
				node_offers(v),
				n[NF_NO_IB_DEVICE] ? " (NCCL found no IB device)" : "");
		gdr_check_fix(c, "unset NCCL_IB_DISABLE/NCCL_NET, give the job the RDMA devices");
	} else if (n[NF_PLUGIN_GDR_OFF]) {
		gdr_check_value(c,
				"NCCL used no GPUDirect although the node offers %s: the net "
				"plugin disabled GDR",
				node_offers(v));
		gdr_check_fix(c, "see the plugin's line in the log (aws-ofi-nccl: FI_HMEM, CUDA "
				 "API usage)");
	} else if (d->measured && d->allowed < d->measured) {
		gdr_check_value(
		    c,
		    "NCCL used no GPUDirect at all, yet %d of %d GPUs' nearest NICs are "
		    "within NCCL_NET_GDR_LEVEL=%s (%s) and the node offers %s",
		    d->allowed, d->measured, d->level, d->first_far, node_offers(v));
		gdr_check_fix(c, "check which GPUs and NICs the job used (NCCL_IB_HCA, "
				 "CUDA_VISIBLE_DEVICES) and NCCL_NET_GDR_LEVEL");
	} else if (d->measured) {
		gdr_check_value(
		    c,
		    "NCCL used no GPUDirect although the GPU-NIC distance allows it "
		    "(every GPU's nearest NIC within NCCL_NET_GDR_LEVEL=%s) and the node "
		    "offers %s: NCCL_NET_GDR_LEVEL, or a different NIC than the nearest?",
		    d->level, node_offers(v));
		gdr_check_fix(c, "check NCCL_NET_GDR_LEVEL and NCCL_IB_HCA in the job");
	} else {
		gdr_check_value(c,
				"NCCL used no GPUDirect although the node offers %s: "
				"NCCL_NET_GDR_LEVEL? (distances not measured: --topology-xml)",
				node_offers(v));
		gdr_check_fix(c, "compare NCCL_NET_GDR_LEVEL with the distances gdr_topo shows");
	}
}

/* The HostName an hwloc XML export names (its root object's info); "" when none. */
static void topo_host(const char *xml, char *out, size_t len)
{
	hwloc_topology_t t;
	const char *h;

	out[0] = '\0';
	if (!xml || hwloc_topology_init(&t))
		return;
	if (!hwloc_topology_set_xml(t, xml) && !hwloc_topology_load(t) &&
	    (h = hwloc_obj_get_info_by_name(hwloc_get_root_obj(t), "HostName")))
		gdr_strlcpy(out, h, len);
	hwloc_topology_destroy(t);
}

/* Same host: equal names, or equal up to the first dot ("jwb0004" = "jwb0004.juwels"). */
static int same_host(const char *a, const char *b)
{
	size_t la = strcspn(a, "."), lb = strcspn(b, ".");

	return *a && *b && la == lb && !strncasecmp(a, b, la);
}

/*
 * The log's host names ("host:pid" process ids), comma-separated into buf; how many.
 * match: bit 0 when one of them is host (the node's), bit 1 when one is thost (the
 * topology's).
 */
static int log_hosts(const struct gdr_nccl_log *log, const char *host, const char *thost, char *buf,
		     size_t len, int *match)
{
	int n = 0;
	size_t off = 0;

	buf[0] = '\0';
	*match = 0;
	for (unsigned int i = 0; i < log->nprocs; i++) {
		char h[sizeof(log->procs[0].id)];
		int seen = 0;

		gdr_strlcpy(h, log->procs[i].id, sizeof(h));
		h[strcspn(h, ":")] = '\0';
		if (!h[0])
			continue;
		for (unsigned int j = 0; j < i && !seen; j++)
			seen = !strncmp(log->procs[j].id, h, strlen(h)) &&
			       log->procs[j].id[strlen(h)] == ':';
		if (seen)
			continue;
		*match |= same_host(h, host) | same_host(h, thost) << 1;
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", n ? ", " : "", h);
		n++;
	}
	return n;
}

/*
 * A log from other hosts than the node judged here is not compared with it: the log's
 * own conclusion stands, this node's cause does not replace it. 1 when so (c filled).
 */
static int other_hosts(struct gdr_check *c, const struct gdr_doctor *doc,
		       const struct gdr_nccl_log *log, char *scope, size_t slen)
{
	char thost[128], hosts[256], mine[192], theirs[192];
	int match, n, doc_ok, topo_ok;

	topo_host(doc->topology_xml, thost, sizeof(thost));
	n = log_hosts(log, doc->host, thost, hosts, sizeof(hosts), &match);
	if (strcmp(doc->root, "/"))
		snprintf(mine, sizeof(mine), "the tree's host %s", doc->host);
	else
		snprintf(mine, sizeof(mine), "this machine (%s)", doc->host);
	snprintf(theirs, sizeof(theirs), "the topology's host %s", thost);
	/* Every node named here (the tree or machine, the topology) must be one of the log's. */
	doc_ok = !doc->host[0] || (match & 1);
	topo_ok = !thost[0] || (match & 2);
	if (!n) {
		gdr_strlcpy(scope, "the log names no host: compared as this node's", slen);
		return 0;
	}
	if (doc_ok && topo_ok) {
		if (match)
			snprintf(scope, slen, "log host%s %s; %s is one of them", n == 1 ? "" : "s",
				 hosts, (match & 1) ? mine : theirs);
		else
			snprintf(scope, slen,
				 "log host%s %s; the node's host name is unknown, compared as "
				 "given",
				 n == 1 ? "" : "s", hosts);
		return 0;
	}
	c->status = GDR_CHECK_WARN;
	gdr_check_value(c,
			"not compared: the log is from host%s %s, not %s%s%s; the log's own "
			"conclusion: %s (%s)",
			n == 1 ? "" : "s", hosts, doc_ok ? "" : mine,
			!doc_ok && !topo_ok ? ", nor " : "", topo_ok ? "" : theirs,
			gdr_nccl_path_name(log->path), log->reason);
	gdr_check_fix(c, "run gdr_doctor --nccl-log on the log's host, or give it that host's "
			 "tree (--root) or topology (--topology-xml)");
	return 1;
}

/* The comparison itself: what the log shows against what the node predicts. */
static void judge(struct gdr_doctor *doc, struct gdr_check *c, const struct gdr_verdict *v,
		  const struct gdr_nccl_log *log)
{
	struct distances d;

	switch (log->path) {
	case GDR_NCCL_UNKNOWN:
		gdr_check_value(c, "the log does not say which path NCCL used: nothing to compare");
		return;
	case GDR_NCCL_MIXED:
		c->status = GDR_CHECK_WARN;
		gdr_check_value(c, "the log's processes used different paths (several runs?)");
		gdr_check_fix(c, "compare one run's log at a time");
		return;
	case GDR_NCCL_DMABUF:
		if (v->dmabuf) {
			c->status = GDR_CHECK_PASS;
			gdr_check_value(c, "NCCL used DMA-BUF, as the node allows");
			return;
		}
		c->status = GDR_CHECK_WARN;
		gdr_check_value(c, "NCCL used DMA-BUF although the node view rules it out (%s)",
				v->text);
		gdr_check_fix(c,
			      "check that the log comes from this node (and --root is its tree)");
		return;
	case GDR_NCCL_PEERMEM:
		used_peermem(c, v, log);
		return;
	case GDR_NCCL_NONE:
		measure(doc, log, &d);
		used_none(c, v, log, &d);
		return;
	}
}

void gdr_doctor_vs_nccl(struct gdr_doctor *doc, const struct gdr_verdict *v,
			const struct gdr_nccl_log *log, const char *name)
{
	struct gdr_check *c;
	char scope[384] = "";
	enum gdr_check_status st = log->path == GDR_NCCL_DMABUF || log->path == GDR_NCCL_PEERMEM
				       ? GDR_CHECK_PASS
				   : log->path == GDR_NCCL_UNKNOWN ? GDR_CHECK_NA
								   : GDR_CHECK_WARN;

	c = gdr_doctor_add(doc, "nccl-log", st, 0);
	gdr_check_value(c, "%s: %s%s%s", name, gdr_nccl_path_name(log->path),
			log->version[0] ? ", NCCL " : "", log->version);
	c = gdr_doctor_add(doc, "nccl-vs-node", GDR_CHECK_NA, 0);
	if (log->path != GDR_NCCL_UNKNOWN && other_hosts(c, doc, log, scope, sizeof(scope)))
		return;
	judge(doc, c, v, log);
	/* What the comparison is about: the log's hosts against this node's name. */
	if (scope[0]) {
		size_t n = strlen(c->value);

		snprintf(c->value + n, sizeof(c->value) - n, " [%s]", scope);
	}
}
