/*
 * The bounce path's buffers: the GPU buffer the benchmark moves (never seen
 * by the NIC) and a pinned host staging ring of slots x chunk bytes, the only
 * thing registered; plus the stream and per-slot events of the pipeline in
 * bounce.c. With --hugepages the ring is MAP_HUGETLB memory the driver pins
 * (cuMemHostRegister), else (and when that cannot be had) cuMemHostAlloc's;
 * the row's note says which.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bounce.h"
#include "cuda.h"
#include "mem.h"
#include "mem_gpu.h"
#include "util.h"

struct bounce_priv {
	void *ring;
	size_t ring_len;
	size_t huge_len; /* > 0: the ring is gdr_huge_map's, registered with the driver */
	size_t chunk;
	unsigned int slots;
	gdr_cuda_stream_t stream;
	int have_stream;
	gdr_cuda_event_t *events;
	unsigned int nevents;
	int sm;			       /* --bounce-copy=sm */
	uint64_t ring_dptr;	       /* sm: the ring's device address */
	struct gdr_cuda_kernel kernel; /* sm: the copy kernel */
	unsigned int blocks;
};

static int bounce_available(const struct gdr_mem_env *env, char *why, size_t wlen)
{
	return gdr_mem_gpu_check(env, why, wlen);
}

static int cuda_why(struct gdr_mem *m, const char *what, int r, char *why, size_t wlen)
{
	char name[192];

	snprintf(why, wlen, "%s: %s: %s", gdr_mem_gpu_name(m->env->gpu, name, sizeof(name)), what,
		 gdr_cuda_last_error(m->env->cuda));
	return r < 0 ? r : -EIO;
}

/* The NIC touches only the pinned host ring: that is what gets registered. */
static int bounce_reg(struct gdr_mem *m, int access, char *why, size_t wlen)
{
	const struct gdr_mem_env *env = m->env;
	struct bounce_priv *bp = m->priv;
	char sz[32], err[200];

	m->reg_call = "ibv_reg_mr";
	m->mr = ibv_reg_mr(env->pd, bp->ring, bp->ring_len, access);
	if (!m->mr) {
		int e = errno ? errno : EINVAL;

		gdr_explain_reg_errno(e, bp->ring_len, err, sizeof(err));
		snprintf(why, wlen, "%s: ibv_reg_mr(bounce staging, %s): %s",
			 env->nic ? env->nic : "?", gdr_fmt_size(bp->ring_len, sz, sizeof(sz)),
			 err);
		return -e;
	}
	return 0;
}

/*
 * --hugepages: the ring on 2 MiB pages, pinned by the driver; the note says
 * what the ring got. bp->ring stays NULL when they cannot be had: the caller
 * falls back to cuMemHostAlloc.
 */
static void bounce_ring_huge(struct gdr_mem *m, struct bounce_priv *bp)
{
	char no[160];
	size_t hl;
	void *p = gdr_huge_map(bp->ring_len, &hl, no, sizeof(no));

	if (p && gdr_cuda_host_register(m->env->cuda, p, hl, bp->sm, &bp->ring_dptr, no,
					sizeof(no))) {
		munmap(p, hl);
		p = NULL;
	}
	if (!p) {
		snprintf(m->note, sizeof(m->note), "bounce staging on normal pages: %s", no);
		gdr_warn("bounce: staging ring on normal pages (%s)", no);
		return;
	}
	bp->ring = p;
	bp->huge_len = hl;
	snprintf(m->note, sizeof(m->note),
		 "bounce staging on 2 MiB huge pages (MAP_HUGETLB + cuMemHostRegister)");
}

static int bounce_alloc_reg(struct gdr_mem *m, size_t len, int access, char *why, size_t wlen)
{
	const struct gdr_mem_env *env = m->env;
	struct gdr_cuda *cu = env->cuda;
	struct bounce_priv *bp;
	uint64_t t0;
	int r;

	if (env->bounce_chunk == 0 || env->bounce_slots == 0 ||
	    env->bounce_chunk > SIZE_MAX / env->bounce_slots) {
		snprintf(why, wlen, "bounce: bad staging ring (%u slots of %zu B)",
			 env->bounce_slots, env->bounce_chunk);
		return -EINVAL;
	}
	bp = calloc(1, sizeof(*bp));
	if (!bp) {
		snprintf(why, wlen, "bounce: out of memory");
		return -ENOMEM;
	}
	m->priv = bp;
	bp->chunk = env->bounce_chunk;
	bp->slots = env->bounce_slots;
	bp->ring_len = bp->chunk * bp->slots;

	bp->sm = env->bounce_copy == GDR_BOUNCE_COPY_SM;
	bp->blocks = env->bounce_blocks ? env->bounce_blocks : GDR_BOUNCE_BLOCKS;

	r = gdr_mem_gpu_alloc(m, len, why, wlen);
	if (r)
		return r;
	r = 0;
	if (env->hugepages)
		bounce_ring_huge(m, bp);
	if (!bp->ring && bp->sm)
		r = gdr_cuda_host_alloc_mapped(cu, bp->ring_len, &bp->ring, &bp->ring_dptr, NULL,
					       0);
	else if (!bp->ring)
		r = gdr_cuda_host_alloc(cu, bp->ring_len, &bp->ring, NULL, 0);
	if (r) {
		bp->ring = NULL;
		return cuda_why(m, bp->sm ? "bounce staging ring (mapped)" : "bounce staging ring",
				r, why, wlen);
	}
	if (bp->sm) {
		/* The driver JIT-compiles the PTX for the context the alloc made current. */
		r = gdr_cuda_copy_kernel_load(cu, &bp->kernel, NULL, 0);
		if (r)
			return cuda_why(m, "bounce copy kernel", r, why, wlen);
	}
	r = gdr_cuda_stream_create(cu, &bp->stream);
	if (r)
		return cuda_why(m, "bounce copy stream", r, why, wlen);
	bp->have_stream = 1;
	bp->events = calloc(bp->slots, sizeof(*bp->events));
	if (!bp->events) {
		snprintf(why, wlen, "bounce: out of memory");
		return -ENOMEM;
	}
	for (; bp->nevents < bp->slots; bp->nevents++) {
		r = gdr_cuda_event_create(cu, &bp->events[bp->nevents]);
		if (r)
			return cuda_why(m, "bounce slot events", r, why, wlen);
	}
	if (!env->pd) {
		snprintf(why, wlen,
			 "bounce: no protection domain to register the staging ring with");
		return -EINVAL;
	}
	t0 = gdr_now_ns();
	r = bounce_reg(m, access, why, wlen);
	m->reg_us = (double)(gdr_now_ns() - t0) / 1e3;
	return r;
}

