/*
 * CUDA driver API loaded at run time: see cuda.h for the contract.
 *
 * Only cuGetProcAddress is looked up with dlsym; every other entry point comes
 * from cuGetProcAddress at the CUDA version that introduced the ABI this file
 * was written against, so that a newer driver never hands us a variant with a
 * different signature and an older one fails by name instead of by crash.
 *
 *   entry point                     version  variant   signature source
 *   cuGetProcAddress (dlsym)        11030    v1        own typedef (cuda.h maps the name to _v2)
 *   cuGetProcAddress_v2 (dlsym)     12000    v2        fallback when a driver drops the v1 symbol
 *   cuGetErrorName                   6000    v1        PFN_cuGetErrorName_v6000
 *   cuGetErrorString                 6000    v1        PFN_cuGetErrorString_v6000
 *   cuInit                           2000    v1        PFN_cuInit_v2000
 *   cuDriverGetVersion               2020    v1        PFN_cuDriverGetVersion_v2020
 *   cuDeviceGetCount                 2000    v1        PFN_cuDeviceGetCount_v2000
 *   cuDeviceGet                      2000    v1        PFN_cuDeviceGet_v2000
 *   cuDeviceGetName                  2000    v1        PFN_cuDeviceGetName_v2000
 *   cuDeviceGetPCIBusId              4010    v1        PFN_cuDeviceGetPCIBusId_v4010
 *   cuDeviceTotalMem                 3020    _v2       PFN_cuDeviceTotalMem_v3020 (size_t)
 *   cuDeviceGetAttribute             2000    v1        PFN_cuDeviceGetAttribute_v2000
 *   cuDevicePrimaryCtxRetain         7000    v1        PFN_cuDevicePrimaryCtxRetain_v7000
 *   cuDevicePrimaryCtxRelease       11000    _v2       PFN_cuDevicePrimaryCtxRelease_v11000
 *   cuCtxSetCurrent                  4000    v1        PFN_cuCtxSetCurrent_v4000
 *   cuMemAlloc                       3020    _v2       PFN_cuMemAlloc_v3020 (64-bit CUdeviceptr)
 *   cuMemFree                        3020    _v2       PFN_cuMemFree_v3020
 *   cuMemHostAlloc                   2020    v1        PFN_cuMemHostAlloc_v2020
 *   cuMemFreeHost                    2000    v1        PFN_cuMemFreeHost_v2000
 *   cuMemcpyHtoD                     3020    _v2       PFN_cuMemcpyHtoD_v3020
 *   cuMemcpyDtoH                     3020    _v2       PFN_cuMemcpyDtoH_v3020
 *   cuMemcpyHtoDAsync                3020    _v2       PFN_cuMemcpyHtoDAsync_v3020
 *   cuMemcpyDtoHAsync                3020    _v2       PFN_cuMemcpyDtoHAsync_v3020
 *   cuStreamCreate                   2000    v1        PFN_cuStreamCreate_v2000
 *   cuStreamDestroy                  4000    _v2       PFN_cuStreamDestroy_v4000
 *   cuStreamSynchronize              2000    v1        PFN_cuStreamSynchronize_v2000
 *   cuEventCreate                    2000    v1        PFN_cuEventCreate_v2000
 *   cuEventDestroy                   4000    _v2       PFN_cuEventDestroy_v4000
 *   cuEventRecord                    2000    v1        PFN_cuEventRecord_v2000
 *   cuEventQuery                     2000    v1        PFN_cuEventQuery_v2000
 *   cuEventSynchronize               2000    v1        PFN_cuEventSynchronize_v2000
 *   cuPointerSetAttribute            6000    v1        PFN_cuPointerSetAttribute_v6000
 *   cuPointerGetAttribute            4000    v1        PFN_cuPointerGetAttribute_v4000
 *   cuMemGetHandleForAddressRange   11070    v1        PFN_..._v11070 (optional: DMA-BUF)
 *   cuDeviceGetUuid                 11040    _v2       PFN_cuDeviceGetUuid_v11040 (optional;
 *                                                      _v2 names MIG instances by their UUID)
 *   cuFlushGPUDirectRDMAWrites      11030    v1        PFN_..._v11030 (optional)
 *   cuMemGetAllocationGranularity   10020    v1        PFN_..._v10020 (optional: VMM)
 *   cuMemCreate, cuMemRelease,      10020    v1        PFN_..._v10020 (optional: VMM)
 *   cuMemAddressReserve/Free,
 *   cuMemMap, cuMemUnmap, cuMemSetAccess
 *   cuMemHostGetDevicePointer        3020    _v2       PFN_..._v3020 (optional: SM copy)
 *   cuModuleLoadData, cuModuleUnload, 2000   v1        PFN_..._v2000 (optional: SM copy)
 *   cuModuleGetFunction
 *   cuLaunchKernel                   4000    v1        PFN_cuLaunchKernel_v4000 (optional)
 *   cuMemHostRegister                6050    _v2       PFN_..._v6050 (optional: --hugepages
 *                                                      bounce ring)
 *   cuMemHostUnregister              4000    v1        PFN_..._v4000 (optional)
 *
 * The rest of the loader: cuda_error.c (errors in words), cuda_gpu.c (GPU
 * selection, primary context), cuda_mem.c (device and pinned host memory,
 * DMA-BUF export), cuda_vmm.c (VMM allocations), cuda_stream.c (streams,
 * events, asynchronous copies). These files are built only with CUDA
 * headers; cuda_none.c is their stand-in otherwise (mk/cuda.am chooses).
 *
 * All lookups pass CU_GET_PROC_ADDRESS_LEGACY_STREAM: we always name our
 * streams, and the legacy variants behave the same on a named stream.
 */
