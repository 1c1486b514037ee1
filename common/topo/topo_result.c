/* The topology columns of a result row, from one classified pair. */
#include "config.h"

#include <stdio.h>

#include "report.h"
#include "topo_int.h"
#include "util.h"

static void num(char *dst, size_t len, int v)
{
	if (v < 0)
		dst[0] = '\0';
	else
		gdr_topo_msg(dst, len, "%d", v);
}

void gdr_topo_fill_result(const struct gdr_topo_pair *p, struct gdr_result *r)
{
	num(r->gpu, sizeof(r->gpu), p->gpu_index);
	gdr_strlcpy(r->gpu_bus_id, p->gpu_bus_id, sizeof(r->gpu_bus_id));
	/* CUDA's name is better when the caller has one: fill only what is empty. */
	if (!r->gpu_name[0])
		gdr_strlcpy(r->gpu_name, p->gpu_name, sizeof(r->gpu_name));
	gdr_strlcpy(r->nic, p->nic, sizeof(r->nic));
	gdr_strlcpy(r->nic_bus_id, p->nic_bus_id, sizeof(r->nic_bus_id));
	gdr_strlcpy(r->distance, gdr_topo_class_name(p->cls), sizeof(r->distance));
	num(r->pcie_bridges, sizeof(r->pcie_bridges), p->bridges);
	num(r->gpu_numa, sizeof(r->gpu_numa), p->gpu_numa);
	num(r->nic_numa, sizeof(r->nic_numa), p->nic_numa);
}
