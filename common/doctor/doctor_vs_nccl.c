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
	struct gdr_nccl_env env = { .level = gdr_nccl_default_level(), .read = -1 };
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

/* Before NCCL's first release with DMA-BUF (NCCL's defaults table, nccl_settings.c)? */
static int before_dmabuf(const struct gdr_nccl_log *log)
{
	return gdr_nccl_before(&log->all, gdr_nccl_since("NCCL_DMABUF_ENABLE"));
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
				"DMA-BUF support (%s)",
				log->version, gdr_nccl_since("NCCL_DMABUF_ENABLE"));
		gdr_check_fix(c, "use NCCL %s or later", gdr_nccl_since("NCCL_DMABUF_ENABLE"));
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

/* The host of a process id ("host:pid"); "" when the id names none. */
static void proc_host(const struct gdr_nccl_proc *p, char *h, size_t len)
{
	gdr_strlcpy(h, p->id, len);
	h[strcspn(h, ":")] = '\0';
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

		proc_host(&log->procs[i], h, sizeof(h));
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
		       const struct gdr_nccl_log *log, const char *thost, char *scope, size_t slen)
{
	char hosts[256], mine[192], theirs[192];
	int match, n, doc_ok, topo_ok;

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

/*
 * The GPUs and NICs the log names: its processes' on the node's host (or the
 * topology's), or the whole file's when no process is on either.
 */
static void log_devs(const struct gdr_nccl_log *log, const char *host, const char *thost,
		     struct gdr_nccl_devs *out)
{
	int matched = 0;

	memset(out, 0, sizeof(*out));
	for (unsigned int i = 0; i < log->nprocs; i++) {
		char h[sizeof(log->procs[0].id)];

		proc_host(&log->procs[i], h, sizeof(h));
		if (same_host(h, host) || same_host(h, thost)) {
			matched = 1;
			gdr_nccl_devs_merge(out, &log->procs[i].facts.devs);
		}
	}
	if (!matched)
		*out = log->all.devs;
}

/* One view of the node's devices: a topology (t), or the checks' lists (t NULL). */
struct node_view {
	const char *who; /* "the tree", "the topology", "this machine" */
	const struct gdr_doctor *doc;
	const struct gdr_topo *t;
};

static int view_gpus(const struct node_view *v)
{
	return v->t ? gdr_topo_gpu_count(v->t) : v->doc->ngpu_bdf;
}

static int view_nics(const struct node_view *v)
{
	return v->t ? gdr_topo_nic_count(v->t) : v->doc->nnic_name;
}

static const char *view_gpu(const struct node_view *v, int i)
{
	return v->t ? gdr_topo_gpu(v->t, i)->bus_id : v->doc->gpu_bdf[i];
}

static const char *view_nic(const struct node_view *v, int i)
{
	return v->t ? gdr_topo_nic(v->t, i)->name : v->doc->nic_name[i];
}

static int view_has_gpu(const struct node_view *v, const char *bdf)
{
	char a[GDR_BUSID_LEN], b[GDR_BUSID_LEN];

	if (v->t)
		return gdr_topo_find_gpu(v->t, bdf) != NULL;
	for (int i = 0; i < v->doc->ngpu_bdf; i++)
		if (!gdr_topo_busid_norm(v->doc->gpu_bdf[i], a, sizeof(a)) &&
		    !gdr_topo_busid_norm(bdf, b, sizeof(b)) && !strcmp(a, b))
			return 1;
	return 0;
}

static int view_has_nic(const struct node_view *v, const char *name)
{
	if (v->t)
		return gdr_topo_find_nic(v->t, name) != NULL;
	for (int i = 0; i < v->doc->nnic_name; i++)
		if (!strcmp(v->doc->nic_name[i], name))
			return 1;
	return 0;
}

/*
 * Append "WHAT a, b, c" (the first four of n names, then "+N more") to buf at
 * *off, after sep when buf is not empty.
 */
static void add_list(char *buf, size_t len, size_t *off, const char *sep, const char *what, int n,
		     const char *(*name)(const void *arg, int i), const void *arg)
{
	if (*off >= len || !n)
		return;
	*off += (size_t)snprintf(buf + *off, len - *off, "%s%s%s ", *off ? sep : "", what,
				 n == 1 ? "" : "s");
	for (int i = 0; i < n && i < 4 && *off < len; i++)
		*off +=
		    (size_t)snprintf(buf + *off, len - *off, "%s%s", i ? ", " : "", name(arg, i));
	if (n > 4 && *off < len)
		*off += (size_t)snprintf(buf + *off, len - *off, " +%d more", n - 4);
}

struct missing {
	int cmp_gpu, cmp_nic; /* the view lists GPUs, NICs: they were compared */
	const char *gpu[GDR_NCCL_MAX_DEVS];
	char bdf[GDR_NCCL_MAX_DEVS][GDR_BUSID_LEN];
	const char *nic[GDR_NCCL_MAX_DEVS];
	int ngpu, nnic;
};

static const char *str_at(const void *arg, int i)
{
	return ((const char *const *)arg)[i];
}

static const char *gpu_at(const void *arg, int i)
{
	return view_gpu(arg, i);
}

static const char *nic_at(const void *arg, int i)
{
	return view_nic(arg, i);
}

/* The log's devices v does not have (a kind v lists none of is not compared). */
static void find_missing(const struct node_view *v, const struct gdr_nccl_devs *ld,
			 struct missing *m)
{
	memset(m, 0, sizeof(*m));
	m->cmp_gpu = ld->ngpu && view_gpus(v);
	m->cmp_nic = ld->nnic && view_nics(v);
	for (unsigned int i = 0; i < ld->ngpu && view_gpus(v); i++) {
		gdr_nccl_busid_text(ld->gpu[i], m->bdf[m->ngpu], sizeof(m->bdf[0]));
		if (!view_has_gpu(v, m->bdf[m->ngpu])) {
			m->gpu[m->ngpu] = m->bdf[m->ngpu];
			m->ngpu++;
		}
	}
	for (unsigned int i = 0; i < ld->nnic && view_nics(v); i++)
		if (!view_has_nic(v, ld->nic[i]))
			m->nic[m->nnic++] = ld->nic[i];
}

/*
 * A log whose GPUs or NICs are not the node's comes from another node (one
 * host name, many machines: containers, cloned images): not compared, as for
 * another host. 1 when so (c filled); otherwise what matched goes to scope.
 */
static int other_devices(struct gdr_check *c, const struct gdr_doctor *doc,
			 const struct gdr_nccl_log *log, const char *thost, char *scope,
			 size_t slen)
{
	struct gdr_nccl_devs ld;
	struct node_view views[2];
	struct gdr_topo *t = NULL;
	struct missing m;
	char why[256], lost[256] = "", has[256] = "";
	size_t off = 0, hoff = 0;
	int nv = 0, bad = -1, cmp_gpu = 0, cmp_nic = 0;

	log_devs(log, doc->host, thost, &ld);
	if (!ld.ngpu && !ld.nnic)
		return 0;
	/* The XML's own devices: no root, so that no sysfs NIC joins them. */
	if (doc->topology_xml && !gdr_topo_load(&t, doc->topology_xml, NULL, why, sizeof(why)))
		views[nv++] = (struct node_view){ "the topology", doc, t };
	if (strcmp(doc->root, "/") || !doc->topology_xml)
		views[nv++] =
		    (struct node_view){ strcmp(doc->root, "/") ? "the tree" : "this machine", doc,
					NULL };
	for (int i = 0; i < nv && bad < 0; i++) {
		find_missing(&views[i], &ld, &m);
		cmp_gpu |= m.cmp_gpu;
		cmp_nic |= m.cmp_nic;
		if (m.ngpu || m.nnic)
			bad = i;
	}
	if (bad < 0) {
		/* Say what was compared: the log's devices, each found on the node. */
		size_t n = strlen(scope);
		char bdf[GDR_NCCL_MAX_DEVS][GDR_BUSID_LEN];
		const char *gp[GDR_NCCL_MAX_DEVS] = { 0 }, *np[GDR_NCCL_MAX_DEVS] = { 0 };

		for (unsigned int i = 0; i < ld.ngpu; i++)
			gp[i] = gdr_nccl_busid_text(ld.gpu[i], bdf[i], sizeof(bdf[i]));
		for (unsigned int i = 0; i < ld.nnic; i++)
			np[i] = ld.nic[i];
		add_list(lost, sizeof(lost), &off, " and ", "GPU", cmp_gpu ? (int)ld.ngpu : 0,
			 str_at, gp);
		add_list(lost, sizeof(lost), &off, " and ", "NIC", cmp_nic ? (int)ld.nnic : 0,
			 str_at, np);
		if (off)
			snprintf(scope + n, slen - n, "%sthe log's %s %s %s%s", n ? "; " : "", lost,
				 (cmp_gpu ? ld.ngpu : 0) + (cmp_nic ? ld.nnic : 0) == 1 ? "is"
											: "are",
				 nv == 2   ? "the topology's and the tree"
				 : nv == 1 ? views[0].who
					   : "the node",
				 "'s");
		gdr_topo_free(t);
		return 0;
	}
	add_list(lost, sizeof(lost), &off, " and ", "GPU", m.ngpu, str_at, m.gpu);
	add_list(lost, sizeof(lost), &off, " and ", "NIC", m.nnic, str_at, m.nic);
	add_list(has, sizeof(has), &hoff, "; ", "GPU", view_gpus(&views[bad]), gpu_at, &views[bad]);
	add_list(has, sizeof(has), &hoff, "; ", "NIC", view_nics(&views[bad]), nic_at, &views[bad]);
	c->status = GDR_CHECK_WARN;
	gdr_check_value(c,
			"not compared: the log's %s %s not %s's (it has %s); the log's own "
			"conclusion: %s (%s)",
			lost, m.ngpu + m.nnic == 1 ? "is" : "are", views[bad].who, has,
			gdr_nccl_path_name(log->path), log->reason);
	gdr_check_fix(c, "run gdr_doctor --nccl-log on the node that wrote the log, or give it "
			 "that node's tree (--root) or topology (--topology-xml)");
	gdr_topo_free(t);
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
	char scope[384] = "", thost[128];
	enum gdr_check_status st = log->path == GDR_NCCL_DMABUF || log->path == GDR_NCCL_PEERMEM
				       ? GDR_CHECK_PASS
				   : log->path == GDR_NCCL_UNKNOWN ? GDR_CHECK_NA
								   : GDR_CHECK_WARN;

	c = gdr_doctor_add(doc, "nccl-log", st, 0);
	gdr_check_value(c, "%s: %s%s%s", name, gdr_nccl_path_name(log->path),
			log->version[0] ? ", NCCL " : "", log->version);
	c = gdr_doctor_add(doc, "nccl-vs-node", GDR_CHECK_NA, 0);
	topo_host(doc->topology_xml, thost, sizeof(thost));
	if (log->path != GDR_NCCL_UNKNOWN &&
	    (other_hosts(c, doc, log, thost, scope, sizeof(scope)) ||
	     other_devices(c, doc, log, thost, scope, sizeof(scope))))
		return;
	judge(doc, c, v, log);
	/* What the comparison is about: the log's hosts against this node's name. */
	if (scope[0]) {
		size_t n = strlen(c->value);

		snprintf(c->value + n, sizeof(c->value) - n, " [%s]", scope);
	}
}
