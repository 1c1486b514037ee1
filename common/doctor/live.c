/*
 * gdr_doctor --live: gather the node's dma-bufs, peer-memory counters, RDMA
 * MRs and their processes (live.h), and say which GPUDirect path is in use.
 */
#include "config.h"

#include "doctor.h"
#include "exit_status.h"
#include "input.h"
#include "live.h"
#include "pcie_cfg.h"
#include "run_capture.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define BUFINFO	     "/sys/kernel/debug/dma_buf/bufinfo"
#define PEERS_DIR    "/sys/kernel/mm/memory_peers"
#define BUFINFO_MAX  (256u << 20)
#define MR_JSON_MAX  (256u << 20)
#define RDMA_WAIT_MS 20000

static const char *const src_keys[GDR_LIVE_SRC_N] = { "bufinfo", "memory_peers", "refcnt",
						      "rdma_mr", "processes" };

void gdr_live_init(struct gdr_live *l, const char *root)
{
	memset(l, 0, sizeof(*l));
	l->root = root && *root ? root : "/";
	l->live_root = !strcmp(l->root, "/");
	l->dmabuf = l->peermem = -1;
	l->peer_mrs = l->peer_bytes = -1;
	l->est_dmabuf = -1;
	for (int i = 0; i < GDR_LIVE_SRC_N; i++)
		l->src[i].key = src_keys[i];
}

void gdr_live_free(struct gdr_live *l)
{
	gdr_live_bufs_free(&l->bufs);
	gdr_live_mrs_free(&l->mrs);
	free(l->procs);
	l->procs = NULL;
	l->nprocs = 0;
}

static void src_set(struct gdr_live_src *s, enum gdr_live_src_state st, const char *path,
		    const char *detail)
{
	s->state = st;
	gdr_strlcpy(s->path, path, sizeof(s->path));
	gdr_strlcpy(s->detail, detail, sizeof(s->detail));
}

/* ---- dma-bufs -------------------------------------------------------------------------- */

/* The RDMA devices below root with the PCI address of each. */
struct ibdevs {
	char name[GDR_LIVE_MAX_DEVS][64];
	char bdf[GDR_LIVE_MAX_DEVS][16];
	int n;
};

static void list_ibdevs(const char *root, struct ibdevs *ib)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(gdr_rooted_path(root, "/sys/class/infiniband", path, sizeof(path)));

	ib->n = 0;
	if (!d)
		return;
	while ((de = readdir(d)) && ib->n < GDR_LIVE_MAX_DEVS) {
		if (de->d_name[0] == '.')
			continue;
		gdr_strlcpy(ib->name[ib->n], de->d_name, sizeof(ib->name[0]));
		if (gdr_pcie_ibdev_bdf(root, de->d_name, ib->bdf[ib->n], sizeof(ib->bdf[0])))
			ib->bdf[ib->n][0] = '\0';
		ib->n++;
	}
	closedir(d);
}

static struct gdr_live_devuse *devuse(struct gdr_live *l, const char *dev, const struct ibdevs *ib)
{
	for (int i = 0; i < l->ndevs; i++)
		if (!strcmp(l->devs[i].dev, dev))
			return &l->devs[i];
	if (l->ndevs == GDR_LIVE_MAX_DEVS)
		return NULL;
	gdr_strlcpy(l->devs[l->ndevs].dev, dev, sizeof(l->devs[0].dev));
	for (int i = 0; i < ib->n; i++)
		if (ib->bdf[i][0] && !strcmp(ib->bdf[i], dev))
			gdr_strlcpy(l->devs[l->ndevs].rdma, ib->name[i], sizeof(l->devs[0].rdma));
	return &l->devs[l->ndevs++];
}

static int cmp_devuse(const void *a, const void *b)
{
	const struct gdr_live_devuse *x = a, *y = b;

	/* RDMA devices first, by name; then the others by their device name. */
	if (!x->rdma[0] != !y->rdma[0])
		return x->rdma[0] ? -1 : 1;
	return x->rdma[0] ? strcmp(x->rdma, y->rdma) : strcmp(x->dev, y->dev);
}

