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
 *
 * This file is built only with CUDA headers; cuda_none.c is its stand-in
 * otherwise (mk/cuda.am chooses).
 *
 * All lookups pass CU_GET_PROC_ADDRESS_LEGACY_STREAM: we always name our
 * streams, and the legacy variants behave the same on a named stream.
 */
#include "config.h"

#include "cuda.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Our header is "cuda.h" too: reach the toolkit's through its own include path. */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stddef.h>

#if CUDA_VERSION < 11070
#error "CUDA headers >= 11.7 are needed (cuMemGetHandleForAddressRange); configure --without-cuda"
#endif

#define GDR_GPU_PAGE_SIZE (64u * 1024)

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
	/* Shared by every thread using this handle: the text, not the decision, may race. */
	char last_error[256];
};

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
};

static int cu_errno(CUresult rc)
{
	switch (rc) {
	case CUDA_SUCCESS:
		return 0;
	case CUDA_ERROR_OUT_OF_MEMORY:
		return -ENOMEM;
	case CUDA_ERROR_NO_DEVICE:
	case CUDA_ERROR_INVALID_DEVICE:
		return -ENODEV;
	case CUDA_ERROR_NOT_SUPPORTED:
		return -EOPNOTSUPP;
	case CUDA_ERROR_INVALID_VALUE:
	case CUDA_ERROR_INVALID_HANDLE:
		return -EINVAL;
	case CUDA_ERROR_NOT_FOUND:
		return -ENOENT;
	case CUDA_ERROR_NOT_PERMITTED:
		return -EPERM;
	case CUDA_ERROR_NOT_READY:
		return -EAGAIN;
	default:
		return -EIO;
	}
}

/* "CUDA_ERROR_OUT_OF_MEMORY: out of memory", whatever the driver can tell. */
static const char *cu_describe(const struct gdr_cuda *cu, CUresult rc, char *buf, size_t len)
{
	const char *name = NULL, *str = NULL;

	if (cu->GetErrorName && cu->GetErrorName(rc, &name) != CUDA_SUCCESS)
		name = NULL;
	if (cu->GetErrorString && cu->GetErrorString(rc, &str) != CUDA_SUCCESS)
		str = NULL;
	if (name && str)
		snprintf(buf, len, "%s: %s", name, str);
	else if (name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "CUresult %d", (int)rc);
	return buf;
}

/* Record "<what>: NAME: text" as the last error (and in why) and map rc to -errno. */
__attribute__((format(printf, 5, 6))) static int
cu_fail(struct gdr_cuda *cu, CUresult rc, char *why, size_t wlen, const char *fmt, ...)
{
	char what[160], desc[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(cu->last_error, sizeof(cu->last_error), "%s: %s", what,
		 cu_describe(cu, rc, desc, sizeof(desc)));
	if (why && wlen)
		gdr_strlcpy(why, cu->last_error, wlen);
	return cu_errno(rc);
}

/* 0 on success, else cu_fail(): one call per driver call keeps the callers flat. */
__attribute__((format(printf, 5, 6))) static int
cu_check(struct gdr_cuda *cu, char *why, size_t wlen, CUresult rc, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	if (rc == CUDA_SUCCESS)
		return 0;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return cu_fail(cu, rc, why, wlen, "%s", what);
}

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
		return cu_fail(cu, rc == CUDA_SUCCESS ? CUDA_ERROR_NOT_FOUND : rc, why, wlen,
			       "%s: cuGetProcAddress(%s, %d)", cu->libname, s->name, s->version);
	}
	return 0;
}

