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

#include <errno.h>
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

static int dmabuf_register(struct gdr_mem *m, int fd, const struct gdr_dmabuf_range *r, int access,
			   char *why, size_t wlen)
{
	const struct gdr_mem_env *env = m->env;

	if (!env->pd) {
		gdr_strlcpy(why, "dmabuf: no protection domain to register with", wlen);
		return -EINVAL;
	}
#ifdef HAVE_IBV_REG_DMABUF_MR
	char sz[32];
	int err;

	m->mr = ibv_reg_dmabuf_mr(env->pd, r->offset, m->len, m->addr, fd, access);
	if (m->mr)
		return 0;
	err = errno ? errno : EIO;
	if (err == EOPNOTSUPP || err == EPROTONOSUPPORT)
		snprintf(why, wlen, "%s: ibv_reg_dmabuf_mr: %s (provider has no DMA-BUF support)",
			 nic_name(env), strerror(err));
	else
		snprintf(why, wlen, "%s: ibv_reg_dmabuf_mr(%s at offset %llu, iova 0x%llx): %s",
			 nic_name(env), gdr_fmt_size(m->len, sz, sizeof(sz)),
			 (unsigned long long)r->offset, (unsigned long long)m->addr, strerror(err));
	return -err;
#else
	(void)fd;
	(void)r;
	(void)access;
	snprintf(why, wlen, "%s: built with a libibverbs without ibv_reg_dmabuf_mr", nic_name(env));
	return -EOPNOTSUPP;
#endif
}

static int dmabuf_alloc_reg(struct gdr_mem *m, size_t len, int access, char *why, size_t wlen)
{
	struct gdr_dmabuf_range r;
	int fd = -1, ret;

	ret = gdr_mem_gpu_check(m->env, why, wlen);
	if (ret)
		return ret;
	ret = gdr_mem_gpu_alloc(m, len, why, wlen);
	if (ret)
		return ret;
	ret = gdr_dmabuf_export(m->env->cuda, m->addr, m->len, &fd, &r, why, wlen);
	if (ret)
		goto out_free;
	ret = dmabuf_register(m, fd, &r, access, why, wlen);
	/* The MR holds its own reference on the DMA-BUF. */
	close(fd);
	if (ret)
		goto out_free;
	gdr_dbg("dmabuf: %zu bytes at 0x%llx, exported [0x%llx, +%zu), offset %llu", m->len,
		(unsigned long long)m->addr, (unsigned long long)r.base, r.span,
		(unsigned long long)r.offset);
	return 0;

out_free:
	gdr_mem_gpu_free(m);
	return ret;
}

const struct gdr_mem_ops gdr_mem_dmabuf_ops = {
	.kind = GDR_MEM_DMABUF,
	.available = dmabuf_available,
	.alloc_reg = dmabuf_alloc_reg,
	.write = gdr_mem_gpu_write,
	.read = gdr_mem_gpu_read,
	.free = gdr_mem_gpu_free,
};