static void other_exporter(struct gdr_live *l, const struct gdr_live_dmabuf *d)
{
	struct gdr_live_other *o = NULL;

	for (int i = 0; i < l->nothers && !o; i++)
		if (!strcmp(l->others[i].exp_name, d->exp_name))
			o = &l->others[i];
	if (!o) {
		if (l->nothers == (int)GDR_ARRAY_SIZE(l->others))
			return;
		o = &l->others[l->nothers++];
		gdr_strlcpy(o->exp_name, d->exp_name, sizeof(o->exp_name));
	}
	o->bufs++;
	o->bytes += d->size;
	if (d->nattach) {
		o->attached++;
		if (!o->first_dev[0])
			gdr_strlcpy(o->first_dev, d->attach[0], sizeof(o->first_dev));
	}
}

static void why_no_bufinfo(const struct gdr_live *l, int err, char *out, size_t len)
{
	char why[160];

	gdr_rooted_strerror(l->root, BUFINFO, err, why, sizeof(why));
	if (err == -ENOENT && !gdr_exists_rooted(l->root, "/sys/kernel/debug/dma_buf"))
		snprintf(out, len, "%s: %s (debugfs is not mounted on /sys/kernel/debug)", BUFINFO,
			 why);
	else if (err == -EACCES)
		snprintf(out, len, "%s: %s (debugfs is root's)", BUFINFO, why);
	else
		snprintf(out, len, "%s: %s", BUFINFO, why);
}

static void gather_bufs(struct gdr_live *l)
{
	struct gdr_live_src *s = &l->src[GDR_LIVE_SRC_BUFINFO];
	char path[PATH_MAX], why[256], detail[320];
	struct ibdevs ib;
	size_t len;
	char *text;
	int r;

	r = gdr_input_read_all(gdr_rooted_path(l->root, BUFINFO, path, sizeof(path)), BUFINFO_MAX,
			       &text, &len);
	if (r) {
		why_no_bufinfo(l, r, detail, sizeof(detail));
		src_set(s, GDR_LIVE_SRC_MISSING, BUFINFO, detail);
		return;
	}
	r = gdr_live_bufinfo_parse(text, &l->bufs, why, sizeof(why));
	free(text);
	if (r) {
		snprintf(detail, sizeof(detail), "%s: not the kernel's bufinfo: %s", BUFINFO,
			 r == -ENOMEM ? "out of memory" : why);
		src_set(s, GDR_LIVE_SRC_MISSING, BUFINFO, detail);
		return;
	}
	list_ibdevs(l->root, &ib);
	for (size_t i = 0; i < l->bufs.n; i++) {
		const struct gdr_live_dmabuf *d = &l->bufs.v[i];

		if (!gdr_live_nvidia_exporter(d->exp_name)) {
			other_exporter(l, d);
			continue;
		}
		l->nv_bufs++;
		l->nv_bytes += d->size;
		if (!d->nattach)
			continue;
		l->nv_attached++;
		l->nv_attached_bytes += d->size;
		l->nv_attachments += d->nattach;
		for (unsigned int a = 0; a < d->nattach && a < GDR_LIVE_ATTACH_MAX; a++) {
			struct gdr_live_devuse *u = devuse(l, d->attach[a], &ib);

			if (u) {
				u->attachments++;
				u->bytes += d->size;
			}
		}
	}
	qsort(l->devs, (size_t)l->ndevs, sizeof(l->devs[0]), cmp_devuse);
	l->dmabuf = l->nv_attached > 0;
	snprintf(detail, sizeof(detail), "%s: %zu dma-buf%s, %u of the NVIDIA exporter", BUFINFO,
		 l->bufs.n, l->bufs.n == 1 ? "" : "s", l->nv_bufs);
	src_set(s, GDR_LIVE_SRC_READ, BUFINFO, detail);
}

