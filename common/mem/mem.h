/*
 * Memory backends: one table of functions per way the NIC reaches a buffer
 * (perftest's memory_ctx idea, one file per backend: mem_host.c, mem_cuda.c,
 * mem_bounce.c).
 */
#ifndef GDR_MEM_H
#define GDR_MEM_H

#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda.h"

enum gdr_mem_kind {
	GDR_MEM_HOST = 0,
	GDR_MEM_DMABUF,
	GDR_MEM_PEERMEM,
	GDR_MEM_BOUNCE,
	GDR_MEM__COUNT
};

const char *gdr_mem_kind_name(enum gdr_mem_kind kind);
/* "host" -> GDR_MEM_HOST; -EINVAL for anything else. */
int gdr_mem_kind_parse(const char *name);

/* How GPU buffers are allocated (--gpu-alloc). */
enum gdr_gpu_alloc { GDR_GPU_ALLOC_MEMALLOC = 0, GDR_GPU_ALLOC_VMM, GDR_GPU_ALLOC__COUNT };
/* "cuMemAlloc" / "cuMemCreate": the call, as the reg_call column names calls. */
const char *gdr_gpu_alloc_call(enum gdr_gpu_alloc a);
/* "memalloc" / "vmm": the option's words. */
const char *gdr_gpu_alloc_name(enum gdr_gpu_alloc a);

/* What a backend may need from the program. */
struct gdr_mem_env {
	struct ibv_pd *pd;
	const char *nic;	      /* verbs device name, for messages */
	const char *sysfs_root;	      /* "/" normally; GDRPERF_ROOT in tests */
	struct gdr_cuda *cuda;	      /* NULL when no driver could be loaded */
	struct gdr_gpu *gpu;	      /* opened GPU, NULL when none */
	const char *cuda_why;	      /* why cuda is NULL */
	int hugepages;		      /* host: try MAP_HUGETLB first */
	enum gdr_gpu_alloc gpu_alloc; /* dmabuf, peermem, bounce: how the GPU buffer is made */
	int dmabuf_pcie;	      /* dmabuf: CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE */
	int no_relaxed;		      /* --disable_pcie_relaxed */
	int data_direct;	      /* dmabuf: mlx5dv_reg_dmabuf_mr(DATA_DIRECT) */
	size_t bounce_chunk;	      /* bounce: staging chunk size */
	unsigned int bounce_slots;
	int bounce_copy;	    /* bounce: enum gdr_bounce_copy (this side's) */
	unsigned int bounce_blocks; /* bounce, SM copy: kernel blocks */
};

struct gdr_mem {
	const struct gdr_mem_ops *ops;
	const struct gdr_mem_env *env;
	size_t len;    /* bytes usable at addr */
	uint64_t addr; /* address the NIC uses (host VA or device VA = iova) */
	void *host;    /* host mapping, NULL for device memory */
	struct ibv_mr *mr;
	void *priv; /* backend state */
	/* GPU backends: the allocation that holds [addr, addr + len). */
	uint64_t gpu_base;
	size_t gpu_len;
	struct gdr_cuda_vmm vmm; /* GDR_GPU_ALLOC_VMM */
	/* What was really done, for the row: NULL / 0 / < 0 where it does not apply. */
	const char *reg_call;	    /* "ibv_reg_mr", "ibv_reg_dmabuf_mr", ... */
	const char *gpu_alloc;	    /* "cuMemAlloc", "cuMemCreate" */
	const char *dmabuf_mapping; /* "default", "pcie" */
	int relaxed;		    /* IBV_ACCESS_RELAXED_ORDERING was asked for */
	int emulated;		    /* the registration was emulated by tests/fake_verbs */
	double alloc_us, export_us, reg_us, dereg_us; /* < 0: not measured */
	char note[192];				      /* what the row should say besides */
};

struct gdr_mem_ops {
	enum gdr_mem_kind kind;
	/*
	 * Can this path run here at all? 0, or -errno with the reason in why
	 * (e.g. "nvidia_peermem not loaded (/sys/module/nvidia_peermem absent)").
	 */
	int (*available)(const struct gdr_mem_env *env, char *why, size_t wlen);
	/* Allocate len bytes and register them with access; 0 or -errno + why. */
	int (*alloc_reg)(struct gdr_mem *m, size_t len, int access, char *why, size_t wlen);
	/*
	 * Register m's buffer again with access (m->mr is NULL): lets
	 * gdr_mem_open time a deregistration before the run. NULL: not offered.
	 */
	int (*reg)(struct gdr_mem *m, int access, char *why, size_t wlen);
	/* Host <-> buffer copies (patterns for --validate). */
	int (*write)(struct gdr_mem *m, size_t off, const void *src, size_t len);
	int (*read)(struct gdr_mem *m, size_t off, void *dst, size_t len);
	/* Deregister and free; safe on a half-built m. */
	void (*free)(struct gdr_mem *m);
};

