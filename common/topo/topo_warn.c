/*
 * Warnings an operator needs before trusting GPUDirect numbers: a GPU whose
 * nearest NIC is across NUMA nodes, GPUs that must share a NIC, and NICs no
 * GPU is close to.
 *
 * "Must share" is decided by a maximum matching of GPUs to the NICs in their
 * nearest set, so that two GPUs each with two equally near NICs do not warn,
 * while DGX-2's two GPUs below one switch with one NIC do.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo_report.h"
#include "util.h"

struct warn_ctx {
	const struct gdr_topo *t;
	int ngpu, nnic;
	enum gdr_topo_class *cls;  /* [gpu * nnic + nic] */
	enum gdr_topo_class *best; /* [gpu]: class of the nearest NIC */
	int *nic_of;		   /* [gpu]: matched NIC or -1 */
	int *gpu_of;		   /* [nic]: matched GPU or -1 */
	char *seen;		   /* [nic] during one augmenting search */
	char *assumed;		   /* [gpu]: its nearest class is assumed */
};

static int near(const struct warn_ctx *c, int g, int n)
{
	return c->best[g] != GDR_TOPO_UNKNOWN && c->cls[g * c->nnic + n] == c->best[g];
}

/* Kuhn's augmenting path: can GPU g get a NIC of its own? */
static int augment(struct warn_ctx *c, int g)
{
	int n;

	for (n = 0; n < c->nnic; n++) {
		if (!near(c, g, n) || c->seen[n])
			continue;
		c->seen[n] = 1;
		if (c->gpu_of[n] < 0 || augment(c, c->gpu_of[n])) {
			c->gpu_of[n] = g;
			c->nic_of[g] = n;
			return 1;
		}
	}
	return 0;
}