/* ---- peer memory ----------------------------------------------------------------------- */

static void gather_peers(struct gdr_live *l)
{
	struct gdr_live_src *ps = &l->src[GDR_LIVE_SRC_PEERS], *rs = &l->src[GDR_LIVE_SRC_REFCNT];
	const struct gdr_live_peers *p = &l->peers;
	char detail[320], names[192] = "";
	int nv = 0, nv_complete = 1;
	uint64_t mrs = 0, bytes = 0;
	size_t o = 0;

	gdr_live_peers_read(l->root, &l->peers);
	for (int i = 0; i < p->n; i++) {
		o += (size_t)snprintf(names + o, o < sizeof(names) ? sizeof(names) - o : 0, "%s%s",
				      o ? ", " : "", p->v[i].name);
		if (o >= sizeof(names))
			o = sizeof(names);
		if (!p->v[i].nvidia)
			continue;
		nv++;
		nv_complete &= p->v[i].complete;
		mrs += gdr_live_peer_mrs(&p->v[i]);
		bytes += gdr_live_peer_bytes(&p->v[i]);
	}
	/* memory_peers */
	if (nv && nv_complete) {
		l->peer_mrs = (int64_t)mrs;
		l->peer_bytes = (int64_t)bytes;
		snprintf(detail, sizeof(detail), "%s: clients %s", PEERS_DIR, names);
		src_set(ps, GDR_LIVE_SRC_READ, PEERS_DIR, detail);
	} else if (!p->module && !nv) {
		snprintf(detail, sizeof(detail),
			 "no nvidia-peermem client (nvidia_peermem not loaded)%s%s",
			 p->n ? "; other clients: " : "", names);
		src_set(ps, p->n ? GDR_LIVE_SRC_READ : GDR_LIVE_SRC_NOT_NEEDED, PEERS_DIR, detail);
	} else if (nv) {
		snprintf(detail, sizeof(detail), "nvidia-peermem's counters not all readable (%s)",
			 names);
		src_set(ps, GDR_LIVE_SRC_MISSING, PEERS_DIR, detail);
	} else {
		snprintf(detail, sizeof(detail), "%s: %s", PEERS_DIR,
			 p->dir ? "no nv_mem client in it" : strerror(-p->dir_err));
		src_set(ps, GDR_LIVE_SRC_MISSING, PEERS_DIR, detail);
	}
	/* refcnt */
	if (!p->module) {
		src_set(rs, GDR_LIVE_SRC_NOT_NEEDED, "/sys/module/nvidia_peermem/refcnt",
			"nvidia_peermem not loaded");
	} else if (p->refcnt >= 0) {
		snprintf(detail, sizeof(detail),
			 "/sys/module/nvidia_peermem/refcnt: %ld reference%s (one per live "
			 "peer-memory MR)",
			 p->refcnt, p->refcnt == 1 ? "" : "s");
		src_set(rs, GDR_LIVE_SRC_READ, "/sys/module/nvidia_peermem/refcnt", detail);
	} else {
		snprintf(detail, sizeof(detail), "/sys/module/nvidia_peermem/refcnt: %s",
			 strerror(-p->refcnt_err));
		src_set(rs, GDR_LIVE_SRC_MISSING, "/sys/module/nvidia_peermem/refcnt", detail);
	}
	if (l->peer_mrs < 0 && p->module && p->refcnt >= 0)
		l->peer_mrs = p->refcnt;
	if (l->peer_mrs < 0 && !p->module && !nv)
		l->peer_mrs = 0;
	l->peermem = l->peer_mrs < 0 ? -1 : l->peer_mrs > 0;
}

/* ---- MRs and processes ----------------------------------------------------------------- */