static void cu_fmt_version(int v, char *buf, size_t len)
{
	snprintf(buf, len, "%d.%d", v / 1000, v % 1000 / 10);
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
		ret = cu_fail(cu, rc, why, wlen, "%s: cuDriverGetVersion", name);
		goto out_close;
	}
	rc = cu->Init(0);
	if (rc != CUDA_SUCCESS) {
		char desc[160];

		cu_fmt_version(cu->driver_version, ver, sizeof(ver));
		snprintf(why, wlen, "%s (cuInit: %s; driver %s, %s)",
			 rc == CUDA_ERROR_NO_DEVICE ? "no CUDA device" : "CUDA driver unusable",
			 cu_describe(cu, rc, desc, sizeof(desc)), ver, name);
		ret = cu_errno(rc);
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

int gdr_cuda_device_count(struct gdr_cuda *cu, int *count)
{
	*count = 0;
	return cu_check(cu, NULL, 0, cu->DeviceGetCount(count), "cuDeviceGetCount");
}

/* Parse "[DDDD:]BB:DD.F" (hex, any case). 0 or -EINVAL. */
static int parse_bus_id(const char *s, unsigned int *dom, unsigned int *bus, unsigned int *dev,
			unsigned int *fn)
{
	unsigned int a, b, c, d;
	int n = 0;

	if (sscanf(s, "%x:%x:%x.%x%n", &a, &b, &c, &d, &n) == 4 && s[n] == '\0') {
		*dom = a;
		*bus = b;
		*dev = c;
		*fn = d;
	} else if (n = 0, sscanf(s, "%x:%x.%x%n", &b, &c, &d, &n) == 3 && s[n] == '\0') {
		*dom = 0;
		*bus = b;
		*dev = c;
		*fn = d;
	} else {
		return -EINVAL;
	}
	if (*bus > 0xff || *dev > 0x1f || *fn > 7)
		return -EINVAL;
	return 0;
}

static int gpu_attr(struct gdr_cuda *cu, CUdevice dev, CUdevice_attribute attr)
{
	int v = -1;

	if (cu->DeviceGetAttribute(&v, attr, dev) != CUDA_SUCCESS)
		return -1;
	return v;
}

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" as nvidia-smi -L writes it; "" when unknown. */
static void gpu_uuid(struct gdr_cuda *cu, CUdevice dev, char *buf, size_t len)
{
	CUuuid u;

	buf[0] = '\0';
	if (!cu->DeviceGetUuid || cu->DeviceGetUuid(&u, dev) != CUDA_SUCCESS)
		return;
	gdr_cuda_format_uuid((const unsigned char *)u.bytes, buf, len);
}

int gdr_cuda_gpu_info(struct gdr_cuda *cu, int ordinal, struct gdr_gpu *gpu, char *why, size_t wlen)
{
	unsigned int dom, bus, dev, fn;
	char raw[64];
	size_t total = 0;
	CUdevice d;
	int ret;

	memset(gpu, 0, sizeof(*gpu));
	gpu->ordinal = ordinal;
	ret = cu_check(cu, why, wlen, cu->DeviceGet(&d, ordinal), "cuDeviceGet(%d)", ordinal);
	if (ret)
		return ret;
	gpu->device = d;
	ret = cu_check(cu, why, wlen, cu->DeviceGetName(gpu->name, (int)sizeof(gpu->name), d),
		       "GPU %d: cuDeviceGetName", ordinal);
	if (ret)
		return ret;
	ret = cu_check(cu, why, wlen, cu->DeviceGetPCIBusId(raw, (int)sizeof(raw), d),
		       "GPU %d: cuDeviceGetPCIBusId", ordinal);
	if (ret)
		return ret;
	/* The driver writes "0000:3B:00.0"; everything else in gdrperf speaks sysfs case. */
	if (parse_bus_id(raw, &dom, &bus, &dev, &fn) == 0)
		snprintf(gpu->bus_id, sizeof(gpu->bus_id), "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	else
		for (size_t i = 0; i < sizeof(gpu->bus_id) - 1 && raw[i]; i++)
			gpu->bus_id[i] = (char)tolower((unsigned char)raw[i]);
	ret = cu_check(cu, why, wlen, cu->DeviceTotalMem(&total, d), "GPU %d: cuDeviceTotalMem",
		       ordinal);
	if (ret)
		return ret;
	gpu->total_mem = total;
	gpu->dmabuf_supported = gpu_attr(cu, d, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED);
	gpu->gdr_supported = gpu_attr(cu, d, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED);
	gpu->vmm_gdr_supported =
	    gpu_attr(cu, d, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED);
	gpu->flush_options =
	    gpu_attr(cu, d, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS);
	gpu->writes_ordering = gpu_attr(cu, d, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING);
	gpu_uuid(cu, d, gpu->uuid, sizeof(gpu->uuid));
	return 0;
}

/*
 * --gpu=GPU-... / MIG-...: compare with what cuDeviceGetUuid_v2 reports (under
 * MIG, with CUDA_VISIBLE_DEVICES=MIG-..., the instance's own UUID), ignoring
 * case and the prefix's kind, since the driver reports bare bytes.
 */
static int find_by_uuid(struct gdr_cuda *cu, const char *spec, int count, struct gdr_gpu *gpu,
			char *why, size_t wlen)
{
	char seen[512] = "";
	int ret;

	if (!cu->DeviceGetUuid) {
		snprintf(why, wlen,
			 "GPU %s: this CUDA driver has no cuDeviceGetUuid_v2 (select by "
			 "ordinal or PCI bus id)",
			 spec);
		return -EOPNOTSUPP;
	}
	for (int i = 0; i < count; i++) {
		size_t n = strlen(seen);

		ret = gdr_cuda_gpu_info(cu, i, gpu, why, wlen);
		if (ret)
			return ret;
		if (gdr_cuda_uuid_match(spec, gpu->uuid))
			return 0;
		snprintf(seen + n, sizeof(seen) - n, "%s%s", n ? ", " : "", gpu->uuid);
	}
	memset(gpu, 0, sizeof(*gpu));
	snprintf(why, wlen, "no GPU with UUID %s (GPUs: %s)", spec, seen);
	return -ENODEV;
}

int gdr_cuda_find_gpu(struct gdr_cuda *cu, const char *spec, struct gdr_gpu *gpu, char *why,
		      size_t wlen)
{
	unsigned int dom, bus, dev, fn;
	char want[32], seen[256] = "";
	int count = 0, ret;
	char *end;
	long ord;

	ret = gdr_cuda_device_count(cu, &count);
	if (ret) {
		gdr_strlcpy(why, cu->last_error, wlen);
		return ret;
	}
	if (count == 0) {
		gdr_strlcpy(why, "no CUDA device (cuDeviceGetCount: 0)", wlen);
		return -ENODEV;
	}
	errno = 0;
	ord = strtol(spec, &end, 10);
	if (*spec && *end == '\0' && errno == 0) {
		if (ord < 0 || ord >= count) {
			snprintf(why, wlen, "GPU %s does not exist (%d GPU%s: 0..%d)", spec, count,
				 count == 1 ? "" : "s", count - 1);
			return -ENODEV;
		}
		return gdr_cuda_gpu_info(cu, (int)ord, gpu, why, wlen);
	}
	if (gdr_cuda_is_uuid_spec(spec))
		return find_by_uuid(cu, spec, count, gpu, why, wlen);
	if (parse_bus_id(spec, &dom, &bus, &dev, &fn)) {
		snprintf(why, wlen,
			 "bad GPU '%s': expected an ordinal (0..%d), a PCI bus id "
			 "(DDDD:BB:DD.F) or a UUID (GPU-... or MIG-...)",
			 spec, count - 1);
		return -EINVAL;
	}
	snprintf(want, sizeof(want), "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	for (int i = 0; i < count; i++) {
		size_t n = strlen(seen);

		ret = gdr_cuda_gpu_info(cu, i, gpu, why, wlen);
		if (ret)
			return ret;
		if (!strcmp(gpu->bus_id, want))
			return 0;
		snprintf(seen + n, sizeof(seen) - n, "%s%s", n ? ", " : "", gpu->bus_id);
	}
	memset(gpu, 0, sizeof(*gpu));
	snprintf(why, wlen, "no GPU at PCI bus id %s (GPUs: %s)", want, seen);
	return -ENODEV;
}

int gdr_cuda_gpu_open(struct gdr_cuda *cu, struct gdr_gpu *gpu, char *why, size_t wlen)
{
	CUcontext ctx = NULL;
	int ret;

	ret = cu_check(cu, why, wlen, cu->DevicePrimaryCtxRetain(&ctx, gpu->device),
		       "GPU %d (%s): cuDevicePrimaryCtxRetain", gpu->ordinal, gpu->bus_id);
	if (ret)
		return ret;
	ret = cu_check(cu, why, wlen, cu->CtxSetCurrent(ctx), "GPU %d (%s): cuCtxSetCurrent",
		       gpu->ordinal, gpu->bus_id);
	if (ret) {
		cu->DevicePrimaryCtxRelease(gpu->device);
		return ret;
	}
	gpu->ctx = ctx;
	return 0;
}

void gdr_cuda_gpu_close(struct gdr_cuda *cu, struct gdr_gpu *gpu)
{
	if (!gpu->ctx)
		return;
	cu->CtxSetCurrent(NULL);
	cu->DevicePrimaryCtxRelease(gpu->device);
	gpu->ctx = NULL;
}

int gdr_cuda_make_current(struct gdr_cuda *cu, struct gdr_gpu *gpu)
{
	if (!gpu->ctx) {
		snprintf(cu->last_error, sizeof(cu->last_error), "GPU %d (%s): not opened",
			 gpu->ordinal, gpu->bus_id);
		return -EINVAL;
	}
	return cu_check(cu, NULL, 0, cu->CtxSetCurrent((CUcontext)gpu->ctx),
			"GPU %d (%s): cuCtxSetCurrent", gpu->ordinal, gpu->bus_id);
}

int gdr_cuda_alloc(struct gdr_cuda *cu, size_t len, uint64_t *dptr, char *why, size_t wlen)
{
	CUdeviceptr p = 0;
	char sz[32];
	int ret;

	ret = cu_check(cu, why, wlen, cu->MemAlloc(&p, len), "cuMemAlloc(%s)",
		       gdr_fmt_size(len, sz, sizeof(sz)));
	*dptr = ret ? 0 : (uint64_t)p;
	return ret;
}

void gdr_cuda_free(struct gdr_cuda *cu, uint64_t dptr)
{
	if (dptr)
		cu_check(cu, NULL, 0, cu->MemFree((CUdeviceptr)dptr), "cuMemFree(0x%llx)",
			 (unsigned long long)dptr);
}

int gdr_cuda_set_sync_memops(struct gdr_cuda *cu, uint64_t dptr, char *why, size_t wlen)
{
	unsigned int on = 1;

	return cu_check(
	    cu, why, wlen,
	    cu->PointerSetAttribute(&on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)dptr),
	    "cuPointerSetAttribute(0x%llx, SYNC_MEMOPS)", (unsigned long long)dptr);
}

int gdr_cuda_get_sync_memops(struct gdr_cuda *cu, uint64_t dptr, int *on, char *why, size_t wlen)
{
	/* A boolean to the driver: from zero, any width it writes reads right. */
	unsigned long long v = 0;
	int ret;

	ret = cu_check(
	    cu, why, wlen,
	    cu->PointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, (CUdeviceptr)dptr),
	    "cuPointerGetAttribute(0x%llx, SYNC_MEMOPS)", (unsigned long long)dptr);
	*on = ret ? 0 : v != 0;
	return ret;
}

