/*
 * The CUDA loader of a build without CUDA headers: every call says so
 * (cuda.h's contract, -ENOSYS and "built without CUDA headers"), so that
 * the host path and gdr_doctor still build and run. mk/cuda.am builds this
 * file instead of cuda.c when configure found no cuda.h.
 */
#include "config.h"

#include "cuda.h"
#include "util.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#define NO_CUDA "built without CUDA headers (configure --with-cuda=DIR)"

struct gdr_cuda {
	int unused;
};

int gdr_cuda_load(struct gdr_cuda **out, char *why, size_t wlen)
{
	*out = NULL;
	gdr_strlcpy(why, NO_CUDA, wlen);
	return -ENOSYS;
}

void gdr_cuda_unload(struct gdr_cuda *cu)
{
	(void)cu;
}

int gdr_cuda_driver_version(struct gdr_cuda *cu, int *version)
{
	(void)cu;
	*version = 0;
	return -ENOSYS;
}

int gdr_cuda_device_count(struct gdr_cuda *cu, int *count)
{
	(void)cu;
	*count = 0;
	return -ENOSYS;
}

int gdr_cuda_gpu_info(struct gdr_cuda *cu, int ordinal, struct gdr_gpu *gpu, char *why, size_t wlen)
{
	(void)cu;
	(void)ordinal;
	(void)gpu;
	gdr_strlcpy(why, NO_CUDA, wlen);
	return -ENOSYS;
}

int gdr_cuda_find_gpu(struct gdr_cuda *cu, const char *spec, struct gdr_gpu *gpu, char *why,
		      size_t wlen)
{
	(void)cu;
	(void)spec;
	(void)gpu;
	gdr_strlcpy(why, NO_CUDA, wlen);
	return -ENOSYS;
}

int gdr_cuda_gpu_open(struct gdr_cuda *cu, struct gdr_gpu *gpu, char *why, size_t wlen)
{
	(void)cu;
	(void)gpu;
	gdr_strlcpy(why, NO_CUDA, wlen);
	return -ENOSYS;
}

void gdr_cuda_gpu_close(struct gdr_cuda *cu, struct gdr_gpu *gpu)
{
	(void)cu;
	(void)gpu;
}

int gdr_cuda_make_current(struct gdr_cuda *cu, struct gdr_gpu *gpu)
{
	(void)cu;
	(void)gpu;
	return -ENOSYS;
}

int gdr_cuda_alloc(struct gdr_cuda *cu, size_t len, uint64_t *dptr, char *why, size_t wlen)
{
	(void)cu;
	(void)len;
	*dptr = 0;
	gdr_strlcpy(why, NO_CUDA, wlen);
	return -ENOSYS;
}

void gdr_cuda_free(struct gdr_cuda *cu, uint64_t dptr)
{
	(void)cu;
	(void)dptr;
}

int gdr_cuda_set_sync_memops(struct gdr_cuda *cu, uint64_t dptr, char *why, size_t wlen)
{
	(void)cu;
	(void)dptr;
	gdr_strlcpy(why, NO_CUDA, wlen);
	return -ENOSYS;
}

int gdr_cuda_get_sync_memops(struct gdr_cuda *cu, uint64_t dptr, int *on, char *why, size_t wlen)
{
	(void)cu;
	(void)dptr;
	*on = 0;
	gdr_strlcpy(why, NO_CUDA, wlen);
	return -ENOSYS;
}

int gdr_cuda_dmabuf_fd(struct gdr_cuda *cu, uint64_t dptr, size_t len, int *fd, char *why,
		       size_t wlen)
{
	(void)cu;
	(void)dptr;
	(void)len;
	*fd = -1;
	gdr_strlcpy(why, NO_CUDA, wlen);
	return -ENOSYS;
}

size_t gdr_cuda_page_size(struct gdr_cuda *cu)
{
	(void)cu;
	return GDR_GPU_PAGE_SIZE;
}

int gdr_cuda_host_alloc(struct gdr_cuda *cu, size_t len, void **ptr, char *why, size_t wlen)
{
	(void)cu;
	(void)len;
	*ptr = NULL;
	gdr_strlcpy(why, NO_CUDA, wlen);
	return -ENOSYS;
}

void gdr_cuda_host_free(struct gdr_cuda *cu, void *ptr)
{
	(void)cu;
	(void)ptr;
}