#include "config.h"

#include "cuda_int.h"
#include "util.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gdr_cuda_sym {
	const char *name;
	int version;
	size_t offset;
	int optional; /* missing = feature absent, not a broken driver */
};

/* clang-format off */
#define SYM(fn, ver, field) { #fn, ver, offsetof(struct gdr_cuda, field), 0 }
#define OPT(fn, ver, field) { #fn, ver, offsetof(struct gdr_cuda, field), 1 }
/* clang-format on */

static const struct gdr_cuda_sym gdr_cuda_syms[] = {
	SYM(cuGetErrorName, 6000, GetErrorName),
	SYM(cuGetErrorString, 6000, GetErrorString),
	SYM(cuInit, 2000, Init),
	SYM(cuDriverGetVersion, 2020, DriverGetVersion),
	SYM(cuDeviceGetCount, 2000, DeviceGetCount),
	SYM(cuDeviceGet, 2000, DeviceGet),
	SYM(cuDeviceGetName, 2000, DeviceGetName),
	SYM(cuDeviceGetPCIBusId, 4010, DeviceGetPCIBusId),
	SYM(cuDeviceTotalMem, 3020, DeviceTotalMem),
	SYM(cuDeviceGetAttribute, 2000, DeviceGetAttribute),
	SYM(cuDevicePrimaryCtxRetain, 7000, DevicePrimaryCtxRetain),
	SYM(cuDevicePrimaryCtxRelease, 11000, DevicePrimaryCtxRelease),
	SYM(cuCtxSetCurrent, 4000, CtxSetCurrent),
	SYM(cuMemAlloc, 3020, MemAlloc),
	SYM(cuMemFree, 3020, MemFree),
	SYM(cuMemHostAlloc, 2020, MemHostAlloc),
	SYM(cuMemFreeHost, 2000, MemFreeHost),
	SYM(cuMemcpyHtoD, 3020, MemcpyHtoD),
	SYM(cuMemcpyDtoH, 3020, MemcpyDtoH),
	SYM(cuMemcpyHtoDAsync, 3020, MemcpyHtoDAsync),
	SYM(cuMemcpyDtoHAsync, 3020, MemcpyDtoHAsync),
	SYM(cuStreamCreate, 2000, StreamCreate),
	SYM(cuStreamDestroy, 4000, StreamDestroy),
	SYM(cuStreamSynchronize, 2000, StreamSynchronize),
	SYM(cuEventCreate, 2000, EventCreate),
	SYM(cuEventDestroy, 4000, EventDestroy),
	SYM(cuEventRecord, 2000, EventRecord),
	SYM(cuEventQuery, 2000, EventQuery),
	SYM(cuEventSynchronize, 2000, EventSynchronize),
	SYM(cuPointerSetAttribute, 6000, PointerSetAttribute),
	SYM(cuPointerGetAttribute, 4000, PointerGetAttribute),
	OPT(cuMemGetHandleForAddressRange, 11070, MemGetHandleForAddressRange),
	OPT(cuDeviceGetUuid, 11040, DeviceGetUuid),
	OPT(cuFlushGPUDirectRDMAWrites, 11030, FlushGPUDirectRDMAWrites),
	OPT(cuMemGetAllocationGranularity, 10020, MemGetAllocationGranularity),
	OPT(cuMemCreate, 10020, MemCreate),
	OPT(cuMemRelease, 10020, MemRelease),
	OPT(cuMemAddressReserve, 10020, MemAddressReserve),
	OPT(cuMemAddressFree, 10020, MemAddressFree),
	OPT(cuMemMap, 10020, MemMap),
	OPT(cuMemUnmap, 10020, MemUnmap),
	OPT(cuMemSetAccess, 10020, MemSetAccess),
	OPT(cuMemHostGetDevicePointer, 3020, MemHostGetDevicePointer),
	OPT(cuModuleLoadData, 2000, ModuleLoadData),
	OPT(cuModuleUnload, 2000, ModuleUnload),
	OPT(cuModuleGetFunction, 2000, ModuleGetFunction),
	OPT(cuLaunchKernel, 4000, LaunchKernel),
	OPT(cuMemHostRegister, 6050, MemHostRegister),
	OPT(cuMemHostUnregister, 4000, MemHostUnregister),
};