int gdr_cuda_dmabuf_fd(struct gdr_cuda *cu, uint64_t dptr, size_t len, int *fd, char *why,
		       size_t wlen)
{
	return gdr_cuda_dmabuf_export(cu, dptr, len, 0, fd, why, wlen);
}

int gdr_cuda_dmabuf_export(struct gdr_cuda *cu, uint64_t dptr, size_t len, int pcie, int *fd,
			   char *why, size_t wlen)
{
	unsigned long long flags = 0;
	char sz[32], ver[32];
	int h = -1, ret;

	*fd = -1;
	if (!cu->MemGetHandleForAddressRange) {
		cu_fmt_version(cu->driver_version, ver, sizeof(ver));
		snprintf(cu->last_error, sizeof(cu->last_error),
			 "CUDA driver %s has no cuMemGetHandleForAddressRange (DMA-BUF export "
			 "needs a CUDA >= 11.7 driver)",
			 ver);
		gdr_strlcpy(why, cu->last_error, wlen);
		return -EOPNOTSUPP;
	}
	if (pcie) {
#if CUDA_VERSION >= 12080
		flags = CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE;
#else
		snprintf(cu->last_error, sizeof(cu->last_error),
			 "built with CUDA headers older than 12.8 (no "
			 "CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE)");
		gdr_strlcpy(why, cu->last_error, wlen);
		return -EOPNOTSUPP;
#endif
	}
	ret = cu_check(cu, why, wlen,
		       cu->MemGetHandleForAddressRange(&h, (CUdeviceptr)dptr, len,
						       CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, flags),
		       "cuMemGetHandleForAddressRange(0x%llx, %s, DMA_BUF_FD%s)",
		       (unsigned long long)dptr, gdr_fmt_size(len, sz, sizeof(sz)),
		       pcie ? ", MAPPING_TYPE_PCIE" : "");
	if (ret)
		return ret;
	*fd = h;
	return 0;
}

