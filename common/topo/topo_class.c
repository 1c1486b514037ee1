/*
 * The GPU-NIC distance in nvidia-smi's legend, from two hwloc PCI objects.
 *
 * hwloc_get_common_ancestor_obj() compares depths, which I/O objects do not
 * have in the normal sense, so both parent chains are walked here. hwloc shows
 * a PCIe switch as an upstream-port bridge whose children are downstream-port
 * bridges; nvidia-smi counts the switch once, so bridges are grouped into
 * switches before counting. hwloc exports no port type, so the role of a
 * bridge comes from its place: a bridge right under a host bridge is a root
 * port, a bridge under a root port or a downstream port is the upstream port
 * of a switch, and a bridge under an upstream port is one of its downstream
 * ports. A bridge in the upstream place without bridges below it is a plain
 * bridge (PCIe-to-PCI): it groups like a switch but is not counted as one.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "topo_int.h"

#define CHAIN_MAX 64

enum port_role { ROLE_ROOT_PORT, ROLE_UPSTREAM, ROLE_DOWNSTREAM };

static int is_host_bridge(hwloc_obj_t o)
{
	return o->type == HWLOC_OBJ_BRIDGE &&
	       o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST;
}

static int is_pci_bridge(hwloc_obj_t o)
{
	return o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

static enum port_role role_of(hwloc_obj_t br)
{
	hwloc_obj_t p = br->parent;

	if (!p || !is_pci_bridge(p))
		return ROLE_ROOT_PORT;
	return role_of(p) == ROLE_UPSTREAM ? ROLE_DOWNSTREAM : ROLE_UPSTREAM;
}

/* The object standing for the switch (its upstream port) or the lone root port. */
static hwloc_obj_t group_of(hwloc_obj_t br)
{
	return role_of(br) == ROLE_DOWNSTREAM ? br->parent : br;
}

/* A switch shows its downstream ports as bridge children; a plain bridge has devices. */
static int is_switch(hwloc_obj_t upstream)
{
	hwloc_obj_t c;

	if (role_of(upstream) != ROLE_UPSTREAM)
		return 0;
	for (c = upstream->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_BRIDGE)
			return 1;
	return 0;
}

static int chain(hwloc_obj_t o, hwloc_obj_t *out)
{
	int n = 0;

	for (o = o->parent; o && n < CHAIN_MAX; o = o->parent)
		out[n++] = o;
	return n;
}

int gdr_topo_io_numa(hwloc_obj_t io)
{
	hwloc_obj_t o = io;

	while (o && (hwloc_obj_type_is_io(o->type) || o->type == HWLOC_OBJ_MISC))
		o = o->parent;
	if (!o || !o->nodeset || hwloc_bitmap_weight(o->nodeset) != 1)
		return -1;
	return hwloc_bitmap_first(o->nodeset);
}

void gdr_topo_msg(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	/* A message cut at the buffer's end says so, never a silently shorter cause. */
	if (n >= 0 && (size_t)n >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
}

void gdr_topo_obj_busid(hwloc_obj_t pci, char *out, size_t len)
{
	snprintf(out, len, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
		 pci->attr->pcidev.dev, pci->attr->pcidev.func);
}

/* Add br's switch to groups[] unless there; count bridges and switches. */
static void count_bridge(hwloc_obj_t br, hwloc_obj_t *groups, int *ngroups, struct gdr_topo_path *p)
{
	hwloc_obj_t g;
	int i;

	if (is_host_bridge(br)) {
		p->host_bridges++;
		return;
	}
	if (!is_pci_bridge(br))
		return;
	p->bridges++;
	g = group_of(br);
	for (i = 0; i < *ngroups; i++)
		if (groups[i] == g)
			return;
	groups[(*ngroups)++] = g;
	p->switches += is_switch(g);
}

/* The lowest object in both chains, and its position in each. */
static hwloc_obj_t meeting_point(hwloc_obj_t *ca, int na, hwloc_obj_t *cb, int nb, int *ia, int *ib)
{
	int i, j;

	for (j = 0; j < nb; j++)
		for (i = 0; i < na; i++)
			if (ca[i] == cb[j]) {
				*ia = i;
				*ib = j;
				return ca[i];
			}
	return NULL;
}

void gdr_topo_classify(hwloc_obj_t a, hwloc_obj_t b, struct gdr_topo_path *p)
{
	hwloc_obj_t ca[CHAIN_MAX], cb[CHAIN_MAX], groups[2 * CHAIN_MAX];
	int na = chain(a, ca), nb = chain(b, cb), ngroups = 0;
	int ia, ib, i;
	hwloc_obj_t lca;
	char bus[GDR_BUSID_LEN];

	memset(p, 0, sizeof(*p));
	p->numa_a = gdr_topo_io_numa(a);
	p->numa_b = gdr_topo_io_numa(b);
	lca = meeting_point(ca, na, cb, nb, &ia, &ib);
	if (!lca) {
		/* Two trees: only possible in a broken topology. */
		p->cls = GDR_TOPO_UNKNOWN;
		snprintf(p->reason, sizeof(p->reason), "no common ancestor in the topology");
		p->bridges = p->switches = p->host_bridges = -1;
		return;
	}

	/* Everything strictly below the meeting point, on both sides... */
	for (i = 0; i < ia; i++)
		count_bridge(ca[i], groups, &ngroups, p);
	for (i = 0; i < ib; i++)
		count_bridge(cb[i], groups, &ngroups, p);
	/* ...and the meeting point itself when it is a bridge the traffic turns in. */
	count_bridge(lca, groups, &ngroups, p);

	if (is_pci_bridge(lca)) {
		p->cls = ngroups <= 1 ? GDR_TOPO_PIX : GDR_TOPO_PXB;
		return;
	}
	if (is_host_bridge(lca)) {
		p->cls = GDR_TOPO_PHB;
		return;
	}
	if (hwloc_obj_type_is_io(lca->type)) {
		/* A PCI function as the meeting point: functions do not have children on PCI. */
		p->cls = GDR_TOPO_UNKNOWN;
		snprintf(p->reason, sizeof(p->reason), "devices meet at a %s object",
			 hwloc_obj_type_string(lca->type));
		return;
	}
	/* They meet above PCI: the NUMA nodes of the two host bridges decide. */
	if (p->numa_a >= 0 && p->numa_a == p->numa_b) {
		p->cls = GDR_TOPO_NODE;
		return;
	}
	p->cls = GDR_TOPO_SYS;
	if (p->numa_a < 0 || p->numa_b < 0) {
		gdr_topo_obj_busid(p->numa_a < 0 ? a : b, bus, sizeof(bus));
		snprintf(p->reason, sizeof(p->reason),
			 "%s is not attached to a single NUMA node in the topology: assumed SYS",
			 bus);
	}
}
