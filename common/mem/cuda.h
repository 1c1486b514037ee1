/*
 * The CUDA driver API, loaded at run time (dlopen "libcuda.so.1", or the file
 * named by GDRPERF_LIBCUDA: a test hook) so that one binary runs on GPU and
 * CPU-only nodes. Entry points are resolved with cuGetProcAddress at explicit
 * ABI versions. Every function returns 0 or a negative errno; where it takes
 * why/wlen, the reason is written there in words, with the CUDA error name and
 * string ("cuMemAlloc(8 MiB): CUDA_ERROR_OUT_OF_MEMORY: out of memory").
 *
 * Built without CUDA headers (cuda_none.c instead of cuda_*.c), gdr_cuda_load()
 * fails with -ENOSYS and "built without CUDA headers (configure --with-cuda=DIR)".
 */
#ifndef GDR_CUDA_H
#define GDR_CUDA_H

#include <stddef.h>
#include <stdint.h>

struct gdr_cuda;

struct gdr_gpu {
	int ordinal;
	int device;	 /* CUdevice */
	char bus_id[32]; /* "0000:3b:00.0": lower case, with domain */
	char name[128];
	uint64_t total_mem;
	int dmabuf_supported;  /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED; -1 unknown */
	int gdr_supported;     /* CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED; -1 unknown */
	int vmm_gdr_supported; /* ..._GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED; -1 unknown */
	int flush_options;     /* ..._GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS bits; -1 unknown */
	int writes_ordering;   /* ..._GPU_DIRECT_RDMA_WRITES_ORDERING (0, 100, 200); -1 unknown */
	char uuid[48];	       /* "GPU-xxxxxxxx-xxxx-..." (cuDeviceGetUuid_v2); "" unknown */
	void *ctx;	       /* retained primary context, NULL until opened */
};

/* Load the driver and cuInit(0). why: "no CUDA driver (libcuda.so.1: <dlerror>)". */
int gdr_cuda_load(struct gdr_cuda **out, char *why, size_t wlen);
void gdr_cuda_unload(struct gdr_cuda *cu);

int gdr_cuda_driver_version(struct gdr_cuda *cu, int *version);
int gdr_cuda_device_count(struct gdr_cuda *cu, int *count);
/* Fill gpu for ordinal (no context created). */
int gdr_cuda_gpu_info(struct gdr_cuda *cu, int ordinal, struct gdr_gpu *gpu, char *why,
		      size_t wlen);
/*
 * spec: "N" (ordinal), a PCI bus id "[DDDD:]BB:DD.F" (case-insensitive) or a
 * UUID "GPU-..." / "MIG-..." as nvidia-smi -L prints it (ordinals count the
 * GPUs CUDA_VISIBLE_DEVICES leaves visible, as everywhere in CUDA).
 */
int gdr_cuda_find_gpu(struct gdr_cuda *cu, const char *spec, struct gdr_gpu *gpu, char *why,
		      size_t wlen);
/* Retain the primary context and make it current on this thread. */
int gdr_cuda_gpu_open(struct gdr_cuda *cu, struct gdr_gpu *gpu, char *why, size_t wlen);
void gdr_cuda_gpu_close(struct gdr_cuda *cu, struct gdr_gpu *gpu);
/* Make the GPU's context current on the calling thread. */
int gdr_cuda_make_current(struct gdr_cuda *cu, struct gdr_gpu *gpu);

/* Device memory. */
int gdr_cuda_alloc(struct gdr_cuda *cu, size_t len, uint64_t *dptr, char *why, size_t wlen);
void gdr_cuda_free(struct gdr_cuda *cu, uint64_t dptr);
int gdr_cuda_set_sync_memops(struct gdr_cuda *cu, uint64_t dptr, char *why, size_t wlen);
/* CU_POINTER_ATTRIBUTE_SYNC_MEMOPS as the driver reports it (*on = 0 or 1). */
int gdr_cuda_get_sync_memops(struct gdr_cuda *cu, uint64_t dptr, int *on, char *why, size_t wlen);
/* cuMemGetHandleForAddressRange(DMA_BUF_FD) on [dptr, dptr+len): both page aligned. */
int gdr_cuda_dmabuf_fd(struct gdr_cuda *cu, uint64_t dptr, size_t len, int *fd, char *why,
		       size_t wlen);
