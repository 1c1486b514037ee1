/* Helpers shared by the GPU memory backends: see mem_gpu.h. */
#include "config.h"

#include "mem_gpu.h"

#include "cuda.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *gdr_gpu_alloc_call(enum gdr_gpu_alloc a)
{
	return a == GDR_GPU_ALLOC_VMM ? "cuMemCreate" : "cuMemAlloc";
}

const char *gdr_gpu_alloc_name(enum gdr_gpu_alloc a)
{
	return a == GDR_GPU_ALLOC_VMM ? "vmm" : "memalloc";
}

const char *gdr_mem_gpu_name(const struct gdr_gpu *gpu, char *buf, size_t len)
{
	snprintf(buf, len, "GPU %d (%s, %s)", gpu->ordinal, gpu->bus_id, gpu->name);
	return buf;
}

int gdr_mem_gpu_check(const struct gdr_mem_env *env, char *why, size_t wlen)
{
	if (!env->cuda) {
		gdr_strlcpy(why, env->cuda_why && *env->cuda_why ? env->cuda_why : "no CUDA driver",
			    wlen);
		return -ENODEV;
	}
	if (!env->gpu || !env->gpu->ctx) {
		gdr_strlcpy(why, "no GPU opened (--gpu)", wlen);
		return -ENODEV;
	}
	return 0;
}

static int gpu_span_ok(const struct gdr_mem *m, size_t off, size_t len)
{
	return m->addr && off <= m->len && len <= m->len - off;
}

/*
 * cuMemAlloc sub-allocates small requests (the pointer need not start a GPU
 * page, nor even a host page), and cuMemGetHandleForAddressRange wants a
 * host-page aligned range inside the allocation. So, as NCCL does: ask for a
 * GPU page more than the whole GPU pages needed and use the pointer aligned
 * up to a GPU page inside. The NIC's pages are then shared with nothing else
 * and every host-page rounding of [addr, addr + len) stays inside.
 */
static int alloc_memalloc(struct gdr_mem *m, size_t len, char *why, size_t wlen)
{
	struct gdr_cuda *cu = m->env->cuda;
	size_t page = gdr_cuda_page_size(cu);
	size_t alloc_len = (len + page - 1) / page * page + page;
	char name[192];
	uint64_t base = 0;
	int ret;

	ret = gdr_cuda_alloc(cu, alloc_len, &base, NULL, 0);
	if (ret) {
		snprintf(why, wlen, "%s: %s", gdr_mem_gpu_name(m->env->gpu, name, sizeof(name)),
			 gdr_cuda_last_error(cu));
		return ret;
	}
	m->gpu_base = base;
	m->gpu_len = alloc_len;
	m->addr = (base + page - 1) & ~((uint64_t)page - 1);
	return 0;
}

/* cuMemCreate with gpuDirectRDMACapable, when the GPU says the NIC may reach such memory. */
static int alloc_vmm(struct gdr_mem *m, size_t len, char *why, size_t wlen)
{
	const struct gdr_gpu *gpu = m->env->gpu;
	char name[192];
	int ret;

	gdr_mem_gpu_name(gpu, name, sizeof(name));
	if (gpu->vmm_gdr_supported <= 0) {
		snprintf(why, wlen,
			 "%s: CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = %s "
			 "(cuMemCreate memory cannot be reached by the NIC)",
			 name,
			 gpu->vmm_gdr_supported == 0 ? "0"
						     : "unknown (the driver cannot report it)");
		return -EOPNOTSUPP;
	}
	ret = gdr_cuda_vmm_alloc(m->env->cuda, gpu, len, &m->vmm, why, wlen);
	if (ret) {
		char inner[256];

		gdr_strlcpy(inner, why, sizeof(inner));
		snprintf(why, wlen, "%s: %s", name, inner);
		return ret;
	}
	m->gpu_base = m->vmm.va;
	m->gpu_len = m->vmm.len;
	m->addr = m->vmm.va;
	return 0;
}

int gdr_mem_gpu_alloc(struct gdr_mem *m, size_t len, char *why, size_t wlen)
{
	struct gdr_cuda *cu = m->env->cuda;
	size_t page = gdr_cuda_page_size(cu);
	uint64_t t0;
	char name[192];
	int ret;

	m->addr = 0;
	m->host = NULL;
	m->len = 0;
	if (len == 0 || len > SIZE_MAX - 2 * page) {
		snprintf(why, wlen, "bad GPU buffer size %zu", len);
		return -EINVAL;
	}
	ret = gdr_cuda_make_current(cu, m->env->gpu);
	if (ret) {
		snprintf(why, wlen, "%s: %s", gdr_mem_gpu_name(m->env->gpu, name, sizeof(name)),
			 gdr_cuda_last_error(cu));
		return ret;
	}
	m->gpu_alloc = gdr_gpu_alloc_call(m->env->gpu_alloc);
	t0 = gdr_now_ns();
	ret = m->env->gpu_alloc == GDR_GPU_ALLOC_VMM ? alloc_vmm(m, len, why, wlen)
						     : alloc_memalloc(m, len, why, wlen);
	if (ret)
		return ret;
	m->alloc_us = (double)(gdr_now_ns() - t0) / 1e3;
	m->len = len;
	return 0;
}