int gdr_cuda_htod(struct gdr_cuda *cu, uint64_t dst, const void *src, size_t len)
{
	(void)cu;
	(void)dst;
	(void)src;
	(void)len;
	return -ENOSYS;
}

int gdr_cuda_dtoh(struct gdr_cuda *cu, void *dst, uint64_t src, size_t len)
{
	(void)cu;
	(void)dst;
	(void)src;
	(void)len;
	return -ENOSYS;
}

int gdr_cuda_stream_create(struct gdr_cuda *cu, gdr_cuda_stream_t *s)
{
	(void)cu;
	*s = NULL;
	return -ENOSYS;
}

void gdr_cuda_stream_destroy(struct gdr_cuda *cu, gdr_cuda_stream_t s)
{
	(void)cu;
	(void)s;
}

int gdr_cuda_stream_sync(struct gdr_cuda *cu, gdr_cuda_stream_t s)
{
	(void)cu;
	(void)s;
	return -ENOSYS;
}

int gdr_cuda_htod_async(struct gdr_cuda *cu, uint64_t dst, const void *src, size_t len,
			gdr_cuda_stream_t s)
{
	(void)cu;
	(void)dst;
	(void)src;
	(void)len;
	(void)s;
	return -ENOSYS;
}

int gdr_cuda_dtoh_async(struct gdr_cuda *cu, void *dst, uint64_t src, size_t len,
			gdr_cuda_stream_t s)
{
	(void)cu;
	(void)dst;
	(void)src;
	(void)len;
	(void)s;
	return -ENOSYS;
}

int gdr_cuda_event_create(struct gdr_cuda *cu, gdr_cuda_event_t *e)
{
	(void)cu;
	*e = NULL;
	return -ENOSYS;
}

void gdr_cuda_event_destroy(struct gdr_cuda *cu, gdr_cuda_event_t e)
{
	(void)cu;
	(void)e;
}

int gdr_cuda_event_record(struct gdr_cuda *cu, gdr_cuda_event_t e, gdr_cuda_stream_t s)
{
	(void)cu;
	(void)e;
	(void)s;
	return -ENOSYS;
}

int gdr_cuda_event_query(struct gdr_cuda *cu, gdr_cuda_event_t e)
{
	(void)cu;
	(void)e;
	return -ENOSYS;
}

int gdr_cuda_event_sync(struct gdr_cuda *cu, gdr_cuda_event_t e)
{
	(void)cu;
	(void)e;
	return -ENOSYS;
}

const char *gdr_cuda_last_error(struct gdr_cuda *cu)
{
	(void)cu;
	return NO_CUDA;
}

const char *gdr_cuda_getproc_abi(struct gdr_cuda *cu)
{
	(void)cu;
	return "none";
}

int gdr_cuda_dmabuf_export(struct gdr_cuda *cu, uint64_t dptr, size_t len, int pcie, int *fd,
			   char *why, size_t wlen)
{
	(void)pcie;
	return gdr_cuda_dmabuf_fd(cu, dptr, len, fd, why, wlen);
}

int gdr_cuda_vmm_granularity(struct gdr_cuda *cu, const struct gdr_gpu *gpu, size_t *gran,
			     char *why, size_t wlen)
{
	(void)cu;
	(void)gpu;
	*gran = 0;
	gdr_strlcpy(why, NO_CUDA, wlen);
	return -ENOSYS;
}

int gdr_cuda_vmm_alloc(struct gdr_cuda *cu, const struct gdr_gpu *gpu, size_t len,
		       struct gdr_cuda_vmm *v, char *why, size_t wlen)
{
	(void)cu;
	(void)gpu;
	(void)len;
	memset(v, 0, sizeof(*v));
	gdr_strlcpy(why, NO_CUDA, wlen);
	return -ENOSYS;
}

void gdr_cuda_vmm_free(struct gdr_cuda *cu, struct gdr_cuda_vmm *v)
{
	(void)cu;
	memset(v, 0, sizeof(*v));
}

int gdr_cuda_flush_rdma_writes(struct gdr_cuda *cu, const struct gdr_gpu *gpu, const char **how)
{
	(void)cu;
	(void)gpu;
	*how = NO_CUDA;
	return -ENOSYS;
}
