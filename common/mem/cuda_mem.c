/*
 * Memory through the CUDA driver: device memory (cuMemAlloc) and its
 * SYNC_MEMOPS attribute, its DMA-BUF export for ibv_reg_dmabuf_mr, the flush
 * of GPUDirect RDMA writes, pinned host memory (the bounce ring) and
 * synchronous copies.
 */
#include "config.h"

#include "cuda_int.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>

int gdr_cuda_alloc(struct gdr_cuda *cu, size_t len, uint64_t *dptr, char *why, size_t wlen)
{
	CUdeviceptr p = 0;
	char sz[32];
	int ret;

	ret = gdr_cu_check(cu, why, wlen, cu->MemAlloc(&p, len), "cuMemAlloc(%s)",
			   gdr_fmt_size(len, sz, sizeof(sz)));
	*dptr = ret ? 0 : (uint64_t)p;
	return ret;
}

void gdr_cuda_free(struct gdr_cuda *cu, uint64_t dptr)
{
	if (dptr)
		gdr_cu_check(cu, NULL, 0, cu->MemFree((CUdeviceptr)dptr), "cuMemFree(0x%llx)",
			     (unsigned long long)dptr);
}

int gdr_cuda_set_sync_memops(struct gdr_cuda *cu, uint64_t dptr, char *why, size_t wlen)
{
	unsigned int on = 1;

	return gdr_cu_check(
	    cu, why, wlen,
	    cu->PointerSetAttribute(&on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)dptr),
	    "cuPointerSetAttribute(0x%llx, SYNC_MEMOPS)", (unsigned long long)dptr);
}

int gdr_cuda_get_sync_memops(struct gdr_cuda *cu, uint64_t dptr, int *on, char *why, size_t wlen)
{
	/* A boolean to the driver: from zero, any width it writes reads right. */
	unsigned long long v = 0;
	int ret;

	ret = gdr_cu_check(
	    cu, why, wlen,
	    cu->PointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)dptr),
	    "cuPointerGetAttribute(0x%llx, SYNC_MEMOPS)", (unsigned long long)dptr);
	*on = ret ? 0 : v != 0;
	return ret;
}

int gdr_cuda_dmabuf_fd(struct gdr_cuda *cu, uint64_t dptr, size_t len, int *fd, char *why,
		       size_t wlen)
{
	return gdr_cuda_dmabuf_export(cu, dptr, len, 0, fd, why, wlen);
}

int gdr_cuda_dmabuf_export(struct gdr_cuda *cu, uint64_t dptr, size_t len, int pcie, int *fd,
			   char *why, size_t wlen)
{
	unsigned long long flags = 0;
	char sz[32];
	int h = -1, ret;

	*fd = -1;
	if (!cu->MemGetHandleForAddressRange)
		return gdr_cu_absent(
		    cu, why, wlen,
		    "cuMemGetHandleForAddressRange (DMA-BUF export needs a CUDA >= "
		    "11.7 driver)");
	if (pcie) {
#if CUDA_VERSION >= 12080
		flags = CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE;
#else
		snprintf(cu->last_error, sizeof(cu->last_error),
			 "built with CUDA headers older than 12.8 (no "
			 "CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE)");
		gdr_strlcpy(why, cu->last_error, wlen);
		return -EOPNOTSUPP;
#endif
	}
	ret = gdr_cu_check(
	    cu, why, wlen,
	    cu->MemGetHandleForAddressRange(&h, (CUdeviceptr)dptr, len,
					    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, flags),
	    "cuMemGetHandleForAddressRange(0x%llx, %s, DMA_BUF_FD%s)", (unsigned long long)dptr,
	    gdr_fmt_size(len, sz, sizeof(sz)), pcie ? ", MAPPING_TYPE_PCIE" : "");
	if (ret)
		return ret;
	*fd = h;
	return 0;
}

size_t gdr_cuda_page_size(struct gdr_cuda *cu)
{
	(void)cu;
	/* GPU pages behind cuMemAlloc are 64 KiB (nvidia-p2p and perftest use the same). */
	return GDR_GPU_PAGE_SIZE;
}

int gdr_cuda_flush_rdma_writes(struct gdr_cuda *cu, const struct gdr_gpu *gpu, const char **how)
{
	/* "If the scope equals or lies within ... WRITES_ORDERING, the call will be a no-op." */
	if (gpu->writes_ordering >= CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER) {
		*how = "not needed (GPU_DIRECT_RDMA_WRITES_ORDERING covers the owner)";
		return 0;
	}
	if (gpu->flush_options < 0 ||
	    !(gpu->flush_options & CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST) ||
	    !cu->FlushGPUDirectRDMAWrites) {
		*how =
		    gpu->flush_options < 0
			? "unknown (the driver cannot report GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS)"
			: "not available on this GPU (no cuFlushGPUDirectRDMAWrites)";
		return -EOPNOTSUPP;
	}
	*how = "cuFlushGPUDirectRDMAWrites(CURRENT_CTX, TO_OWNER)";
	return gdr_cu_check(
	    cu, NULL, 0,
	    cu->FlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
					 CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER),
	    "GPU %d: cuFlushGPUDirectRDMAWrites", gpu->ordinal);
}

int gdr_cuda_host_alloc(struct gdr_cuda *cu, size_t len, void **ptr, char *why, size_t wlen)
{
	char sz[32];
	int ret;

	*ptr = NULL;
	/* PORTABLE: the bounce ring is pinned for every context, whichever thread made it. */
	ret = gdr_cu_check(cu, why, wlen, cu->MemHostAlloc(ptr, len, CU_MEMHOSTALLOC_PORTABLE),
			   "cuMemHostAlloc(%s)", gdr_fmt_size(len, sz, sizeof(sz)));
	if (ret)
		*ptr = NULL;
	return ret;
}

void gdr_cuda_host_free(struct gdr_cuda *cu, void *ptr)
{
	if (ptr)
		gdr_cu_check(cu, NULL, 0, cu->MemFreeHost(ptr), "cuMemFreeHost(%p)", ptr);
}

int gdr_cuda_htod(struct gdr_cuda *cu, uint64_t dst, const void *src, size_t len)
{
	return gdr_cu_check(cu, NULL, 0, cu->MemcpyHtoD((CUdeviceptr)dst, src, len),
			    "cuMemcpyHtoD(0x%llx, %zu)", (unsigned long long)dst, len);
}

int gdr_cuda_dtoh(struct gdr_cuda *cu, void *dst, uint64_t src, size_t len)
{
	return gdr_cu_check(cu, NULL, 0, cu->MemcpyDtoH(dst, (CUdeviceptr)src, len),
			    "cuMemcpyDtoH(0x%llx, %zu)", (unsigned long long)src, len);
}