size_t gdr_cuda_page_size(struct gdr_cuda *cu)
{
	(void)cu;
	/* GPU pages behind cuMemAlloc are 64 KiB (nvidia-p2p and perftest use the same). */
	return GDR_GPU_PAGE_SIZE;
}

static int vmm_check(struct gdr_cuda *cu, char *why, size_t wlen)
{
	char ver[32];

	if (cu->MemCreate && cu->MemGetAllocationGranularity && cu->MemAddressReserve &&
	    cu->MemAddressFree && cu->MemMap && cu->MemUnmap && cu->MemSetAccess && cu->MemRelease)
		return 0;
	cu_fmt_version(cu->driver_version, ver, sizeof(ver));
	snprintf(cu->last_error, sizeof(cu->last_error),
		 "CUDA driver %s has no virtual memory management calls (cuMemCreate needs a CUDA "
		 ">= 10.2 driver)",
		 ver);
	gdr_strlcpy(why, cu->last_error, wlen);
	return -EOPNOTSUPP;
}

static void vmm_prop(const struct gdr_gpu *gpu, CUmemAllocationProp *p)
{
	memset(p, 0, sizeof(*p));
	p->type = CU_MEM_ALLOCATION_TYPE_PINNED;
	p->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p->location.id = gpu->device;
	/* What NCCL asks for its buffers, so that the NIC may reach them. */
	p->allocFlags.gpuDirectRDMACapable = 1;
}

