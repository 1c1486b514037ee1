/*
 * gdr_doctor's verdict: per path (DMA-BUF, nvidia-peermem) and per side (the
 * GPU with its driver, the RDMA NIC), whether a failed check blocks it, a
 * passed one proves it, or nothing decided it (possible, not probed); every
 * blocker of every path, best path first.
 */
#include "config.h"

#include "doctor.h"
#include "text.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

const char *gdr_path_title(unsigned int path)
{
	return path == GDR_BLOCK_DMABUF ? "DMA-BUF" : "nvidia-peermem";
}

const char *gdr_path_key(unsigned int path)
{
	return path == GDR_BLOCK_DMABUF ? "dmabuf" : "peermem";
}

const char *gdr_path_state_name(enum gdr_path_state s)
{
	switch (s) {
	case GDR_STATE_READY:
		return "ready";
	case GDR_STATE_POSSIBLE:
		return "possible, not probed";
	case GDR_STATE_BLOCKED:
		return "blocked";
	case GDR_STATE_NOT_NEEDED:
		return "not needed";
	}
	return "?";
}

static const char *side_word(enum gdr_path_state s)
{
	return s == GDR_STATE_POSSIBLE ? "not probed" : gdr_path_state_name(s);
}

static int proving(const struct gdr_check *c, unsigned int path, enum gdr_check_side side)
{
	return (c->proves & path) && c->side == side &&
	       (c->status == GDR_CHECK_PASS || c->status == GDR_CHECK_WARN);
}

static struct gdr_check *find(struct gdr_doctor *doc, const char *name)
{
	for (unsigned int i = 0; i < doc->nchecks; i++)
		if (!strcmp(doc->checks[i].name, name))
			return &doc->checks[i];
	return NULL;
}

static enum gdr_path_state side_state(const struct gdr_doctor *doc, unsigned int path,
				      enum gdr_check_side side)
{
	int proved = 0;

	for (unsigned int i = 0; i < doc->nchecks; i++) {
		const struct gdr_check *c = &doc->checks[i];

		if ((c->blocks & path) && c->side == side)
			return GDR_STATE_BLOCKED;
		proved |= proving(c, path, side);
	}
	return proved ? GDR_STATE_READY : GDR_STATE_POSSIBLE;
}

/*
 * nvidia_peermem is the legacy path: where DMA-BUF works on the GPU side its
 * absence is no blocker (info), and loading both is a warning (the migration
 * guides: one or the other).
 */
void gdr_doctor_finish(struct gdr_doctor *doc)
{
	struct gdr_check *c = find(doc, "peermem");
	char was[sizeof(c->value)];
	enum gdr_path_state gpu, nic;
	int dmabuf_gpu, dmabuf_nic;

	if (!c)
		return;
	gpu = side_state(doc, GDR_BLOCK_DMABUF, GDR_SIDE_GPU);
	nic = side_state(doc, GDR_BLOCK_DMABUF, GDR_SIDE_NIC);
	dmabuf_gpu = gpu != GDR_STATE_BLOCKED;
	dmabuf_nic = nic != GDR_STATE_BLOCKED;
	gdr_strlcpy(was, c->value, sizeof(was));
	if (c->status == GDR_CHECK_FAIL && dmabuf_gpu) {
		c->status = GDR_CHECK_INFO;
		c->blocks = 0;
		c->brief[0] = '\0';
		gdr_check_value(c,
				"nvidia_peermem not loaded; not needed: DMA-BUF %s on the GPU side",
				gpu == GDR_STATE_READY ? "works" : "is possible (not probed)");
		c->fix[0] = '\0';
	} else if (c->status == GDR_CHECK_PASS && dmabuf_gpu && dmabuf_nic) {
		c->status = GDR_CHECK_WARN;
		gdr_check_value(c,
				"%s loaded although DMA-BUF %s: NCCL prefers DMA-BUF, other "
				"programs may take either, so the path in use is ambiguous",
				was,
				gpu == GDR_STATE_READY && nic == GDR_STATE_READY
				    ? "works"
				    : "is possible (not probed)");
		gdr_check_fix(c, "load one, not both: rmmod nvidia_peermem (GPU Operator: "
				 "driver.rdma.enabled=false) unless a program here needs it; "
				 "gdr_doctor --nccl-log shows which path NCCL took");
	}
}