void gdr_mem_gpu_free(struct gdr_mem *m)
{
	if (m->mr) {
		ibv_dereg_mr(m->mr);
		m->mr = NULL;
	}
	if (m->gpu_base && m->env && m->env->cuda) {
		gdr_cuda_make_current(m->env->cuda, m->env->gpu);
		if (m->vmm.va)
			gdr_cuda_vmm_free(m->env->cuda, &m->vmm);
		else
			gdr_cuda_free(m->env->cuda, m->gpu_base);
	}
	m->gpu_base = 0;
	m->gpu_len = 0;
	m->addr = 0;
	m->len = 0;
}

int gdr_mem_gpu_sync_memops(struct gdr_mem *m, char *why, size_t wlen)
{
	/*
	 * cuMemCreate memory: not set, as NCCL never sets it there (the real
	 * driver refuses it: NOT_SUPPORTED). gdr_mem_gpu_write orders the copies
	 * into it instead; see docs/gpu-paths.md.
	 */
	if (m->vmm.va)
		return 0;
	return gdr_cuda_set_sync_memops(m->env->cuda, m->gpu_base, why, wlen);
}

int gdr_mem_gpu_read_remote(struct gdr_mem *m, size_t off, void *dst, size_t len, const char **how)
{
	int ret;

	*how = "";
	if (!gpu_span_ok(m, off, len))
		return -EINVAL;
	ret = gdr_cuda_make_current(m->env->cuda, m->env->gpu);
	if (ret)
		return ret;
	ret = gdr_cuda_flush_rdma_writes(m->env->cuda, m->env->gpu, how);
	/* No way to flush is said by the caller; the copy is still the best check there is. */
	if (ret && ret != -EOPNOTSUPP)
		return ret;
	return gdr_cuda_dtoh(m->env->cuda, dst, m->addr + off, len);
}

int gdr_mem_gpu_read_flushed(struct gdr_mem *m, size_t off, void *dst, size_t len)
{
	const char *how;

	return gdr_mem_gpu_read_remote(m, off, dst, len, &how);
}

int gdr_mem_gpu_write(struct gdr_mem *m, size_t off, const void *src, size_t len)
{
	int ret;

	if (!gpu_span_ok(m, off, len))
		return -EINVAL;
	ret = gdr_cuda_make_current(m->env->cuda, m->env->gpu);
	if (!ret)
		ret = gdr_cuda_htod(m->env->cuda, m->addr + off, src, len);
	/*
	 * Without SYNC_MEMOPS (cuMemCreate memory) a copy from pageable memory
	 * may return before its DMA landed: wait for the legacy default stream
	 * it ran on, so the NIC never reads ahead of it.
	 */
	if (!ret && m->vmm.va)
		ret = gdr_cuda_stream_sync(m->env->cuda, NULL);
	return ret;
}

int gdr_mem_gpu_read(struct gdr_mem *m, size_t off, void *dst, size_t len)
{
	int ret;

	if (!gpu_span_ok(m, off, len))
		return -EINVAL;
	ret = gdr_cuda_make_current(m->env->cuda, m->env->gpu);
	return ret ? ret : gdr_cuda_dtoh(m->env->cuda, dst, m->addr + off, len);
}

void gdr_dmabuf_range(uint64_t dptr, size_t len, size_t page, struct gdr_dmabuf_range *r)
{
	r->base = dptr & ~((uint64_t)page - 1);
	r->offset = dptr - r->base;
	r->span = (size_t)((r->offset + len + page - 1) & ~((uint64_t)page - 1));
}

int gdr_dmabuf_export(struct gdr_mem *m, int *fd, struct gdr_dmabuf_range *r, char *why,
		      size_t wlen)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char name[192];

	*fd = -1;
	/* The host page is what the driver checks (cuMemGetHandleForAddressRange). */
	gdr_dmabuf_range(m->addr, m->len, page, r);
	if (r->base < m->gpu_base || r->span > m->gpu_len ||
	    r->base - m->gpu_base > m->gpu_len - r->span) {
		snprintf(why, wlen,
			 "%s: DMA-BUF range [0x%llx, +%zu) is not inside the allocation [0x%llx, "
			 "+%zu)",
			 gdr_mem_gpu_name(m->env->gpu, name, sizeof(name)),
			 (unsigned long long)r->base, r->span, (unsigned long long)m->gpu_base,
			 m->gpu_len);
		return -EINVAL;
	}
	return gdr_cuda_dmabuf_export(m->env->cuda, r->base, r->span, m->env->dmabuf_pcie, fd, why,
				      wlen);
}

const char *gdr_peermem_explain(int err)
{
	switch (err) {
	case EFAULT:
		return "the kernel could not pin the pages: no peer-memory client claimed them "
		       "(is nvidia_peermem loaded, and was the NIC driver built with peer-memory "
		       "support?)";
	case EINVAL:
		return "the NIC driver or the peer-memory client rejected the range or the access "
		       "flags (nvidia_peermem takes cuMemAlloc memory only; remote write needs "
		       "local write)";
	case ENOMEM:
	case EPERM:
		return "pinning was refused: check the locked-memory limit (ulimit -l)";
	case EOPNOTSUPP:
		return "the provider cannot register GPU memory";
	default:
		return NULL;
	}
}
