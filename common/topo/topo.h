/*
 * Where the GPU and the NIC sit relative to each other, in the legend of
 * `nvidia-smi topo -m`, read from hwloc (this system or an XML export).
 *
 * GPUs are NVIDIA PCI functions (vendor 0x10de) of class VGA (0x0300) or 3D
 * (0x0302), plus any PCI function carrying a CUDA or NVML OS device, numbered
 * in PCI bus order as nvidia-smi numbers them. NICs are the OpenFabrics OS
 * devices (mlx5_0, ...); a NIC hwloc does not show is looked up through
 * ROOT/sys/class/infiniband/NAME/device when the topology is this system or a
 * root prefix was given.
 */
#ifndef GDR_TOPO_H
#define GDR_TOPO_H

#include <stddef.h>

/* Ordered from nearest to farthest; UNKNOWN sorts last. */
enum gdr_topo_class {
	GDR_TOPO_PIX,	  /* below one PCIe switch (or one bridge) */
	GDR_TOPO_PXB,	  /* across several switches, no host bridge */
	GDR_TOPO_PHB,	  /* through one host bridge */
	GDR_TOPO_NODE,	  /* across host bridges of one NUMA node */
	GDR_TOPO_SYS,	  /* across NUMA nodes (SNC/NPS included), or locality unknown */
	GDR_TOPO_UNKNOWN, /* not both on PCI in this topology; see reason */
};

/* "PIX" ... "SYS", "unknown". */
const char *gdr_topo_class_name(enum gdr_topo_class c);

#define GDR_BUSID_LEN 16 /* "0000:19:00.0" + NUL, with room */

struct gdr_topo_gpu {
	int index;		    /* position in PCI bus order */
	char bus_id[GDR_BUSID_LEN]; /* "0000:19:00.0" */
	char name[96];		    /* "NVIDIA H100 80GB HBM3", or "NVIDIA [10de:2330]" */
	int numa;		    /* NUMA node os index, -1 unknown */
	char link[32]; /* "16.0 GT/s x16" (sysfs) or "31.51 GB/s" (hwloc); "" unknown */
};

struct gdr_topo_nic {
	char name[64];		    /* verbs device name, "mlx5_0" */
	char bus_id[GDR_BUSID_LEN]; /* "" when not a PCI device */
	int numa;		    /* -1 unknown */
	char link[32];
	char why[512]; /* why it is not on PCI in this topology (a --root path in it); "" when it is */
};

/* One GPU x NIC pair: everything the result line and the CSV columns need. */
struct gdr_topo_pair {
	enum gdr_topo_class cls;
	char reason[576]; /* why UNKNOWN (or SYS for lack of locality); "" otherwise */
	int gpu_index;	  /* -1 when the GPU is not in the topology */
	char gpu_bus_id[GDR_BUSID_LEN];
	char gpu_name[96];
	char nic[64];
	char nic_bus_id[GDR_BUSID_LEN];
	int bridges;		/* PCI-to-PCI bridges on the path; -1 unknown */
	int switches;		/* PCIe switches on the path, each counted once; -1 unknown */
	int host_bridges;	/* host bridges on the path: 0, 1 or 2; -1 unknown */
	int gpu_numa, nic_numa; /* -1 unknown */
	char gpu_link[32];
	char nic_link[32];
};

struct gdr_topo;

/*
 * A topology with more GPUs or RDMA NICs than this is refused: no machine
 * has them (a DGX has 8 GPUs; SR-IOV virtual functions give a few hundred NICs).
 */
#define GDR_TOPO_MAX_GPUS 1024
#define GDR_TOPO_MAX_NICS 2048

/*
 * Load the topology with every I/O object kept. xml: an hwloc XML export
 * (hwloc 1.x or 2.x format); NULL = $HWLOC_XMLFILE if set, else this system.
 * root: prefix for sysfs reads (NULL or "" = "/"), used for the NIC fallback
 * and link widths. 0 or -errno with the cause in why.
 */
int gdr_topo_load(struct gdr_topo **t, const char *xml, const char *root, char *why, size_t wlen);
void gdr_topo_free(struct gdr_topo *t);

/* The XML file the topology came from, or NULL for this system. */
const char *gdr_topo_source(const struct gdr_topo *t);

int gdr_topo_gpu_count(const struct gdr_topo *t);
const struct gdr_topo_gpu *gdr_topo_gpu(const struct gdr_topo *t, int i);
/* By bus id in any usual spelling: "19:00.0", "0000:19:00.0", "00000000:19:00.0". */
const struct gdr_topo_gpu *gdr_topo_find_gpu(const struct gdr_topo *t, const char *bus_id);

/* NICs sorted by name (mlx5_2 before mlx5_10). */
int gdr_topo_nic_count(const struct gdr_topo *t);
const struct gdr_topo_nic *gdr_topo_nic(const struct gdr_topo *t, int i);
const struct gdr_topo_nic *gdr_topo_find_nic(const struct gdr_topo *t, const char *name);

/*
 * Mellanox/NVIDIA network PCI functions with no RDMA device (mlx5_ib not
 * loaded?), by bus id; they are not NICs above.
 */
int gdr_topo_bare_hca_count(const struct gdr_topo *t);
const char *gdr_topo_bare_hca(const struct gdr_topo *t, int i);

/*
 * Classify the GPU at gpu_bus_id against NIC nic_name. Returns 0 with out
 * filled, cls = GDR_TOPO_UNKNOWN and a reason when either is not found or not
 * on PCI; -EINVAL when gpu_bus_id is not a PCI bus id.
 */