/* "open module 580.159.04, kernel 6.18, CUDA 13.0" */
static void dmabuf_gpu_evidence(const struct gdr_doctor *doc, enum gdr_path_state st, char *buf,
				size_t len)
{
	size_t off = 0;
	int ma, mi;

	buf[0] = '\0';
	if (doc->driver_version[0])
		off += (size_t)snprintf(buf + off, len - off, "%s %s",
					doc->open_module ? "open module" : "driver",
					doc->driver_version);
	if (off < len && !gdr_kernel_version_parse(doc->kernel_release, &ma, &mi))
		off += (size_t)snprintf(buf + off, len - off, "%skernel %d.%d", off ? ", " : "", ma,
					mi);
	if (off < len && doc->cuda_version)
		off += (size_t)snprintf(buf + off, len - off, "%sCUDA %d.%d", off ? ", " : "",
					doc->cuda_version / 1000, doc->cuda_version % 1000 / 10);
	if (off < len && st == GDR_STATE_POSSIBLE)
		snprintf(buf + off, len - off, "%sDMA_BUF_SUPPORTED not read%s", off ? "; " : "",
			 doc->cuda_version ? "" : ": no CUDA driver");
}

static void evidence(const struct gdr_doctor *doc, struct gdr_path_verdict *p,
		     enum gdr_check_side side)
{
	char *buf = p->evidence[side];
	size_t len = sizeof(p->evidence[side]);

	if (p->path == GDR_BLOCK_DMABUF && side == GDR_SIDE_GPU) {
		dmabuf_gpu_evidence(doc, p->side[side], buf, len);
		return;
	}
	buf[0] = '\0';
	if (p->path == GDR_BLOCK_PEERMEM && side == GDR_SIDE_GPU && doc->peermem_loaded &&
	    p->side[side] == GDR_STATE_READY) {
		gdr_strlcpy(buf, "nvidia_peermem loaded", len);
		return;
	}
	if (p->side[side] == GDR_STATE_NOT_NEEDED) {
		gdr_strlcpy(buf, "nvidia_peermem not loaded; DMA-BUF is the path to use", len);
		return;
	}
	for (unsigned int i = 0; i < doc->nchecks; i++)
		if (proving(&doc->checks[i], p->path, side)) {
			gdr_fmt_short(buf, len, "%s: %s", doc->checks[i].name,
				      doc->checks[i].value);
			return;
		}
	if (p->side[side] != GDR_STATE_POSSIBLE)
		return;
	if (side == GDR_SIDE_NIC && p->path == GDR_BLOCK_DMABUF)
		snprintf(buf, len, "ibv_reg_dmabuf_mr not probed%s",
			 strcmp(doc->root, "/") ? ": --root" : "");
	else
		gdr_strlcpy(buf, "nothing probed it", len);
}

static void path_verdict(const struct gdr_doctor *doc, unsigned int path,
			 struct gdr_path_verdict *p)
{
	static const char *const side_title[] = { "GPU", "NIC" };
	const struct gdr_check *peermem = NULL;
	size_t off = 0, len = sizeof(p->line);
	int parts = 0;

	memset(p, 0, sizeof(*p));
	p->path = path;
	for (int s = GDR_SIDE_GPU; s <= GDR_SIDE_NIC; s++)
		p->side[s] = side_state(doc, path, (enum gdr_check_side)s);
	for (unsigned int i = 0; i < doc->nchecks; i++)
		if (!strcmp(doc->checks[i].name, "peermem"))
			peermem = &doc->checks[i];
	if (path == GDR_BLOCK_PEERMEM && peermem && peermem->status == GDR_CHECK_INFO &&
	    p->side[GDR_SIDE_GPU] != GDR_STATE_BLOCKED)
		p->side[GDR_SIDE_GPU] = GDR_STATE_NOT_NEEDED;
	/* Blockers, GPU side first, each in check order. */
	for (int s = GDR_SIDE_GPU; s <= GDR_SIDE_NIC; s++)
		for (unsigned int i = 0; i < doc->nchecks; i++)
			if ((doc->checks[i].blocks & path) && (int)doc->checks[i].side == s &&
			    p->nblockers < GDR_VERDICT_MAX_BLOCKERS)
				p->blocker[p->nblockers++] = i;
	if (p->nblockers)
		p->state = GDR_STATE_BLOCKED;
	else if (p->side[GDR_SIDE_GPU] == GDR_STATE_NOT_NEEDED)
		p->state = GDR_STATE_NOT_NEEDED;
	else if (p->side[GDR_SIDE_GPU] == GDR_STATE_READY &&
		 p->side[GDR_SIDE_NIC] == GDR_STATE_READY)
		p->state = GDR_STATE_READY;
	else
		p->state = GDR_STATE_POSSIBLE;
	for (int s = GDR_SIDE_GPU; s <= GDR_SIDE_NIC; s++)
		evidence(doc, p, (enum gdr_check_side)s);

