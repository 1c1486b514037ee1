/*
 * A fake CUDA driver (libcuda.so.1) for tests: load it with
 * GDRPERF_LIBCUDA=$(top_builddir)/tests/fake_cuda/libcuda.so.1.
 *
 * It exports only what a loader may dlsym, "cuGetProcAddress" (the v1 ABI;
 * built with -DFAKE_CUDA_GETPROC_V2_ONLY it exports "cuGetProcAddress_v2"
 * instead, like a driver that dropped v1), and hands out every other entry
 * point through it. Entry points exist only from the CUDA version that
 * introduced the _v2 ABI gdrperf uses (cuMemAlloc from 3020, ...): asking
 * for an older ABI returns CUDA_ERROR_NOT_FOUND, so a loader asking for the
 * wrong variant fails in tests instead of corrupting 64-bit pointers on a
 * real GPU.
 *
 * "Device memory" is host memory: a device pointer is the host address of
 * its backing, so the NIC can register it with plain ibv_reg_mr (what
 * nvidia_peermem makes possible on real hardware) and tests can compare bytes.
 * Device memory is memfds mapped MAP_SHARED, so that a DMA-BUF export hands
 * out the very pages of the range (see below).
 *
 * By default it answers as the real driver did on an NVIDIA H200 (open
 * module 580.159.04, CUDA 13.0, 2026-12-04; tests/gpu/recorded/ holds those
 * answers and tests/gpu/contract-fake.sh checks the fake against them):
 *  - cuMemAlloc: requests under 2 MiB are carved from 2 MiB of device memory
 *    at 512 B steps: the first 2 MiB aligned, the next ones right after it
 *    (+0x200 after a 512 B one); from 2 MiB up the pointer is 2 MiB aligned,
 *    right after the previous such allocation where that is free (two 4 MiB
 *    in a row are adjacent, and a range across both exports).
 *    GDRPERF_FAKE_CUDA_ALLOC_OFFSET gives every allocation its own pages at
 *    that offset instead.
 *  - cuPointerGetAttribute: RANGE_START_ADDR / RANGE_SIZE (the allocation's
 *    or the mapping's own), IS_GPU_DIRECT_RDMA_CAPABLE (1 for cuMemAlloc,
 *    gpuDirectRDMACapable for cuMemCreate), SYNC_MEMOPS, ...;
 *    cuPointerSetAttribute(SYNC_MEMOPS) on cuMemCreate memory: NOT_SUPPORTED.
 *  - cuMemGetHandleForAddressRange: "dptr and size aligned to the host page
 *    size" (INVALID_VALUE otherwise, and for length 0, unknown flags, host or
 *    reserved-but-unmapped memory); any range of device memory, around and
 *    across allocations, mapped but not yet opened by cuMemSetAccess, as the
 *    real driver takes it; with
 *    GDRPERF_FAKE_CUDA_DMABUF_STRICT=1 the documented rule only: the range
 *    inside one allocation made by cuMemAlloc, or one fully mapped cuMemMap
 *    mapping. Flags 0 or CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE (a driver
 *    >= 12.8 only; on a platform without it, x86 PCIe by default,
 *    NOT_SUPPORTED). The fd is a memfd of exactly the range (lseek SEEK_END =
 *    its length, offset 0 = its start) whose pages the range's device
 *    pointers now use (fake_dmabuf.c says how, and its one limitation);
 *    tests/fake_verbs maps it from its file position (0).
 *  - VMM: cuMemGetAllocationGranularity answers 2 MiB (minimum and
 *    recommended); cuMemMap at an offset off it: NOT_SUPPORTED; cuMemCreate,
 *    cuMemAddressReserve, cuMemMap, cuMemSetAccess refuse sizes and addresses
 *    off that granularity, a non-zero offset, non-zero flags,
 *    mapping a mapped range; memory is accessible only after cuMemSetAccess
 *    (an export before it succeeds, as the real driver's; the pages stay
 *    closed until cuMemSetAccess);
 *    allocFlags.gpuDirectRDMACapable = 1 needs
 *    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED.
 *  - cuFlushGPUDirectRDMAWrites needs a current context, target CURRENT_CTX,
 *    scope TO_OWNER or TO_ALL_DEVICES; the calls are counted (see below).
 * Async copies really run, in order, on one worker thread per stream, and
 * events complete only when the worker reaches them, so a pipeline that reads
 * a buffer before its copy finished sees stale bytes here too. Copies to or
 * from host memory that did not come from cuMemHostAlloc are synchronous, as
 * the real driver makes them. Every call but cuDriverGetVersion,
 * cuGetErrorName/String needs cuInit; memory, stream and event calls need a
 * current context (CUDA_ERROR_INVALID_CONTEXT otherwise, as on a GPU).
 *
 * Configuration, read from the environment at every cuInit (so one test
 * process can change it between loads):
 *   GDRPERF_FAKE_CUDA_DEVICES=N        number of GPUs (default 1; 0: cuInit
 *                                      returns CUDA_ERROR_NO_DEVICE; max 16)
 *   GDRPERF_FAKE_CUDA_NAMES=a,b        device names (default "Fake GPU <i>")
 *   GDRPERF_FAKE_CUDA_BUS_IDS=x,y      PCI bus ids, [DDDD:]BB:DD.F (default
 *                                      0000:<0x10+i>:00.0); reported upper
 *                                      case like the real cuDeviceGetPCIBusId
 *   GDRPERF_FAKE_CUDA_DMA_BUF_SUPPORTED=1[,0..]    per device, the last value
 *                                      repeats (default 1)
 *   GDRPERF_FAKE_CUDA_GPU_DIRECT_RDMA_SUPPORTED=1[,0..]  likewise (default 1)
 *   GDRPERF_FAKE_CUDA_DMABUF=memfd|ERR cuMemGetHandleForAddressRange: a memfd
 *                                      of the range's size (default), or the
 *                                      CUresult ERR (name or number)
 *   GDRPERF_FAKE_CUDA_MEM_LIMIT=BYTES  cuMemAlloc fails with OUT_OF_MEMORY once
 *                                      this much is allocated (K/M/G suffixes;
 *                                      also the reported total memory;
 *                                      default 80G, not enforced)
 *   GDRPERF_FAKE_CUDA_DRIVER_VERSION=N cuDriverGetVersion (default 13000)
 *   GDRPERF_FAKE_CUDA_COPY_DELAY_US=N  every copy takes at least N us more
 *   GDRPERF_FAKE_CUDA_COPY_GBPS=X      every copy runs at most at X Gb/s
 *                                      (10^9 bit/s), so pipelining shows
 *   GDRPERF_FAKE_CUDA_ALLOC_OFFSET=N   every cuMemAlloc pointer starts N
 *                                      bytes (mod 2 MiB) into pages of its own
 *   GDRPERF_FAKE_CUDA_FAIL=fn=ERR,...  make entry point fn (e.g. cuMemHostAlloc,
 *                                      cuPointerSetAttribute, cuInit) return ERR
 *   GDRPERF_FAKE_CUDA_VMM_GDR=1[,0..]  GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED
 *                                      per device (default 1)
 *   GDRPERF_FAKE_CUDA_DMABUF_PCIE=0|1  the platform can map a DMA-BUF through
 *                                      PCIe BAR1 (default 0)
 *   GDRPERF_FAKE_CUDA_DMABUF_STRICT=1  exports only inside one allocation (the
 *                                      documented rule; default 0: the real
 *                                      driver's leniency)
 *   GDRPERF_FAKE_CUDA_WRITES_ORDERING=N GPU_DIRECT_RDMA_WRITES_ORDERING (default
 *                                      100: OWNER, as the H200; 0: NONE, so
 *                                      a flush is needed)
 *   GDRPERF_FAKE_CUDA_FLUSH_OPTIONS=N  GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS
 *                                      (default 1: cuFlushGPUDirectRDMAWrites)
 *   GDRPERF_FAKE_CUDA_NO_ATTR=a,b      cuDeviceGetAttribute refuses these
 *                                      attribute numbers (an older driver)
 *   GDRPERF_FAKE_CUDA_UUIDS=u,v        device UUIDs (32 hex digits, dashes
 *                                      allowed; default derived from the
 *                                      ordinal)
 *   CUDA_VISIBLE_DEVICES               honoured as the driver does (indices or
 *                                      UUIDs, in order, up to the first bad one)
 *
 * For tests, the library also exports gdrperf_fake_cuda_flushes() (number of
 * cuFlushGPUDirectRDMAWrites calls so far).
 *
 * Process-wide state is what a driver is; it lives in one struct (struct
 * fake_state in fake_cuda_int.h). The parts, one area each: fake_error.c
 * (CUresult names), fake_cfg.c (the settings above, the entry checks),
 * fake_device.c (cuInit, devices, contexts, flush), fake_mem.c (cuMemAlloc,
 * pinned host memory, pointer attributes), fake_vmm.c, fake_dmabuf.c
 * (cuMemGetHandleForAddressRange), fake_stream.c (copies, streams, events);
 * this file hands them out through cuGetProcAddress.
 */
