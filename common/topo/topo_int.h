/* Shared between the topo files only: the loaded model and the classifier. */
#ifndef GDR_TOPO_INT_H
#define GDR_TOPO_INT_H

#include <hwloc.h>

#include "topo.h"

struct gdr_topo_nic_int {
	struct gdr_topo_nic pub;
	hwloc_obj_t pci; /* NULL when not on PCI in this topology (pub.why says why) */
};

struct gdr_topo {
	hwloc_topology_t topo;
	char *xml;     /* source file, NULL = this system */
	char *root;    /* sysfs prefix, NULL = "/" */
	int use_sysfs; /* this system, or a root prefix was given */
	int ngpu;
	struct gdr_topo_gpu *gpus;
	hwloc_obj_t *gpu_pci;
	int nnic;
	struct gdr_topo_nic_int *nics;
	int nbare;
	char (*bare)[GDR_BUSID_LEN]; /* HCA functions without an RDMA device */
};

/* Index of the GPU with this normalised bus id, of the NIC of this name; -1 when none. */
int gdr_topo_gpu_index(const struct gdr_topo *t, const char *bus);
int gdr_topo_nic_index(const struct gdr_topo *t, const char *name);

/* What the classifier found for two PCI functions. */
struct gdr_topo_path {
	enum gdr_topo_class cls;
	int bridges, switches, host_bridges;
	int numa_a, numa_b;
	char reason[160];
};

/* Classify PCI devices a and b (both HWLOC_OBJ_PCI_DEVICE, a != b). */
void gdr_topo_classify(hwloc_obj_t a, hwloc_obj_t b, struct gdr_topo_path *p);
/* NUMA node (os index) of an I/O object's locality, -1 when not exactly one. */
int gdr_topo_io_numa(hwloc_obj_t io);
/* snprintf for messages: one cut at the buffer's end ends in "...". */
void gdr_topo_msg(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* PCIe link of a PCI object: sysfs on this system, hwloc's GB/s otherwise. */
void gdr_topo_link(const struct gdr_topo *t, hwloc_obj_t pci, char *out, size_t len);
/* "0000:19:00.0" of a PCI object. */
void gdr_topo_obj_busid(hwloc_obj_t pci, char *out, size_t len);

#endif
