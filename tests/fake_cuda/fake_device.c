/*
 * cuInit, the device queries, primary contexts and cuFlushGPUDirectRDMAWrites.
 */
#define _GNU_SOURCE
#include "fake_cuda_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

CUresult fake_Init(unsigned int flags)
{
	struct fake_cfg cfg;
	CUresult rc;

	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	load_cfg(&cfg);
	pthread_mutex_lock(&g.lock);
	g.cfg = cfg;
	g.inited = false;
	pthread_mutex_unlock(&g.lock);
	rc = injected("cuInit");
	if (rc == CUDA_SUCCESS && cfg.ndev == 0)
		rc = CUDA_ERROR_NO_DEVICE;
	pthread_mutex_lock(&g.lock);
	g.inited = rc == CUDA_SUCCESS;
	pthread_mutex_unlock(&g.lock);
	return rc;
}

CUresult fake_DriverGetVersion(int *v)
{
	const char *e = getenv("GDRPERF_FAKE_CUDA_DRIVER_VERSION");

	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	*v = e && *e ? atoi(e) : FAKE_DRIVER_VERSION;
	return CUDA_SUCCESS;
}

CUresult fake_DeviceGetCount(int *n)
{
	CUresult rc = enter("cuDeviceGetCount", false);

	if (rc != CUDA_SUCCESS)
		return rc;
	*n = g.cfg.ndev;
	return CUDA_SUCCESS;
}

bool dev_ok(CUdevice d)
{
	return d >= 0 && d < g.cfg.ndev;
}

/* enter() for the calls on one device: a bad ordinal or CUdevice is CUDA_ERROR_INVALID_DEVICE. */
static CUresult enter_dev(const char *fn, CUdevice d)
{
	CUresult rc = enter(fn, false);

	if (rc == CUDA_SUCCESS && !dev_ok(d))
		rc = CUDA_ERROR_INVALID_DEVICE;
	return rc;
}

CUresult fake_DeviceGet(CUdevice *d, int ordinal)
{
	CUresult rc = enter_dev("cuDeviceGet", ordinal);

	if (rc != CUDA_SUCCESS)
		return rc;
	*d = ordinal;
	return CUDA_SUCCESS;
}

CUresult fake_DeviceGetName(char *name, int len, CUdevice d)
{
	CUresult rc = enter_dev("cuDeviceGetName", d);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", g.cfg.name[d]);
	return CUDA_SUCCESS;
}

CUresult fake_DeviceGetPCIBusId(char *buf, int len, CUdevice d)
{
	CUresult rc = enter_dev("cuDeviceGetPCIBusId", d);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!buf || len < 13)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(buf, (size_t)len, "%04X:%02X:%02X.%X", g.cfg.dom[d], g.cfg.bus[d],
		 g.cfg.devfn[d] >> 3, g.cfg.devfn[d] & 7);
	return CUDA_SUCCESS;
}

CUresult fake_DeviceTotalMem(size_t *bytes, CUdevice d)
{
	CUresult rc = enter_dev("cuDeviceTotalMem", d);

	if (rc != CUDA_SUCCESS)
		return rc;
	*bytes = (size_t)g.cfg.mem_limit;
	return CUDA_SUCCESS;
}

CUresult fake_DeviceGetAttribute(int *v, CUdevice_attribute attr, CUdevice d)
{
	CUresult rc = enter_dev("cuDeviceGetAttribute", d);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!v || attr <= 0 || attr >= CU_DEVICE_ATTRIBUTE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < g.cfg.nno_attr; i++)
		if (g.cfg.no_attr[i] == (int)attr)
			return CUDA_ERROR_INVALID_VALUE;
	switch (attr) {
	case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
		*v = (int)g.cfg.dom[d];
		break;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
		*v = (int)g.cfg.bus[d];
		break;
	case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
		*v = (int)(g.cfg.devfn[d] >> 3);
		break;
	case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
		*v = g.cfg.dmabuf[d];
		break;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED:
		*v = g.cfg.gdr[d];
		break;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
		*v = g.cfg.vmm_gdr[d];
		break;
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
		*v = 1;
		break;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS:
		*v = g.cfg.flush_options;
		break;
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING:
		*v = g.cfg.writes_ordering;
		break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		*v = 9;
		break;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
		*v = 1;
		break;
	default:
		*v = 0;
		break;
	}
	return CUDA_SUCCESS;
}

CUresult fake_DevicePrimaryCtxRetain(CUcontext *out, CUdevice d)
{
	CUresult rc = enter_dev("cuDevicePrimaryCtxRetain", d);
	struct fake_ctx *c;

	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g.lock);
	c = &g.ctx[d];
	c->magic = FAKE_MAGIC_CTX;
	c->dev = d;
	c->refs++;
	pthread_mutex_unlock(&g.lock);
	*out = (CUcontext)c;
	return CUDA_SUCCESS;
}

CUresult fake_DevicePrimaryCtxRelease(CUdevice d)
{
	CUresult rc = enter_dev("cuDevicePrimaryCtxRelease", d);

	if (rc != CUDA_SUCCESS)
		return rc;
	pthread_mutex_lock(&g.lock);
	rc = g.ctx[d].refs > 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
	if (rc == CUDA_SUCCESS)
		g.ctx[d].refs--;
	pthread_mutex_unlock(&g.lock);
	return rc;
}

CUresult fake_CtxSetCurrent(CUcontext h)
{
	struct fake_ctx *c = (struct fake_ctx *)h;
	CUresult rc = enter("cuCtxSetCurrent", false);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (c && (c->magic != FAKE_MAGIC_CTX || c->refs <= 0))
		return CUDA_ERROR_INVALID_CONTEXT;
	tls_ctx = c;
	return CUDA_SUCCESS;
}

CUresult fake_DeviceGetUuid(CUuuid *uuid, CUdevice d)
{
	CUresult rc = enter_dev("cuDeviceGetUuid", d);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(uuid->bytes, g.cfg.uuid[d], 16);
	return CUDA_SUCCESS;
}

CUresult fake_FlushGPUDirectRDMAWrites(CUflushGPUDirectRDMAWritesTarget target,
				       CUflushGPUDirectRDMAWritesScope scope)
{
	CUresult rc = enter("cuFlushGPUDirectRDMAWrites", true);

	if (rc != CUDA_SUCCESS)
		return rc;
	if (target != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX ||
	    (scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER &&
	     scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g.lock);
	g.flushes++;
	pthread_mutex_unlock(&g.lock);
	return CUDA_SUCCESS;
}

EXPORT unsigned long long gdrperf_fake_cuda_flushes(void);
EXPORT unsigned long long gdrperf_fake_cuda_flushes(void)
{
	unsigned long long n;

	pthread_mutex_lock(&g.lock);
	n = g.flushes;
	pthread_mutex_unlock(&g.lock);
	return n;
}