/* Add one message to w; -ENOMEM. */
static int add(struct gdr_topo_warnings *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int add(struct gdr_topo_warnings *w, const char *fmt, ...)
{
	char **m = realloc(w->msg, (w->n + 1) * sizeof(*m));
	va_list ap;
	int len;

	if (!m)
		return -ENOMEM;
	w->msg = m;
	va_start(ap, fmt);
	len = vasprintf(&m[w->n], fmt, ap);
	va_end(ap);
	if (len < 0)
		return -ENOMEM;
	w->n++;
	return 0;
}

/* GPUs whose nearest NIC is SYS (or unknown): one line for all of them. */
static int warn_sys(const struct warn_ctx *c, struct gdr_topo_warnings *w, int *idx)
{
	char list[512];
	int g, n = 0, assumed = 0, err = 0;

	for (g = 0; g < c->ngpu; g++)
		if (c->best[g] == GDR_TOPO_SYS) {
			idx[n++] = g;
			assumed |= c->assumed[g];
		}
	if (n == 1)
		err = add(w, "GPU%d (%s): its nearest NIC is SYS%s: RDMA to and from it crosses "
			     "the interconnect between NUMA nodes",
			  idx[0], gdr_topo_gpu(c->t, idx[0])->bus_id,
			  assumed ? " (assumed: NUMA node unknown)" : "");
	else if (n > 1) {
		gdr_topo_gpu_ranges(idx, n, list, sizeof(list));
		err = add(w, "%s: their nearest NIC is SYS%s: RDMA to and from them crosses the "
			     "interconnect between NUMA nodes",
			  list, assumed ? " (assumed: NUMA node unknown)" : "");
	}
	for (g = 0, n = 0; g < c->ngpu && !err; g++)
		if (c->best[g] == GDR_TOPO_UNKNOWN)
			idx[n++] = g;
	if (n && !err) {
		gdr_topo_gpu_ranges(idx, n, list, sizeof(list));
		err = add(w, "%s: no NIC on PCI in this topology: distance unknown", list);
	}
	return err;
}

/*
 * GPUs that must share their nearest NIC. Several such groups of the same
 * size are a layout (DGX-2: two GPUs below each NIC's switch), said once.
 */
static int warn_shared(const struct warn_ctx *c, struct gdr_topo_warnings *w, const int *user,
		       int *idx)
{
	char list[512], all[2048] = "";
	size_t off = 0;
	int g, n, k, groups = 0, size = -1, same = 1, err = 0, first = -1;

	for (n = 0; n < c->nnic; n++) {
		for (g = 0, k = 0; g < c->ngpu; g++)
			if (user[g] == n)
				idx[k++] = g;
		if (k < 2)
			continue;
		if (size >= 0 && k != size)
			same = 0;
		size = k;
		if (first < 0)
			first = n;
		groups++;
		gdr_topo_gpu_ranges(idx, k, list, sizeof(list));
		if (off < sizeof(all))
			off += snprintf(all + off, sizeof(all) - off, "%s%s %s", off ? ", " : "", list,
					gdr_topo_nic(c->t, n)->name);
	}
	if (groups == 1) {
		for (g = 0, k = 0; g < c->ngpu; g++)
			if (user[g] == first)
				idx[k++] = g;
		gdr_topo_gpu_ranges(idx, k, list, sizeof(list));
		err = add(w, "%s share %s as their nearest NIC: there are not enough NICs as near "
			     "for each of them to have its own",
			  list, gdr_topo_nic(c->t, first)->name);
	} else if (groups > 1 && same) {
		err = add(w, "%d GPUs share each nearest NIC (%s): a layout of %d GPUs per NIC, as "
			     "on a DGX-2; GPUs that share a NIC split its bandwidth when both use it",
			  size, all, size);
	} else if (groups > 1) {
		err = add(w, "GPUs share nearest NICs (%s): GPUs that share a NIC split its "
			     "bandwidth when both use it",
			  all);
	}
	return err;
}

/* NICs with no GPU at PIX or PXB: one line for all of them. */
static int warn_lonely(const struct warn_ctx *c, struct gdr_topo_warnings *w)
{
	char names[1024] = "", nearest[1024] = "";
	size_t on = 0, od = 0;
	int g, n, count = 0, last = -1, last_bg = -1;
	enum gdr_topo_class last_best = GDR_TOPO_UNKNOWN;

	for (n = 0; n < c->nnic; n++) {
		enum gdr_topo_class best = GDR_TOPO_UNKNOWN;
		int bg = -1;

		for (g = 0; g < c->ngpu; g++)
			if (bg < 0 || c->cls[g * c->nnic + n] < best) {
				best = c->cls[g * c->nnic + n];
				bg = g;
			}
		if (best <= GDR_TOPO_PXB)
			continue;
		count++;
		last = n;
		last_bg = bg;
		last_best = best;
		if (on < sizeof(names))
			on += snprintf(names + on, sizeof(names) - on, "%s%s", on ? ", " : "",
				       gdr_topo_nic(c->t, n)->name);
		if (od >= sizeof(nearest))
			continue;
		if (best == GDR_TOPO_UNKNOWN)
			od += snprintf(nearest + od, sizeof(nearest) - od, "%sunknown", od ? ", " : "");
		else
			od += snprintf(nearest + od, sizeof(nearest) - od, "%sGPU%d %s", od ? ", " : "",
				       bg, gdr_topo_class_name(best));
	}
	if (count > 1)
		return add(w, "%s: no GPU at PIX or PXB (nearest: %s)", names, nearest);
	if (count == 1) {
		const struct gdr_topo_nic *nic = gdr_topo_nic(c->t, last);

		if (last_best == GDR_TOPO_UNKNOWN)
			return add(w, "%s (%s): no GPU at PIX or PXB: distance unknown", nic->name,
				   nic->bus_id[0] ? nic->bus_id : "not PCI");
		return add(w, "%s (%s): no GPU at PIX or PXB (nearest: GPU%d, %s)", nic->name,
			   nic->bus_id, last_bg, gdr_topo_class_name(last_best));
	}
	return 0;
}

/* "0001:00:00.0" -> domain 1, bus 0; -1 when not a bus id. */
static int domain_of(const char *bus_id, int *bus)
{
	unsigned int d, b, dev, fn;

	if (sscanf(bus_id, "%x:%x:%x.%x", &d, &b, &dev, &fn) != 4)
		return -1;
	*bus = (int)b;
	return (int)d;
}

/*
 * A virtual PCI tree: every GPU and NIC alone in a PCI domain of its own, on
 * bus 0, as Hyper-V presents devices to a VM (Azure NDv2). The classes then
 * describe the VM's tree, not the host's PCIe switches.
 */
static int warn_virtual(const struct warn_ctx *c, struct gdr_topo_warnings *w)
{
	int n = c->ngpu + c->nnic, i, j, bus, *dom = calloc(n, sizeof(*dom)), err = 0;

	if (!dom)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *id = i < c->ngpu ? gdr_topo_gpu(c->t, i)->bus_id
					     : gdr_topo_nic(c->t, i - c->ngpu)->bus_id;

		dom[i] = domain_of(id, &bus);
		if (dom[i] <= 0 || bus)
			goto out_free;
		for (j = 0; j < i; j++)
			if (dom[j] == dom[i])
				goto out_free;
	}
	err = add(w, "virtual PCI tree: each GPU and NIC is alone in a PCI domain of its "
			     "own, as a Hyper-V VM (Azure NDv2) shows them; the classes are the "
			     "VM's view, not the host's PCIe layout: NCCL needs the provider's "
			     "topology file (NCCL_TOPO_FILE)");
out_free:
	free(dom);
	return err;
}