static void get_mrs(struct gdr_live *l, const char *json, size_t len, const char *from)
{
	struct gdr_live_src *s = &l->src[GDR_LIVE_SRC_MRS];
	char *argv[] = { "rdma", "-j", "res", "show", "mr", NULL };
	char why[256], detail[320], *out = NULL;
	size_t n = 0;
	int r;

	if (!json && !l->live_root) {
		snprintf(detail, sizeof(detail),
			 "not read: a tree below --root has no RDMA netlink to ask");
		src_set(s, GDR_LIVE_SRC_MISSING, "rdma -j res show mr", detail);
		gdr_strlcpy(s->how,
			    "run `rdma -j res show mr` on the node and pass its output with "
			    "--rdma-mr FILE",
			    sizeof(s->how));
		return;
	}
	if (!json) {
		from = "rdma -j res show mr";
		r = gdr_run_capture(argv, RDMA_WAIT_MS, MR_JSON_MAX, &out, &n, why, sizeof(why));
		if (r) {
			free(out);
			src_set(s, GDR_LIVE_SRC_MISSING, from, why);
			return;
		}
		json = out;
		len = n;
	}
	r = gdr_live_mr_parse(json, len, &l->mrs, why, sizeof(why));
	free(out);
	if (r) {
		snprintf(detail, sizeof(detail), "%s: not rdma's MR list: %s", from,
			 r == -ENOMEM ? "out of memory" : why);
		src_set(s, GDR_LIVE_SRC_MISSING, from, detail);
		return;
	}
	snprintf(detail, sizeof(detail), "%s: %zu MR%s", from, l->mrs.n, l->mrs.n == 1 ? "" : "s");
	src_set(s, GDR_LIVE_SRC_READ, from, detail);
}

static struct gdr_live_proc *proc_of(struct gdr_live *l, int pid, int *created)
{
	*created = 0;
	for (int i = 0; i < l->nprocs; i++)
		if (l->procs[i].pid == pid)
			return &l->procs[i];
	if (l->nprocs == GDR_LIVE_MAX_PROCS) {
		int n = l->procs_dropped < (int)GDR_ARRAY_SIZE(l->dropped_pid)
			    ? l->procs_dropped
			    : (int)GDR_ARRAY_SIZE(l->dropped_pid);

		for (int i = 0; i < n; i++)
			if (l->dropped_pid[i] == pid)
				return NULL;
		if (l->procs_dropped < (int)GDR_ARRAY_SIZE(l->dropped_pid))
			l->dropped_pid[l->procs_dropped] = pid;
		l->procs_dropped++;
		return NULL;
	}
	memset(&l->procs[l->nprocs], 0, sizeof(l->procs[0]));
	l->procs[l->nprocs].pid = pid;
	l->procs[l->nprocs].vmpin_kb = -1;
	*created = 1;
	return &l->procs[l->nprocs++];
}

static void add_mr(struct gdr_live_proc *p, const struct gdr_live_mr *mr, int tid)
{
	struct gdr_live_proc_dev *d = NULL;

	p->mrs++;
	p->mr_bytes += mr->len;
	if (tid != p->pid) {
		int seen = 0;

		for (int i = 0; i < p->nthreads; i++)
			seen |= p->threads[i] == tid;
		if (!seen && p->nthreads < (int)GDR_ARRAY_SIZE(p->threads))
			p->threads[p->nthreads++] = tid;
	}
	for (int i = 0; i < p->ndev && !d; i++)
		if (!strcmp(p->dev[i].dev, mr->dev))
			d = &p->dev[i];
	if (!d && p->ndev < GDR_LIVE_PROC_DEVS) {
		d = &p->dev[p->ndev++];
		gdr_strlcpy(d->dev, mr->dev, sizeof(d->dev));
	}
	if (d) {
		d->mrs++;
		d->bytes += mr->len;
	}
}

static int cmp_proc(const void *a, const void *b)
{
	return ((const struct gdr_live_proc *)a)->pid - ((const struct gdr_live_proc *)b)->pid;
}

/* Processes that hold dma-buf fds now (no MR needed): scan ROOT/proc. */
static void fd_holders(struct gdr_live *l)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(gdr_rooted_path(l->root, "/proc", path, sizeof(path)));

	if (!d)
		return;
	while ((de = readdir(d))) {
		int pid, created;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (gdr_live_proc_dmabuf_fds(l->root, pid) > 0)
			proc_of(l, pid, &created);
	}
	closedir(d);
}

