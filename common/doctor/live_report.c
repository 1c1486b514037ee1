/* gdr_doctor --live: the report as text (80 columns, the answer first) and as JSON. */
#include "config.h"

#include "live.h"
#include "text.h"
#include "util.h"
#include "writer.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#define COLS 80

static const char *state_name(enum gdr_live_src_state s)
{
	switch (s) {
	case GDR_LIVE_SRC_READ:
		return "read";
	case GDR_LIVE_SRC_NOT_NEEDED:
		return "not-needed";
	case GDR_LIVE_SRC_MISSING:
		return "missing";
	case GDR_LIVE_SRC_PARTIAL:
		return "partial";
	}
	return "missing";
}

/* prefix as it is, then printf's text wrapped to 80 columns, continuation lines at indent. */
static void wrapf(FILE *out, const char *prefix, int indent, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void wrapf(FILE *out, const char *prefix, int indent, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	gdr_vfmt_short(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fputs(prefix, out);
	gdr_text_wrap(out, buf, (int)strlen(prefix), indent, COLS);
}

static void scope(const struct gdr_live *l, char *out, size_t len)
{
	if (l->live_root)
		snprintf(out, len, "this machine");
	else
		snprintf(out, len, "the tree below %s", l->root);
}

static const char *sz(uint64_t v, char *buf, size_t len)
{
	return gdr_fmt_size(v, buf, len);
}

static void print_verdict(FILE *out, const struct gdr_live *l)
{
	char sc[300];

	scope(l, sc, sizeof(sc));
	wrapf(out, "", 4, "in use (%s): %s", sc, l->verdict);
	wrapf(out, "  ", 4, "DMA-BUF: %s", l->dmabuf_line);
	wrapf(out, "  ", 4, "peer memory: %s", l->peer_line);
	if (l->warning[0])
		wrapf(out, "  ", 4, "warning: %s", l->warning);
}

static void print_others(FILE *out, const struct gdr_live *l)
{
	char a[32];

	for (int i = 0; i < l->nothers; i++) {
		const struct gdr_live_other *o = &l->others[i];

		wrapf(out, "", 4, "other exporter %s: %u dma-buf%s, %s, %u attached%s%s%s",
		      o->exp_name, o->bufs, o->bufs == 1 ? "" : "s", sz(o->bytes, a, sizeof(a)),
		      o->attached, o->first_dev[0] ? " (one to " : "", o->first_dev,
		      o->first_dev[0] ? ")" : "");
	}
}

static void print_proc(FILE *out, const struct gdr_live *l, const struct gdr_live_proc *p)
{
	char a[32], b[32], devs[512] = "", nccl[400];
	size_t o = 0;

	for (int i = 0; i < p->ndev && o < sizeof(devs); i++)
		o +=
		    (size_t)snprintf(devs + o, sizeof(devs) - o, "%s%s: %u MR%s, %s", i ? "; " : "",
				     p->dev[i].dev, p->dev[i].mrs, p->dev[i].mrs == 1 ? "" : "s",
				     sz(p->dev[i].bytes, a, sizeof(a)));
	if (p->status_err) {
		wrapf(out, "  ", 6, "pid %d: %u MR%s (%s): /proc/%d/status: %s", p->pid, p->mrs,
		      p->mrs == 1 ? "" : "s", devs, p->pid, strerror(-p->status_err));
		return;
	}
	wrapf(out, "  ", 6, "pid %d %s%s: %s", p->pid, p->command, p->cuda ? " (maps libcuda)" : "",
	      p->mrs ? devs : "no MR");
	if (p->nthreads) {
		char t[128];
		size_t to = 0;

		for (int i = 0; i < p->nthreads && to < sizeof(t); i++)
			to += (size_t)snprintf(t + to, sizeof(t) - to, "%s%d", i ? ", " : "",
					       p->threads[i]);
		wrapf(out, "      ", 6, "registered by thread%s %s", p->nthreads == 1 ? "" : "s",
		      t);
	}
	if (p->mrs && p->vmpin_kb >= 0) {
		uint64_t pinned = (uint64_t)p->vmpin_kb * 1024;

		wrapf(out, "      ", 6,
		      "split, an estimate: DMA-BUF %s; host or peer memory %s (VmPin)",
		      sz(p->mr_bytes > pinned ? p->mr_bytes - pinned : 0, b, sizeof(b)),
		      sz(pinned, a, sizeof(a)));
	} else if (p->mrs) {
		wrapf(out, "      ", 6, "split not known: no VmPin in /proc/%d/status", p->pid);
	}
	for (int i = 0; i < p->ndmabuf && i < GDR_LIVE_PROC_FDS; i++)
		wrapf(out, "      ", 6, "holds dma-buf fd %d: %s, %s, ino %lu", p->fds[i].fd,
		      p->fds[i].exp_name[0] ? p->fds[i].exp_name : "exporter not known",
		      sz(p->fds[i].size, a, sizeof(a)), p->fds[i].ino);
	if (p->nccl_lib[0])
		snprintf(nccl, sizeof(nccl), "NCCL %s (%s)",
			 p->nccl_version[0] ? p->nccl_version : "version not found", p->nccl_lib);
	else if (p->maps_err)
		snprintf(nccl, sizeof(nccl), "NCCL not known (maps: %s)", strerror(-p->maps_err));
	else
		snprintf(nccl, sizeof(nccl), "no libnccl mapped");
	if (p->environ_err)
		wrapf(out, "      ", 6, "%s; NCCL_* not known: environ: %s%s", nccl,
		      strerror(-p->environ_err),
		      p->environ_err == -EACCES ? " (needs root with CAP_SYS_PTRACE, or the "
						  "process's own user)"
						: "");
	else
		wrapf(out, "      ", 6, "%s; %s", nccl,
		      p->nccl_env[0] ? p->nccl_env : "no NCCL_* set");
	(void)l;
}

static void print_procs(FILE *out, const struct gdr_live *l)
{
	int with_mr = 0;

	for (int i = 0; i < l->nprocs; i++)
		with_mr += l->procs[i].mrs > 0;
	if (!l->nprocs && l->src[GDR_LIVE_SRC_MRS].state != GDR_LIVE_SRC_READ)
		return;
	if (!l->nprocs && !l->mrs_kernel && !l->mrs_hidden) {
		wrapf(out, "", 4, "processes: none holds an RDMA MR or a dma-buf fd");
		return;
	}
	wrapf(out, "", 4,
	      "processes: %d with RDMA MRs%s (each one's DMA-BUF share is an estimate: its MR "
	      "bytes minus its VmPin, as an MR on a dma-buf pins no page of the process and one "
	      "on host or peer memory pins whole pages)",
	      with_mr, l->nprocs > with_mr ? ", others holding dma-buf fds" : "");
	for (int i = 0; i < l->nprocs; i++)
		print_proc(out, l, &l->procs[i]);
	if (l->procs_dropped)
		wrapf(out, "  ", 4, "and %s%d more process%s with MRs or dma-buf fds, not listed",
		      l->procs_dropped > 64 ? "more than " : "",
		      l->procs_dropped > 64 ? 64 : l->procs_dropped,
		      l->procs_dropped == 1 ? "" : "es");
	if (l->mrs_kernel)
		wrapf(out, "  ", 4, "kernel users: %u MR%s", l->mrs_kernel,
		      l->mrs_kernel == 1 ? "" : "s");
	if (l->mrs_hidden)
		wrapf(out, "  ", 4, "%u MR%s without a process id: %s", l->mrs_hidden,
		      l->mrs_hidden == 1 ? "" : "s",
		      l->host_pidns ? "their registering threads have exited"
				    : "threads of another PID namespace (or threads that have "
				      "exited)");
	if (l->est_dmabuf >= 0 && l->dmabuf >= 0 && (l->est_dmabuf > 0 || l->nv_attached_bytes)) {
		char a[32], b[32];

		wrapf(out, "  ", 4,
		      "estimate against bufinfo: %s by the processes, %s of NVIDIA "
		      "dma-bufs attached",
		      sz((uint64_t)l->est_dmabuf, a, sizeof(a)),
		      sz(l->nv_attached_bytes, b, sizeof(b)));
	}
}

static void print_sources(FILE *out, const struct gdr_live *l)
{
	fputs("sources:\n", out);
	for (int i = 0; i < GDR_LIVE_SRC_N; i++) {
		const struct gdr_live_src *s = &l->src[i];

		char key[24];

		snprintf(key, sizeof(key), "  %-13s ", s->key);
		wrapf(out, key, 16, "%s: %s", state_name(s->state), s->detail);
		if (s->adds[0])
			wrapf(out, "                ", 16, "would add: %s", s->adds);
		if (s->how[0])
			wrapf(out, "                ", 16, "get it: %s", s->how);
	}
}

void gdr_live_print(FILE *out, const struct gdr_live *l, int quiet)
{
	char sc[300];

	if (!quiet) {
		scope(l, sc, sizeof(sc));
		wrapf(out, "", 4, "gdr_doctor --live: %s%s%s%s: which GPUDirect path is in use now",
		      sc, l->host[0] ? " (host " : "", l->host, l->host[0] ? ")" : "");
	}
	print_verdict(out, l);
	if (quiet)
		return;
	print_others(out, l);
	print_procs(out, l);
	print_sources(out, l);
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void jstr(FILE *out, const char *key, const char *v, int comma)
{
	fprintf(out, "%s\"%s\": ", comma ? ", " : "", key);
	if (v)
		gdr_json_str(out, v);
	else
		fputs("null", out);
}

static void jtri(FILE *out, const char *key, int v)
{
	fprintf(out, ", \"%s\": %s", key, v < 0 ? "null" : v ? "true" : "false");
}

static void jnum(FILE *out, const char *key, int64_t v)
{
	if (v < 0)
		fprintf(out, ", \"%s\": null", key);
	else
		fprintf(out, ", \"%s\": %lld", key, (long long)v);
}

static void json_dmabuf(FILE *out, const struct gdr_live *l)
{
	fputs("\"dmabuf\": {", out);
	jstr(out, "state", l->dmabuf < 0 ? "not-known" : l->dmabuf ? "in-use" : "not-in-use", 0);
	jstr(out, "text", l->dmabuf_line, 1);
	fputs(", \"nvidia_exporters\": [", out);
	for (int i = 0; gdr_live_nvidia_exporters[i]; i++) {
		fputs(i ? ", " : "", out);
		gdr_json_str(out, gdr_live_nvidia_exporters[i]);
	}
	fprintf(out,
		"], \"nvidia_buffers\": %u, \"nvidia_bytes\": %llu, \"attached_buffers\": %u, "
		"\"attached_bytes\": %llu, \"attachments\": %u, \"devices\": [",
		l->nv_bufs, (unsigned long long)l->nv_bytes, l->nv_attached,
		(unsigned long long)l->nv_attached_bytes, l->nv_attachments);
	for (int i = 0; i < l->ndevs; i++) {
		fputs(i ? ", {" : "{", out);
		jstr(out, "device", l->devs[i].dev, 0);
		jstr(out, "rdma_device", l->devs[i].rdma[0] ? l->devs[i].rdma : NULL, 1);
		fprintf(out, ", \"attachments\": %u, \"bytes\": %llu}", l->devs[i].attachments,
			(unsigned long long)l->devs[i].bytes);
	}
	fputs("], \"other_exporters\": [", out);
	for (int i = 0; i < l->nothers; i++) {
		fputs(i ? ", {" : "{", out);
		jstr(out, "exp_name", l->others[i].exp_name, 0);
		fprintf(out, ", \"buffers\": %u, \"bytes\": %llu, \"attached\": %u}",
			l->others[i].bufs, (unsigned long long)l->others[i].bytes,
			l->others[i].attached);
	}
	fputs("], \"buffers\": [", out);
	for (size_t i = 0; i < l->bufs.n; i++) {
		const struct gdr_live_dmabuf *d = &l->bufs.v[i];

		fprintf(out, "%s{\"size\": %llu", i ? ", " : "", (unsigned long long)d->size);
		jstr(out, "exp_name", d->exp_name, 1);
		fprintf(out, ", \"ino\": %lu, \"count\": %ld", d->ino, d->count);
		jstr(out, "name", d->name, 1);
		fprintf(out, ", \"attached\": %u, \"devices\": [", d->nattach);
		for (unsigned int a = 0; a < d->nattach && a < GDR_LIVE_ATTACH_MAX; a++) {
			fputs(a ? ", " : "", out);
			gdr_json_str(out, d->attach[a]);
		}
		fputs("]}", out);
	}
	fputs("]}", out);
}

static void json_peers(FILE *out, const struct gdr_live *l)
{
	const struct gdr_live_peers *p = &l->peers;

	fputs("\"peermem\": {", out);
	jstr(out, "state", l->peermem < 0 ? "not-known" : l->peermem ? "in-use" : "not-in-use", 0);
	jstr(out, "text", l->peer_line, 1);
	fprintf(out, ", \"module_loaded\": %s", p->module ? "true" : "false");
	jnum(out, "refcnt", p->refcnt);
	jnum(out, "live_mrs", l->peer_mrs);
	jnum(out, "live_bytes", l->peer_bytes);
	fputs(", \"clients\": [", out);
	for (int i = 0; i < p->n; i++) {
		const struct gdr_live_peer *c = &p->v[i];

		fputs(i ? ", {" : "{", out);
		jstr(out, "name", c->name, 0);
		jstr(out, "version", c->version, 1);
		fprintf(out,
			", \"nvidia_peermem\": %s, \"complete\": %s, \"num_alloc_mrs\": %llu, "
			"\"num_dealloc_mrs\": %llu, \"num_reg_pages\": %llu, \"num_dereg_pages\": "
			"%llu, "
			"\"num_reg_bytes\": %llu, \"num_dereg_bytes\": %llu, "
			"\"num_free_callbacks\": %llu, \"live_mrs\": %llu, \"live_bytes\": %llu}",
			c->nvidia ? "true" : "false", c->complete ? "true" : "false",
			(unsigned long long)c->alloc_mrs, (unsigned long long)c->dealloc_mrs,
			(unsigned long long)c->reg_pages, (unsigned long long)c->dereg_pages,
			(unsigned long long)c->reg_bytes, (unsigned long long)c->dereg_bytes,
			(unsigned long long)c->free_callbacks,
			(unsigned long long)gdr_live_peer_mrs(c),
			(unsigned long long)gdr_live_peer_bytes(c));
	}
	fputs("]}", out);
}

static void json_proc(FILE *out, const struct gdr_live_proc *p)
{
	fprintf(out, "{\"pid\": %d", p->pid);
	jstr(out, "command", p->status_err ? NULL : p->command, 1);
	jstr(out, "cmdline", p->cmdline[0] ? p->cmdline : NULL, 1);
	jstr(out, "error", p->status_err ? strerror(-p->status_err) : NULL, 1);
	fputs(", \"threads\": [", out);
	for (int i = 0; i < p->nthreads; i++)
		fprintf(out, "%s%d", i ? ", " : "", p->threads[i]);
	fprintf(out, "], \"mrs\": %u, \"mr_bytes\": %llu, \"devices\": [", p->mrs,
		(unsigned long long)p->mr_bytes);
	for (int i = 0; i < p->ndev; i++) {
		fputs(i ? ", {" : "{", out);
		jstr(out, "device", p->dev[i].dev, 0);
		fprintf(out, ", \"mrs\": %u, \"bytes\": %llu}", p->dev[i].mrs,
			(unsigned long long)p->dev[i].bytes);
	}
	fputs("]", out);
	jnum(out, "vmpin_bytes", p->vmpin_kb < 0 ? -1 : p->vmpin_kb * 1024);
	if (p->mrs && p->vmpin_kb >= 0) {
		uint64_t pinned = (uint64_t)p->vmpin_kb * 1024;

		jnum(out, "dmabuf_bytes_estimate",
		     (int64_t)(p->mr_bytes > pinned ? p->mr_bytes - pinned : 0));
	} else {
		jnum(out, "dmabuf_bytes_estimate", -1);
	}
	jtri(out, "maps_libcuda", p->maps_err ? -1 : p->cuda);
	jstr(out, "nccl_library", p->nccl_lib[0] ? p->nccl_lib : NULL, 1);
	jstr(out, "nccl_version", p->nccl_version[0] ? p->nccl_version : NULL, 1);
	jstr(out, "nccl_env", p->environ_err ? NULL : p->nccl_env, 1);
	jstr(out, "nccl_env_error", p->environ_err ? strerror(-p->environ_err) : NULL, 1);
	fprintf(out, ", \"dmabuf_fds\": %d, \"dmabuf_fd_list\": [",
		p->ndmabuf < 0 ? 0 : p->ndmabuf);
	for (int i = 0; i < p->ndmabuf && i < GDR_LIVE_PROC_FDS; i++) {
		fprintf(out, "%s{\"fd\": %d, \"size\": %llu, \"ino\": %lu", i ? ", " : "",
			p->fds[i].fd, (unsigned long long)p->fds[i].size, p->fds[i].ino);
		jstr(out, "exp_name", p->fds[i].exp_name[0] ? p->fds[i].exp_name : NULL, 1);
		fputs("}", out);
	}
	fputs("]}", out);
}

void gdr_live_json(FILE *out, const struct gdr_live *l)
{
	fputs("{\"mode\": \"live\", \"scope\": {", out);
	jstr(out, "about", l->live_root ? "this machine" : "root", 0);
	jstr(out, "root", l->root, 1);
	jstr(out, "host", l->host[0] ? l->host : NULL, 1);
	fputs("}, \"verdict\": {", out);
	jstr(out, "in_use", gdr_live_in_use(l), 0);
	jtri(out, "dmabuf", l->dmabuf);
	jtri(out, "peermem", l->peermem);
	jstr(out, "text", l->verdict, 1);
	jstr(out, "warning", l->warning[0] ? l->warning : NULL, 1);
	fprintf(out, ", \"gpu_processes_without_gpudirect\": %d}, ", l->gpu_procs_no_gdr);
	json_dmabuf(out, l);
	fputs(", ", out);
	json_peers(out, l);
	fprintf(out,
		", \"mrs\": {\"count\": %zu, \"bytes\": %llu, \"kernel\": %u, \"without_pid\": %u",
		l->mrs.n, (unsigned long long)l->mr_bytes, l->mrs_kernel, l->mrs_hidden);
	jnum(out, "dmabuf_bytes_estimate", l->est_dmabuf);
	fprintf(out, ", \"node_pid_namespace\": %s}, \"processes\": [",
		l->host_pidns ? "true" : "false");
	for (int i = 0; i < l->nprocs; i++) {
		fputs(i ? ", " : "", out);
		json_proc(out, &l->procs[i]);
	}
	fprintf(out, "], \"processes_not_listed\": %d, \"sources\": [",
		l->procs_dropped > 64 ? 65 : l->procs_dropped);
	for (int i = 0; i < GDR_LIVE_SRC_N; i++) {
		const struct gdr_live_src *s = &l->src[i];

		fputs(i ? ", {" : "{", out);
		jstr(out, "name", s->key, 0);
		jstr(out, "state", state_name(s->state), 1);
		jstr(out, "path", s->path, 1);
		jstr(out, "detail", s->detail, 1);
		jstr(out, "would_add", s->adds[0] ? s->adds : NULL, 1);
		jstr(out, "get_it", s->how[0] ? s->how : NULL, 1);
		fputs("}", out);
	}
	fputs("]}\n", out);
}