int gdr_topo_warnings(const struct gdr_topo *t, struct gdr_topo_warnings *w)
{
	struct warn_ctx c = { .t = t,
			      .ngpu = gdr_topo_gpu_count(t),
			      .nnic = gdr_topo_nic_count(t) };
	struct gdr_topo_pair p;
	int *user = NULL, *idx = NULL, g, n, err = 0;

	memset(w, 0, sizeof(*w));
	if (!c.ngpu || !c.nnic)
		return 0;
	c.cls = calloc((size_t)c.ngpu * c.nnic, sizeof(*c.cls));
	c.best = calloc(c.ngpu, sizeof(*c.best));
	c.nic_of = calloc(c.ngpu, sizeof(*c.nic_of));
	user = calloc(c.ngpu, sizeof(*user));
	c.gpu_of = calloc(c.nnic, sizeof(*c.gpu_of));
	c.seen = calloc(c.nnic, 1);
	c.assumed = calloc(c.ngpu, 1);
	idx = calloc(c.ngpu, sizeof(*idx));
	if (!c.cls || !c.best || !c.nic_of || !user || !c.gpu_of || !c.seen || !c.assumed || !idx) {
		err = -ENOMEM;
		goto free_all;
	}
	for (g = 0; g < c.ngpu; g++) {
		c.best[g] = GDR_TOPO_UNKNOWN;
		c.nic_of[g] = -1;
		for (n = 0; n < c.nnic; n++) {
			gdr_topo_pair_idx(t, g, n, &p);
			c.cls[g * c.nnic + n] = p.cls;
			if (p.cls < c.best[g]) {
				c.best[g] = p.cls;
				c.assumed[g] = gdr_topo_pair_assumed(&p);
			}
		}
	}
	for (n = 0; n < c.nnic; n++)
		c.gpu_of[n] = -1;
	/*
	 * A greedy pass first: most GPUs get a free near NIC at once. Then Kuhn's
	 * search for the rest, where seen[] is cleared only after a search that
	 * changed the matching: NICs a failed search reached cannot lead to a free
	 * NIC until it changes, so failures cost one pass over the graph in all
	 * instead of one each (thousands of GPUs sharing a few NICs).
	 */
	for (g = 0; g < c.ngpu; g++)
		for (n = 0; n < c.nnic && c.nic_of[g] < 0; n++)
			if (near(&c, g, n) && c.gpu_of[n] < 0) {
				c.gpu_of[n] = g;
				c.nic_of[g] = n;
			}
	memset(c.seen, 0, c.nnic);
	for (g = 0; g < c.ngpu; g++)
		if (c.nic_of[g] < 0 && augment(&c, g))
			memset(c.seen, 0, c.nnic);
	/* A GPU left without a NIC of its own falls back on its first nearest NIC by name. */
	for (g = 0; g < c.ngpu; g++) {
		user[g] = c.nic_of[g];
		for (n = 0; user[g] < 0 && n < c.nnic; n++)
			if (near(&c, g, n))
				user[g] = n;
	}
	err = warn_virtual(&c, w);
	if (!err)
		err = warn_sys(&c, w, idx);
	if (!err)
		err = warn_shared(&c, w, user, idx);
	if (!err)
		err = warn_lonely(&c, w);
free_all:
	if (err)
		gdr_topo_warnings_free(w);
	free(idx);
	free(c.assumed);
	free(c.seen);
	free(c.gpu_of);
	free(user);
	free(c.nic_of);
	free(c.best);
	free(c.cls);
	return err;
}

void gdr_topo_warnings_free(struct gdr_topo_warnings *w)
{
	for (int i = 0; i < w->n; i++)
		free(w->msg[i]);
	free(w->msg);
	memset(w, 0, sizeof(*w));
}

int gdr_topo_warn(const struct gdr_topo *t)
{
	struct gdr_topo_warnings w;
	char head[128];
	int err = gdr_topo_warnings(t, &w);

	if (err) {
		gdr_err("topology warnings: %s", strerror(-err));
		return err;
	}
	/* Wrapped under the message's first column, like every text report here. */
	snprintf(head, sizeof(head), "%s: warning: ", gdr_progname());
	fflush(stdout);
	for (int i = 0; i < w.n; i++)
		gdr_topo_wrap(stderr, head, w.msg[i], strlen(head));
	err = w.n;
	gdr_topo_warnings_free(&w);
	return err;
}