const struct gdr_mem_ops *gdr_mem_ops_for(enum gdr_mem_kind kind);

/*
 * Convenience wrappers that fill m->ops/env. gdr_mem_open adds
 * IBV_ACCESS_RELAXED_ORDERING (unless env->no_relaxed) and fills the timing:
 * reg_us is the first registration, dereg_us a deregistration before the run
 * (the buffer is then registered again, untimed).
 */
int gdr_mem_open(struct gdr_mem *m, enum gdr_mem_kind kind, const struct gdr_mem_env *env,
		 size_t len, int access, char *why, size_t wlen);
void gdr_mem_close(struct gdr_mem *m);

/*
 * IBV_ACCESS_RELAXED_ORDERING where this libibverbs has it (rdma-core >= 28),
 * else 0. An optional access flag: providers that cannot honour it ignore it.
 */
int gdr_mem_relaxed_flag(void);

extern const struct gdr_mem_ops gdr_mem_host_ops;
extern const struct gdr_mem_ops gdr_mem_dmabuf_ops;
extern const struct gdr_mem_ops gdr_mem_peermem_ops;
extern const struct gdr_mem_ops gdr_mem_bounce_ops;

/*
 * Shared probes (used by the backends and by gdr_doctor).
 * NIC DMA-BUF support: ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0);
 * EOPNOTSUPP/EPROTONOSUPPORT = unsupported, any other errno = supported.
 * Returns 1 supported, 0 unsupported (why says so), <0 error.
 */
int gdr_dmabuf_probe_nic(struct ibv_pd *pd, char *why, size_t wlen);
/*
 * Peer-memory client: nvidia_peermem / nv_peer_mem under root (the sysfs
 * paths of docs/usage-bw.md, "The memory paths"). Returns 1 and the client's
 * name and version in found, or 0 and the reason in why.
 */
int gdr_peermem_detect(const char *root, char *found, size_t flen, char *why, size_t wlen);
/*
 * The peer-memory modules that serve NVIDIA GPU memory (nvidia_peermem, the
 * older nv_peer_mem) and the clients they register with MLNX_OFED's
 * peer-memory core (/sys/kernel/mm/memory_peers/NAME: nv_mem, and nv_mem_nc,
 * nvidia-peermem's persistent-pages client); NULL-terminated.
 */
extern const char *const gdr_peermem_modules[];
extern const char *const gdr_peermem_clients[];
/*
 * strerror(err) for a failed registration of len bytes; for ENOMEM/EPERM/EAGAIN
 * adds RLIMIT_MEMLOCK and how to raise it (the usual cause).
 */
void gdr_explain_reg_errno(int err, size_t len, char *buf, size_t blen);

/*
 * --hugepages (mem_host.c): len bytes rounded up to 2 MiB (in *map_len) of
 * MAP_HUGETLB memory, or NULL with why saying why not (usually no pages
 * reserved in vm.nr_hugepages). Free with munmap(p, *map_len).
 */
#define GDR_HUGE_PAGE (2u << 20)
void *gdr_huge_map(size_t len, size_t *map_len, char *why, size_t wlen);

/*
 * Data direct (mem_data_direct.c): mlx5dv_get_data_direct_sysfs_path and
 * mlx5dv_reg_dmabuf_mr looked up at run time in libmlx5.so.1 (or the file
 * GDRPERF_LIBMLX5 names: a test hook), so that one binary uses them with an
 * rdma-core that has them (>= 53) and says why not with one that does not.
 * gdr_data_direct_check: 0 when ctx's device has a data direct device, else
 * -errno with the reason. gdr_data_direct_reg: the registration, errno set.
 */
int gdr_data_direct_check(struct ibv_context *ctx, char *why, size_t wlen);
struct ibv_mr *gdr_data_direct_reg(struct ibv_pd *pd, uint64_t offset, size_t len, uint64_t iova,
				   int fd, int access);

#endif