static void gather_procs(struct gdr_live *l, const char *json, size_t len, const char *from)
{
	struct gdr_live_src *s = &l->src[GDR_LIVE_SRC_PROCS];
	char status[512], v[64], detail[320];
	int created;

	l->procs = calloc(GDR_LIVE_MAX_PROCS, sizeof(*l->procs));
	if (!l->procs) {
		src_set(s, GDR_LIVE_SRC_MISSING, "/proc", "out of memory");
		return;
	}
	get_mrs(l, json, len, from);
	for (size_t i = 0; i < l->mrs.n; i++) {
		const struct gdr_live_mr *mr = &l->mrs.v[i];
		struct gdr_live_proc *p;
		int tgid;

		l->mr_bytes += mr->len;
		if (!mr->pid) {
			if (mr->comm[0])
				l->mrs_kernel++;
			else
				l->mrs_hidden++;
			continue;
		}
		if (gdr_live_tgid(l->root, (int)mr->pid, &tgid))
			tgid = (int)mr->pid;
		p = proc_of(l, tgid, &created);
		if (p)
			add_mr(p, mr, (int)mr->pid);
	}
	fd_holders(l);
	qsort(l->procs, (size_t)l->nprocs, sizeof(l->procs[0]), cmp_proc);
	for (int i = 0; i < l->nprocs; i++) {
		struct gdr_live_proc *p = &l->procs[i];
		struct gdr_live_proc keep = *p;

		gdr_live_proc_read(l->root, p->pid, p);
		p->mrs = keep.mrs;
		p->mr_bytes = keep.mr_bytes;
		p->ndev = keep.ndev;
		memcpy(p->dev, keep.dev, sizeof(p->dev));
		p->nthreads = keep.nthreads;
		memcpy(p->threads, keep.threads, sizeof(p->threads));
	}
	l->host_pidns = gdr_read_rooted(l->root, "/proc/2/status", status, sizeof(status)) > 0 &&
			!gdr_live_status_field(status, "Name", v, sizeof(v)) &&
			!strcmp(v, "kthreadd");
	if (l->mrs_hidden && !l->host_pidns) {
		snprintf(detail, sizeof(detail),
			 "/proc: not the node's PID namespace (pid 2 is not kthreadd); %u MR%s "
			 "without a process id: registered by threads of another PID namespace "
			 "(or by threads that have exited)",
			 l->mrs_hidden, l->mrs_hidden == 1 ? "" : "s");
		src_set(s, GDR_LIVE_SRC_PARTIAL, "/proc", detail);
	} else if (l->mrs_hidden) {
		/* In the node's own namespace only a dead task has no pid (fill_res_name_pid). */
		snprintf(detail, sizeof(detail),
			 "/proc: the node's PID namespace; %d process%s with MRs or dma-buf fds; "
			 "%u MR%s without a process id: their registering threads have exited",
			 l->nprocs, l->nprocs == 1 ? "" : "es", l->mrs_hidden,
			 l->mrs_hidden == 1 ? "" : "s");
		src_set(s, GDR_LIVE_SRC_READ, "/proc", detail);
	} else if (!l->host_pidns) {
		src_set(s, GDR_LIVE_SRC_PARTIAL, "/proc",
			"not the node's PID namespace (pid 2 is not kthreadd): only this "
			"namespace's processes are seen");
	} else if (l->src[GDR_LIVE_SRC_MRS].state != GDR_LIVE_SRC_READ) {
		snprintf(detail, sizeof(detail),
			 "/proc: the node's PID namespace; no MR list to attribute (rdma_mr); %d "
			 "process%s holding dma-buf fds",
			 l->nprocs, l->nprocs == 1 ? "" : "es");
		src_set(s, GDR_LIVE_SRC_READ, "/proc", detail);
	} else {
		snprintf(detail, sizeof(detail),
			 "/proc: the node's PID namespace; %d process%s with MRs or dma-buf fds",
			 l->nprocs, l->nprocs == 1 ? "" : "es");
		src_set(s, GDR_LIVE_SRC_READ, "/proc", detail);
	}
}