int gdr_cuda_vmm_granularity(struct gdr_cuda *cu, const struct gdr_gpu *gpu, size_t *gran,
			     char *why, size_t wlen)
{
	CUmemAllocationProp prop;
	int ret;

	*gran = 0;
	ret = vmm_check(cu, why, wlen);
	if (ret)
		return ret;
	vmm_prop(gpu, &prop);
	return cu_check(
	    cu, why, wlen,
	    cu->MemGetAllocationGranularity(gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
	    "GPU %d: cuMemGetAllocationGranularity", gpu->ordinal);
}

int gdr_cuda_vmm_alloc(struct gdr_cuda *cu, const struct gdr_gpu *gpu, size_t len,
		       struct gdr_cuda_vmm *v, char *why, size_t wlen)
{
	CUmemGenericAllocationHandle h = 0;
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	CUdeviceptr va = 0;
	size_t gran = 0;
	char sz[32];
	int ret;

	memset(v, 0, sizeof(*v));
	ret = gdr_cuda_vmm_granularity(cu, gpu, &gran, why, wlen);
	if (ret)
		return ret;
	if (gran == 0 || len > SIZE_MAX - gran) {
		snprintf(why, wlen, "GPU %d: cuMemGetAllocationGranularity: granularity %zu",
			 gpu->ordinal, gran);
		return -EINVAL;
	}
	len = (len + gran - 1) / gran * gran;
	gdr_fmt_size(len, sz, sizeof(sz));
	vmm_prop(gpu, &prop);
	ret = cu_check(cu, why, wlen, cu->MemCreate(&h, len, &prop, 0),
		       "GPU %d: cuMemCreate(%s, gpuDirectRDMACapable)", gpu->ordinal, sz);
	if (ret)
		return ret;
	ret = cu_check(cu, why, wlen, cu->MemAddressReserve(&va, len, gran, 0, 0),
		       "cuMemAddressReserve(%s)", sz);
	if (ret)
		goto out_release;
	ret = cu_check(cu, why, wlen, cu->MemMap(va, len, 0, h, 0), "cuMemMap(0x%llx, %s)",
		       (unsigned long long)va, sz);
	if (ret)
		goto out_free_va;
	memset(&acc, 0, sizeof(acc));
	acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location.id = gpu->device;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	ret = cu_check(cu, why, wlen, cu->MemSetAccess(va, len, &acc, 1),
		       "cuMemSetAccess(0x%llx, %s, READWRITE)", (unsigned long long)va, sz);
	if (ret)
		goto out_unmap;
	v->handle = (uint64_t)h;
	v->va = (uint64_t)va;
	v->len = len;
	v->granularity = gran;
	return 0;

out_unmap:
	cu->MemUnmap(va, len);
out_free_va:
	cu->MemAddressFree(va, len);
out_release:
	cu->MemRelease(h);
	return ret;
}

void gdr_cuda_vmm_free(struct gdr_cuda *cu, struct gdr_cuda_vmm *v)
{
	if (!v->va)
		return;
	cu_check(cu, NULL, 0, cu->MemUnmap((CUdeviceptr)v->va, v->len), "cuMemUnmap(0x%llx)",
		 (unsigned long long)v->va);
	cu_check(cu, NULL, 0, cu->MemAddressFree((CUdeviceptr)v->va, v->len),
		 "cuMemAddressFree(0x%llx)", (unsigned long long)v->va);
	cu_check(cu, NULL, 0, cu->MemRelease((CUmemGenericAllocationHandle)v->handle),
		 "cuMemRelease");
	memset(v, 0, sizeof(*v));
}

int gdr_cuda_flush_rdma_writes(struct gdr_cuda *cu, const struct gdr_gpu *gpu, const char **how)
{
	/* "If the scope equals or lies within ... WRITES_ORDERING, the call will be a no-op." */
	if (gpu->writes_ordering >= CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER) {
		*how = "not needed (GPU_DIRECT_RDMA_WRITES_ORDERING covers the owner)";
		return 0;
	}
	if (gpu->flush_options < 0 ||
	    !(gpu->flush_options & CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST) ||
	    !cu->FlushGPUDirectRDMAWrites) {
		*how =
		    gpu->flush_options < 0
			? "unknown (the driver cannot report GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS)"
			: "not available on this GPU (no cuFlushGPUDirectRDMAWrites)";
		return -EOPNOTSUPP;
	}
	*how = "cuFlushGPUDirectRDMAWrites(CURRENT_CTX, TO_OWNER)";
	return cu_check(
	    cu, NULL, 0,
	    cu->FlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
					 CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER),
	    "GPU %d: cuFlushGPUDirectRDMAWrites", gpu->ordinal);
}