static int cu_getproc(struct gdr_cuda *cu, const char *name, int version, void **fn)
{
	cuuint64_t flags = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
	int status = 0;

	*fn = NULL;
	if (cu->getproc_v1)
		return cu->getproc_v1(name, fn, version, flags);
	return cu->getproc_v2(name, fn, version, flags, &status);
}

static int cu_resolve(struct gdr_cuda *cu, char *why, size_t wlen)
{
	for (size_t i = 0; i < GDR_ARRAY_SIZE(gdr_cuda_syms); i++) {
		const struct gdr_cuda_sym *s = &gdr_cuda_syms[i];
		void *fn = NULL;
		CUresult rc = cu_getproc(cu, s->name, s->version, &fn);

		if (rc == CUDA_SUCCESS && fn) {
			memcpy((char *)cu + s->offset, &fn, sizeof(fn));
			continue;
		}
		if (s->optional) {
			gdr_dbg("%s: %s (ABI %d) not available: CUresult %d", cu->libname, s->name,
				s->version, (int)rc);
			continue;
		}
		return gdr_cu_fail(cu, rc == CUDA_SUCCESS ? CUDA_ERROR_NOT_FOUND : rc, why, wlen,
				   "%s: cuGetProcAddress(%s, %d)", cu->libname, s->name,
				   s->version);
	}
	return 0;
}

int gdr_cuda_load(struct gdr_cuda **out, char *why, size_t wlen)
{
	const char *env = getenv("GDRPERF_LIBCUDA");
	const char *name = env && *env ? env : "libcuda.so.1";
	struct gdr_cuda *cu;
	char ver[32];
	CUresult rc;
	int ret;

	*out = NULL;
	cu = calloc(1, sizeof(*cu));
	if (!cu) {
		gdr_strlcpy(why, "out of memory", wlen);
		return -ENOMEM;
	}
	gdr_strlcpy(cu->libname, name, sizeof(cu->libname));
	cu->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!cu->lib) {
		/* dlerror() already names the file. */
		snprintf(why, wlen, "no CUDA driver (%s)", dlerror());
		ret = -ENOENT;
		goto out_free;
	}
	*(void **)&cu->getproc_v1 = dlsym(cu->lib, "cuGetProcAddress");
	if (!cu->getproc_v1)
		*(void **)&cu->getproc_v2 = dlsym(cu->lib, "cuGetProcAddress_v2");
	if (!cu->getproc_v1 && !cu->getproc_v2) {
		snprintf(why, wlen,
			 "no CUDA driver (%s: no cuGetProcAddress: driver older than CUDA 11.3 or "
			 "not a CUDA driver)",
			 name);
		ret = -ENOSYS;
		goto out_close;
	}
	ret = cu_resolve(cu, why, wlen);
	if (ret)
		goto out_close;
	rc = cu->DriverGetVersion(&cu->driver_version);
	if (rc != CUDA_SUCCESS) {
		ret = gdr_cu_fail(cu, rc, why, wlen, "%s: cuDriverGetVersion", name);
		goto out_close;
	}
	rc = cu->Init(0);
	if (rc != CUDA_SUCCESS) {
		char desc[160];

		gdr_cu_fmt_version(cu->driver_version, ver, sizeof(ver));
		snprintf(why, wlen, "%s (cuInit: %s; driver %s, %s)",
			 rc == CUDA_ERROR_NO_DEVICE ? "no CUDA device" : "CUDA driver unusable",
			 gdr_cu_describe(cu, rc, desc, sizeof(desc)), ver, name);
		ret = gdr_cu_errno(rc);
		goto out_close;
	}
	gdr_dbg("%s: CUDA driver %d, cuGetProcAddress %s", name, cu->driver_version,
		cu->getproc_v1 ? "v1" : "v2");
	*out = cu;
	return 0;

out_close:
	dlclose(cu->lib);
out_free:
	free(cu);
	return ret;
}

void gdr_cuda_unload(struct gdr_cuda *cu)
{
	if (!cu)
		return;
	/* Not dlclose'd: the driver keeps threads and atexit handlers of its own. */
	free(cu);
}

int gdr_cuda_driver_version(struct gdr_cuda *cu, int *version)
{
	*version = cu->driver_version;
	return 0;
}

int gdr_cuda_sym(size_t i, const char **name, int *version, int *optional)
{
	if (i >= GDR_ARRAY_SIZE(gdr_cuda_syms))
		return -1;
	*name = gdr_cuda_syms[i].name;
	*version = gdr_cuda_syms[i].version;
	*optional = gdr_cuda_syms[i].optional;
	return 0;
}

const char *gdr_cuda_getproc_abi(struct gdr_cuda *cu)
{
	return cu->getproc_v1 ? "cuGetProcAddress (v1)" : "cuGetProcAddress_v2";
}