/* ---- the verdict ----------------------------------------------------------------------- */

static void how_to_get(struct gdr_live *l)
{
	static const struct {
		const char *adds, *how;
	} text[GDR_LIVE_SRC_N] = {
		[GDR_LIVE_SRC_BUFINFO] = { "which dma-bufs of the NVIDIA exporter are attached to "
					   "which RDMA "
					   "device, and their bytes: whether DMA-BUF is in use",
					   "mount -t debugfs none /sys/kernel/debug, as root; in a "
					   "pod: "
					   "privileged, hostPath /sys/kernel/debug mounted there" },
		[GDR_LIVE_SRC_PEERS] = { "live peer-memory MRs and bytes of nvidia-peermem "
					 "(nv_mem, nv_mem_nc)",
					 "MLNX_OFED or DOCA-OFED's peer-memory core creates it; in "
					 "a pod: the "
					 "host's /sys (read-only hostPath) or a privileged "
					 "container" },
		[GDR_LIVE_SRC_REFCNT] = { "live peer-memory MRs (nvidia_peermem takes one module "
					  "reference per "
					  "MR) where memory_peers is missing",
					  "a kernel with CONFIG_MODULE_UNLOAD; in a pod: the "
					  "host's /sys" },
		[GDR_LIVE_SRC_MRS] = { "the RDMA MRs per process and device, and each process's "
				       "split",
				       "install iproute2 (the rdma tool) or pass --rdma-mr FILE "
				       "with the "
				       "output of `rdma -j res show mr` run on the node" },
		[GDR_LIVE_SRC_PROCS] = { "the processes behind every MR (pid, command, NCCL), and "
					 "their "
					 "VmPin for the split",
					 "run on the node's PID namespace: hostPID: true in the "
					 "pod spec" },
	};

	for (int i = 0; i < GDR_LIVE_SRC_N; i++) {
		if (l->src[i].state != GDR_LIVE_SRC_MISSING &&
		    l->src[i].state != GDR_LIVE_SRC_PARTIAL)
			continue;
		gdr_strlcpy(l->src[i].adds, text[i].adds, sizeof(l->src[i].adds));
		if (!l->src[i].how[0])
			gdr_strlcpy(l->src[i].how, text[i].how, sizeof(l->src[i].how));
	}
}

static void estimates(struct gdr_live *l)
{
	for (int i = 0; i < l->nprocs; i++) {
		const struct gdr_live_proc *p = &l->procs[i];
		uint64_t pinned;

		if (!p->mrs)
			continue;
		if (p->cuda && l->dmabuf == 0 && l->peermem == 0)
			l->gpu_procs_no_gdr++;
		if (p->vmpin_kb < 0)
			continue;
		pinned = (uint64_t)p->vmpin_kb * 1024;
		if (l->est_dmabuf < 0)
			l->est_dmabuf = 0;
		if (p->mr_bytes > pinned)
			l->est_dmabuf += (int64_t)(p->mr_bytes - pinned);
	}
}

static void dev_list(const struct gdr_live *l, char *out, size_t len)
{
	size_t o = 0;

	out[0] = '\0';
	for (int i = 0; i < l->ndevs && o < len; i++) {
		const struct gdr_live_devuse *d = &l->devs[i];

		if (d->rdma[0])
			o += (size_t)snprintf(out + o, len - o, "%s%s (%u)", i ? ", " : "", d->rdma,
					      d->attachments);
		else
			o +=
			    (size_t)snprintf(out + o, len - o,
					     "%s%s (%u; not an RDMA device's own function: with "
					     "data direct, mlx5 attaches its data-direct function)",
					     i ? ", " : "", d->dev, d->attachments);
	}
}

