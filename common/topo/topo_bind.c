/* Binding the process to the NIC's NUMA node, so host buffers and the polling CPU sit near it. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "topo_int.h"

int gdr_topo_bind_numa(const struct gdr_topo *t, int numa_node, char *why, size_t wlen)
{
	hwloc_obj_t node;

	if (!hwloc_topology_is_thissystem(t->topo)) {
		snprintf(why, wlen,
			 "NUMA %d: the topology comes from %s, not this system: not binding",
			 numa_node, t->xml ? t->xml : "elsewhere");
		return -EINVAL;
	}
	node = numa_node < 0 ? NULL : hwloc_get_numanode_obj_by_os_index(t->topo, numa_node);
	if (!node) {
		snprintf(why, wlen, "NUMA %d: no such NUMA node", numa_node);
		return -ENOENT;
	}
	if (hwloc_set_cpubind(t->topo, node->cpuset, HWLOC_CPUBIND_PROCESS) < 0) {
		int e = errno;
		snprintf(why, wlen, "NUMA %d: hwloc_set_cpubind: %s", numa_node, strerror(e));
		return -e;
	}
	if (hwloc_set_membind(t->topo, node->nodeset, HWLOC_MEMBIND_BIND,
			      HWLOC_MEMBIND_PROCESS | HWLOC_MEMBIND_BYNODESET) < 0) {
		int e = errno;
		snprintf(why, wlen,
			 "NUMA %d: hwloc_set_membind: %s (CPUs are bound, memory is not)",
			 numa_node, strerror(e));
		return -e;
	}
	return 0;
}