int gdr_cuda_host_alloc(struct gdr_cuda *cu, size_t len, void **ptr, char *why, size_t wlen)
{
	char sz[32];
	int ret;

	*ptr = NULL;
	/* PORTABLE: the bounce ring is pinned for every context, whichever thread made it. */
	ret = cu_check(cu, why, wlen, cu->MemHostAlloc(ptr, len, CU_MEMHOSTALLOC_PORTABLE),
		       "cuMemHostAlloc(%s)", gdr_fmt_size(len, sz, sizeof(sz)));
	if (ret)
		*ptr = NULL;
	return ret;
}

void gdr_cuda_host_free(struct gdr_cuda *cu, void *ptr)
{
	if (ptr)
		cu_check(cu, NULL, 0, cu->MemFreeHost(ptr), "cuMemFreeHost(%p)", ptr);
}

int gdr_cuda_htod(struct gdr_cuda *cu, uint64_t dst, const void *src, size_t len)
{
	return cu_check(cu, NULL, 0, cu->MemcpyHtoD((CUdeviceptr)dst, src, len),
			"cuMemcpyHtoD(0x%llx, %zu)", (unsigned long long)dst, len);
}

int gdr_cuda_dtoh(struct gdr_cuda *cu, void *dst, uint64_t src, size_t len)
{
	return cu_check(cu, NULL, 0, cu->MemcpyDtoH(dst, (CUdeviceptr)src, len),
			"cuMemcpyDtoH(0x%llx, %zu)", (unsigned long long)src, len);
}

