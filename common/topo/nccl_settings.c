/*
 * NCCL's effective GPUDirect settings and what NCCL would decide per GPU.
 *
 * defaults[] is the one table of NCCL's defaults and the releases that
 * changed them, read in NCCL's source at its release tags
 * (github.com/NVIDIA/nccl; the tag's date in docs/usage-topo.md):
 *  - NCCL_NET_GDR_LEVEL: v2.4.2-1 to v2.5.7-1 (src/transport/net.cu,
 *    net.cc: NCCL_PARAM(NetGdrLevel, "NET_GDR_LEVEL", PATH_PHB)) take a
 *    number and use GDR when the distance is below it; v2.6.4-1
 *    (src/graph/paths.cc, ncclTopoCheckGdr) takes path names or the legacy
 *    numbers (levelsOldToNew[]) and defaults to PXB; v2.29.2-1 defaults to
 *    P2C while NCCL_NET_GDR_C2C is on.
 *  - NCCL_NET_GDR_READ (-2, "unset"): v2.19.1-1 adds compute capability
 *    >= 8.0 to NVLink as the reason to read GPU memory for sends.
 *  - NCCL_DMABUF_ENABLE: first in v2.13.4-1 (src/init.cc), default 1.
 *  - NCCL_NET_GDR_C2C: v2.26.2-1 with default 0; v2.27.3-1 made it 1.
 *  - NCCL_IB_DATA_DIRECT: first in v2.27.3-1 (src/transport/net_ib.cc),
 *    default 1; v2.27.6-1 makes 1 "the Data Direct device only", 2 both.
 *  - NCCL_NET_GDR_MLOPART: first in v2.30.7-1 (src/graph/paths.cc), 0.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_settings.h"
#include "util.h"

static const struct gdr_nccl_default defaults[] = {
	{ "NCCL_NET_GDR_LEVEL", "2.4.2", "2",
	  "a number; GDR when the distance is below it (PIX 0, PXB 1, PHB 2, NODE 3, SYS 4): "
	  "PXB and closer" },
	{ "NCCL_NET_GDR_LEVEL", "2.6.4", "PXB",
	  "path names or legacy numbers (0..5: LOC, PIX, PXB, PHB, SYS, SYS); GDR up to it" },
	{ "NCCL_NET_GDR_LEVEL", "2.29.2", "P2C",
	  "while NCCL_NET_GDR_C2C is on (PXB when off): adds NICs a Grace CPU reaches over "
	  "C2C, PXB for every PCIe pair" },
	{ "NCCL_NET_GDR_READ", "2.4.2", "unset",
	  "NCCL decides per GPU: sends read GPU memory with NVLink between the GPUs only" },
	{ "NCCL_NET_GDR_READ", "2.19.1", "unset",
	  "NCCL decides per GPU: also on compute capability >= 8.0" },
	{ "NCCL_DMABUF_ENABLE", "2.13.4", "1",
	  "new: DMA-BUF registration when GPU and NIC take it" },
	{ "NCCL_NET_GDR_C2C", "2.26.2", "0", "new: GDR to NICs a Grace CPU reaches over C2C" },
	{ "NCCL_NET_GDR_C2C", "2.27.3", "1", "on" },
	{ "NCCL_IB_DATA_DIRECT", "2.27.3", "1",
	  "new: any value but 0 uses a NIC's Data Direct DMA interface" },
	{ "NCCL_IB_DATA_DIRECT", "2.27.6", "1",
	  "1: the Data Direct device only; 2: it and the PCIe device; 0: off" },
	{ "NCCL_NET_GDR_MLOPART", "2.30.7", "0", "new: no GDR for a GPU in MLOPart mode unless 1" },
};

const struct gdr_nccl_default *gdr_nccl_defaults(size_t *n)
{
	*n = GDR_ARRAY_SIZE(defaults);
	return defaults;
}

int gdr_nccl_release_cmp(int major, int minor, int patch, const char *release)
{
	int r[3] = { 0, 0, 0 };
	int v[3] = { major, minor, patch < 0 ? 0 : patch };

	sscanf(release, "%d.%d.%d", &r[0], &r[1], &r[2]);
	for (int i = 0; i < 3; i++)
		if (v[i] != r[i])
			return v[i] < r[i] ? -1 : 1;
	return 0;
}

const struct gdr_nccl_default *gdr_nccl_default_in(const char *var, int major, int minor, int patch)
{
	const struct gdr_nccl_default *found = NULL;

	for (size_t i = 0; i < GDR_ARRAY_SIZE(defaults); i++)
		if (!strcmp(defaults[i].var, var) &&
		    (major < 0 ||
		     gdr_nccl_release_cmp(major, minor, patch, defaults[i].since) >= 0))
			found = &defaults[i];
	return found;
}

const char *gdr_nccl_since(const char *var)
{
	for (size_t i = 0; i < GDR_ARRAY_SIZE(defaults); i++)
		if (!strcmp(defaults[i].var, var))
			return defaults[i].since;
	return NULL;
}

const char *gdr_nccl_history(const char *var, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < GDR_ARRAY_SIZE(defaults) && off < len; i++)
		if (!strcmp(defaults[i].var, var))
			off += (size_t)snprintf(buf + off, len - off, "%s%s: %s, %s",
						off ? "; " : "", defaults[i].since,
						defaults[i].value, defaults[i].what);
	return buf;
}

const char *gdr_nccl_default_text(const char *var, char *buf, size_t len)
{
	const struct gdr_nccl_default *now = gdr_nccl_default_in(var, -1, 0, 0);
	const struct gdr_nccl_default *first = now, *before = NULL;

	buf[0] = '\0';
	if (!now)
		return buf;
	/* Since when the newest value holds (a change of meaning alone is no new value). */
	for (const struct gdr_nccl_default *d = now; d > defaults; d--) {
		const struct gdr_nccl_default *prev = d - 1;

		if (strcmp(prev->var, var))
			break;
		if (strcmp(prev->value, now->value)) {
			before = prev;
			break;
		}
		first = prev;
	}
	if (before)
		snprintf(buf, len, "%s since NCCL %s, %s before", now->value, first->since,
			 before->value);
	else
		snprintf(buf, len, "%s since NCCL %s", now->value, first->since);
	return buf;
}

int gdr_nccl_newest_series(const char *var, int *major, int *minor)
{
	const struct gdr_nccl_default *d = gdr_nccl_default_in(var, -1, 0, 0);

	*major = *minor = 0;
	if (!d || sscanf(d->since, "%d.%d", major, minor) != 2)
		return -ENOENT;
	return 0;
}

enum gdr_nccl_level gdr_nccl_default_level(void)
{
	const struct gdr_nccl_default *d = gdr_nccl_default_in("NCCL_NET_GDR_LEVEL", -1, 0, 0);
	enum gdr_nccl_level l = GDR_NCCL_PXB;
	char why[128];

	/* P2C (while NCCL_NET_GDR_C2C is on) is PXB for every PCIe pair. */
	if (d)
		gdr_nccl_parse_level(d->value, &l, why, sizeof(why));
	return l;
}

int gdr_nccl_default_flag(const char *var)
{
	const struct gdr_nccl_default *d = gdr_nccl_default_in(var, -1, 0, 0);

	return d ? atoi(d->value) != 0 : 0;
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
	return env->dmabuf_set ? env->dmabuf : gdr_nccl_default_flag("NCCL_DMABUF_ENABLE");
}

int gdr_nccl_c2c_on(const struct gdr_nccl_env *env)
{
	return env->c2c_set ? env->c2c : gdr_nccl_default_flag("NCCL_NET_GDR_C2C");
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
