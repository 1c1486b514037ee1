/*
 * The bounce path's SM copy on the driver API: mapped pinned host memory
 * (cuMemHostAlloc(DEVICEMAP) + cuMemHostGetDevicePointer), the copy kernel's
 * PTX loaded with cuModuleLoadData (the driver JIT-compiles it: no toolkit at
 * run time), and its launch with cuLaunchKernel (docs/bounce.md). Also the
 * ring of --hugepages: memory the caller mapped, pinned (and mapped for the
 * kernel) by cuMemHostRegister.
 */
#include "config.h"

#include "cuda_int.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int gdr_cuda_host_alloc_mapped(struct gdr_cuda *cu, size_t len, void **ptr, uint64_t *dptr,
			       char *why, size_t wlen)
{
	CUdeviceptr d = 0;
	char sz[32];
	int ret;

	*ptr = NULL;
	*dptr = 0;
	if (!cu->MemHostGetDevicePointer)
		return gdr_cu_absent(cu, why, wlen, "cuMemHostGetDevicePointer");
	ret = gdr_cu_check(
	    cu, why, wlen,
	    cu->MemHostAlloc(ptr, len, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP),
	    "cuMemHostAlloc(%s, DEVICEMAP)", gdr_fmt_size(len, sz, sizeof(sz)));
	if (ret) {
		*ptr = NULL;
		return ret;
	}
	ret = gdr_cu_check(cu, why, wlen, cu->MemHostGetDevicePointer(&d, *ptr, 0),
			   "cuMemHostGetDevicePointer(%p)", *ptr);
	if (ret) {
		cu->MemFreeHost(*ptr);
		*ptr = NULL;
		return ret;
	}
	*dptr = (uint64_t)d;
	return 0;
}

int gdr_cuda_host_register(struct gdr_cuda *cu, void *ptr, size_t len, int mapped, uint64_t *dptr,
			   char *why, size_t wlen)
{
	unsigned int flags = CU_MEMHOSTREGISTER_PORTABLE;
	CUdeviceptr d = 0;
	char sz[32];
	int ret;

	*dptr = 0;
	if (!cu->MemHostRegister || !cu->MemHostUnregister)
		return gdr_cu_absent(cu, why, wlen, "cuMemHostRegister");
	if (mapped && !cu->MemHostGetDevicePointer)
		return gdr_cu_absent(cu, why, wlen, "cuMemHostGetDevicePointer");
	if (mapped)
		flags |= CU_MEMHOSTREGISTER_DEVICEMAP;
	ret = gdr_cu_check(cu, why, wlen, cu->MemHostRegister(ptr, len, flags),
			   "cuMemHostRegister(%s%s)", gdr_fmt_size(len, sz, sizeof(sz)),
			   mapped ? ", DEVICEMAP" : "");
	if (ret || !mapped)
		return ret;
	ret = gdr_cu_check(cu, why, wlen, cu->MemHostGetDevicePointer(&d, ptr, 0),
			   "cuMemHostGetDevicePointer(%p)", ptr);
	if (ret) {
		cu->MemHostUnregister(ptr);
		return ret;
	}
	*dptr = (uint64_t)d;
	return 0;
}

void gdr_cuda_host_unregister(struct gdr_cuda *cu, void *ptr)
{
	if (ptr && cu->MemHostUnregister)
		gdr_cu_check(cu, NULL, 0, cu->MemHostUnregister(ptr), "cuMemHostUnregister(%p)",
			     ptr);
}

int gdr_cuda_copy_kernel_load(struct gdr_cuda *cu, struct gdr_cuda_kernel *k, char *why,
			      size_t wlen)
{
	CUmodule mod = NULL;
	CUfunction fn = NULL;
	int ret;

	memset(k, 0, sizeof(*k));
	if (!cu->ModuleLoadData || !cu->ModuleGetFunction || !cu->ModuleUnload || !cu->LaunchKernel)
		return gdr_cu_absent(cu, why, wlen, "cuModuleLoadData/cuLaunchKernel");
	ret = gdr_cu_check(cu, why, wlen, cu->ModuleLoadData(&mod, gdr_bounce_copy_ptx),
			   "cuModuleLoadData(%s PTX, %zu B)", GDR_COPY_KERNEL,
			   strlen(gdr_bounce_copy_ptx));
	if (ret)
		return ret;
	ret = gdr_cu_check(cu, why, wlen, cu->ModuleGetFunction(&fn, mod, GDR_COPY_KERNEL),
			   "cuModuleGetFunction(%s)", GDR_COPY_KERNEL);
	if (ret) {
		cu->ModuleUnload(mod);
		return ret;
	}
	k->module = mod;
	k->func = fn;
	return 0;
}

void gdr_cuda_copy_kernel_unload(struct gdr_cuda *cu, struct gdr_cuda_kernel *k)
{
	if (k->module)
		gdr_cu_check(cu, NULL, 0, cu->ModuleUnload((CUmodule)k->module), "cuModuleUnload");
	memset(k, 0, sizeof(*k));
}

int gdr_cuda_copy_kernel_launch(struct gdr_cuda *cu, const struct gdr_cuda_kernel *k, uint64_t dst,
				uint64_t src, size_t len, unsigned int blocks, gdr_cuda_stream_t s)
{
	/* The kernel's parameters, in its order: dst, src, n (all 64-bit). */
	unsigned long long d = dst, sr = src, n = len;
	void *params[] = { &d, &sr, &n };

	if (!k->func)
		return -EINVAL;
	if (len == 0)
		return 0;
	return gdr_cu_check(cu, NULL, 0,
			    cu->LaunchKernel((CUfunction)k->func, blocks, 1, 1, GDR_COPY_THREADS, 1,
					     1, 0, (CUstream)s, params, NULL),
			    "cuLaunchKernel(%s, %u x %u, 0x%llx <- 0x%llx, %zu)", GDR_COPY_KERNEL,
			    blocks, GDR_COPY_THREADS, d, sr, len);
}
