/*
 * The CUDA loader of a build without CUDA headers: every call says so
 * (cuda.h's contract, -ENOSYS and "built without CUDA headers"), so that
 * the host path and gdr_doctor still build and run. mk/cuda.am builds this
 * file instead of cuda_*.c when configure found no cuda.h.
 *
 * Every function here ignores its arguments but the outputs it clears (the
 * handle, the count, the pointer, the fd, the VMM record): the arguments
 * carry nothing a build without a driver could use, hence the pragma.
 */
#include "config.h"

#include "cuda.h"
#include "util.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"

#define NO_CUDA "built without CUDA headers (configure --with-cuda=DIR)"

struct gdr_cuda {
	int unused;
};

/* The one answer of the calls that take a reason: NO_CUDA in why, -ENOSYS. */
static int no_cuda(char *why, size_t wlen)
{
	gdr_strlcpy(why, NO_CUDA, wlen);
	return -ENOSYS;
}

int gdr_cuda_load(struct gdr_cuda **out, char *why, size_t wlen)
{
	*out = NULL;
	return no_cuda(why, wlen);
}

void gdr_cuda_unload(struct gdr_cuda *cu)
{
}

int gdr_cuda_driver_version(struct gdr_cuda *cu, int *version)
{
	*version = 0;
	return -ENOSYS;
}

int gdr_cuda_device_count(struct gdr_cuda *cu, int *count)
{
	*count = 0;
	return -ENOSYS;
}

int gdr_cuda_gpu_info(struct gdr_cuda *cu, int ordinal, struct gdr_gpu *gpu, char *why, size_t wlen)
{
	return no_cuda(why, wlen);
}

int gdr_cuda_find_gpu(struct gdr_cuda *cu, const char *spec, struct gdr_gpu *gpu, char *why,
		      size_t wlen)
{
	return no_cuda(why, wlen);
}

int gdr_cuda_gpu_open(struct gdr_cuda *cu, struct gdr_gpu *gpu, char *why, size_t wlen)
{
	return no_cuda(why, wlen);
}

void gdr_cuda_gpu_close(struct gdr_cuda *cu, struct gdr_gpu *gpu)
{
}

int gdr_cuda_make_current(struct gdr_cuda *cu, struct gdr_gpu *gpu)
{
	return -ENOSYS;
}

int gdr_cuda_alloc(struct gdr_cuda *cu, size_t len, uint64_t *dptr, char *why, size_t wlen)
{
	*dptr = 0;
	return no_cuda(why, wlen);
}

void gdr_cuda_free(struct gdr_cuda *cu, uint64_t dptr)
{
}

int gdr_cuda_set_sync_memops(struct gdr_cuda *cu, uint64_t dptr, char *why, size_t wlen)
{
	return no_cuda(why, wlen);
}

int gdr_cuda_get_sync_memops(struct gdr_cuda *cu, uint64_t dptr, int *on, char *why, size_t wlen)
{
	*on = 0;
	return no_cuda(why, wlen);
}

int gdr_cuda_dmabuf_fd(struct gdr_cuda *cu, uint64_t dptr, size_t len, int *fd, char *why,
		       size_t wlen)
{
	*fd = -1;
	return no_cuda(why, wlen);
}

int gdr_cuda_dmabuf_export(struct gdr_cuda *cu, uint64_t dptr, size_t len, int pcie, int *fd,
			   char *why, size_t wlen)
{
	*fd = -1;
	return no_cuda(why, wlen);
}

size_t gdr_cuda_page_size(struct gdr_cuda *cu)
{
	return GDR_GPU_PAGE_SIZE;
}

int gdr_cuda_host_alloc(struct gdr_cuda *cu, size_t len, void **ptr, char *why, size_t wlen)
{
	*ptr = NULL;
	return no_cuda(why, wlen);
}

void gdr_cuda_host_free(struct gdr_cuda *cu, void *ptr)
{
}

int gdr_cuda_host_alloc_mapped(struct gdr_cuda *cu, size_t len, void **ptr, uint64_t *dptr,
			       char *why, size_t wlen)
{
	*ptr = NULL;
	*dptr = 0;
	return no_cuda(why, wlen);
}

