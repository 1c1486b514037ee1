/*
 * One GPU x NIC pair: the class with its details, the nearest partner, and
 * the line the benchmarks print before their table.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "topo_int.h"
#include "util.h"

static void unknown(struct gdr_topo_pair *p, const char *fmt, const char *arg)
{
	p->cls = GDR_TOPO_UNKNOWN;
	p->bridges = p->switches = p->host_bridges = -1;
	gdr_topo_msg(p->reason, sizeof(p->reason), fmt, arg);
}

/*
 * The pair once both ends are found: gi is the GPU's index or -1 (then gpci
 * is its PCI function, or NULL), ni the NIC's index or -1. Lookups by name
 * happen once in the callers, never per pair: with thousands of devices a
 * lookup per pair made the matrix cubic.
 */
static void pair_found(const struct gdr_topo *t, int gi, hwloc_obj_t gpci, int ni,
		       const char *nic_name, struct gdr_topo_pair *p)
{
	const struct gdr_topo_nic_int *nic = ni >= 0 ? &t->nics[ni] : NULL;
	struct gdr_topo_path path;

	if (gi >= 0) {
		const struct gdr_topo_gpu *g = &t->gpus[gi];

		p->gpu_index = g->index;
		gdr_strlcpy(p->gpu_name, g->name, sizeof(p->gpu_name));
		gpci = t->gpu_pci[gi];
		/* Read once at load, as gdr_topo_link and gdr_topo_io_numa would give them. */
		p->gpu_numa = g->numa;
		gdr_strlcpy(p->gpu_link, g->link, sizeof(p->gpu_link));
	} else if (gpci) {
		p->gpu_numa = gdr_topo_io_numa(gpci);
		gdr_topo_link(t, gpci, p->gpu_link, sizeof(p->gpu_link));
	}
	if (nic) {
		gdr_strlcpy(p->nic_bus_id, nic->pub.bus_id, sizeof(p->nic_bus_id));
		p->nic_numa = nic->pub.numa;
		gdr_strlcpy(p->nic_link, nic->pub.link, sizeof(p->nic_link));
	}
	if (!gpci) {
		unknown(p, "GPU %s is not in the topology", p->gpu_bus_id);
		return;
	}
	if (!nic) {
		unknown(p, "%s: no such RDMA device in the topology",
			nic_name ? nic_name : "(none)");
		return;
	}
	if (!nic->pci) {
		unknown(p, "%s", nic->pub.why);
		return;
	}
	if (nic->pci == gpci) {
		unknown(p, "%s is the GPU's own PCI function", nic->pub.name);
		return;
	}
	gdr_topo_classify(gpci, nic->pci, &path);
	p->cls = path.cls;
	p->bridges = path.bridges;
	p->switches = path.switches;
	p->host_bridges = path.host_bridges;
	gdr_strlcpy(p->reason, path.reason, sizeof(p->reason));
}

static void pair_init(struct gdr_topo_pair *p)
{
	memset(p, 0, sizeof(*p));
	p->gpu_index = -1;
	p->gpu_numa = p->nic_numa = -1;
}

/* The GPU at a normalised bus id: its index, or -1 and its PCI function if any. */
static int gpu_lookup(const struct gdr_topo *t, const char *bus, hwloc_obj_t *gpci)
{
	unsigned int dom, b, dev, fn;
	int gi = gdr_topo_gpu_index(t, bus);

	*gpci = NULL;
	/* Not a GPU by our rules, but the caller knows better (CUDA said so). */
	if (gi < 0 && sscanf(bus, "%x:%x:%x.%x", &dom, &b, &dev, &fn) == 4)
		*gpci = hwloc_get_pcidev_by_busid(t->topo, dom, b, dev, fn);
	return gi;
}

int gdr_topo_pair(const struct gdr_topo *t, const char *gpu_bus_id, const char *nic_name,
		  struct gdr_topo_pair *p)
{
	hwloc_obj_t gpci;
	int gi;

	pair_init(p);
	if (gdr_topo_busid_norm(gpu_bus_id, p->gpu_bus_id, sizeof(p->gpu_bus_id)))
		return -EINVAL;
	gdr_strlcpy(p->nic, nic_name, sizeof(p->nic));
	gi = gpu_lookup(t, p->gpu_bus_id, &gpci);
	pair_found(t, gi, gpci, gdr_topo_nic_index(t, nic_name), nic_name, p);
	return 0;
}

