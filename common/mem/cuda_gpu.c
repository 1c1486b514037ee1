/*
 * GPU selection and the primary context: what the driver says of a GPU
 * (name, PCI bus id, memory, the GPUDirect attributes, UUID), --gpu by
 * ordinal, bus id or UUID, and retaining, releasing and making current the
 * GPU's primary context (the one the CUDA runtime and NCCL share).
 */
#include "config.h"

#include "cuda_int.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gdr_cuda_device_count(struct gdr_cuda *cu, int *count)
{
	*count = 0;
	return gdr_cu_check(cu, NULL, 0, cu->DeviceGetCount(count), "cuDeviceGetCount");
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
	ret = gdr_cu_check(cu, why, wlen, cu->DeviceGet(&d, ordinal), "cuDeviceGet(%d)", ordinal);
	if (ret)
		return ret;
	gpu->device = d;
	ret = gdr_cu_check(cu, why, wlen, cu->DeviceGetName(gpu->name, (int)sizeof(gpu->name), d),
			   "GPU %d: cuDeviceGetName", ordinal);
	if (ret)
		return ret;
	ret = gdr_cu_check(cu, why, wlen, cu->DeviceGetPCIBusId(raw, (int)sizeof(raw), d),
			   "GPU %d: cuDeviceGetPCIBusId", ordinal);
	if (ret)
		return ret;
	/* The driver writes "0000:3B:00.0"; everything else in gdrperf speaks sysfs case. */
	if (parse_bus_id(raw, &dom, &bus, &dev, &fn) == 0)
		snprintf(gpu->bus_id, sizeof(gpu->bus_id), "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	else
		for (size_t i = 0; i < sizeof(gpu->bus_id) - 1 && raw[i]; i++)
			gpu->bus_id[i] = (char)tolower((unsigned char)raw[i]);
	ret = gdr_cu_check(cu, why, wlen, cu->DeviceTotalMem(&total, d), "GPU %d: cuDeviceTotalMem",
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

	ret = gdr_cu_check(cu, why, wlen, cu->DevicePrimaryCtxRetain(&ctx, gpu->device),
			   "GPU %d (%s): cuDevicePrimaryCtxRetain", gpu->ordinal, gpu->bus_id);
	if (ret)
		return ret;
	ret = gdr_cu_check(cu, why, wlen, cu->CtxSetCurrent(ctx), "GPU %d (%s): cuCtxSetCurrent",
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
	return gdr_cu_check(cu, NULL, 0, cu->CtxSetCurrent((CUcontext)gpu->ctx),
			    "GPU %d (%s): cuCtxSetCurrent", gpu->ordinal, gpu->bus_id);
}
