/* Helpers shared by the GPU memory backends: see mem_gpu.h. */
#include "config.h"

#include "mem_gpu.h"

#include "cuda.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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

int gdr_mem_gpu_alloc(struct gdr_mem *m, size_t len, char *why, size_t wlen)
{
	struct gdr_cuda *cu = m->env->cuda;
	size_t page = gdr_cuda_page_size(cu);
	size_t alloc_len;
	char name[192];
	int ret;

	m->addr = 0;
	m->host = NULL;
	m->len = 0;
	if (len == 0 || len > SIZE_MAX - page) {
		snprintf(why, wlen, "bad GPU buffer size %zu", len);
		return -EINVAL;
	}
	/* Whole GPU pages: nothing else then shares the pages the NIC pins or maps. */
	alloc_len = (len + page - 1) / page * page;
	ret = gdr_cuda_make_current(cu, m->env->gpu);
	if (ret) {
		snprintf(why, wlen, "%s: %s", gdr_mem_gpu_name(m->env->gpu, name, sizeof(name)),
			 gdr_cuda_last_error(cu));
		return ret;
	}
	ret = gdr_cuda_alloc(cu, alloc_len, &m->addr, NULL, 0);
	if (ret) {
		snprintf(why, wlen, "%s: %s", gdr_mem_gpu_name(m->env->gpu, name, sizeof(name)),
			 gdr_cuda_last_error(cu));
		return ret;
	}
	m->len = len;
	return 0;
}

void gdr_mem_gpu_free(struct gdr_mem *m)
{
	if (m->mr) {
		ibv_dereg_mr(m->mr);
		m->mr = NULL;
	}
	if (m->addr && m->env && m->env->cuda) {
		gdr_cuda_make_current(m->env->cuda, m->env->gpu);
		gdr_cuda_free(m->env->cuda, m->addr);
	}
	m->addr = 0;
	m->len = 0;
}

static int gpu_span_ok(const struct gdr_mem *m, size_t off, size_t len)
{
	return m->addr && off <= m->len && len <= m->len - off;
}

int gdr_mem_gpu_write(struct gdr_mem *m, size_t off, const void *src, size_t len)
{
	int ret;

	if (!gpu_span_ok(m, off, len))
		return -EINVAL;
	ret = gdr_cuda_make_current(m->env->cuda, m->env->gpu);
	return ret ? ret : gdr_cuda_htod(m->env->cuda, m->addr + off, src, len);
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

int gdr_dmabuf_export(struct gdr_cuda *cu, uint64_t dptr, size_t len, int *fd,
		      struct gdr_dmabuf_range *r, char *why, size_t wlen)
{
	gdr_dmabuf_range(dptr, len, gdr_cuda_page_size(cu), r);
	return gdr_cuda_dmabuf_fd(cu, r->base, r->span, fd, why, wlen);
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
