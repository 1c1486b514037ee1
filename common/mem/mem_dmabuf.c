/*
 * The dmabuf path: cuMemAlloc, export the page-aligned range with
 * cuMemGetHandleForAddressRange(DMA_BUF_FD), ibv_reg_dmabuf_mr(pd, offset,
 * len, iova = device pointer, fd, access), close the fd. Needs Linux >= 5.12,
 * the open GPU kernel module, a CUDA >= 11.7 driver and a provider with
 * DMA-BUF support; no peer-memory module.
 */
#include "config.h"

#include "cuda.h"
#include "mem.h"
#include "mem_gpu.h"
#include "util.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *nic_name(const struct gdr_mem_env *env)
{
	if (env->nic && *env->nic)
		return env->nic;
	if (env->pd && env->pd->context)
		return ibv_get_device_name(env->pd->context->device);
	return "NIC";
}

int gdr_dmabuf_probe_nic(struct ibv_pd *pd, char *why, size_t wlen)
{
	const char *dev;

	if (!pd) {
		gdr_strlcpy(why, "no protection domain to probe DMA-BUF support with", wlen);
		return -EINVAL;
	}
	dev = ibv_get_device_name(pd->context->device);
#ifdef HAVE_IBV_REG_DMABUF_MR
	/* fd -1 never names a DMA-BUF: only a provider without the verb answers EOPNOTSUPP. */
	struct ibv_mr *mr = ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0);
	int err = errno;

	if (mr) {
		ibv_dereg_mr(mr);
		return 1;
	}
	if (err == EOPNOTSUPP || err == EPROTONOSUPPORT) {
		snprintf(why, wlen, "%s: ibv_reg_dmabuf_mr: %s (provider has no DMA-BUF support)",
			 dev, strerror(err));
		return 0;
	}
	return 1;
#else
	snprintf(why, wlen,
		 "%s: built with a libibverbs without ibv_reg_dmabuf_mr (rdma-core >= 34 needed)",
		 dev);
	return 0;
#endif
}

