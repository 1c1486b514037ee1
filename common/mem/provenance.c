/* The provenance columns of a row: see provenance.h. */
#include "config.h"

#include "provenance.h"
#include "util.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

/*
 * rdma-core has no version call; its file name does: libibverbs.so.1.14.44.0
 * is rdma-core 44. Taken from the library that is mapped, not the headers.
 */
static void libibverbs_version(char *buf, size_t len)
{
	char real[PATH_MAX];
	const char *v;
	Dl_info info;
	void *sym = (void *)ibv_get_device_list;

	buf[0] = '\0';
	if (!dladdr(sym, &info) || !info.dli_fname || !realpath(info.dli_fname, real))
		return;
	v = strstr(real, ".so.");
	if (v)
		gdr_strlcpy(buf, v + 4, len);
}

void gdr_provenance_load(struct gdr_provenance *p, struct ibv_context *ctx)
{
	struct ibv_device_attr attr;
	struct utsname u;

	memset(p, 0, sizeof(*p));
	if (uname(&u) == 0)
		gdr_strlcpy(p->kernel, u.release, sizeof(p->kernel));
	libibverbs_version(p->libibverbs, sizeof(p->libibverbs));
	if (ctx && ibv_query_device(ctx, &attr) == 0)
		gdr_strlcpy(p->nic_fw, attr.fw_ver, sizeof(p->nic_fw));
}

void gdr_provenance_fill(struct gdr_result *r, const struct gdr_provenance *p,
			 enum gdr_mem_kind kind, const struct gdr_mem *m,
			 const struct gdr_mem_env *env, int cuda_driver, const char *uuid)
{
	int gpu = kind != GDR_MEM_HOST;

	gdr_strlcpy(r->kernel, p->kernel, sizeof(r->kernel));
	gdr_strlcpy(r->libibverbs, p->libibverbs, sizeof(r->libibverbs));
	gdr_strlcpy(r->nic_fw, p->nic_fw, sizeof(r->nic_fw));
	/* What was asked for, so that a skipped row of a sweep still says which one it was. */
	snprintf(r->relaxed_ordering, sizeof(r->relaxed_ordering), "%d",
		 m ? m->relaxed : !env->no_relaxed && gdr_mem_relaxed_flag() != 0);
	if (gpu) {
		gdr_strlcpy(r->gpu_alloc, gdr_gpu_alloc_call(env->gpu_alloc), sizeof(r->gpu_alloc));
		if (cuda_driver > 0)
			snprintf(r->cuda_driver, sizeof(r->cuda_driver), "%d.%d",
				 cuda_driver / 1000, cuda_driver % 1000 / 10);
		if (uuid)
			gdr_strlcpy(r->gpu_uuid, uuid, sizeof(r->gpu_uuid));
	}
	if (kind == GDR_MEM_DMABUF)
		gdr_strlcpy(r->dmabuf_mapping, env->dmabuf_pcie ? "pcie" : "default",
			    sizeof(r->dmabuf_mapping));
	if (kind == GDR_MEM_DMABUF && env->data_direct)
		gdr_strlcpy(r->reg_call, "mlx5dv_reg_dmabuf_mr", sizeof(r->reg_call));
	if (!m)
		return;
	if (m->reg_call)
		snprintf(r->reg_call, sizeof(r->reg_call), "%s%s", m->reg_call,
			 m->emulated ? " (emulated)" : "");
	r->reg_us = m->reg_us;
	r->dereg_us = m->dereg_us;
}
