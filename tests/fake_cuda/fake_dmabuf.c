/*
 * cuMemGetHandleForAddressRange: the DMA-BUF export of a device range.
 *
 * Like the real driver's DMA-BUF, the fd holds exactly the range: its size
 * (lseek SEEK_END) is the range's length and offset 0 is the range's start.
 * To hand out the very pages of the range, the export moves them: a memfd of
 * the range's size takes the range's bytes and is mapped MAP_SHARED over the
 * range, so the device pointers and the fd see the same pages from then on.
 * An export of the same range again hands out that memfd again. Limitation:
 * an export that overlaps an earlier one only in part gets pages of its own,
 * so writes through the earlier fd's mappings no longer show at the device
 * pointers in the overlap (gdrperf never exports overlapping ranges).
 */
#define _GNU_SOURCE
#include "fake_cuda_int.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A new open file description of fd, at offset 0; -1 on failure. */
static int reopen(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, O_RDWR | O_CLOEXEC);
}

/*
 * The cuMemMap mappings in [p, p+len) that cuMemSetAccess has not opened yet
 * (PROT_NONE): opened for reading while the export copies them (prot
 * PROT_READ), closed again once it mapped its pages there (PROT_NONE).
 * Caller holds g.lock.
 */
static void protect_unopened(uintptr_t p, size_t len, int prot)
{
	for (struct fake_alloc *a = g.allocs; a; a = a->next) {
		uintptr_t lo, hi;

		if (!a->phys || a->accessible || a->ptr >= p + len || p >= a->ptr + a->size)
			continue;
		lo = a->ptr > p ? a->ptr : p;
		hi = a->ptr + a->size < p + len ? a->ptr + a->size : p + len;
		mprotect((void *)lo, hi - lo, prot);
	}
}

/* Move [p, p+len) into a memfd of its own (see above). Caller holds g.lock. -1 on failure. */
static int export_pages(uintptr_t p, size_t len)
{
	struct fake_export *x;
	int fd, out, copied;

	for (x = g.exports; x; x = x->next)
		if (x->start == p && x->len == len)
			return reopen(x->fd);
	x = calloc(1, sizeof(*x));
	if (!x)
		return -1;
	fd = memfd_create("fake-cuda-dmabuf", MFD_CLOEXEC);
	/* The real driver exports a mapping before cuMemSetAccess too (2026-12-04 H200). */
	protect_unopened(p, len, PROT_READ);
	copied = fd >= 0 && !ftruncate(fd, (off_t)len) &&
		 pwrite(fd, (const void *)p, len, 0) == (ssize_t)len;
	if (!copied || mmap((void *)p, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
			    0) == MAP_FAILED) {
		protect_unopened(p, len, PROT_NONE);
		if (fd >= 0)
			close(fd);
		free(x);
		return -1;
	}
	protect_unopened(p, len, PROT_NONE);
	exports_drop(p, len);
	x->start = p;
	x->len = len;
	x->fd = fd;
	x->next = g.exports;
	g.exports = x;
	out = reopen(fd);
	return out;
}

CUresult fake_MemGetHandleForAddressRange(void *handle, CUdeviceptr d, size_t size,
					  CUmemRangeHandleType type, unsigned long long flags)
{
	CUresult rc = enter("cuMemGetHandleForAddressRange", true);
	unsigned long long known = 0;
	size_t page = host_page();
	bool supported, pcie, inside;
	CUresult mode;
	int fd;

	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g.lock);
	supported = g.cfg.dmabuf[tls_ctx->dev] != 0;
	pcie = g.cfg.dmabuf_pcie;
	mode = g.cfg.dmabuf_rc;
	/* The mapping-type flag exists from CUDA 12.8 on; before, every flag is unknown. */
	if (g.cfg.driver_version >= 12080)
		known = CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE;
	/*
	 * The real driver takes any range of device memory, around and across
	 * allocations, and a cuMemMap mapping before cuMemSetAccess; the
	 * documented rule (GDRPERF_FAKE_CUDA_DMABUF_STRICT=1) is one allocation
	 * (or one whole cuMemMap mapping) holding it all.
	 */
	if (g.cfg.dmabuf_strict) {
		inside = find_range((uintptr_t)d, size) != NULL;
	} else {
		inside = backed((uintptr_t)d, size);
	}
	pthread_mutex_unlock(&g.lock);
	if (!supported)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (!handle || type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || (flags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	/* "Users must ensure the dptr and size are aligned to the host page size." */
	if (size == 0 || d % page || size % page || !inside)
		return CUDA_ERROR_INVALID_VALUE;
	if ((flags & CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE) && !pcie)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (mode != CUDA_SUCCESS)
		return mode;
	pthread_mutex_lock(&g.lock);
	fd = export_pages((uintptr_t)d, size);
	pthread_mutex_unlock(&g.lock);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*(int *)handle = fd;
	return CUDA_SUCCESS;
}
