/*
 * cuMemAlloc device memory (a memfd each), cuMemHostAlloc pinned host memory,
 * pointer attributes, and the lookups the other parts use.
 */
#define _GNU_SOURCE
#include "fake_cuda_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The range holding [p, p+len) of usable (asked-for) bytes, mapped or not. Caller holds g.lock. */
struct fake_alloc *find_range(uintptr_t p, size_t len)
{
	for (struct fake_alloc *a = g.allocs; a; a = a->next)
		if (p >= a->ptr && len <= a->size && p - a->ptr <= a->size - len)
			return a;
	return NULL;
}

/* Like find_range, but only memory the device may access now. Caller holds g.lock. */
static struct fake_alloc *find_alloc(uintptr_t p, size_t len)
{
	struct fake_alloc *a = find_range(p, len);

	return a && a->accessible ? a : NULL;
}

size_t host_page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

bool is_pinned(const void *p, size_t len)
{
	uintptr_t u = (uintptr_t)p;
	bool found = false;

	pthread_mutex_lock(&g.lock);
	for (struct fake_pinned *h = g.pinned; h && !found; h = h->next) {
		uintptr_t b = (uintptr_t)h->ptr;
		found = u >= b && len <= h->size && u - b <= h->size - len;
	}
	pthread_mutex_unlock(&g.lock);
	return found;
}

bool device_range_ok(CUdeviceptr d, size_t len)
{
	bool ok;

	pthread_mutex_lock(&g.lock);
	ok = find_alloc((uintptr_t)d, len) != NULL;
	pthread_mutex_unlock(&g.lock);
	return ok;
}

/*
 * Virtual room for large cuMemAlloc, handed out in order, as a driver's
 * address allocator does: two 4 MiB allocations in a row are adjacent (the
 * real driver's answer), and a range across both exports. Reserved only
 * (PROT_NONE, no memory); freed ranges are not handed out again.
 */
#define FAKE_ARENA (16ULL << 30)

