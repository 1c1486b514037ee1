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

static int warn_sys(const struct warn_ctx *c, int g)
{
	const struct gdr_topo_gpu *gpu = gdr_topo_gpu(c->t, g);

	if (c->best[g] < GDR_TOPO_SYS)
		return 0;
	if (c->best[g] == GDR_TOPO_SYS)
		gdr_warn("GPU%d (%s): its nearest NIC is SYS: RDMA to and from it crosses the "
			 "interconnect between NUMA nodes",
			 g, gpu->bus_id);
	else
		gdr_warn("GPU%d (%s): no NIC on PCI in this topology: distance unknown", g,
			 gpu->bus_id);
	return 1;
}

static int warn_shared(const struct warn_ctx *c, int n, const int *user)
{
	char list[512] = "";
	size_t off = 0;
	int g, k = 0;

	for (g = 0; g < c->ngpu; g++) {
		if (user[g] != n)
			continue;
		off += snprintf(list + off, off < sizeof(list) ? sizeof(list) - off : 0, "%sGPU%d",
				k++ ? ", " : "", g);
		if (off >= sizeof(list))
			off = sizeof(list) - 1;
	}
	if (k < 2)
		return 0;
	gdr_warn("%s share %s as their nearest NIC: there are not enough NICs as near for "
		 "each of them to have its own",
		 list, gdr_topo_nic(c->t, n)->name);
	return 1;
}

static int warn_lonely(const struct warn_ctx *c, int n)
{
	const struct gdr_topo_nic *nic = gdr_topo_nic(c->t, n);
	enum gdr_topo_class best = GDR_TOPO_UNKNOWN;
	int g, bg = -1;

	for (g = 0; g < c->ngpu; g++)
		if (bg < 0 || c->cls[g * c->nnic + n] < best) {
			best = c->cls[g * c->nnic + n];
			bg = g;
		}
	if (best <= GDR_TOPO_PXB)
		return 0;
	if (best == GDR_TOPO_UNKNOWN)
		gdr_warn("%s (%s): no GPU at PIX or PXB: distance unknown", nic->name,
			 nic->bus_id[0] ? nic->bus_id : "not PCI");
	else
		gdr_warn("%s (%s): no GPU at PIX or PXB (nearest: GPU%d, %s)", nic->name,
			 nic->bus_id, bg, gdr_topo_class_name(best));
	return 1;
}

int gdr_topo_warn(const struct gdr_topo *t)
{
	struct warn_ctx c = { .t = t,
			      .ngpu = gdr_topo_gpu_count(t),
			      .nnic = gdr_topo_nic_count(t) };
	struct gdr_topo_pair p;
	int *user = NULL, g, n, count = 0;

	if (!c.ngpu || !c.nnic)
		return 0;
	c.cls = calloc((size_t)c.ngpu * c.nnic, sizeof(*c.cls));
	c.best = calloc(c.ngpu, sizeof(*c.best));
	c.nic_of = calloc(c.ngpu, sizeof(*c.nic_of));
	user = calloc(c.ngpu, sizeof(*user));
	c.gpu_of = calloc(c.nnic, sizeof(*c.gpu_of));
	c.seen = calloc(c.nnic, 1);
	if (!c.cls || !c.best || !c.nic_of || !user || !c.gpu_of || !c.seen) {
		gdr_err("topology warnings: %s", strerror(ENOMEM));
		count = -ENOMEM;
		goto free_all;
	}
	for (g = 0; g < c.ngpu; g++) {
		c.best[g] = GDR_TOPO_UNKNOWN;
		c.nic_of[g] = -1;
		for (n = 0; n < c.nnic; n++) {
			gdr_topo_pair_idx(t, g, n, &p);
			c.cls[g * c.nnic + n] = p.cls;
			if (p.cls < c.best[g])
				c.best[g] = p.cls;
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
	for (g = 0; g < c.ngpu; g++)
		count += warn_sys(&c, g);
	for (n = 0; n < c.nnic; n++)
		count += warn_shared(&c, n, user);
	for (n = 0; n < c.nnic; n++)
		count += warn_lonely(&c, n);
free_all:
	free(c.seen);
	free(c.gpu_of);
	free(user);
	free(c.nic_of);
	free(c.best);
	free(c.cls);
	return count;
}
