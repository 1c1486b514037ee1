/*
 * What the GPU memory backends (mem_dmabuf.c, mem_peermem.c; mem_bounce.c may
 * use it too) share: the "is there a GPU" check, device allocation rounded to
 * GPU pages, copies for --validate, the page-aligned DMA-BUF range, and the
 * words for registration errors. Split out so that all of it is testable
 * without an RDMA device.
 */
#ifndef GDR_MEM_GPU_H
#define GDR_MEM_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "mem.h"

/* A driver is loaded and a GPU opened: 0, or -errno with the reason. */
int gdr_mem_gpu_check(const struct gdr_mem_env *env, char *why, size_t wlen);
/* "GPU 0 (0000:3b:00.0, NVIDIA H200)" */
const char *gdr_mem_gpu_name(const struct gdr_gpu *gpu, char *buf, size_t len);

/*
 * A GPU buffer of len bytes in the GPU's context, made as env->gpu_alloc says:
 * cuMemAlloc of the whole GPU pages needed plus one, with m->addr the pointer
 * aligned up to a GPU page inside it, or cuMemCreate/cuMemMap rounded to the
 * granularity. m->gpu_base/gpu_len = the allocation, m->addr = where the
 * buffer starts, m->len = len, m->host = NULL, m->alloc_us, m->gpu_alloc.
 */
int gdr_mem_gpu_alloc(struct gdr_mem *m, size_t len, char *why, size_t wlen);
/* Deregister m->mr if any and free the device memory; safe on a half-built m. */
void gdr_mem_gpu_free(struct gdr_mem *m);
/*
 * CU_POINTER_ATTRIBUTE_SYNC_MEMOPS on the allocation: every cuMemAlloc buffer a
 * NIC touches, so that no cuMemcpy is still in flight when the NIC reads. Not
 * on cuMemCreate memory (NCCL never sets it there; the driver refuses it):
 * gdr_mem_gpu_write waits for its copies there instead.
 */
int gdr_mem_gpu_sync_memops(struct gdr_mem *m, char *why, size_t wlen);
/*
 * Synchronous copies between host memory and [m->addr + off, +len); into
 * cuMemCreate memory followed by cuStreamSynchronize of the default stream.
 */
int gdr_mem_gpu_write(struct gdr_mem *m, size_t off, const void *src, size_t len);
int gdr_mem_gpu_read(struct gdr_mem *m, size_t off, void *dst, size_t len);
/*
 * Read what a NIC wrote: gdr_cuda_flush_rdma_writes first (how says what was
 * done, or why nothing could be), then the copy.
 */
int gdr_mem_gpu_read_remote(struct gdr_mem *m, size_t off, void *dst, size_t len, const char **how);
/* The ops read of the GPU backends (--validate reads what the NIC wrote): read_remote, how unsaid.
 */
int gdr_mem_gpu_read_flushed(struct gdr_mem *m, size_t off, void *dst, size_t len);

/*
 * The page-aligned range around [dptr, dptr + len) that gets exported:
 * base = dptr rounded down to page, offset = dptr - base, span = offset + len
 * rounded up to page. ibv_reg_dmabuf_mr takes offset, len and iova = dptr.
 */
struct gdr_dmabuf_range {
	uint64_t base;
	uint64_t offset;
	size_t span;
};
void gdr_dmabuf_range(uint64_t dptr, size_t len, size_t page, struct gdr_dmabuf_range *r);
/*
 * Export the host-page range around [m->addr, +m->len) as a DMA-BUF fd (caller
 * closes it), with the PCIe mapping type if m->env->dmabuf_pcie. -EINVAL if
 * that range leaves the allocation (it never does for gdr_mem_gpu_alloc's).
 */
int gdr_dmabuf_export(struct gdr_mem *m, int *fd, struct gdr_dmabuf_range *r, char *why,
		      size_t wlen);

/* What errno from ibv_reg_mr on a device pointer means (NULL: nothing to add). */
const char *gdr_peermem_explain(int err);

#endif
