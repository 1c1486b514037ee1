/*
 * VMM memory as NCCL makes it (cuMemCreate with gpuDirectRDMACapable,
 * cuMemAddressReserve, cuMemMap, cuMemSetAccess) and its release; the calls
 * are optional in the driver table, so a driver without them says so.
 */
#include "config.h"

#include "cuda_int.h"
#include "util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int vmm_check(struct gdr_cuda *cu, char *why, size_t wlen)
{
	if (cu->MemCreate && cu->MemGetAllocationGranularity && cu->MemAddressReserve &&
	    cu->MemAddressFree && cu->MemMap && cu->MemUnmap && cu->MemSetAccess && cu->MemRelease)
		return 0;
	return gdr_cu_absent(cu, why, wlen,
			     "virtual memory management calls (cuMemCreate needs a CUDA >= 10.2 "
			     "driver)");
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
	return gdr_cu_check(
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
	ret = gdr_cu_check(cu, why, wlen, cu->MemCreate(&h, len, &prop, 0),
			   "GPU %d: cuMemCreate(%s, gpuDirectRDMACapable)", gpu->ordinal, sz);
	if (ret)
		return ret;
	ret = gdr_cu_check(cu, why, wlen, cu->MemAddressReserve(&va, len, gran, 0, 0),
			   "cuMemAddressReserve(%s)", sz);
	if (ret)
		goto out_release;
	ret = gdr_cu_check(cu, why, wlen, cu->MemMap(va, len, 0, h, 0), "cuMemMap(0x%llx, %s)",
			   (unsigned long long)va, sz);
	if (ret)
		goto out_free_va;
	memset(&acc, 0, sizeof(acc));
	acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location.id = gpu->device;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	ret = gdr_cu_check(cu, why, wlen, cu->MemSetAccess(va, len, &acc, 1),
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
	gdr_cu_check(cu, NULL, 0, cu->MemUnmap((CUdeviceptr)v->va, v->len), "cuMemUnmap(0x%llx)",
		     (unsigned long long)v->va);
	gdr_cu_check(cu, NULL, 0, cu->MemAddressFree((CUdeviceptr)v->va, v->len),
		     "cuMemAddressFree(0x%llx)", (unsigned long long)v->va);
	gdr_cu_check(cu, NULL, 0, cu->MemRelease((CUmemGenericAllocationHandle)v->handle),
		     "cuMemRelease");
	memset(v, 0, sizeof(*v));
}
