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
 * cuMemAlloc len bytes rounded up to gdr_cuda_page_size() in the GPU's
 * context: m->addr = device pointer, m->len = len, m->host = NULL.
 */
int gdr_mem_gpu_alloc(struct gdr_mem *m, size_t len, char *why, size_t wlen);
/* Deregister m->mr if any and free the device memory; safe on a half-built m. */
void gdr_mem_gpu_free(struct gdr_mem *m);
/* Synchronous copies between host memory and [m->addr + off, +len). */
int gdr_mem_gpu_write(struct gdr_mem *m, size_t off, const void *src, size_t len);
int gdr_mem_gpu_read(struct gdr_mem *m, size_t off, void *dst, size_t len);

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
/* Export the range around [dptr, dptr + len) as a DMA-BUF fd (caller closes it). */
int gdr_dmabuf_export(struct gdr_cuda *cu, uint64_t dptr, size_t len, int *fd,
		      struct gdr_dmabuf_range *r, char *why, size_t wlen);

/* What errno from ibv_reg_mr on a device pointer means (NULL: nothing to add). */
const char *gdr_peermem_explain(int err);

#endif
