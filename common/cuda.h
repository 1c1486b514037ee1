/*
 * The CUDA driver API, loaded at run time (dlopen "libcuda.so.1", or the file
 * named by GDRPERF_LIBCUDA: a test hook) so that one binary runs on GPU and
 * CPU-only nodes. Entry points are resolved with cuGetProcAddress at explicit
 * ABI versions. Every function returns 0 or a negative errno; where it takes
 * why/wlen, the reason is written there in words, with the CUDA error name and
 * string ("cuMemAlloc(8 MiB): CUDA_ERROR_OUT_OF_MEMORY: out of memory").
 *
 * Built without CUDA headers, gdr_cuda_load() fails with -ENOSYS and
 * "built without CUDA headers (configure --with-cuda=DIR)".
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
	int dmabuf_supported; /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED; -1 unknown */
	int gdr_supported;    /* CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED; -1 unknown */
	void *ctx;	      /* retained primary context, NULL until opened */
};

/* Load the driver and cuInit(0). why: "no CUDA driver (libcuda.so.1: <dlerror>)". */
int gdr_cuda_load(struct gdr_cuda **out, char *why, size_t wlen);
void gdr_cuda_unload(struct gdr_cuda *cu);

int gdr_cuda_driver_version(struct gdr_cuda *cu, int *version);
int gdr_cuda_device_count(struct gdr_cuda *cu, int *count);
/* Fill gpu for ordinal (no context created). */
int gdr_cuda_gpu_info(struct gdr_cuda *cu, int ordinal, struct gdr_gpu *gpu, char *why,
		      size_t wlen);
/* spec: "N" (ordinal) or a PCI bus id "[DDDD:]BB:DD.F" (case-insensitive). */
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
/* Granularity the dmabuf range must be aligned to (GPU page, 64 KiB or 2 MiB). */
size_t gdr_cuda_page_size(struct gdr_cuda *cu);

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

/* Which lookup the driver offered: "cuGetProcAddress (v1)" or "cuGetProcAddress_v2". */
const char *gdr_cuda_getproc_abi(struct gdr_cuda *cu);

/* Text of the last error on this handle ("CUDA_ERROR_X: text"). */
const char *gdr_cuda_last_error(struct gdr_cuda *cu);

#endif
