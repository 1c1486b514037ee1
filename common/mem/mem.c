#include "config.h"

#include "mem.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

static const char *const kind_names[GDR_MEM__COUNT] = {
	[GDR_MEM_HOST] = "host",
	[GDR_MEM_DMABUF] = "dmabuf",
	[GDR_MEM_PEERMEM] = "peermem",
	[GDR_MEM_BOUNCE] = "bounce",
};

static const struct gdr_mem_ops *const kind_ops[GDR_MEM__COUNT] = {
	[GDR_MEM_HOST] = &gdr_mem_host_ops,
	[GDR_MEM_DMABUF] = &gdr_mem_dmabuf_ops,
	[GDR_MEM_PEERMEM] = &gdr_mem_peermem_ops,
	[GDR_MEM_BOUNCE] = &gdr_mem_bounce_ops,
};

const char *gdr_mem_kind_name(enum gdr_mem_kind kind)
{
	if ((unsigned int)kind >= GDR_MEM__COUNT)
		return "unknown";
	return kind_names[kind];
}

int gdr_mem_kind_parse(const char *name)
{
	for (int k = 0; k < GDR_MEM__COUNT; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	return -EINVAL;
}

const struct gdr_mem_ops *gdr_mem_ops_for(enum gdr_mem_kind kind)
{
	if ((unsigned int)kind >= GDR_MEM__COUNT)
		return NULL;
	return kind_ops[kind];
}

int gdr_mem_open(struct gdr_mem *m, enum gdr_mem_kind kind, const struct gdr_mem_env *env,
		 size_t len, int access, char *why, size_t wlen)
{
	const struct gdr_mem_ops *ops = gdr_mem_ops_for(kind);
	int r;

	memset(m, 0, sizeof(*m));
	if (!ops) {
		snprintf(why, wlen, "unknown memory path %d", (int)kind);
		return -EINVAL;
	}
	m->ops = ops;
	m->env = env;
	r = ops->available(env, why, wlen);
	if (r)
		return r;
	m->alloc_us = m->export_us = m->reg_us = m->dereg_us = -1;
	if (!env->no_relaxed)
		access |= gdr_mem_relaxed_flag();
	m->relaxed = (access & gdr_mem_relaxed_flag()) != 0;
	r = ops->alloc_reg(m, len, access, why, wlen);
	if (!r && ops->reg && m->mr) {
		/* What a deregistration costs, measured now: rows are written before close. */
		uint64_t t0 = gdr_now_ns();

		ibv_dereg_mr(m->mr);
		m->mr = NULL;
		m->dereg_us = (double)(gdr_now_ns() - t0) / 1e3;
		r = ops->reg(m, access, why, wlen);
	}
	if (r) {
		ops->free(m);
		m->ops = NULL;
	}
	return r;
}

void gdr_mem_close(struct gdr_mem *m)
{
	if (m->ops)
		m->ops->free(m);
	memset(m, 0, sizeof(*m));
}