/* len bytes of the arena right after the last ones; 0 when none is left. Caller holds g.lock. */
static uintptr_t arena_take(size_t len)
{
	uintptr_t at;

	if (!g.arena_tried) {
		void *r = mmap(NULL, FAKE_ARENA + FAKE_BIG_PAGE, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		g.arena_tried = true;
		if (r != MAP_FAILED) {
			g.next_big =
			    ((uintptr_t)r + FAKE_BIG_PAGE - 1) & ~(uintptr_t)(FAKE_BIG_PAGE - 1);
			g.arena_end = (uintptr_t)r + FAKE_ARENA + FAKE_BIG_PAGE;
		}
	}
	if (!g.next_big || len > g.arena_end - g.next_big)
		return 0;
	at = g.next_big;
	g.next_big += len;
	return at;
}

/*
 * A memfd of len bytes mapped MAP_SHARED at an address aligned to align:
 * 0 or -1. At at (the arena's, which holds it) when given; else reserve
 * more, then map the file over the aligned part.
 */
static int map_memfd(size_t len, size_t align, uintptr_t at, int *fd_out, void **map_out)
{
	size_t resv = len + align;
	uint8_t *r, *aligned;
	int fd;

	fd = memfd_create("fake-cuda-device-memory", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)len))
		goto out_close;
	if (at) {
		void *m =
		    mmap((void *)at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);

		if (m == MAP_FAILED)
			goto out_close;
		*fd_out = fd;
		*map_out = m;
		return 0;
	}
	r = mmap(NULL, resv, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		goto out_close;
	aligned = (uint8_t *)(((uintptr_t)r + align - 1) & ~(uintptr_t)(align - 1));
	if (mmap(aligned, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
	    MAP_FAILED) {
		munmap(r, resv);
		goto out_close;
	}
	if (aligned > r)
		munmap(r, (size_t)(aligned - r));
	if (r + resv > aligned + len)
		munmap(aligned + len, (size_t)(r + resv - (aligned + len)));
	*fd_out = fd;
	*map_out = aligned;
	return 0;

out_close:
	close(fd);
	return -1;
}

/*
 * The end of the device memory holding p (a slab, a cuMemAlloc's own backing,
 * a cuMemMap mapping, accessible or not yet), or 0. Caller holds g.lock.
 */
static uintptr_t backing_end(uintptr_t p)
{
	for (struct fake_slab *s = g.slabs; s; s = s->next)
		if (p >= (uintptr_t)s->map && p - (uintptr_t)s->map < FAKE_BIG_PAGE)
			return (uintptr_t)s->map + FAKE_BIG_PAGE;
	for (struct fake_alloc *a = g.allocs; a; a = a->next) {
		if (a->map && p >= (uintptr_t)a->map && p - (uintptr_t)a->map < a->map_len)
			return (uintptr_t)a->map + a->map_len;
		if (a->phys && p >= a->ptr && p - a->ptr < a->size)
			return a->ptr + a->size;
	}
	return 0;
}

/*
 * Is every byte of [p, p+len) device memory, whichever allocations hold it
 * (the real driver exports such ranges)? Caller holds g.lock.
 */
bool backed(uintptr_t p, size_t len)
{
	uintptr_t end = p + len;

	if (len == 0 || end < p)
		return false;
	while (p < end) {
		uintptr_t e = backing_end(p);

		if (!e)
			return false;
		p = e;
	}
	return true;
}

/* Forget the exports overlapping [p, p+len): their pages went away. Caller holds g.lock. */
void exports_drop(uintptr_t p, size_t len)
{
	for (struct fake_export **pp = &g.exports; *pp;) {
		struct fake_export *x = *pp;

		if (x->start < p + len && p < x->start + x->len) {
			*pp = x->next;
			close(x->fd);
			free(x);
		} else {
			pp = &x->next;
		}
	}
}

/*
 * A small request carved from the current slab at the next 512 B step, or
 * from a new 2 MiB-aligned slab when it does not fit: the real driver's
 * placement (the first small allocation 2 MiB aligned, the next ones right
 * after it). Caller holds g.lock. 0 or -1.
 */
static int slab_carve(struct fake_alloc *a, size_t size)
{
	struct fake_slab *s = g.slabs;
	size_t off = s ? (s->used + FAKE_SUB_ALIGN - 1) / FAKE_SUB_ALIGN * FAKE_SUB_ALIGN : 0;
	void *map;
	int fd;

	if (!s || off > FAKE_BIG_PAGE - size) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -1;
		if (map_memfd(FAKE_BIG_PAGE, FAKE_BIG_PAGE, 0, &fd, &map)) {
			free(s);
			return -1;
		}
		/* Uninitialised device memory is not zero: make a missing copy visible. */
		memset(map, 0xa5, FAKE_BIG_PAGE);
		s->memfd = fd;
		s->map = map;
		s->next = g.slabs;
		g.slabs = s;
		off = 0;
	}
	s->used = off + size;
	s->live++;
	a->slab = s;
	a->memfd = s->memfd;
	a->ptr = (uintptr_t)s->map + off;
	a->file_off = (off_t)off;
	return 0;
}