/* The same with pcie = 1: CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE (driver >= 12.8). */
int gdr_cuda_dmabuf_export(struct gdr_cuda *cu, uint64_t dptr, size_t len, int pcie, int *fd,
			   char *why, size_t wlen);
/* GPU page behind cuMemAlloc (64 KiB): what buffers are rounded to. */
#define GDR_GPU_PAGE_SIZE (64u * 1024)
size_t gdr_cuda_page_size(struct gdr_cuda *cu);

/*
 * VMM memory as NCCL makes it: cuMemCreate(PINNED, on gpu, gpuDirectRDMACapable),
 * cuMemAddressReserve, cuMemMap, cuMemSetAccess(READWRITE); len rounded up to
 * the recommended granularity. gdr_cuda_vmm_free undoes all of it; safe on a
 * zeroed v.
 */
struct gdr_cuda_vmm {
	uint64_t handle; /* CUmemGenericAllocationHandle */
	uint64_t va;
	size_t len;
	size_t granularity;
};
int gdr_cuda_vmm_granularity(struct gdr_cuda *cu, const struct gdr_gpu *gpu, size_t *gran,
			     char *why, size_t wlen);
int gdr_cuda_vmm_alloc(struct gdr_cuda *cu, const struct gdr_gpu *gpu, size_t len,
		       struct gdr_cuda_vmm *v, char *why, size_t wlen);
void gdr_cuda_vmm_free(struct gdr_cuda *cu, struct gdr_cuda_vmm *v);

/*
 * Make the NIC's writes to gpu's memory visible to the GPU before reading them
 * back: nothing when GPU_DIRECT_RDMA_WRITES_ORDERING already covers the owner,
 * else cuFlushGPUDirectRDMAWrites(CURRENT_CTX, TO_OWNER). how says which, in
 * words. -EOPNOTSUPP when neither is available (how says why). Needs gpu's
 * context current.
 */
int gdr_cuda_flush_rdma_writes(struct gdr_cuda *cu, const struct gdr_gpu *gpu, const char **how);

/* GPU UUID text (cuda_uuid.c, built with or without CUDA headers). */
void gdr_cuda_format_uuid(const unsigned char bytes[16], char *buf, size_t len);
/* Does spec start with "GPU-" or "MIG-" (any case)? */
int gdr_cuda_is_uuid_spec(const char *spec);
/* spec "GPU-…"/"MIG-…" names the UUID uuid ("GPU-…"): hex digits compared, case and dashes ignored.
 */
int gdr_cuda_uuid_match(const char *spec, const char *uuid);

/* Page-locked host memory (cuMemHostAlloc / cuMemFreeHost). */
int gdr_cuda_host_alloc(struct gdr_cuda *cu, size_t len, void **ptr, char *why, size_t wlen);
void gdr_cuda_host_free(struct gdr_cuda *cu, void *ptr);

/* Synchronous copies. */
int gdr_cuda_htod(struct gdr_cuda *cu, uint64_t dst, const void *src, size_t len);
int gdr_cuda_dtoh(struct gdr_cuda *cu, void *dst, uint64_t src, size_t len);

/* Streams and events for the bounce pipeline. */
typedef void *gdr_cuda_stream_t;
typedef void *gdr_cuda_event_t;
int gdr_cuda_stream_create(struct gdr_cuda *cu, gdr_cuda_stream_t *s);
void gdr_cuda_stream_destroy(struct gdr_cuda *cu, gdr_cuda_stream_t s);
int gdr_cuda_stream_sync(struct gdr_cuda *cu, gdr_cuda_stream_t s);
int gdr_cuda_htod_async(struct gdr_cuda *cu, uint64_t dst, const void *src, size_t len,
			gdr_cuda_stream_t s);