static int dmabuf_available(const struct gdr_mem_env *env, char *why, size_t wlen)
{
	char name[192];
	int ret, version = 0;

	ret = gdr_mem_gpu_check(env, why, wlen);
	if (ret)
		return ret;
	gdr_mem_gpu_name(env->gpu, name, sizeof(name));
	gdr_cuda_driver_version(env->cuda, &version);
	if (version < 11070) {
		snprintf(why, wlen, "CUDA driver %d.%d is older than 11.7 (no DMA-BUF export)",
			 version / 1000, version % 1000 / 10);
		return -EOPNOTSUPP;
	}
	if (env->gpu->gdr_supported == 0) {
		snprintf(why, wlen, "%s: CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 0", name);
		return -EOPNOTSUPP;
	}
	if (env->gpu->dmabuf_supported <= 0) {
		snprintf(
		    why, wlen,
		    "%s: CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = %s (needs the open GPU kernel "
		    "module and Linux >= 5.12)",
		    name, env->gpu->dmabuf_supported == 0 ? "0" : "unknown");
		return -EOPNOTSUPP;
	}
#ifndef HAVE_IBV_REG_DMABUF_MR
	snprintf(why, wlen, "built with a libibverbs without ibv_reg_dmabuf_mr (rdma-core >= 34)");
	return -EOPNOTSUPP;
#endif
	/* --use_data_direct: the library and the device must have it, else skipped with why. */
	if (env->data_direct) {
		ret = gdr_data_direct_check(env->pd ? env->pd->context : NULL, why, wlen);
		if (ret)
			return ret;
	}
	/* Without a PD (gdr_doctor on a node with no NIC) only the GPU side is judged. */
	if (env->pd) {
		ret = gdr_dmabuf_probe_nic(env->pd, why, wlen);
		if (ret < 0)
			return ret;
		if (ret == 0)
			return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * tests/fake_verbs (LD_PRELOAD) emulates ibv_reg_dmabuf_mr on providers
 * without it and says which MRs it made: such rows must say so.
 */
static int reg_emulated(const struct ibv_mr *mr)
{
	int (*emulated)(const struct ibv_mr *) = NULL;
	void *sym = dlsym(RTLD_DEFAULT, "gdrperf_fake_verbs_emulated");

	memcpy(&emulated, &sym, sizeof(emulated));
	return emulated ? emulated(mr) : 0;
}

/* Test hook: GDRPERF_TEST_DMABUF_OFFSET_SKEW=N registers at a wrong offset (N bytes off). */
static uint64_t offset_skew(void)
{
	const char *e = getenv("GDRPERF_TEST_DMABUF_OFFSET_SKEW");

	return e && *e ? strtoull(e, NULL, 0) : 0;
}

static int dmabuf_register(struct gdr_mem *m, int fd, const struct gdr_dmabuf_range *r, int access,
			   char *why, size_t wlen)
{
	const struct gdr_mem_env *env = m->env;

	if (!env->pd) {
		gdr_strlcpy(why, "dmabuf: no protection domain to register with", wlen);
		return -EINVAL;
	}
#ifdef HAVE_IBV_REG_DMABUF_MR
	uint64_t offset = r->offset + offset_skew();
	char sz[32];
	int err;

	if (env->data_direct) {
		m->reg_call = "mlx5dv_reg_dmabuf_mr";
		m->mr = gdr_data_direct_reg(env->pd, offset, m->len, m->addr, fd, access);
	} else {
		m->reg_call = "ibv_reg_dmabuf_mr";
		m->mr = ibv_reg_dmabuf_mr(env->pd, offset, m->len, m->addr, fd, access);
	}
	if (m->mr) {
		m->emulated = reg_emulated(m->mr);
		if (m->emulated)
			snprintf(m->note, sizeof(m->note),
				 "DMA-BUF registration emulated by tests/fake_verbs (not a NIC's)");
		return 0;
	}
	err = errno ? errno : EIO;
	if (err == EOPNOTSUPP || err == EPROTONOSUPPORT)
		snprintf(why, wlen, "%s: %s: %s (provider has no DMA-BUF support)", nic_name(env),
			 m->reg_call, strerror(err));
	else
		snprintf(why, wlen, "%s: %s(%s at offset %llu, iova 0x%llx): %s", nic_name(env),
			 m->reg_call, gdr_fmt_size(m->len, sz, sizeof(sz)),
			 (unsigned long long)offset, (unsigned long long)m->addr, strerror(err));
	return -err;
#else
	(void)fd;
	(void)r;
	(void)access;
	snprintf(why, wlen, "%s: built with a libibverbs without ibv_reg_dmabuf_mr", nic_name(env));
	return -EOPNOTSUPP;
#endif
}

/* Export the buffer's range and register it; the fd is closed either way. */
static int dmabuf_export_reg(struct gdr_mem *m, int access, int timed, char *why, size_t wlen)
{
	struct gdr_dmabuf_range r;
	uint64_t t0 = gdr_now_ns();
	int fd = -1, ret;

	ret = gdr_dmabuf_export(m, &fd, &r, why, wlen);
	if (ret)
		return ret;
	if (timed)
		m->export_us = (double)(gdr_now_ns() - t0) / 1e3;
	t0 = gdr_now_ns();
	ret = dmabuf_register(m, fd, &r, access, why, wlen);
	if (timed)
		m->reg_us = (double)(gdr_now_ns() - t0) / 1e3;
	/* The MR holds its own reference on the DMA-BUF. */
	close(fd);
	if (ret)
		return ret;
	gdr_dbg("dmabuf: %zu bytes at 0x%llx, exported [0x%llx, +%zu), offset %llu%s", m->len,
		(unsigned long long)m->addr, (unsigned long long)r.base, r.span,
		(unsigned long long)r.offset, m->emulated ? " (emulated registration)" : "");
	return 0;
}

static int dmabuf_reg(struct gdr_mem *m, int access, char *why, size_t wlen)
{
	return dmabuf_export_reg(m, access, 0, why, wlen);
}

static int dmabuf_alloc_reg(struct gdr_mem *m, size_t len, int access, char *why, size_t wlen)
{
	const struct gdr_gpu *gpu = m->env->gpu;
	int ret;

	ret = gdr_mem_gpu_check(m->env, why, wlen);
	if (ret)
		return ret;
	ret = gdr_mem_gpu_alloc(m, len, why, wlen);
	if (ret)
		return ret;
	m->dmabuf_mapping = m->env->dmabuf_pcie ? "pcie" : "default";
	if (gpu->gdr_supported < 0)
		snprintf(m->note, sizeof(m->note),
			 "CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED unknown (the driver cannot "
			 "report it)");
	/* The NIC reads these pages too: no cuMemcpy may still be in flight. */
	ret = gdr_mem_gpu_sync_memops(m, why, wlen);
	if (ret)
		goto out_free;
	ret = dmabuf_export_reg(m, access, 1, why, wlen);
	if (ret)
		goto out_free;
	return 0;

out_free:
	gdr_mem_gpu_free(m);
	return ret;
}

const struct gdr_mem_ops gdr_mem_dmabuf_ops = {
	.kind = GDR_MEM_DMABUF,
	.available = dmabuf_available,
	.alloc_reg = dmabuf_alloc_reg,
	.reg = dmabuf_reg,
	.write = gdr_mem_gpu_write,
	.read = gdr_mem_gpu_read_flushed,
	.free = gdr_mem_gpu_free,
};