/* Caller holds g.lock: a's slab loses an allocation; the last one frees it. */
static void slab_put(struct fake_slab *s)
{
	if (--s->live > 0)
		return;
	for (struct fake_slab **pp = &g.slabs; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	exports_drop((uintptr_t)s->map, FAKE_BIG_PAGE);
	munmap(s->map, FAKE_BIG_PAGE);
	close(s->memfd);
	free(s);
}

CUresult fake_MemAlloc(CUdeviceptr *dptr, size_t size)
{
	CUresult rc = enter("cuMemAlloc", true);
	size_t page = host_page(), sub, map_len;
	uintptr_t at;
	struct fake_alloc *a;
	void *map;
	int fd;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!dptr || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	a = calloc(1, sizeof(*a));
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&g.lock);
	a->id = ++g.next_id;
	if (size > SIZE_MAX - 2 * FAKE_BIG_PAGE - page ||
	    (g.cfg.mem_enforced && g.allocated + size > g.cfg.mem_limit)) {
		pthread_mutex_unlock(&g.lock);
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	a->size = size;
	a->accessible = true;
	a->dev = tls_ctx->dev;
	if (!g.cfg.alloc_offset_set && size < FAKE_BIG_PAGE) {
		if (slab_carve(a, size)) {
			pthread_mutex_unlock(&g.lock);
			free(a);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		g.allocated += size;
		a->next = g.allocs;
		g.allocs = a;
		pthread_mutex_unlock(&g.lock);
		*dptr = (CUdeviceptr)a->ptr;
		return CUDA_SUCCESS;
	}
	g.allocated += size;
	/* Large requests: their own 2 MiB pages, after the last ones; or at the configured offset
	 * into one. */
	sub = g.cfg.alloc_offset_set ? g.cfg.alloc_offset : 0;
	map_len = (sub + size + FAKE_BIG_PAGE - 1) / FAKE_BIG_PAGE * FAKE_BIG_PAGE;
	at = g.cfg.alloc_offset_set ? 0 : arena_take(map_len);
	pthread_mutex_unlock(&g.lock);
	if (map_memfd(map_len, FAKE_BIG_PAGE, at, &fd, &map)) {
		pthread_mutex_lock(&g.lock);
		g.allocated -= size;
		pthread_mutex_unlock(&g.lock);
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	/* Uninitialised device memory is not zero: make a missing copy visible. */
	memset(map, 0xa5, map_len);
	a->memfd = fd;
	a->map = map;
	a->map_len = map_len;
	a->ptr = (uintptr_t)map + sub;
	a->file_off = (off_t)sub;
	pthread_mutex_lock(&g.lock);
	a->next = g.allocs;
	g.allocs = a;
	pthread_mutex_unlock(&g.lock);
	*dptr = (CUdeviceptr)a->ptr;
	return CUDA_SUCCESS;
}

CUresult fake_MemFree(CUdeviceptr d)
{
	CUresult rc = enter("cuMemFree", true);
	struct fake_alloc **pp, *a = NULL;

	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g.lock);
	/* Only what cuMemAlloc returned: a VMM range is cuMemUnmap'ed instead. */
	for (pp = &g.allocs; *pp; pp = &(*pp)->next)
		if ((*pp)->ptr == (uintptr_t)d && !(*pp)->phys) {
			a = *pp;
			*pp = a->next;
			g.allocated -= a->size;
			break;
		}
	if (a && a->slab)
		slab_put(a->slab);
	else if (a)
		exports_drop((uintptr_t)a->map, a->map_len);
	pthread_mutex_unlock(&g.lock);
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	if (!a->slab) {
		munmap(a->map, a->map_len);
		close(a->memfd);
	}
	free(a);
	return CUDA_SUCCESS;
}

CUresult fake_MemHostAlloc(void **pp, size_t size, unsigned int flags)
{
	CUresult rc = enter("cuMemHostAlloc", true);
	struct fake_pinned *h;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!pp || size == 0 ||
	    (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
				 CU_MEMHOSTALLOC_WRITECOMBINED)))
		return CUDA_ERROR_INVALID_VALUE;
	h = calloc(1, sizeof(*h));
	if (!h)
		return CUDA_ERROR_OUT_OF_MEMORY;
	h->size = size;
	h->ptr = aligned_alloc(page, (size + page - 1) / page * page);
	if (!h->ptr) {
		free(h);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_lock(&g.lock);
	h->next = g.pinned;
	g.pinned = h;
	pthread_mutex_unlock(&g.lock);
	*pp = h->ptr;
	return CUDA_SUCCESS;
}

/* Unlink the pinned entry that starts at p, cuMemHostAlloc's or registered, or NULL. */
static struct fake_pinned *pinned_take(const void *p, bool registered)
{
	struct fake_pinned **pp, *h = NULL;

	pthread_mutex_lock(&g.lock);
	for (pp = &g.pinned; *pp; pp = &(*pp)->next)
		if ((*pp)->ptr == p && (*pp)->registered == registered) {
			h = *pp;
			*pp = h->next;
			break;
		}
	pthread_mutex_unlock(&g.lock);
	return h;
}

CUresult fake_MemFreeHost(void *p)
{
	CUresult rc = enter("cuMemFreeHost", true);
	struct fake_pinned *h;

	if (rc != CUDA_SUCCESS)
		return rc;
	h = pinned_take(p, false);
	if (!h)
		return CUDA_ERROR_INVALID_VALUE;
	free(h->ptr);
	free(h);
	return CUDA_SUCCESS;
}

/*
 * The driver's documented answers: 0 bytes or a NULL pointer INVALID_VALUE, a
 * range overlapping pinned memory (registered or cuMemHostAlloc'ed)
 * HOST_MEMORY_ALREADY_REGISTERED, unregistering anything but the start of a
 * registration HOST_MEMORY_NOT_REGISTERED.
 */
CUresult fake_MemHostRegister(void *p, size_t size, unsigned int flags)
{
	CUresult rc = enter("cuMemHostRegister", true);
	uintptr_t u = (uintptr_t)p;
	struct fake_pinned *h, *o;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!p || size == 0 ||
	    (flags & ~(unsigned)(CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
				 CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY)))
		return CUDA_ERROR_INVALID_VALUE;
	h = calloc(1, sizeof(*h));
	if (!h)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*h = (struct fake_pinned){ .ptr = p, .size = size, .registered = true };
	/* The overlap check and the insertion under one lock: two threads cannot both pin. */
	pthread_mutex_lock(&g.lock);
	for (o = g.pinned; o; o = o->next)
		if (u < (uintptr_t)o->ptr + o->size && (uintptr_t)o->ptr < u + size)
			break;
	if (!o) {
		h->next = g.pinned;
		g.pinned = h;
	}
	pthread_mutex_unlock(&g.lock);
	if (o) {
		free(h);
		return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	}
	return CUDA_SUCCESS;
}

