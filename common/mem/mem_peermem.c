/*
 * The peermem path: cuMemAlloc, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, plain
 * ibv_reg_mr on the device pointer. The kernel's peer-memory hook hands the
 * range to nvidia_peermem (or the older nv_peer_mem), which pins the GPU
 * pages; without one, ibv_reg_mr fails with EFAULT.
 */
#include "config.h"

#include "cuda.h"
#include "mem.h"
#include "mem_gpu.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *const gdr_peermem_modules[] = { "nvidia_peermem", "nv_peer_mem", NULL };
const char *const gdr_peermem_clients[] = { "nv_mem", "nv_mem_nc", NULL };

/* Where each peer-memory client shows itself, in the order we trust them. */
static const struct {
	const char *name;
	const char *dir;
	const char *how; /* appended to the name in "found" */
} peermem_clients[] = {
	{ "nvidia_peermem", "/sys/module/nvidia_peermem", "" },
	{ "nv_mem", "/sys/kernel/mm/memory_peers/nv_mem", " (memory_peers)" },
	{ "nv_mem_nc", "/sys/kernel/mm/memory_peers/nv_mem_nc", " (memory_peers)" },
	{ "nv_peer_mem", "/sys/module/nv_peer_mem", "" },
};

int gdr_peermem_detect(const char *root, char *found, size_t flen, char *why, size_t wlen)
{
	for (size_t i = 0; i < GDR_ARRAY_SIZE(peermem_clients); i++) {
		char path[256], version[64];

		snprintf(path, sizeof(path), "%s/version", peermem_clients[i].dir);
		if (gdr_read_rooted(root, path, version, sizeof(version)) > 0) {
			snprintf(found, flen, "%s %s%s", peermem_clients[i].name, version,
				 peermem_clients[i].how);
			return 1;
		}
		/* A module built without MODULE_VERSION still has its sysfs directory. */
		if (gdr_exists_rooted(root, peermem_clients[i].dir)) {
			snprintf(found, flen, "%s (version unknown)%s", peermem_clients[i].name,
				 peermem_clients[i].how);
			return 1;
		}
	}
	snprintf(why, wlen,
		 "nvidia_peermem not loaded (/sys/module/nvidia_peermem absent; no nv_peer_mem or "
		 "memory_peers/nv_mem either): modprobe nvidia-peermem");
	return 0;
}

static int peermem_available(const struct gdr_mem_env *env, char *why, size_t wlen)
{
	char name[192], found[128];
	int ret;

	ret = gdr_mem_gpu_check(env, why, wlen);
	if (ret)
		return ret;
	if (env->gpu->gdr_supported == 0) {
		snprintf(why, wlen, "%s: CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 0",
			 gdr_mem_gpu_name(env->gpu, name, sizeof(name)));
		return -EOPNOTSUPP;
	}
	if (!gdr_peermem_detect(env->sysfs_root, found, sizeof(found), why, wlen))
		return -ENOENT;
	gdr_dbg("peermem: %s", found);
	return 0;
}

static int peermem_reg(struct gdr_mem *m, int access, char *why, size_t wlen)
{
	const struct gdr_mem_env *env = m->env;
	const char *explain;
	char sz[32];
	int err;

	if (!env->pd) {
		gdr_strlcpy(why, "peermem: no protection domain to register with", wlen);
		return -EINVAL;
	}
	m->reg_call = "ibv_reg_mr";
	m->mr = ibv_reg_mr(env->pd, (void *)(uintptr_t)m->addr, m->len, access);
	if (m->mr)
		return 0;
	err = errno ? errno : EIO;
	explain = gdr_peermem_explain(err);
	snprintf(why, wlen, "%s: ibv_reg_mr(GPU memory 0x%llx, %s): %s%s%s%s",
		 env->nic ? env->nic : ibv_get_device_name(env->pd->context->device),
		 (unsigned long long)m->addr, gdr_fmt_size(m->len, sz, sizeof(sz)), strerror(err),
		 explain ? " (" : "", explain ? explain : "", explain ? ")" : "");
	return -err;
}

static int peermem_alloc_reg(struct gdr_mem *m, size_t len, int access, char *why, size_t wlen)
{
	uint64_t t0;
	int ret;

	ret = gdr_mem_gpu_check(m->env, why, wlen);
	if (ret)
		return ret;
	ret = gdr_mem_gpu_alloc(m, len, why, wlen);
	if (ret)
		return ret;
	/* Without it a later cuMemcpy may still be in flight when the NIC reads the pages. */
	ret = gdr_mem_gpu_sync_memops(m, why, wlen);
	if (ret)
		goto out_free;
	t0 = gdr_now_ns();
	ret = peermem_reg(m, access, why, wlen);
	m->reg_us = (double)(gdr_now_ns() - t0) / 1e3;
	if (ret)
		goto out_free;
	return 0;

out_free:
	gdr_mem_gpu_free(m);
	return ret;
}

const struct gdr_mem_ops gdr_mem_peermem_ops = {
	.kind = GDR_MEM_PEERMEM,
	.available = peermem_available,
	.alloc_reg = peermem_alloc_reg,
	.reg = peermem_reg,
	.write = gdr_mem_gpu_write,
	.read = gdr_mem_gpu_read_flushed,
	.free = gdr_mem_gpu_free,
};