#define _GNU_SOURCE
#include "fake_cuda_int.h"

#include <stdlib.h>
#include <string.h>

struct fake_state g = { .lock = PTHREAD_MUTEX_INITIALIZER, .done = PTHREAD_COND_INITIALIZER };

_Thread_local struct fake_ctx *tls_ctx;

/* ---- lookup ---- */

static const struct {
	const char *name;
	int since; /* the CUDA version whose ABI this implements */
	void *fn;
} fake_procs[] = {
	{ "cuGetErrorName", 6000, (void *)fake_GetErrorName },
	{ "cuGetErrorString", 6000, (void *)fake_GetErrorString },
	{ "cuInit", 2000, (void *)fake_Init },
	{ "cuDriverGetVersion", 2020, (void *)fake_DriverGetVersion },
	{ "cuDeviceGetCount", 2000, (void *)fake_DeviceGetCount },
	{ "cuDeviceGet", 2000, (void *)fake_DeviceGet },
	{ "cuDeviceGetName", 2000, (void *)fake_DeviceGetName },
	{ "cuDeviceGetPCIBusId", 4010, (void *)fake_DeviceGetPCIBusId },
	{ "cuDeviceTotalMem", 3020, (void *)fake_DeviceTotalMem },
	{ "cuDeviceGetAttribute", 2000, (void *)fake_DeviceGetAttribute },
	{ "cuDevicePrimaryCtxRetain", 7000, (void *)fake_DevicePrimaryCtxRetain },
	{ "cuDevicePrimaryCtxRelease", 11000, (void *)fake_DevicePrimaryCtxRelease },
	{ "cuCtxSetCurrent", 4000, (void *)fake_CtxSetCurrent },
	{ "cuMemAlloc", 3020, (void *)fake_MemAlloc },
	{ "cuMemFree", 3020, (void *)fake_MemFree },
	{ "cuMemHostAlloc", 2020, (void *)fake_MemHostAlloc },
	{ "cuMemFreeHost", 2000, (void *)fake_MemFreeHost },
	{ "cuMemHostRegister", 6050, (void *)fake_MemHostRegister },
	{ "cuMemHostUnregister", 4000, (void *)fake_MemHostUnregister },
	{ "cuMemcpyHtoD", 3020, (void *)fake_MemcpyHtoD },
	{ "cuMemcpyDtoH", 3020, (void *)fake_MemcpyDtoH },
	{ "cuMemcpyHtoDAsync", 3020, (void *)fake_MemcpyHtoDAsync },
	{ "cuMemcpyDtoHAsync", 3020, (void *)fake_MemcpyDtoHAsync },
	{ "cuStreamCreate", 2000, (void *)fake_StreamCreate },
	{ "cuStreamDestroy", 4000, (void *)fake_StreamDestroy },
	{ "cuStreamSynchronize", 2000, (void *)fake_StreamSynchronize },
	{ "cuEventCreate", 2000, (void *)fake_EventCreate },
	{ "cuEventDestroy", 4000, (void *)fake_EventDestroy },
	{ "cuEventRecord", 2000, (void *)fake_EventRecord },
	{ "cuEventQuery", 2000, (void *)fake_EventQuery },
	{ "cuEventSynchronize", 2000, (void *)fake_EventSynchronize },
	{ "cuPointerSetAttribute", 6000, (void *)fake_PointerSetAttribute },
	{ "cuPointerGetAttribute", 4000, (void *)fake_PointerGetAttribute },
	{ "cuMemGetHandleForAddressRange", 11070, (void *)fake_MemGetHandleForAddressRange },
	{ "cuDeviceGetUuid", 11040, (void *)fake_DeviceGetUuid },
	{ "cuFlushGPUDirectRDMAWrites", 11030, (void *)fake_FlushGPUDirectRDMAWrites },
	{ "cuMemGetAllocationGranularity", 10020, (void *)fake_MemGetAllocationGranularity },
	{ "cuMemCreate", 10020, (void *)fake_MemCreate },
	{ "cuMemRelease", 10020, (void *)fake_MemRelease },
	{ "cuMemAddressReserve", 10020, (void *)fake_MemAddressReserve },
	{ "cuMemAddressFree", 10020, (void *)fake_MemAddressFree },
	{ "cuMemMap", 10020, (void *)fake_MemMap },
	{ "cuMemUnmap", 10020, (void *)fake_MemUnmap },
	{ "cuMemSetAccess", 10020, (void *)fake_MemSetAccess },
	/* fake_kernel.c */
	{ "cuModuleLoadData", 2000, (void *)fake_ModuleLoadData },
	{ "cuModuleUnload", 2000, (void *)fake_ModuleUnload },
	{ "cuModuleGetFunction", 2000, (void *)fake_ModuleGetFunction },
	{ "cuLaunchKernel", 4000, (void *)fake_LaunchKernel },
	{ "cuMemHostGetDevicePointer", 3020, (void *)fake_MemHostGetDevicePointer },
};

static CUresult fake_getproc(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	const char *e = getenv("GDRPERF_FAKE_CUDA_DRIVER_VERSION");
	int driver = e && *e ? atoi(e) : FAKE_DRIVER_VERSION;

	if (!symbol || !pfn || flags > 2)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	for (size_t i = 0; i < sizeof(fake_procs) / sizeof(fake_procs[0]); i++) {
		if (strcmp(symbol, fake_procs[i].name))
			continue;
		/* Newer than the (configured) driver, or an older ABI we do not fake. */
		if (fake_procs[i].since > driver || version < fake_procs[i].since)
			return CUDA_ERROR_NOT_FOUND;
		*pfn = fake_procs[i].fn;
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_NOT_FOUND;
}

#undef cuGetProcAddress
#ifndef FAKE_CUDA_GETPROC_V2_ONLY
EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	return fake_getproc(symbol, pfn, version, flags);
}
#else
EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
				    CUdriverProcAddressQueryResult *status)
{
	CUresult rc = fake_getproc(symbol, pfn, version, flags);

	if (status)
		*status = rc == CUDA_SUCCESS ? CU_GET_PROC_ADDRESS_SUCCESS
					     : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return rc;
}
#endif
