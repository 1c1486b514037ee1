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

static const struct gdr_topo_nic_int *nic_int(const struct gdr_topo *t, const char *name)
{
	int i;

	for (i = 0; name && i < t->nnic; i++)
		if (!strcmp(t->nics[i].pub.name, name))
			return &t->nics[i];
	return NULL;
}

static void unknown(struct gdr_topo_pair *p, const char *fmt, const char *arg)
{
	p->cls = GDR_TOPO_UNKNOWN;
	p->bridges = p->switches = p->host_bridges = -1;
	snprintf(p->reason, sizeof(p->reason), fmt, arg);
}

int gdr_topo_pair(const struct gdr_topo *t, const char *gpu_bus_id, const char *nic_name,
		  struct gdr_topo_pair *p)
{
	const struct gdr_topo_nic_int *nic = nic_int(t, nic_name);
	const struct gdr_topo_gpu *g;
	struct gdr_topo_path path;
	hwloc_obj_t gpci = NULL;
	unsigned int dom, bus, dev, fn;

	memset(p, 0, sizeof(*p));
	p->gpu_index = -1;
	p->gpu_numa = p->nic_numa = -1;
	if (gdr_topo_busid_norm(gpu_bus_id, p->gpu_bus_id, sizeof(p->gpu_bus_id)))
		return -EINVAL;
	gdr_strlcpy(p->nic, nic_name, sizeof(p->nic));
	g = gdr_topo_find_gpu(t, p->gpu_bus_id);
	if (g) {
		p->gpu_index = g->index;
		gdr_strlcpy(p->gpu_name, g->name, sizeof(p->gpu_name));
		gpci = t->gpu_pci[g->index];
	} else {
		/* Not a GPU by our rules, but the caller knows better (CUDA said so). */
		sscanf(p->gpu_bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn);
		gpci = hwloc_get_pcidev_by_busid(t->topo, dom, bus, dev, fn);
	}
	if (gpci) {
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
		return 0;
	}
	if (!nic) {
		unknown(p, "%s: no such RDMA device in the topology",
			nic_name ? nic_name : "(none)");
		return 0;
	}
	if (!nic->pci) {
		unknown(p, "%s", nic->pub.why);
		return 0;
	}
	if (nic->pci == gpci) {
		unknown(p, "%s is the GPU's own PCI function", nic_name);
		return 0;
	}
	gdr_topo_classify(gpci, nic->pci, &path);
	p->cls = path.cls;
	p->bridges = path.bridges;
	p->switches = path.switches;
	p->host_bridges = path.host_bridges;
	gdr_strlcpy(p->reason, path.reason, sizeof(p->reason));
	return 0;
}

int gdr_topo_nearest_nic(const struct gdr_topo *t, const char *gpu_bus_id, gdr_topo_nic_ok_fn ok,
			 void *arg, struct gdr_topo_pair *out)
{
	struct gdr_topo_pair p;
	int i, found = 0, err;

	for (i = 0; i < t->nnic; i++) {
		if (ok && !ok(t->nics[i].pub.name, arg))
			continue;
		err = gdr_topo_pair(t, gpu_bus_id, t->nics[i].pub.name, &p);
		if (err)
			return err;
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
	int i;

	for (i = 0; i < t->ngpu; i++) {
		gdr_topo_pair(t, t->gpus[i].bus_id, nic_name, &p);
		if (i == 0 || p.cls < out->cls)
			*out = p;
	}
	return t->ngpu ? 0 : -ENOENT;
}

static const char *numa_str(int n, char *buf, size_t len)
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
	char gpu[160], dist[256], verdict[160], na[12], nb[12];

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
			 numa_str(p->gpu_numa, na, sizeof(na)),
			 numa_str(p->nic_numa, nb, sizeof(nb)));
	snprintf(buf, len, "topology: %s <-> %s (%s): %s; %s", gpu, p->nic,
		 p->nic_bus_id[0] ? p->nic_bus_id : "not PCI", dist,
		 gdr_nccl_verdict(env, p->cls, verdict, sizeof(verdict)));
	return buf;
}
