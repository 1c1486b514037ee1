/*
 * NCCL's effective GPUDirect settings and what NCCL would decide per GPU.
 *
 * The defaults and the releases that changed them, read in NCCL's source at
 * its release tags (github.com/NVIDIA/nccl):
 *  - NCCL_NET_GDR_LEVEL: v2.4.2-1 and v2.5.6-1 (src/transport/net.cu, net.cc)
 *    take a number only and use GDR below PHB, that is PXB and closer;
 *    v2.6.4-1 (src/graph/paths.cc, ncclTopoCheckGdr) takes path names or the
 *    legacy numbers (levelsOldToNew[], numbers above 5 count as SYS) and
 *    defaults to PXB; v2.29.2-1 defaults to P2C while NCCL_NET_GDR_C2C is on,
 *    which adds NICs reached through a Grace CPU's C2C link and is PXB for
 *    every PCIe pair.
 *  - NCCL_NET_GDR_READ (default -2, "unset"): through v2.18.6-1 the NIC reads
 *    GPU memory for sends only with NVLink between the GPUs (or one GPU);
 *    from v2.19.1-1 also on compute capability >= 8.0.
 *  - NCCL_DMABUF_ENABLE: first in v2.13.4-1 (src/init.cc), default 1.
 *  - NCCL_NET_GDR_C2C: first in v2.26.2-1 with default 0; v2.27.3-1 made it 1.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_settings.h"
#include "util.h"

static const struct gdr_nccl_setting_doc docs[] = {
	{ "NCCL_NET_GDR_LEVEL", "PXB",
	  "2.4.2: numbers only, GDR at PXB and closer; 2.6.4: names and legacy numbers, "
	  "default PXB; 2.29.2: P2C while NCCL_NET_GDR_C2C is on (PXB for PCIe pairs)" },
	{ "NCCL_NET_GDR_READ", "unset (NCCL decides per GPU)",
	  "unset: with NVLink only up to 2.18; 2.19.1: also on compute capability >= 8.0" },
	{ "NCCL_DMABUF_ENABLE", "1", "2.13.4: new, default 1" },
	{ "NCCL_NET_GDR_C2C", "1", "2.26.2: new, default 0; 2.27.3: default 1" },
};

const struct gdr_nccl_setting_doc *gdr_nccl_setting_docs(int *n)
{
	*n = GDR_ARRAY_SIZE(docs);
	return docs;
}

int gdr_nccl_parse_long(const char *var, const char *s, long *v, char *why, size_t wlen)
{
	char *end;

	if (!s || !*s)
		return 1;
	errno = 0;
	*v = strtol(s, &end, 0);
	if (*end || errno || end == s) {
		snprintf(why, wlen, "%s=%s: not an integer (0 = off, 1 = on)", var, s);
		return -EINVAL;
	}
	return 0;
}

int gdr_nccl_parse_flag(const char *var, const char *s, int *out, char *why, size_t wlen)
{
	long v;
	int r = gdr_nccl_parse_long(var, s, &v, why, wlen);

	if (r >= 0)
		*out = r ? -1 : v != 0; /* NCCL tests the parameter for zero */
	return r < 0 ? r : 0;
}

int gdr_nccl_dmabuf_on(const struct gdr_nccl_env *env)
{
	return env->dmabuf_set ? env->dmabuf : GDR_NCCL_DEFAULT_DMABUF;
}

int gdr_nccl_c2c_on(const struct gdr_nccl_env *env)
{
	return env->c2c_set ? env->c2c : GDR_NCCL_DEFAULT_C2C;
}

static int load_flag(const char *var, int *set, int *val, char *why, size_t wlen)
{
	int v, err = gdr_nccl_parse_flag(var, getenv(var), &v, why, wlen);

	if (err)
		return err;
	*set = v >= 0;
	*val = v > 0;
	return 0;
}

int gdr_nccl_env_load(struct gdr_nccl_env *env, char *why, size_t wlen)
{
	const char *lv = getenv("NCCL_NET_GDR_LEVEL");
	int err;

	memset(env, 0, sizeof(*env));
	env->level_set = lv && *lv;
	err = gdr_nccl_parse_level(lv, &env->level, why, wlen);
	if (!err)
		err = gdr_nccl_parse_read(getenv("NCCL_NET_GDR_READ"), &env->read, why, wlen);
	if (!err)
		err = load_flag("NCCL_DMABUF_ENABLE", &env->dmabuf_set, &env->dmabuf, why, wlen);
	if (!err)
		err = load_flag("NCCL_NET_GDR_C2C", &env->c2c_set, &env->c2c, why, wlen);
	return err;
}

int gdr_nccl_judge_topo(const struct gdr_topo *t, const struct gdr_nccl_env *env,
			struct gdr_nccl_judgement *j)
{
	memset(j, 0, sizeof(*j));
	j->ngpu = gdr_topo_gpu_count(t);
	j->need = GDR_NCCL_LOC;
	if (!j->ngpu)
		return 0;
	j->gpu = calloc(j->ngpu, sizeof(*j->gpu));
	if (!j->gpu)
		return -ENOMEM;
	for (int i = 0; i < j->ngpu; i++) {
		struct gdr_nccl_gpu *g = &j->gpu[i];

		g->use = -1;
		if (gdr_topo_nearest_nic(t, gdr_topo_gpu(t, i)->bus_id, NULL, NULL, &g->nearest)) {
			g->nearest.cls = GDR_TOPO_UNKNOWN;
			continue;
		}
		g->use = gdr_nccl_would_use(env, g->nearest.cls);
		if (g->use < 0)
			continue;
		j->measured++;
		g->need = gdr_nccl_level_for(g->nearest.cls);
		if (!g->use) {
			j->refused++;
			if (g->need > j->need)
				j->need = g->need;
		}
	}
	return 0;
}

void gdr_nccl_judgement_free(struct gdr_nccl_judgement *j)
{
	free(j->gpu);
	j->gpu = NULL;
}

int gdr_nccl_node_topo(struct gdr_topo **t, const char *xml, const char *root, char *why,
		       size_t wlen)
{
	if (!xml && root && *root && strcmp(root, "/")) {
		snprintf(why, wlen, "distances not measured: --root %s is not this machine "
				    "(give its --topology-xml)", root);
		return -ENOENT;
	}
	return gdr_topo_load(t, xml, root, why, wlen);
}

const char *gdr_nccl_enable_text(enum gdr_nccl_level need, char *buf, size_t len)
{
	snprintf(buf, len, "NCCL_NET_GDR_LEVEL=%s", gdr_nccl_level_name(need));
	return buf;
}
