/*
 * Shared by the CUDA loader's files only (cuda_load.c, cuda_error.c,
 * cuda_gpu.c, cuda_mem.c, cuda_vmm.c, cuda_stream.c): the toolkit's types, the
 * table of resolved entry points, and the error helpers every call goes
 * through. Built only with CUDA headers; cuda_none.c stands in otherwise.
 */
#ifndef GDR_CUDA_INT_H
#define GDR_CUDA_INT_H

#include "cuda.h"

/* Our header is "cuda.h" too: reach the toolkit's through its own include path. */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <stddef.h>

#if CUDA_VERSION < 11070
#error "CUDA headers >= 11.7 are needed (cuMemGetHandleForAddressRange); configure --without-cuda"
#endif

/* cuda.h #defines cuGetProcAddress to cuGetProcAddress_v2 in CUDA 12+: spell both ABIs out. */
typedef CUresult (*gdr_getproc_v1_t)(const char *symbol, void **pfn, int cuda_version,
				     cuuint64_t flags);
typedef CUresult (*gdr_getproc_v2_t)(const char *symbol, void **pfn, int cuda_version,
				     cuuint64_t flags, int *symbol_status);

struct gdr_cuda {
	void *lib;
	char libname[256];
	gdr_getproc_v1_t getproc_v1;
	gdr_getproc_v2_t getproc_v2;
	int driver_version;
	PFN_cuGetErrorName_v6000 GetErrorName;
	PFN_cuGetErrorString_v6000 GetErrorString;
	PFN_cuInit_v2000 Init;
	PFN_cuDriverGetVersion_v2020 DriverGetVersion;
	PFN_cuDeviceGetCount_v2000 DeviceGetCount;
	PFN_cuDeviceGet_v2000 DeviceGet;
	PFN_cuDeviceGetName_v2000 DeviceGetName;
	PFN_cuDeviceGetPCIBusId_v4010 DeviceGetPCIBusId;
	PFN_cuDeviceTotalMem_v3020 DeviceTotalMem;
	PFN_cuDeviceGetAttribute_v2000 DeviceGetAttribute;
	PFN_cuDevicePrimaryCtxRetain_v7000 DevicePrimaryCtxRetain;
	PFN_cuDevicePrimaryCtxRelease_v11000 DevicePrimaryCtxRelease;
	PFN_cuCtxSetCurrent_v4000 CtxSetCurrent;
	PFN_cuMemAlloc_v3020 MemAlloc;
	PFN_cuMemFree_v3020 MemFree;
	PFN_cuMemHostAlloc_v2020 MemHostAlloc;
	PFN_cuMemFreeHost_v2000 MemFreeHost;
	PFN_cuMemcpyHtoD_v3020 MemcpyHtoD;
	PFN_cuMemcpyDtoH_v3020 MemcpyDtoH;
	PFN_cuMemcpyHtoDAsync_v3020 MemcpyHtoDAsync;
	PFN_cuMemcpyDtoHAsync_v3020 MemcpyDtoHAsync;
	PFN_cuStreamCreate_v2000 StreamCreate;
	PFN_cuStreamDestroy_v4000 StreamDestroy;
	PFN_cuStreamSynchronize_v2000 StreamSynchronize;
	PFN_cuEventCreate_v2000 EventCreate;
	PFN_cuEventDestroy_v4000 EventDestroy;
	PFN_cuEventRecord_v2000 EventRecord;
	PFN_cuEventQuery_v2000 EventQuery;
	PFN_cuEventSynchronize_v2000 EventSynchronize;
	PFN_cuPointerSetAttribute_v6000 PointerSetAttribute;
	PFN_cuPointerGetAttribute_v4000 PointerGetAttribute;
	PFN_cuMemGetHandleForAddressRange_v11070 MemGetHandleForAddressRange;
	PFN_cuDeviceGetUuid_v11040 DeviceGetUuid;
	PFN_cuFlushGPUDirectRDMAWrites_v11030 FlushGPUDirectRDMAWrites;
	PFN_cuMemGetAllocationGranularity_v10020 MemGetAllocationGranularity;
	PFN_cuMemCreate_v10020 MemCreate;
	PFN_cuMemRelease_v10020 MemRelease;
	PFN_cuMemAddressReserve_v10020 MemAddressReserve;
	PFN_cuMemAddressFree_v10020 MemAddressFree;
	PFN_cuMemMap_v10020 MemMap;
	PFN_cuMemUnmap_v10020 MemUnmap;
	PFN_cuMemSetAccess_v10020 MemSetAccess;
	/* The SM copy (cuda_kernel.c). */
	PFN_cuMemHostGetDevicePointer_v3020 MemHostGetDevicePointer;
	PFN_cuModuleLoadData_v2000 ModuleLoadData;
	PFN_cuModuleUnload_v2000 ModuleUnload;
	PFN_cuModuleGetFunction_v2000 ModuleGetFunction;
	PFN_cuLaunchKernel_v4000 LaunchKernel;
	/* --hugepages: the bounce ring on huge pages the driver pins (cuda_kernel.c). */
	PFN_cuMemHostRegister_v6050 MemHostRegister;
	PFN_cuMemHostUnregister_v4000 MemHostUnregister;
	/* Shared by every thread using this handle: the text, not the decision, may race. */
	char last_error[256];
};

/* CUresult to -errno. */
int gdr_cu_errno(CUresult rc);
/* "CUDA_ERROR_OUT_OF_MEMORY: out of memory", whatever the driver can tell. */
const char *gdr_cu_describe(const struct gdr_cuda *cu, CUresult rc, char *buf, size_t len);
/* Record "<what>: NAME: text" as the last error (and in why) and map rc to -errno. */
__attribute__((format(printf, 5, 6))) int gdr_cu_fail(struct gdr_cuda *cu, CUresult rc, char *why,
						      size_t wlen, const char *fmt, ...);
/* 0 on success, else gdr_cu_fail(): one call per driver call keeps the callers flat. */
__attribute__((format(printf, 5, 6))) int gdr_cu_check(struct gdr_cuda *cu, char *why, size_t wlen,
						       CUresult rc, const char *fmt, ...);
/* A call this driver lacks: "CUDA driver 12.4 has no WHAT" as the last error (and in why);
 * -EOPNOTSUPP. */
int gdr_cu_absent(struct gdr_cuda *cu, char *why, size_t wlen, const char *what);
/* "12.4" from 12040. */
void gdr_cu_fmt_version(int v, char *buf, size_t len);

#endif