int gdr_topo_pair_idx(const struct gdr_topo *t, int gi, int ni, struct gdr_topo_pair *p)
{
	pair_init(p);
	if (gi < 0 || gi >= t->ngpu || ni < 0 || ni >= t->nnic)
		return -EINVAL;
	gdr_strlcpy(p->gpu_bus_id, t->gpus[gi].bus_id, sizeof(p->gpu_bus_id));
	gdr_strlcpy(p->nic, t->nics[ni].pub.name, sizeof(p->nic));
	pair_found(t, gi, NULL, ni, t->nics[ni].pub.name, p);
	return 0;
}

int gdr_topo_nearest_nic(const struct gdr_topo *t, const char *gpu_bus_id, gdr_topo_nic_ok_fn ok,
			 void *arg, struct gdr_topo_pair *out)
{
	struct gdr_topo_pair p;
	char bus[GDR_BUSID_LEN];
	hwloc_obj_t gpci;
	int i, gi, found = 0;

	if (gdr_topo_busid_norm(gpu_bus_id, bus, sizeof(bus)))
		return -EINVAL;
	gi = gpu_lookup(t, bus, &gpci);
	for (i = 0; i < t->nnic; i++) {
		if (ok && !ok(t->nics[i].pub.name, arg))
			continue;
		pair_init(&p);
		gdr_strlcpy(p.gpu_bus_id, bus, sizeof(p.gpu_bus_id));
		gdr_strlcpy(p.nic, t->nics[i].pub.name, sizeof(p.nic));
		pair_found(t, gi, gpci, i, p.nic, &p);
		/* NICs are in name order, so keeping the first of a class breaks ties by name. */
		if (!found || p.cls < out->cls)
			*out = p;
		found = 1;
	}
	return found ? 0 : -ENOENT;
}

int gdr_topo_nearest_gpu(const struct gdr_topo *t, const char *nic_name, struct gdr_topo_pair *out)
{
	struct gdr_topo_pair p;
	int i, ni = gdr_topo_nic_index(t, nic_name);

	for (i = 0; i < t->ngpu; i++) {
		pair_init(&p);
		gdr_strlcpy(p.gpu_bus_id, t->gpus[i].bus_id, sizeof(p.gpu_bus_id));
		gdr_strlcpy(p.nic, nic_name, sizeof(p.nic));
		pair_found(t, i, NULL, ni, nic_name, &p);
		if (i == 0 || p.cls < out->cls)
			*out = p;
	}
	return t->ngpu ? 0 : -ENOENT;
}

const char *gdr_topo_numa_text(int n, char *buf, size_t len)
{
	if (n < 0)
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%d", n);
	return buf;
}

const char *gdr_topo_describe(const struct gdr_topo_pair *p, const struct gdr_nccl_env *env,
			      char *buf, size_t len)
{
	char gpu[160], dist[640], verdict[160], na[12], nb[12];

	if (p->gpu_index >= 0)
		snprintf(gpu, sizeof(gpu), "GPU%d %s (%s)", p->gpu_index, p->gpu_name,
			 p->gpu_bus_id);
	else
		snprintf(gpu, sizeof(gpu), "GPU (%s)", p->gpu_bus_id);
	if (p->cls == GDR_TOPO_UNKNOWN)
		snprintf(dist, sizeof(dist), "unknown (%s)", p->reason);
	else
		snprintf(dist, sizeof(dist), "%s, %d switch%s, %d bridge%s, NUMA %s/%s",
			 gdr_topo_class_name(p->cls), p->switches, p->switches == 1 ? "" : "es",
			 p->bridges, p->bridges == 1 ? "" : "s",
			 gdr_topo_numa_text(p->gpu_numa, na, sizeof(na)),
			 gdr_topo_numa_text(p->nic_numa, nb, sizeof(nb)));
	snprintf(buf, len, "topology: %s <-> %s (%s): %s; %s", gpu, p->nic,
		 p->nic_bus_id[0] ? p->nic_bus_id : "not PCI", dist,
		 gdr_nccl_verdict(env, p->cls, verdict, sizeof(verdict)));
	return buf;
}

int gdr_topo_pair_assumed(const struct gdr_topo_pair *p)
{
	return p->cls == GDR_TOPO_SYS && p->reason[0];
}

const char *gdr_topo_gpu_ranges(const int *idx, int n, char *buf, size_t len)
{
	size_t off = 0;
	int i, k, runs = 0;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < n && off < len; i = k + 1) {
		for (k = i; k + 1 < n && idx[k + 1] == idx[k] + 1; k++)
			;
		if (k > i)
			off += snprintf(buf + off, len - off, "%sGPU%d-%d", runs ? ", " : "", idx[i],
					idx[k]);
		else
			off += snprintf(buf + off, len - off, "%sGPU%d", runs ? ", " : "", idx[i]);
		runs++;
	}
	return buf;
}
