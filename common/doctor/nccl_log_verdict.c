/*
 * The NCCL log reader's conclusion. gdr_nccl_judge() draws it from one set
 * of facts (a process's, or the whole file's); gdr_nccl_log_finish() judges
 * every process on its own lines and the file as a whole, and says when
 * processes disagree (several runs or NCCL versions in one file) instead of
 * letting the order of the lines decide.
 */
#include "config.h"

#include "nccl_log.h"
#include "nccl_settings.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void cite(const struct gdr_nccl_facts *f, struct gdr_nccl_verdict *v, enum gdr_nccl_fact x)
{
	if (!f->count[x] || v->ncited >= GDR_ARRAY_SIZE(v->cited))
		return;
	/* A line cited once (one line can show two facts). */
	for (unsigned int i = 0; i < v->ncited; i++)
		if (v->cited[i] == x || v->cited_line[i].lineno == f->first[x].lineno)
			return;
	v->cited_line[v->ncited] = f->first[x];
	v->cited[v->ncited++] = x;
}

static void conclude(struct gdr_nccl_verdict *v, enum gdr_nccl_path p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void conclude(struct gdr_nccl_verdict *v, enum gdr_nccl_path p, const char *fmt, ...)
{
	va_list ap;

	v->path = p;
	va_start(ap, fmt);
	vsnprintf(v->reason, sizeof(v->reason), fmt, ap);
	va_end(ap);
}

static void append(struct gdr_nccl_verdict *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void append(struct gdr_nccl_verdict *v, const char *fmt, ...)
{
	size_t len = strlen(v->reason);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v->reason + len, sizeof(v->reason) - len, fmt, ap);
	va_end(ap);
}

int gdr_nccl_before(const struct gdr_nccl_facts *f, const char *release)
{
	if (f->vmajor < 0 || !release)
		return 0;
	return gdr_nccl_release_cmp(f->vmajor, f->vminor, f->vpatch, release) < 0;
}

static int builtin_net(const char *n)
{
	return !n[0] || !strcmp(n, "IB") || !strcmp(n, "Socket");
}

/* Is the data carried by an external net plugin rather than NCCL's own IB or Socket? */
static int via_plugin(const struct gdr_nccl_facts *f)
{
	if (f->chan_net[0])
		return !builtin_net(f->chan_net);
	if (f->network[0])
		return !builtin_net(f->network);
	return f->count[NF_PLUGIN] > 0;
}

static const char *plugin_name(const struct gdr_nccl_facts *f)
{
	return f->chan_net[0] ? f->chan_net : f->network[0] ? f->network : "external";
}

/* GDR is in use: through which registration? */
static void judge_gdr_path(const struct gdr_nccl_facts *f, struct gdr_nccl_verdict *v)
{
	const unsigned int *n = f->count;
	int plugin = via_plugin(f);

	cite(f, v, NF_CHAN_GDR);
	/* v2.12.12-1 has no DMA-BUF path; v2.13.4-1 is the first tag with one. */
	if (gdr_nccl_before(f, gdr_nccl_since("NCCL_DMABUF_ENABLE"))) {
		cite(f, v, NF_VERSION);
		conclude(v, GDR_NCCL_PEERMEM,
			 "GPUDirect RDMA in use, and NCCL %s predates DMA-BUF "
			 "support (%s): its GDR is peer memory",
			 f->version, gdr_nccl_since("NCCL_DMABUF_ENABLE"));
		gdr_nccl_explain(f, v, NC_GDR_OLD_NCCL);
		return;
	}
	if (n[NF_ENV_DMABUF_OFF]) {
		cite(f, v, NF_ENV_DMABUF_OFF);
		conclude(v, GDR_NCCL_PEERMEM,
			 "GPUDirect RDMA in use with NCCL_DMABUF_ENABLE=0: "
			 "peer memory");
		gdr_nccl_explain(f, v, NC_GDR_ENV_NODMABUF);
		return;
	}
	if (n[NF_PLUGIN_NO_DMABUF]) {
		cite(f, v, NF_PLUGIN_NO_DMABUF);
		conclude(
		    v, GDR_NCCL_PEERMEM,
		    "GPUDirect RDMA in use and the plugin reports no "
		    "DMA-BUF registration: the plugin's own GPU memory registration, not DMA-BUF");
		gdr_nccl_explain(f, v, NC_GDR_PLUGIN);
		return;
	}
	if (n[NF_PLUGIN_PEERMEM] && !n[NF_PLUGIN_DMABUF]) {
		cite(f, v, NF_PLUGIN_PEERMEM);
		conclude(v, GDR_NCCL_PEERMEM,
			 "GPUDirect RDMA in use; the plugin lists the NIC's "
			 "GDR as nvidia-peermem only, never (DMABUF)");
		gdr_nccl_explain(f, v, NC_GDR_PLUGIN);
		return;
	}
	if (n[NF_GPU_DMABUF]) {
		cite(f, v, NF_GPU_DMABUF);
		if (n[NF_PLUGIN_DMABUF]) {
			cite(f, v, NF_PLUGIN_DMABUF);
			conclude(v, GDR_NCCL_DMABUF,
				 "GPUDirect RDMA in use; the GPU and the NIC both "
				 "take DMA-BUF, and NCCL prefers DMA-BUF over peer memory");
			gdr_nccl_explain(f, v, NC_GDR_DMABUF);
			return;
		}
		if (plugin) {
			conclude(v, GDR_NCCL_DMABUF,
				 "GPUDirect RDMA in use through the %s net plugin and the GPU "
				 "supports DMA-BUF: NCCL registers through DMA-BUF whenever the "
				 "plugin lists the NIC as DMA-BUF capable (the plugin's own "
				 "\"(DMABUF) enabled\" or \"DMA-BUF registrations: true\" line, "
				 "not in this log, would confirm it)",
				 plugin_name(f));
			gdr_nccl_explain(f, v, NC_GDR_DMABUF);
			return;
		}
		conclude(v, GDR_NCCL_DMABUF,
			 "GPUDirect RDMA in use and the GPU supports DMA-BUF: "
			 "NCCL registers through DMA-BUF whenever the NIC accepts it (NCCL's IB "
			 "transport does not log the NIC side; gdr_doctor on the node shows it)");
		gdr_nccl_explain(f, v, NC_GDR_DMABUF);
		return;
	}
	if (n[NF_VERSION] && n[NF_INIT]) {
		cite(f, v, NF_VERSION);
		cite(f, v, NF_INIT);
		conclude(
		    v, GDR_NCCL_PEERMEM,
		    "GPUDirect RDMA in use; NCCL %s prints \"DMA-BUF is "
		    "available\" during init when it will use DMA-BUF, and this log covers init "
		    "without it%s: peer memory",
		    f->version,
		    plugin ? " (with a plugin, also when the plugin has no DMA-BUF call)" : "");
		gdr_nccl_explain(f, v, NC_GDR_NO_GPU_DMABUF);
		return;
	}
	conclude(v, GDR_NCCL_UNKNOWN,
		 "GPUDirect RDMA in use (/GDRDMA), but the log does not "
		 "show whether through DMA-BUF or peer memory (no NCCL version or init lines)");
	gdr_nccl_explain(f, v, NC_GDR_UNDECIDED);
}

static void judge_no_gdr(const struct gdr_nccl_facts *f, struct gdr_nccl_verdict *v)
{
	const unsigned int *n = f->count;
	unsigned int chans = n[NF_CHAN_NOGDR] + n[NF_CHAN_GDR];
	/*
	 * "NET/IB : No device found." then "NET/Socket : Using ...": with no
	 * plugin, NCCL falls back to its Socket transport, channel lines or not.
	 */
	int no_ib_socket = n[NF_NO_IB_DEVICE] && n[NF_SOCKET_USING] && !via_plugin(f) &&
			   n[NF_CHAN_SOCKET] == chans;
	/* NET/Socket's own "GPU Direct RDMA Disabled for HCA": its net is the one in use. */
	int socket_hca = n[NF_SOCKET_HCA] && !via_plugin(f) && n[NF_CHAN_SOCKET] == chans;
	int socket_only = (n[NF_CHAN_SOCKET] && n[NF_CHAN_SOCKET] == chans) ||
			  (!strcmp(f->network, "Socket") && !n[NF_CHAN_GDR]) || no_ib_socket ||
			  socket_hca;

	if (socket_only) {
		cite(f, v,
		     n[NF_CHAN_SOCKET] ? NF_CHAN_SOCKET
		     : n[NF_NETWORK]   ? NF_NETWORK
		     : socket_hca      ? NF_SOCKET_HCA
				       : NF_SOCKET_USING);
		cite(f, v, NF_ENV_IB_OFF);
		cite(f, v, NF_NO_IB_DEVICE);
		cite(f, v, NF_NO_VERBS);
		conclude(v, GDR_NCCL_NONE,
			 "the network transport is Socket: TCP through host "
			 "memory, no RDMA%s",
			 n[NF_NO_IB_DEVICE] ? " (NCCL found no IB device)" : "");
		gdr_nccl_explain(f, v, NC_NO_SOCKET);
		return;
	}
	if (n[NF_PLUGIN_GDR_OFF]) {
		cite(f, v, NF_PLUGIN_GDR_OFF);
		cite(f, v, NF_CHAN_NOGDR);
		cite(f, v, NF_RING_GDR_ON);
		conclude(v, GDR_NCCL_NONE,
			 "the net plugin disabled GPUDirect RDMA; its buffers "
			 "are staged through host memory%s",
			 n[NF_RING_GDR_ON] && !chans
			     ? " (\"GDR 1\" on \"Connected all rings\" is NCCL's initial value, "
			       "not use: no network channel line follows)"
			     : "");
		gdr_nccl_explain(f, v, NC_NO_PLUGIN);
		return;
	}
	if (n[NF_CHAN_NOGDR]) {
		cite(f, v, NF_CHAN_NOGDR);
		cite(f, v, NF_HCA_GDR_OFF);
		cite(f, v, NF_PAIR_GDR_OFF);
		cite(f, v, NF_GPU_DMABUF);
		cite(f, v, NF_PLUGIN_DMABUF);
		conclude(
		    v, GDR_NCCL_NONE,
		    "%u network channel line%s, none with /GDRDMA: buffers "
		    "staged through host memory%s%s",
		    n[NF_CHAN_NOGDR], n[NF_CHAN_NOGDR] == 1 ? "" : "s",
		    n[NF_GPU_DMABUF] ? " (\"DMA-BUF is available\" is only the GPU's capability)"
				     : "",
		    n[NF_PLUGIN_DMABUF] ? " (the plugin's DMA-BUF line is the NIC's capability; "
					  "NCCL still chose no GDR)"
					: "");
		gdr_nccl_explain(f, v, NC_NO_GDR);
		return;
	}
	if (n[NF_RING_GDR_OFF]) {
		cite(f, v, NF_RING_GDR_OFF);
		conclude(v, GDR_NCCL_NONE, "NCCL reports the rings connected with GDR 0");
		gdr_nccl_explain(f, v, NC_NO_GDR);
		return;
	}
	if (n[NF_HCA_GDR_OFF] && !n[NF_HCA_GDR_ON]) {
		cite(f, v, NF_HCA_GDR_OFF);
		conclude(v, GDR_NCCL_NONE,
			 "GPU Direct RDMA is disabled for every HCA the log "
			 "names (no peer-memory module and no DMA-BUF on the NIC side)");
		gdr_nccl_explain(f, v, NC_NO_GDR);
		return;
	}
	if (n[NF_PAIR_GDR_OFF] && !n[NF_PAIR_GDR_ON]) {
		cite(f, v, NF_PAIR_GDR_OFF);
		cite(f, v, NF_ENV_GDR_LEVEL);
		conclude(v, GDR_NCCL_NONE,
			 "GPU Direct RDMA disabled for the GPU/HCA pair by "
			 "distance (%s, beyond NCCL_NET_GDR_LEVEL or its default)",
			 f->distance);
		gdr_nccl_explain(f, v, NC_NO_GDR);
		return;
	}
	if (n[NF_PAIR_GDR_ON] || n[NF_RING_GDR_ON]) {
		/*
		 * Neither is use: ncclTopoComputePaths() runs ncclTopoCheckGdr() on
		 * every GPU/NIC pair at init (paths.cc since 2.6), and NCCL starts
		 * the rings' GDR flag at 1, clearing it only when it makes a network
		 * connection without GDR (a single-node run prints it over SHM/P2P).
		 */
		int pair = n[NF_PAIR_GDR_ON] > 0;

		cite(f, v, pair ? NF_PAIR_GDR_ON : NF_RING_GDR_ON);
		cite(f, v, NF_CHAN_LOCAL);
		conclude(v, GDR_NCCL_UNKNOWN, "%s alone is no proof of GPUDirect RDMA: %s; %s",
			 pair ? "\"GPU Direct RDMA Enabled for GPU ... / HCA ...\""
			      : "\"Connected all rings, ... GDR 1\"",
			 pair ? "NCCL computes that per-pair decision at init for every GPU/NIC "
				"pair, network connection or not"
			      : "NCCL starts that flag at 1 and clears it only when a network "
				"connection is made without GDR",
			 n[NF_CHAN_LOCAL] ? "the channels shown are intra-node (P2P/SHM), a "
					    "single-node run uses no network"
					  : "no network channel line shows GDR in use");
		gdr_nccl_explain(f, v, pair ? NC_PAIR_ONLY : NC_RING_FLAG_ONLY);
		return;
	}
	cite(f, v, NF_HCA_GDR_ON);
	cite(f, v, NF_GPU_DMABUF);
	cite(f, v, NF_NETWORK);
	cite(f, v, NF_GUIDE_LINE);
	if (n[NF_GUIDE_LINE]) {
		conclude(v, GDR_NCCL_UNKNOWN,
			 "the log's GPUDirect line%s (%s line %lu) %s not printed by any NCCL "
			 "release: %s quoted from a guide, not evidence; no NCCL line here decides",
			 n[NF_GUIDE_LINE] == 1 ? "" : "s",
			 n[NF_GUIDE_LINE] == 1 ? "at" : "first at", f->first[NF_GUIDE_LINE].lineno,
			 n[NF_GUIDE_LINE] == 1 ? "is" : "are",
			 n[NF_GUIDE_LINE] == 1 ? "it is" : "they are");
		gdr_nccl_explain(f, v, NC_UNDECIDED);
		return;
	}
	conclude(v, GDR_NCCL_UNKNOWN,
		 "no network channel line and no GPUDirect decision in the "
		 "log (cut short, or a single-node run)%s",
		 n[NF_HCA_GDR_ON] || n[NF_GPU_DMABUF] ? "; the GDR/DMA-BUF lines present are "
							"capabilities, not use"
						      : "");
	gdr_nccl_explain(f, v, NC_UNDECIDED);
}

/* GDR in use on a Grace (C2C) node or through a Data Direct NIC: how NCCL registered it. */
static void c2c_notes(const struct gdr_nccl_facts *f, struct gdr_nccl_verdict *v)
{
	const unsigned int *n = f->count;

	if (n[NF_CHAN_GDR_PCI]) {
		cite(f, v, NF_CHAN_GDR_PCI);
		append(v,
		       "; /GDRDMA(PCI): the GPU reaches its CPU over C2C and the NIC over PCIe%s",
		       v->path == GDR_NCCL_DMABUF
			   ? ", so NCCL asks the driver for a PCIe-mapped DMA-BUF (an NCCL built "
			     "with CUDA 12.8 or later)"
			   : " (NCCL maps a DMA-BUF over PCIe then; peer memory has no such mode)");
	}
	if (n[NF_DATA_DIRECT]) {
		/* v2.27.6-1 on: NCCL_IB_DATA_DIRECT=1 (default) exposes the Data Direct device
		 * only. */
		int both = gdr_nccl_before(f, "2.27.6");

		cite(f, v, NF_DATA_DIRECT);
		append(v, "; the NIC's Data Direct DMA interface was detected%s",
		       v->path == GDR_NCCL_PEERMEM
			   ? ", but NCCL uses it only for DMA-BUF registrations, not peer memory"
		       : v->path != GDR_NCCL_DMABUF ? ""
		       : both ? ": NCCL 2.27.3 to 2.27.5 offer it as a second device beside the "
				"PCIe one, and DMA-BUF on it is registered through it "
				"(mlx5dv_reg_dmabuf_mr, DATA_DIRECT)"
			      : ": NCCL registers DMA-BUF through it (mlx5dv_reg_dmabuf_mr, "
				"DATA_DIRECT)");
		if (n[NF_ENV_DATA_DIRECT_OFF])
			append(v, " (NCCL_IB_DATA_DIRECT=0 turns it off)");
	}
}

void gdr_nccl_judge(const struct gdr_nccl_facts *f, struct gdr_nccl_verdict *v)
{
	const unsigned int *n = f->count;

	memset(v, 0, sizeof(*v));
	/* "Connected all rings ... GDR 1" and the per-pair lines are not use: see judge_no_gdr().
	 */
	if (n[NF_CHAN_GDR]) {
		judge_gdr_path(f, v);
		if (n[NF_CHAN_NOGDR] && n[NF_CHAN_GDR]) {
			append(v, "; some network channels are without /GDRDMA");
			cite(f, v, NF_CHAN_NOGDR);
		}
		c2c_notes(f, v);
	} else {
		judge_no_gdr(f, v);
	}
	if (n[NF_GUIDE_LINE] && v->path != GDR_NCCL_UNKNOWN)
		append(v,
		       "; line %lu is not a line NCCL prints (quoted from a guide) and was "
		       "not used",
		       f->first[NF_GUIDE_LINE].lineno);
}

/* A process's view: its own lines, plus the bare lines when they cannot belong to another run. */
static void proc_view(const struct gdr_nccl_log *log, const struct gdr_nccl_proc *p,
		      struct gdr_nccl_facts *view)
{
	*view = p->facts;
	if (log->nversions > 1) {
		/*
		 * Several runs: a bare version line belongs to the processes that
		 * first appear after it (and before the next one).
		 */
		unsigned int seg = p->seg;

		/* Before NCCL's banner, a process prints Bootstrap lines: then the next one is its.
		 */
		if (!log->seg_version[seg][0] && seg < log->nseg)
			seg++;
		const char *sv = log->seg_version[seg];

		if (!view->version[0] && sv[0]) {
			gdr_strlcpy(view->version, sv, sizeof(view->version));
			gdr_nccl_parse_version(sv, &view->vmajor, &view->vminor, &view->vpatch);
			view->count[NF_VERSION] = 1;
			view->first[NF_VERSION] = log->seg_line[seg];
		}
		return;
	}
	for (int x = 0; x < NF__COUNT; x++)
		if (!view->count[x] && log->bare.count[x]) {
			view->count[x] = log->bare.count[x];
			view->first[x] = log->bare.first[x];
		}
	if (!view->version[0] && log->bare.version[0]) {
		memcpy(view->version, log->bare.version, sizeof(view->version));
		view->vmajor = log->bare.vmajor;
		view->vminor = log->bare.vminor;
		view->vpatch = log->bare.vpatch;
	}
#define FILL(field)                                                                                \
	if (!view->field[0])                                                                       \
	memcpy(view->field, log->bare.field, sizeof(view->field))
	FILL(network);
	FILL(chan_net);
	FILL(plugin);
	FILL(gdr_level);
	FILL(distance);
	FILL(nic_dist);
#undef FILL
	if (view->chan_dev < 0)
		view->chan_dev = log->bare.chan_dev;
}

static void copy_verdict(struct gdr_nccl_log *log, const struct gdr_nccl_verdict *v)
{
	log->path = v->path;
	memcpy(log->reason, v->reason, sizeof(log->reason));
	memcpy(log->cited, v->cited, sizeof(log->cited));
	memcpy(log->cited_line, v->cited_line, sizeof(log->cited_line));
	log->ncited = v->ncited;
	memcpy(log->cause, v->cause, sizeof(log->cause));
	memcpy(log->fix, v->fix, sizeof(log->fix));
	log->cause_line = v->cause_line;
}

static const char *proc_name(const struct gdr_nccl_proc *p)
{
	return p->id[0] ? p->id : p->launch[0] ? p->launch : "(no prefix)";
}

/* Processes decided differently: list them, cite one line of each kind. */
static void conclude_mixed(struct gdr_nccl_log *log)
{
	struct gdr_nccl_verdict v = { .path = GDR_NCCL_MIXED };
	unsigned int shown = 0, seen_paths = 0;

	snprintf(v.reason, sizeof(v.reason),
		 "processes disagree (several runs or NCCL versions "
		 "in one file; each judged on its own lines):");
	for (unsigned int i = 0; i < log->nprocs; i++) {
		const struct gdr_nccl_proc *p = &log->procs[i];

		if (p->verdict.path == GDR_NCCL_UNKNOWN)
			continue;
		if (shown++ < 6)
			append(&v, "%s %s %s%s%s", shown > 1 ? "," : "", proc_name(p),
			       gdr_nccl_path_name(p->verdict.path),
			       p->facts.version[0] ? " NCCL " : "", p->facts.version);
		if (seen_paths & (1u << p->verdict.path))
			continue;
		seen_paths |= 1u << p->verdict.path;
		/* Two lines of each: GDR in use or not, and what decided the registration. */
		for (unsigned int c = 0; c < p->verdict.ncited && c < 2; c++)
			if (v.ncited < GDR_ARRAY_SIZE(v.cited)) {
				v.cited[v.ncited] = p->verdict.cited[c];
				v.cited_line[v.ncited++] = p->verdict.cited_line[c];
			}
	}
	if (shown > 6)
		append(&v, ", and %u more", shown - 6);
	snprintf(v.cause, sizeof(v.cause), "the processes in the file disagree (see per process)");
	snprintf(v.fix, sizeof(v.fix),
		 "judge one run at a time: split the file per run (or per NCCL version) and "
		 "read each with --nccl-log");
	copy_verdict(log, &v);
}

void gdr_nccl_log_finish(struct gdr_nccl_log *log)
{
	struct gdr_nccl_verdict whole;
	struct gdr_nccl_facts *view;
	int agreed = -1, disagree = 0;

	gdr_nccl_log_flush(log);
	/* The whole file's fields, for the report and for callers. */
	memcpy(log->version, log->all.version, sizeof(log->version));
	log->vmajor = log->all.vmajor;
	log->vminor = log->all.vminor;
	log->vpatch = log->all.vpatch;
	memcpy(log->network, log->all.network, sizeof(log->network));
	memcpy(log->chan_net, log->all.chan_net, sizeof(log->chan_net));
	memcpy(log->plugin, log->all.plugin, sizeof(log->plugin));
	memcpy(log->gdr_level, log->all.gdr_level, sizeof(log->gdr_level));
	memcpy(log->distance, log->all.distance, sizeof(log->distance));
	log->ncited = 0;
	log->procs_decided = 0;
	if (!gdr_nccl_log_is_nccl(log)) {
		log->path = GDR_NCCL_UNKNOWN;
		if (log->lines)
			snprintf(log->reason, sizeof(log->reason),
				 "not an NCCL log: none of %lu lines is NCCL output", log->lines);
		else
			snprintf(log->reason, sizeof(log->reason),
				 "not an NCCL log: empty (no line to read)");
		snprintf(log->cause, sizeof(log->cause), "not an NCCL log");
		snprintf(log->fix, sizeof(log->fix),
			 "rerun the job with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET and give "
			 "its output");
		memset(&log->cause_line, 0, sizeof(log->cause_line));
		return;
	}
	view = malloc(sizeof(*view));
	for (unsigned int i = 0; view && i < log->nprocs; i++) {
		struct gdr_nccl_proc *p = &log->procs[i];

		proc_view(log, p, view);
		gdr_nccl_judge(view, &p->verdict);
		/* Report the version the process was judged with (a bare "NCCL version" line). */
		if (!p->facts.version[0])
			memcpy(p->facts.version, view->version, sizeof(p->facts.version));
		if (p->verdict.path == GDR_NCCL_UNKNOWN)
			continue;
		log->procs_decided++;
		if (agreed < 0)
			agreed = (int)p->verdict.path;
		else if (agreed != (int)p->verdict.path)
			disagree = 1;
	}
	free(view);
	gdr_nccl_judge(&log->all, &whole);
	if (disagree) {
		conclude_mixed(log);
		return;
	}
	/*
	 * One NCCL version: the lines of the whole file, when no process
	 * decides alone or they agree with it. Several: only processes decide,
	 * each with its own version, whatever the order of the runs.
	 */
	if (log->nversions <= 1 && (log->nprocs <= 1 || agreed < 0 || (int)whole.path == agreed)) {
		copy_verdict(log, &whole);
		if (log->nprocs > 1 && log->procs_decided) {
			size_t len = strlen(log->reason);

			snprintf(log->reason + len, sizeof(log->reason) - len,
				 " [%u of %u processes decide on their own lines; none disagrees]",
				 log->procs_decided, log->nprocs);
		}
		return;
	}
	if (agreed < 0) {
		struct gdr_nccl_verdict v = { .path = GDR_NCCL_UNKNOWN };

		snprintf(v.reason, sizeof(v.reason),
			 "the file holds %u NCCL versions (%s, %s%s) and no process's own lines "
			 "decide; judging them together would depend on the order of the lines",
			 log->nversions, log->versions[0], log->versions[1],
			 log->nversions > 2 ? ", ..." : "");
		snprintf(v.cause, sizeof(v.cause),
			 "several NCCL versions in one file, no process decides on its own lines");
		snprintf(
		    v.fix, sizeof(v.fix),
		    "split the file per run; rerun with NCCL_DEBUG=INFO "
		    "NCCL_DEBUG_SUBSYS=INIT,NET so that each process prints its channel lines");
		copy_verdict(log, &v);
		return;
	}
	/* The decided processes agree, but the file taken whole would say otherwise. */
	for (unsigned int i = 0; i < log->nprocs; i++) {
		const struct gdr_nccl_proc *p = &log->procs[i];

		if (p->verdict.path != GDR_NCCL_UNKNOWN) {
			copy_verdict(log, &p->verdict);
			snprintf(log->reason, sizeof(log->reason),
				 "%s: %s [%u of %u processes "
				 "decide on their own lines; all agree]",
				 proc_name(p), p->verdict.reason, log->procs_decided, log->nprocs);
			return;
		}
	}
}