int gdr_cuda_stream_create(struct gdr_cuda *cu, gdr_cuda_stream_t *s)
{
	CUstream st = NULL;
	int ret;

	/* Non-blocking: the pipeline's streams must not wait on the legacy default stream. */
	ret =
	    cu_check(cu, NULL, 0, cu->StreamCreate(&st, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	*s = ret ? NULL : (gdr_cuda_stream_t)st;
	return ret;
}

void gdr_cuda_stream_destroy(struct gdr_cuda *cu, gdr_cuda_stream_t s)
{
	if (s)
		cu_check(cu, NULL, 0, cu->StreamDestroy((CUstream)s), "cuStreamDestroy");
}

int gdr_cuda_stream_sync(struct gdr_cuda *cu, gdr_cuda_stream_t s)
{
	return cu_check(cu, NULL, 0, cu->StreamSynchronize((CUstream)s), "cuStreamSynchronize");
}

int gdr_cuda_htod_async(struct gdr_cuda *cu, uint64_t dst, const void *src, size_t len,
			gdr_cuda_stream_t s)
{
	return cu_check(cu, NULL, 0, cu->MemcpyHtoDAsync((CUdeviceptr)dst, src, len, (CUstream)s),
			"cuMemcpyHtoDAsync(0x%llx, %zu)", (unsigned long long)dst, len);
}

int gdr_cuda_dtoh_async(struct gdr_cuda *cu, void *dst, uint64_t src, size_t len,
			gdr_cuda_stream_t s)
{
	return cu_check(cu, NULL, 0, cu->MemcpyDtoHAsync(dst, (CUdeviceptr)src, len, (CUstream)s),
			"cuMemcpyDtoHAsync(0x%llx, %zu)", (unsigned long long)src, len);
}

int gdr_cuda_event_create(struct gdr_cuda *cu, gdr_cuda_event_t *e)
{
	CUevent ev = NULL;
	int ret;

	/* Completion only: timing would cost a timestamp per record. */
	ret = cu_check(cu, NULL, 0, cu->EventCreate(&ev, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
	*e = ret ? NULL : (gdr_cuda_event_t)ev;
	return ret;
}

void gdr_cuda_event_destroy(struct gdr_cuda *cu, gdr_cuda_event_t e)
{
	if (e)
		cu_check(cu, NULL, 0, cu->EventDestroy((CUevent)e), "cuEventDestroy");
}

int gdr_cuda_event_record(struct gdr_cuda *cu, gdr_cuda_event_t e, gdr_cuda_stream_t s)
{
	return cu_check(cu, NULL, 0, cu->EventRecord((CUevent)e, (CUstream)s), "cuEventRecord");
}

int gdr_cuda_event_query(struct gdr_cuda *cu, gdr_cuda_event_t e)
{
	CUresult rc = cu->EventQuery((CUevent)e);

	if (rc == CUDA_SUCCESS)
		return 1;
	if (rc == CUDA_ERROR_NOT_READY)
		return 0;
	return cu_fail(cu, rc, NULL, 0, "cuEventQuery");
}

int gdr_cuda_event_sync(struct gdr_cuda *cu, gdr_cuda_event_t e)
{
	return cu_check(cu, NULL, 0, cu->EventSynchronize((CUevent)e), "cuEventSynchronize");
}

const char *gdr_cuda_last_error(struct gdr_cuda *cu)
{
	return cu->last_error;
}

const char *gdr_cuda_getproc_abi(struct gdr_cuda *cu)
{
	return cu->getproc_v1 ? "cuGetProcAddress (v1)" : "cuGetProcAddress_v2";
}