	if (p->state == GDR_STATE_READY) {
		snprintf(p->line, len, "ready (GPU: %s; NIC: %s)", p->evidence[GDR_SIDE_GPU],
			 p->evidence[GDR_SIDE_NIC]);
		return;
	}
	if (p->state == GDR_STATE_POSSIBLE)
		off += (size_t)snprintf(p->line + off, len - off, "possible, not probed: ");
	for (int s = GDR_SIDE_GPU; s <= GDR_SIDE_NIC && off < len; s++) {
		if (p->side[s] == GDR_STATE_BLOCKED)
			continue;
		off += (size_t)snprintf(p->line + off, len - off, "%s%s side %s%s%s%s",
					parts++ ? "; " : "", side_title[s], side_word(p->side[s]),
					p->evidence[s][0] ? " (" : "", p->evidence[s],
					p->evidence[s][0] ? ")" : "");
	}
	for (unsigned int i = 0; i < p->nblockers && off < len; i++) {
		const struct gdr_check *c = &doc->checks[p->blocker[i]];

		off += (size_t)snprintf(p->line + off, len - off, "%s%s",
					i	? "; "
					: parts ? "; blocked: "
						: "blocked: ",
					c->brief[0] ? c->brief : c->value);
	}
}

static int rank(const struct gdr_path_verdict *p)
{
	int blocked_sides = (p->side[0] == GDR_STATE_BLOCKED) + (p->side[1] == GDR_STATE_BLOCKED);

	return (int)p->state * 4 + blocked_sides;
}

static int usable(const struct gdr_path_verdict *p)
{
	return p->state == GDR_STATE_READY || p->state == GDR_STATE_POSSIBLE;
}

void gdr_doctor_verdict(const struct gdr_doctor *doc, struct gdr_verdict *v)
{
	struct gdr_path_verdict *d, *pm;
	size_t off = 0;

	memset(v, 0, sizeof(*v));
	path_verdict(doc, GDR_BLOCK_DMABUF, &v->paths[0]);
	path_verdict(doc, GDR_BLOCK_PEERMEM, &v->paths[1]);
	if (rank(&v->paths[1]) < rank(&v->paths[0])) {
		struct gdr_path_verdict tmp = v->paths[0];

		v->paths[0] = v->paths[1];
		v->paths[1] = tmp;
	}
	d = v->paths[0].path == GDR_BLOCK_DMABUF ? &v->paths[0] : &v->paths[1];
	pm = d == &v->paths[0] ? &v->paths[1] : &v->paths[0];
	v->dmabuf = usable(d);
	v->peermem = usable(pm);
	if (strcmp(doc->root, "/"))
		snprintf(v->scope, sizeof(v->scope), "the tree below %s", doc->root);
	else
		gdr_strlcpy(v->scope, "this machine", sizeof(v->scope));

	if (d->state == GDR_STATE_READY && pm->state == GDR_STATE_READY) {
		gdr_strlcpy(v->text, "both (DMA-BUF preferred)", sizeof(v->text));
		return;
	}
	if (!v->dmabuf && pm->state == GDR_STATE_READY) {
		gdr_strlcpy(v->text, "nvidia-peermem only", sizeof(v->text));
		return;
	}
	for (unsigned int i = 0; i < GDR_ARRAY_SIZE(v->paths) && off < sizeof(v->text); i++) {
		const struct gdr_path_verdict *p = &v->paths[i];

		if (!usable(p))
			continue;
		off += (size_t)snprintf(v->text + off, sizeof(v->text) - off, "%s%s %s",
					off ? "; " : "", gdr_path_title(p->path),
					p->state == GDR_STATE_READY ? "available"
								    : "possible, not probed");
	}
	if (off)
		return;
	if (doc->nvidia_gpus == 0 && !doc->driver_version[0]) {
		gdr_strlcpy(v->text, "no GPUDirect RDMA: no NVIDIA GPU", sizeof(v->text));
		return;
	}
	if (v->paths[0].nblockers) {
		const struct gdr_check *c = &doc->checks[v->paths[0].blocker[0]];

		gdr_fmt_short(v->text, sizeof(v->text), "no GPUDirect RDMA: %s",
			      c->brief[0] ? c->brief : c->value);
		return;
	}
	gdr_strlcpy(v->text, "no GPUDirect RDMA", sizeof(v->text));
}