int gdr_cuda_host_register(struct gdr_cuda *cu, void *ptr, size_t len, int mapped, uint64_t *dptr,
			   char *why, size_t wlen)
{
	*dptr = 0;
	return no_cuda(why, wlen);
}

void gdr_cuda_host_unregister(struct gdr_cuda *cu, void *ptr)
{
}

int gdr_cuda_copy_kernel_load(struct gdr_cuda *cu, struct gdr_cuda_kernel *k, char *why,
			      size_t wlen)
{
	k->module = k->func = NULL;
	return no_cuda(why, wlen);
}

void gdr_cuda_copy_kernel_unload(struct gdr_cuda *cu, struct gdr_cuda_kernel *k)
{
}

int gdr_cuda_copy_kernel_launch(struct gdr_cuda *cu, const struct gdr_cuda_kernel *k, uint64_t dst,
				uint64_t src, size_t len, unsigned int blocks, gdr_cuda_stream_t s)
{
	return -ENOSYS;
}

int gdr_cuda_htod(struct gdr_cuda *cu, uint64_t dst, const void *src, size_t len)
{
	return -ENOSYS;
}

int gdr_cuda_dtoh(struct gdr_cuda *cu, void *dst, uint64_t src, size_t len)
{
	return -ENOSYS;
}

int gdr_cuda_stream_create(struct gdr_cuda *cu, gdr_cuda_stream_t *s)
{
	*s = NULL;
	return -ENOSYS;
}

void gdr_cuda_stream_destroy(struct gdr_cuda *cu, gdr_cuda_stream_t s)
{
}

int gdr_cuda_stream_sync(struct gdr_cuda *cu, gdr_cuda_stream_t s)
{
	return -ENOSYS;
}

int gdr_cuda_htod_async(struct gdr_cuda *cu, uint64_t dst, const void *src, size_t len,
			gdr_cuda_stream_t s)
{
	return -ENOSYS;
}

int gdr_cuda_dtoh_async(struct gdr_cuda *cu, void *dst, uint64_t src, size_t len,
			gdr_cuda_stream_t s)
{
	return -ENOSYS;
}

int gdr_cuda_event_create(struct gdr_cuda *cu, gdr_cuda_event_t *e)
{
	*e = NULL;
	return -ENOSYS;
}

void gdr_cuda_event_destroy(struct gdr_cuda *cu, gdr_cuda_event_t e)
{
}

int gdr_cuda_event_record(struct gdr_cuda *cu, gdr_cuda_event_t e, gdr_cuda_stream_t s)
{
	return -ENOSYS;
}

int gdr_cuda_event_query(struct gdr_cuda *cu, gdr_cuda_event_t e)
{
	return -ENOSYS;
}

int gdr_cuda_event_sync(struct gdr_cuda *cu, gdr_cuda_event_t e)
{
	return -ENOSYS;
}

const char *gdr_cuda_last_error(struct gdr_cuda *cu)
{
	return NO_CUDA;
}

const char *gdr_cuda_getproc_abi(struct gdr_cuda *cu)
{
	return "none";
}

int gdr_cuda_sym(size_t i, const char **name, int *version, int *optional)
{
	(void)i;
	(void)name;
	(void)version;
	(void)optional;
	return -1;
}

int gdr_cuda_vmm_granularity(struct gdr_cuda *cu, const struct gdr_gpu *gpu, size_t *gran,
			     char *why, size_t wlen)
{
	*gran = 0;
	return no_cuda(why, wlen);
}

int gdr_cuda_vmm_alloc(struct gdr_cuda *cu, const struct gdr_gpu *gpu, size_t len,
		       struct gdr_cuda_vmm *v, char *why, size_t wlen)
{
	memset(v, 0, sizeof(*v));
	return no_cuda(why, wlen);
}

void gdr_cuda_vmm_free(struct gdr_cuda *cu, struct gdr_cuda_vmm *v)
{
	memset(v, 0, sizeof(*v));
}

int gdr_cuda_flush_rdma_writes(struct gdr_cuda *cu, const struct gdr_gpu *gpu, const char **how)
{
	*how = NO_CUDA;
	return -ENOSYS;
}