int gdr_cuda_dtoh_async(struct gdr_cuda *cu, void *dst, uint64_t src, size_t len,
			gdr_cuda_stream_t s);
int gdr_cuda_event_create(struct gdr_cuda *cu, gdr_cuda_event_t *e);
void gdr_cuda_event_destroy(struct gdr_cuda *cu, gdr_cuda_event_t e);
int gdr_cuda_event_record(struct gdr_cuda *cu, gdr_cuda_event_t e, gdr_cuda_stream_t s);
/* 1 = done, 0 = not yet, <0 error. */
int gdr_cuda_event_query(struct gdr_cuda *cu, gdr_cuda_event_t e);
int gdr_cuda_event_sync(struct gdr_cuda *cu, gdr_cuda_event_t e);

/*
 * The SM copy (--bounce-copy=sm; cuda_kernel.c): pinned host memory the GPU
 * reaches too, cuMemHostAlloc(PORTABLE | DEVICEMAP), *dptr its device address
 * (cuMemHostGetDevicePointer); free it with gdr_cuda_host_free.
 */
int gdr_cuda_host_alloc_mapped(struct gdr_cuda *cu, size_t len, void **ptr, uint64_t *dptr,
			       char *why, size_t wlen);
/*
 * --hugepages (cuda_kernel.c): pin len bytes the caller mapped at ptr
 * (cuMemHostRegister(PORTABLE [| DEVICEMAP])); mapped != 0 also gives the
 * device address in *dptr. Undo with gdr_cuda_host_unregister, then munmap.
 */
int gdr_cuda_host_register(struct gdr_cuda *cu, void *ptr, size_t len, int mapped, uint64_t *dptr,
			   char *why, size_t wlen);
void gdr_cuda_host_unregister(struct gdr_cuda *cu, void *ptr);
/* The copy kernel: its entry, threads per block (NCCL's SIMPLE protocol's 512), its PTX. */
#define GDR_COPY_KERNEL	 "gdr_bounce_copy"
#define GDR_COPY_THREADS 512u
extern const char gdr_bounce_copy_ptx[]; /* common/mem/bounce_copy.ptx, NUL-terminated */
struct gdr_cuda_kernel {
	void *module; /* CUmodule */
	void *func;   /* CUfunction */
};
/* cuModuleLoadData + cuModuleGetFunction in the current context; unload is safe on zeroes. */
int gdr_cuda_copy_kernel_load(struct gdr_cuda *cu, struct gdr_cuda_kernel *k, char *why,
			      size_t wlen);
void gdr_cuda_copy_kernel_unload(struct gdr_cuda *cu, struct gdr_cuda_kernel *k);
/* dst <- src (device addresses: GPU memory or mapped host), len bytes, blocks x 512 on s. */
int gdr_cuda_copy_kernel_launch(struct gdr_cuda *cu, const struct gdr_cuda_kernel *k, uint64_t dst,
				uint64_t src, size_t len, unsigned int blocks, gdr_cuda_stream_t s);

/* Which lookup the driver offered: "cuGetProcAddress (v1)" or "cuGetProcAddress_v2". */
const char *gdr_cuda_getproc_abi(struct gdr_cuda *cu);
/*
 * The i-th entry point the loader resolves: its name, the ABI version asked
 * for and whether it is optional; -1 past the end (tests/gpu/gpu_contract.c).
 */
int gdr_cuda_sym(size_t i, const char **name, int *version, int *optional);

/* Text of the last error on this handle ("CUDA_ERROR_X: text"). */
const char *gdr_cuda_last_error(struct gdr_cuda *cu);

#endif
