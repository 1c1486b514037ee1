/*
 * The virtual memory management calls (cuMemCreate, cuMemAddressReserve,
 * cuMemMap, cuMemSetAccess, ...) at a 2 MiB granularity.
 */
#define _GNU_SOURCE
#include "fake_cuda_int.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- virtual memory management ---- */

static bool prop_ok(const CUmemAllocationProp *prop)
{
	return prop && prop->type == CU_MEM_ALLOCATION_TYPE_PINNED &&
	       prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE && dev_ok(prop->location.id);
}

CUresult fake_MemGetAllocationGranularity(size_t *gran, const CUmemAllocationProp *prop,
					  CUmemAllocationGranularity_flags option)
{
	CUresult rc = enter("cuMemGetAllocationGranularity", false);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!gran || !prop_ok(prop) ||
	    (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
	     option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
		return CUDA_ERROR_INVALID_VALUE;
	*gran = FAKE_BIG_PAGE;
	return CUDA_SUCCESS;
}

CUresult fake_MemCreate(CUmemGenericAllocationHandle *h, size_t size,
			const CUmemAllocationProp *prop, unsigned long long flags)
{
	CUresult rc = enter("cuMemCreate", false);
	struct fake_phys *ph;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!h || !prop_ok(prop) || flags || size == 0 || size % FAKE_BIG_PAGE)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->allocFlags.gpuDirectRDMACapable && !g.cfg.vmm_gdr[prop->location.id])
		return CUDA_ERROR_NOT_SUPPORTED;
	ph = calloc(1, sizeof(*ph));
	if (!ph)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ph->memfd = memfd_create("fake-cuda-vmm", MFD_CLOEXEC);
	if (ph->memfd < 0 || ftruncate(ph->memfd, (off_t)size)) {
		if (ph->memfd >= 0)
			close(ph->memfd);
		free(ph);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	ph->magic = FAKE_MAGIC_PHYS;
	ph->size = size;
	ph->dev = prop->location.id;
	ph->gdr_capable = prop->allocFlags.gpuDirectRDMACapable != 0;
	pthread_mutex_lock(&g.lock);
	ph->next = g.phys;
	g.phys = ph;
	pthread_mutex_unlock(&g.lock);
	*h = (CUmemGenericAllocationHandle)(uintptr_t)ph;
	return CUDA_SUCCESS;
}

/* Caller holds g.lock. */
static struct fake_phys *phys_find(CUmemGenericAllocationHandle h)
{
	for (struct fake_phys *ph = g.phys; ph; ph = ph->next)
		if ((CUmemGenericAllocationHandle)(uintptr_t)ph == h && !ph->released)
			return ph;
	return NULL;
}

/* Caller holds g.lock: free ph once released and unmapped, as the driver does. */
static void phys_put(struct fake_phys *ph)
{
	if (!ph->released || ph->maps)
		return;
	for (struct fake_phys **pp = &g.phys; *pp; pp = &(*pp)->next)
		if (*pp == ph) {
			*pp = ph->next;
			break;
		}
	close(ph->memfd);
	ph->magic = 0;
	free(ph);
}