/* The NVIDIA exporter names seen among the attached buffers: "nv_dmabuf", "nv_dmabuf, nvidia". */
static void exp_names(const struct gdr_live *l, char *out, size_t len)
{
	size_t o = 0;

	out[0] = '\0';
	for (int e = 0; gdr_live_nvidia_exporters[e]; e++)
		for (size_t i = 0; i < l->bufs.n; i++)
			if (l->bufs.v[i].nattach &&
			    !strcmp(l->bufs.v[i].exp_name, gdr_live_nvidia_exporters[e])) {
				o += (size_t)snprintf(out + o, o < len ? len - o : 0, "%s%s",
						      o ? ", " : "", gdr_live_nvidia_exporters[e]);
				break;
			}
}

static void lines(struct gdr_live *l)
{
	char a[32], b[32], devs[512], names[64];
	int procs_mr = 0, procs_cuda = 0;

	for (int i = 0; i < l->nprocs; i++) {
		procs_mr += l->procs[i].mrs > 0;
		procs_cuda += l->procs[i].mrs > 0 && l->procs[i].cuda;
	}
	if (l->dmabuf < 0)
		snprintf(l->dmabuf_line, sizeof(l->dmabuf_line), "not known: bufinfo not read%s",
			 l->est_dmabuf > 0 ? " (the processes' estimate says some: below)" : "");
	else if (l->dmabuf) {
		dev_list(l, devs, sizeof(devs));
		exp_names(l, names, sizeof(names));
		snprintf(l->dmabuf_line, sizeof(l->dmabuf_line),
			 "in use: %u dma-buf%s of the NVIDIA exporter (%s), %s, attached to %s",
			 l->nv_attached, l->nv_attached == 1 ? "" : "s", names,
			 gdr_fmt_size(l->nv_attached_bytes, a, sizeof(a)), devs);
	} else if (l->nv_bufs)
		snprintf(l->dmabuf_line, sizeof(l->dmabuf_line),
			 "not in use: %u dma-buf%s of the NVIDIA exporter exported, none attached "
			 "to a device",
			 l->nv_bufs, l->nv_bufs == 1 ? "" : "s");
	else
		snprintf(l->dmabuf_line, sizeof(l->dmabuf_line),
			 "not in use: no dma-buf of the NVIDIA exporter (nv_dmabuf, nvidia)");
	if (l->peermem < 0)
		snprintf(l->peer_line, sizeof(l->peer_line),
			 "not known: nvidia_peermem is loaded, and neither its memory_peers "
			 "counters nor its refcnt could be read");
	else if (l->peermem && l->peer_bytes >= 0)
		snprintf(l->peer_line, sizeof(l->peer_line),
			 "in use: nvidia-peermem has %lld live MR%s, %s (memory_peers)",
			 (long long)l->peer_mrs, l->peer_mrs == 1 ? "" : "s",
			 gdr_fmt_size((uint64_t)l->peer_bytes, b, sizeof(b)));
	else if (l->peermem)
		snprintf(l->peer_line, sizeof(l->peer_line),
			 "in use: nvidia_peermem holds %lld reference%s, one per live MR (refcnt; "
			 "bytes not known)",
			 (long long)l->peer_mrs, l->peer_mrs == 1 ? "" : "s");
	else
		snprintf(l->peer_line, sizeof(l->peer_line), "not in use: %s",
			 l->peers.module ? "nvidia-peermem holds no MR"
					 : "nvidia_peermem not loaded");

	if (l->dmabuf == 1 && l->peermem == 1) {
		gdr_strlcpy(l->verdict, "BOTH DMA-BUF and peer memory in use", sizeof(l->verdict));
		gdr_strlcpy(l->warning,
			    "two mechanisms register GPU memory on this node, and the slower can "
			    "silently win: move every job to one (DMA-BUF), then rmmod "
			    "nvidia_peermem",
			    sizeof(l->warning));
	} else if (l->dmabuf == 1 && l->peermem == 0) {
		gdr_strlcpy(l->verdict, "DMA-BUF in use; no peer memory", sizeof(l->verdict));
	} else if (l->dmabuf == 0 && l->peermem == 1) {
		gdr_strlcpy(l->verdict, "peer memory (nvidia-peermem) in use; no DMA-BUF",
			    sizeof(l->verdict));
	} else if (l->dmabuf == 0 && l->peermem == 0) {
		if (procs_cuda)
			snprintf(l->verdict, sizeof(l->verdict),
				 "neither in use: %d GPU process%s hold%s RDMA MRs on host memory: "
				 "GPUDirect RDMA is off (bounce or host staging)",
				 procs_cuda, procs_cuda == 1 ? "" : "es",
				 procs_cuda == 1 ? "s" : "");
		else if (procs_mr)
			snprintf(l->verdict, sizeof(l->verdict),
				 "neither in use: %d process%s hold%s RDMA MRs, none maps libcuda",
				 procs_mr, procs_mr == 1 ? "" : "es", procs_mr == 1 ? "s" : "");
		else if (l->src[GDR_LIVE_SRC_MRS].state == GDR_LIVE_SRC_READ && !l->mrs.n)
			gdr_strlcpy(l->verdict, "neither in use: no RDMA MRs", sizeof(l->verdict));
		else
			gdr_strlcpy(l->verdict, "neither in use", sizeof(l->verdict));
	} else if (l->dmabuf < 0 && l->peermem < 0) {
		gdr_strlcpy(
		    l->verdict,
		    "not known: neither bufinfo nor nvidia-peermem's counters could be read",
		    sizeof(l->verdict));
	} else if (l->dmabuf < 0) {
		snprintf(l->verdict, sizeof(l->verdict), "%s; DMA-BUF not known (no bufinfo)",
			 l->peermem ? "peer memory (nvidia-peermem) in use" : "no peer memory");
	} else {
		snprintf(l->verdict, sizeof(l->verdict),
			 "%s; peer memory not known (no nvidia-peermem counters)",
			 l->dmabuf ? "DMA-BUF in use" : "no DMA-BUF");
	}
}