CUresult fake_MemHostUnregister(void *p)
{
	CUresult rc = enter("cuMemHostUnregister", true);
	struct fake_pinned *h;

	if (rc != CUDA_SUCCESS)
		return rc;
	h = pinned_take(p, true);
	if (!h)
		return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
	free(h);
	return CUDA_SUCCESS;
}

CUresult fake_PointerSetAttribute(const void *value, CUpointer_attribute attr, CUdeviceptr p)
{
	CUresult rc = enter("cuPointerSetAttribute", true);
	struct fake_alloc *a;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!value || attr != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g.lock);
	a = find_alloc((uintptr_t)p, 1);
	/* The real driver (580.159.04) refuses it on cuMemCreate memory. */
	rc = !a ? CUDA_ERROR_INVALID_VALUE : a->phys ? CUDA_ERROR_NOT_SUPPORTED : CUDA_SUCCESS;
	if (rc == CUDA_SUCCESS)
		a->sync_memops = *(const unsigned int *)value != 0;
	pthread_mutex_unlock(&g.lock);
	return rc;
}

CUresult fake_PointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
	CUresult rc = enter("cuPointerGetAttribute", false);
	struct fake_alloc *a;

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g.lock);
	a = find_alloc((uintptr_t)p, 1);
	if (!a) {
		rc = CUDA_ERROR_INVALID_VALUE;
	} else {
		switch (attr) {
		case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
			/* A bool, as the driver documents it. */
			*(bool *)data = a->sync_memops;
			break;
		case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
			*(unsigned int *)data = CU_MEMORYTYPE_DEVICE;
			break;
		case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
			*(CUdeviceptr *)data = p;
			break;
		case CU_POINTER_ATTRIBUTE_BUFFER_ID:
			*(unsigned long long *)data = a->id;
			break;
		case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
			*(int *)data = a->dev;
			break;
		case CU_POINTER_ATTRIBUTE_CONTEXT:
			*(CUcontext *)data = (CUcontext)&g.ctx[a->dev];
			break;
		case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
			/* The allocation's (or the mapping's) own start and size. */
			*(CUdeviceptr *)data = (CUdeviceptr)a->ptr;
			break;
		case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
			*(size_t *)data = a->size;
			break;
		case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
			*(int *)data = a->phys ? a->phys->gdr_capable : 1;
			break;
		default:
			rc = CUDA_ERROR_INVALID_VALUE;
			break;
		}
	}
	pthread_mutex_unlock(&g.lock);
	return rc;
}