/*
 * --validate copies go through the pipeline's stream and wait for it: the
 * stream is non-blocking, so a copy on the legacy stream (whose DMA may
 * still run after a pageable cuMemcpyHtoD returns) would not be ordered
 * before the pipeline's first D2H.
 */
static int bounce_copy(struct gdr_mem *m, size_t off, void *host, size_t len, int to_gpu)
{
	struct bounce_priv *bp = m->priv;
	struct gdr_cuda *cu = m->env->cuda;
	int r;

	if (!bp || !bp->have_stream || !m->addr || off > m->len || len > m->len - off)
		return -EINVAL;
	r = gdr_cuda_make_current(cu, m->env->gpu);
	if (!r)
		r = to_gpu ? gdr_cuda_htod_async(cu, m->addr + off, host, len, bp->stream)
			   : gdr_cuda_dtoh_async(cu, host, m->addr + off, len, bp->stream);
	if (!r)
		r = gdr_cuda_stream_sync(cu, bp->stream);
	return r;
}

static int bounce_write(struct gdr_mem *m, size_t off, const void *src, size_t len)
{
	return bounce_copy(m, off, (void *)src, len, 1);
}

static int bounce_read(struct gdr_mem *m, size_t off, void *dst, size_t len)
{
	return bounce_copy(m, off, dst, len, 0);
}

static void bounce_free(struct gdr_mem *m)
{
	struct bounce_priv *bp = m->priv;
	struct gdr_cuda *cu = m->env ? m->env->cuda : NULL;

	/* The MR first (it pins the ring), then what the pipeline used, then the GPU buffer. */
	if (m->mr) {
		ibv_dereg_mr(m->mr);
		m->mr = NULL;
	}
	if (bp && cu) {
		gdr_cuda_make_current(cu, m->env->gpu);
		if (bp->have_stream)
			gdr_cuda_stream_sync(cu, bp->stream);
		for (unsigned int i = 0; i < bp->nevents; i++)
			gdr_cuda_event_destroy(cu, bp->events[i]);
		gdr_cuda_copy_kernel_unload(cu, &bp->kernel);
		if (bp->have_stream)
			gdr_cuda_stream_destroy(cu, bp->stream);
		if (bp->ring && bp->huge_len) {
			gdr_cuda_host_unregister(cu, bp->ring);
			munmap(bp->ring, bp->huge_len);
		} else if (bp->ring) {
			gdr_cuda_host_free(cu, bp->ring);
		}
	}
	if (bp) {
		free(bp->events);
		free(bp);
	}
	m->priv = NULL;
	gdr_mem_gpu_free(m);
}

int gdr_mem_bounce_res(const struct gdr_mem *m, struct gdr_bounce_res *res)
{
	const struct bounce_priv *bp = m->priv;

	if (!m->ops || m->ops->kind != GDR_MEM_BOUNCE || !bp || !m->mr)
		return -EINVAL;
	*res = (struct gdr_bounce_res){
		.cuda = m->env->cuda,
		.dptr = m->addr,
		.len = m->len,
		.ring = bp->ring,
		.chunk = bp->chunk,
		.slots = bp->slots,
		.lkey = m->mr->lkey,
		.rkey = m->mr->rkey,
		.stream = bp->stream,
		.events = bp->events,
		.kernel = bp->kernel.func ? &bp->kernel : NULL,
		.ring_dptr = bp->ring_dptr,
		.blocks = bp->blocks,
	};
	return 0;
}

const struct gdr_mem_ops gdr_mem_bounce_ops = {
	.kind = GDR_MEM_BOUNCE,
	.available = bounce_available,
	.alloc_reg = bounce_alloc_reg,
	.reg = bounce_reg,
	.write = bounce_write,
	.read = bounce_read,
	.free = bounce_free,
};