CUresult fake_MemRelease(CUmemGenericAllocationHandle h)
{
	CUresult rc = enter("cuMemRelease", false);
	struct fake_phys *ph;

	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g.lock);
	ph = phys_find(h);
	if (ph) {
		ph->released = true;
		phys_put(ph);
	}
	pthread_mutex_unlock(&g.lock);
	return ph ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fake_MemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr,
				unsigned long long flags)
{
	CUresult rc = enter("cuMemAddressReserve", false);
	size_t page = host_page();
	struct fake_reserve *r;
	uint8_t *m, *base;

	(void)addr; /* a hint only */
	if (rc != CUDA_SUCCESS)
		return rc;
	if (!ptr || flags || size == 0 || size % page || addr % page || (align & (align - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	if (align < FAKE_BIG_PAGE)
		align = FAKE_BIG_PAGE;
	r = calloc(1, sizeof(*r));
	if (!r)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m = mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		free(r);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	base = (uint8_t *)(((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1));
	if (base > m)
		munmap(m, (size_t)(base - m));
	if (m + size + align > base + size)
		munmap(base + size, (size_t)(m + size + align - (base + size)));
	r->base = (uintptr_t)base;
	r->size = size;
	pthread_mutex_lock(&g.lock);
	r->next = g.reserves;
	g.reserves = r;
	pthread_mutex_unlock(&g.lock);
	*ptr = (CUdeviceptr)r->base;
	return CUDA_SUCCESS;
}

CUresult fake_MemAddressFree(CUdeviceptr ptr, size_t size)
{
	CUresult rc = enter("cuMemAddressFree", false);
	struct fake_reserve **pp, *r = NULL;

	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g.lock);
	for (pp = &g.reserves; *pp; pp = &(*pp)->next)
		if ((*pp)->base == ptr && (*pp)->size == size) {
			r = *pp;
			break;
		}
	/* Every mapping inside must be unmapped first. */
	for (struct fake_alloc *a = g.allocs; r && a; a = a->next)
		if (a->phys && a->ptr >= r->base && a->ptr - r->base < r->size)
			r = NULL;
	if (r)
		*pp = r->next;
	pthread_mutex_unlock(&g.lock);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	munmap((void *)r->base, r->size);
	free(r);
	return CUDA_SUCCESS;
}

/* Caller holds g.lock: is [p, p+len) inside one reservation? */
static bool reserved(uintptr_t p, size_t len)
{
	for (struct fake_reserve *r = g.reserves; r; r = r->next)
		if (p >= r->base && len <= r->size && p - r->base <= r->size - len)
			return true;
	return false;
}

/* Caller holds g.lock: does any mapping overlap [p, p+len)? */
static bool mapped_any(uintptr_t p, size_t len)
{
	for (struct fake_alloc *a = g.allocs; a; a = a->next)
		if (a->phys && p < a->ptr + a->size && a->ptr < p + len)
			return true;
	return false;
}

CUresult fake_MemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle h,
		     unsigned long long flags)
{
	CUresult rc = enter("cuMemMap", false);
	struct fake_phys *ph;
	struct fake_alloc *a;

	if (rc != CUDA_SUCCESS)
		return rc;
	/* An offset off the granularity: NOT_SUPPORTED from the real driver (580.159.04). */
	if (offset % FAKE_BIG_PAGE)
		return CUDA_ERROR_NOT_SUPPORTED;
	/* "offset: currently must be zero"; ptr and size multiples of the granularity. */
	if (flags || offset || size == 0 || ptr % FAKE_BIG_PAGE || size % FAKE_BIG_PAGE)
		return CUDA_ERROR_INVALID_VALUE;
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&g.lock);
	ph = phys_find(h);
	if (!ph || size > ph->size || !reserved(ptr, size) || mapped_any(ptr, size)) {
		pthread_mutex_unlock(&g.lock);
		free(a);
		return CUDA_ERROR_INVALID_VALUE;
	}
	/* Not accessible until cuMemSetAccess: PROT_NONE so a stray access faults. */
	if (mmap((void *)ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, ph->memfd, 0) ==
	    MAP_FAILED) {
		pthread_mutex_unlock(&g.lock);
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	ph->maps++;
	a->memfd = ph->memfd;
	a->phys = ph;
	a->ptr = ptr;
	a->size = size;
	a->dev = ph->dev;
	a->id = ++g.next_id;
	a->next = g.allocs;
	g.allocs = a;
	pthread_mutex_unlock(&g.lock);
	return CUDA_SUCCESS;
}

CUresult fake_MemUnmap(CUdeviceptr ptr, size_t size)
{
	CUresult rc = enter("cuMemUnmap", false);
	struct fake_alloc **pp, *a = NULL;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (ptr % FAKE_BIG_PAGE || size % FAKE_BIG_PAGE)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g.lock);
	for (pp = &g.allocs; *pp; pp = &(*pp)->next)
		if ((*pp)->phys && (*pp)->ptr == ptr && (*pp)->size == size) {
			a = *pp;
			*pp = a->next;
			break;
		}
	if (a) {
		exports_drop(ptr, size);
		/* The range stays reserved: back to an inaccessible hole (or at least unmapped). */
		if (mmap((void *)ptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
			 0) == MAP_FAILED)
			munmap((void *)ptr, size);
		a->phys->maps--;
		phys_put(a->phys);
	}
	pthread_mutex_unlock(&g.lock);
	free(a);
	return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fake_MemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
	CUresult rc = enter("cuMemSetAccess", false);
	struct fake_alloc *a;
	int prot;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!desc || count != 1 || desc->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (!dev_ok(desc->location.id))
		return CUDA_ERROR_INVALID_DEVICE;
	switch (desc->flags) {
	case CU_MEM_ACCESS_FLAGS_PROT_NONE:
		prot = PROT_NONE;
		break;
	case CU_MEM_ACCESS_FLAGS_PROT_READ:
		prot = PROT_READ;
		break;
	case CU_MEM_ACCESS_FLAGS_PROT_READWRITE:
		prot = PROT_READ | PROT_WRITE;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&g.lock);
	/* A mapped range: the fake knows one mapping per call (what gdrperf makes). */
	a = find_range(ptr, size);
	if (!a || !a->phys || a->ptr != ptr || ptr % FAKE_BIG_PAGE || size % FAKE_BIG_PAGE) {
		pthread_mutex_unlock(&g.lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	mprotect((void *)ptr, size, prot);
	a->accessible = prot != PROT_NONE;
	pthread_mutex_unlock(&g.lock);
	return CUDA_SUCCESS;
}