int gdr_topo_pair(const struct gdr_topo *t, const char *gpu_bus_id, const char *nic_name,
		  struct gdr_topo_pair *out);

/* The same by position: GPU gi (0..gpu_count-1) against NIC ni; -EINVAL out of range. */
int gdr_topo_pair_idx(const struct gdr_topo *t, int gi, int ni, struct gdr_topo_pair *out);

/* Which NICs count for "nearest" (for example: port ACTIVE). NULL = all. */
typedef int (*gdr_topo_nic_ok_fn)(const char *nic, void *arg);

/*
 * The nearest NIC to a GPU (best class, ties by name) among those ok() accepts;
 * the nearest GPU to a NIC (best class, ties by GPU index). 0, -ENOENT when
 * there is none, -EINVAL for a bad bus id.
 */
int gdr_topo_nearest_nic(const struct gdr_topo *t, const char *gpu_bus_id, gdr_topo_nic_ok_fn ok,
			 void *arg, struct gdr_topo_pair *out);
int gdr_topo_nearest_gpu(const struct gdr_topo *t, const char *nic_name, struct gdr_topo_pair *out);

/* Bind this process's CPUs and memory to a NUMA node (os index). 0 or -errno, why says why. */
int gdr_topo_bind_numa(const struct gdr_topo *t, int numa_node, char *why, size_t wlen);

/*
 * What NCCL would do: NCCL_NET_GDR_LEVEL and NCCL_NET_GDR_READ as NCCL reads
 * them. level is in NCCL's path order, LOC < PIX < PXB < PHB < SYS.
 */
enum gdr_nccl_level {
	GDR_NCCL_LOC,
	GDR_NCCL_PIX,
	GDR_NCCL_PXB,
	GDR_NCCL_PHB,
	GDR_NCCL_SYS,
};

struct gdr_nccl_env {
	enum gdr_nccl_level level; /* GDR_NCCL_PXB unless set */
	int level_set;		   /* NCCL_NET_GDR_LEVEL was given */
	int read; /* NCCL_NET_GDR_READ: 0 off, 1 on, -1 unset (NCCL decides by GPU) */
	/* NCCL_DMABUF_ENABLE, NCCL_NET_GDR_C2C: the value when set (zeroed = unset,
	 * NCCL's default; nccl_settings.h) */
	int dmabuf_set, dmabuf;
	int c2c_set, c2c;
};

const char *gdr_nccl_level_name(enum gdr_nccl_level l);
/* s NULL or "" = default (PXB). Names as NCCL spells them, or legacy 0..5. */
int gdr_nccl_parse_level(const char *s, enum gdr_nccl_level *out, char *why, size_t wlen);
/* s NULL or "" = unset (-1); otherwise an integer, 0 = off, > 0 = on, < 0 = unset. */
int gdr_nccl_parse_read(const char *s, int *out, char *why, size_t wlen);
/* All four from the environment (nccl_settings.c). 0 or -EINVAL naming the variable and its value. */
int gdr_nccl_env_load(struct gdr_nccl_env *env, char *why, size_t wlen);
/* 1: NCCL would use GPUDirect RDMA at this distance, 0: would not, -1: unknown class. */
int gdr_nccl_would_use(const struct gdr_nccl_env *env, enum gdr_topo_class c);
/* The verdict's reason alone: "PIX <= PXB", "NODE (PHB to NCCL) > PXB", "distance unknown". */
const char *gdr_nccl_reason(const struct gdr_nccl_env *env, enum gdr_topo_class c, char *buf,
			    size_t len);
/* "NCCL would use GPUDirect RDMA: PIX <= PXB"; the verdict in buf, returns buf. */
const char *gdr_nccl_verdict(const struct gdr_nccl_env *env, enum gdr_topo_class c, char *buf,
			     size_t len);

/*
 * The line the benchmarks print before their table:
 * "topology: GPU0 NVIDIA H100 (0000:19:00.0) <-> mlx5_0 (0000:1a:00.0): PIX,
 * 1 switch, NUMA 0/0; NCCL would use GPUDirect RDMA: PIX <= PXB". Returns buf.
 */
const char *gdr_topo_describe(const struct gdr_topo_pair *p, const struct gdr_nccl_env *env,
			      char *buf, size_t len);

struct gdr_result;
/*
 * Fill the CSV topology columns of r (gpu, gpu_bus_id, gpu_name when empty,
 * nic, nic_bus_id, distance, pcie_bridges, gpu_numa, nic_numa); unknown = "".
 */
void gdr_topo_fill_result(const struct gdr_topo_pair *p, struct gdr_result *r);

/* 1 when p's class is assumed rather than read (SYS for a device with no NUMA node). */
int gdr_topo_pair_assumed(const struct gdr_topo_pair *p);

/* "GPU0-3, GPU6" for the sorted GPU indices idx[0..n-1]; returns buf. */
const char *gdr_topo_gpu_ranges(const int *idx, int n, char *buf, size_t len);

/* Parse a PCI bus id in any usual spelling into "dddd:bb:dd.f". 0 or -EINVAL. */
int gdr_topo_busid_norm(const char *in, char *out, size_t len);
/* A NUMA node as the reports print it: "3", or "?" when unknown (-1). */
const char *gdr_topo_numa_text(int numa, char *buf, size_t len);

#endif