void gdr_live_gather(struct gdr_live *l, const char *mr_json, size_t mr_len, const char *mr_from)
{
	gdr_doctor_host(l->live_root ? NULL : l->root, l->host, sizeof(l->host));
	gather_bufs(l);
	gather_peers(l);
	gather_procs(l, mr_json, mr_len, mr_from ? mr_from : "--rdma-mr");
	estimates(l);
	lines(l);
	how_to_get(l);
}

const char *gdr_live_in_use(const struct gdr_live *l)
{
	if (l->dmabuf < 0 || l->peermem < 0)
		return NULL;
	return l->dmabuf && l->peermem ? "both"
	       : l->dmabuf	       ? "dmabuf"
	       : l->peermem	       ? "peermem"
				       : "none";
}

int gdr_live_expect(const struct gdr_live *l, int expect, char *why, size_t wlen)
{
	if (expect == GDR_EXPECT_DMABUF) {
		if (l->peermem < 0) {
			snprintf(why, wlen,
				 "--expect dmabuf: cannot decide: peer-memory use not known");
			return GDR_EXIT_UNDECIDED;
		}
		if (l->peermem) {
			snprintf(why, wlen, "--expect dmabuf: not met: peer memory is in use");
			return GDR_EXIT_FAIL;
		}
		return GDR_EXIT_OK;
	}
	if (expect == GDR_EXPECT_PEERMEM) {
		if (l->dmabuf < 0) {
			snprintf(why, wlen,
				 "--expect peermem: cannot decide: DMA-BUF use not known");
			return GDR_EXIT_UNDECIDED;
		}
		if (l->dmabuf) {
			snprintf(why, wlen, "--expect peermem: not met: DMA-BUF is in use");
			return GDR_EXIT_FAIL;
		}
		return GDR_EXIT_OK;
	}
	return GDR_EXIT_OK;
}
