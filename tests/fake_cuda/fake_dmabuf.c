/*
 * cuMemGetHandleForAddressRange: the DMA-BUF export of a device range.
 */
#define _GNU_SOURCE
#include "fake_cuda_int.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

CUresult fake_MemGetHandleForAddressRange(void *handle, CUdeviceptr d, size_t size,
					  CUmemRangeHandleType type, unsigned long long flags)
{
	CUresult rc = enter("cuMemGetHandleForAddressRange", true);
	unsigned long long known = 0;
	size_t page = host_page();
	struct fake_alloc *a;
	bool supported, pcie;
	char path[64];
	off_t pos = 0;
	CUresult mode;
	int fd, src = -1;

	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g.lock);
	supported = g.cfg.dmabuf[tls_ctx->dev] != 0;
	pcie = g.cfg.dmabuf_pcie;
	mode = g.cfg.dmabuf_rc;
	/* The mapping-type flag exists from CUDA 12.8 on; before, every flag is unknown. */
	if (g.cfg.driver_version >= 12080)
		known = CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE;
	/* One allocation (or one whole cuMemMap mapping) holds the whole range. */
	a = find_range((uintptr_t)d, size);
	if (a) {
		src = a->memfd;
		pos = a->file_off + (off_t)(d - a->ptr);
	}
	pthread_mutex_unlock(&g.lock);
	if (!supported)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (!handle || type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || (flags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	/* "Users must ensure the dptr and size are aligned to the host page size." */
	if (size == 0 || d % page || size % page || !a)
		return CUDA_ERROR_INVALID_VALUE;
	if ((flags & CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE) && !pcie)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (mode != CUDA_SUCCESS)
		return mode;
	/*
	 * The very pages of the range: a new open file description of the
	 * allocation's memfd (its own file position), positioned where the range
	 * starts. tests/fake_verbs maps from there.
	 */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", src);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (lseek(fd, pos, SEEK_SET) != pos) {
		close(fd);
		return CUDA_ERROR_UNKNOWN;
	}
	*(int *)handle = fd;
	return CUDA_SUCCESS;
}
