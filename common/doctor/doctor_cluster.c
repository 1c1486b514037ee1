/*
 * gdr_doctor's outputs for a cluster (docs/cluster-outputs.md): the verdict
 * as node-feature-discovery labels (--nfd) and every check as Prometheus
 * metrics (--prom). Both say only what the report says: a fact the report
 * does not have is a label left out, never a guess.
 */
#include "config.h"

#include "doctor.h"
#include "nccl_settings.h"
#include "prom.h"
#include "topo.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* "ready", "possible", "blocked", "not-needed": a label value (63 chars, [A-Za-z0-9._-]). */
static const char *state_token(enum gdr_path_state s)
{
	switch (s) {
	case GDR_STATE_READY:
		return "ready";
	case GDR_STATE_POSSIBLE:
		return "possible";
	case GDR_STATE_BLOCKED:
		return "blocked";
	case GDR_STATE_NOT_NEEDED:
		return "not-needed";
	}
	return "blocked";
}

static int usable(enum gdr_path_state s)
{
	return s == GDR_STATE_READY || s == GDR_STATE_POSSIBLE;
}

void gdr_doctor_nccl_summary(const struct gdr_doctor *doc, struct gdr_doctor_nccl *s)
{
	struct gdr_nccl_env env = { .level = gdr_nccl_default_level(), .read = -1 };
	struct gdr_nccl_judgement j;
	struct gdr_topo *t;
	char why[256];
	int level_ok, worst = -1;

	memset(s, 0, sizeof(*s));
	level_ok =
	    !gdr_nccl_parse_level(getenv("NCCL_NET_GDR_LEVEL"), &env.level, why, sizeof(why));
	if (level_ok)
		gdr_strlcpy(s->gdr_level, gdr_nccl_level_name(env.level), sizeof(s->gdr_level));
	if (gdr_nccl_node_topo(&t, doc->topology_xml, doc->root, why, sizeof(why)))
		return;
	if (gdr_nccl_judge_topo(t, &env, &j)) {
		gdr_topo_free(t);
		return;
	}
	gdr_topo_free(t);
	for (int i = 0; i < j.ngpu; i++)
		if (j.gpu[i].use >= 0 && (int)j.gpu[i].nearest.cls > worst)
			worst = (int)j.gpu[i].nearest.cls;
	if (j.measured && worst >= 0) {
		gdr_strlcpy(s->gpu_nic_worst, gdr_topo_class_name((enum gdr_topo_class)worst),
			    sizeof(s->gpu_nic_worst));
		if (level_ok)
			gdr_strlcpy(s->nccl_gdr,
				    !j.refused		      ? "all"
				    : j.refused == j.measured ? "none"
							      : "some",
				    sizeof(s->nccl_gdr));
	}
	gdr_nccl_judgement_free(&j);
}

static const struct gdr_path_verdict *path_of(const struct gdr_verdict *v, unsigned int path)
{
	for (unsigned int i = 0; i < GDR_ARRAY_SIZE(v->paths); i++)
		if (v->paths[i].path == path)
			return &v->paths[i];
	return &v->paths[0];
}

void gdr_doctor_nfd(FILE *out, const struct gdr_doctor *doc, const struct gdr_verdict *v)
{
	struct gdr_doctor_nccl s;

	gdr_doctor_nccl_summary(doc, &s);
	fprintf(out, "gdrperf.dmabuf=%s\n", state_token(path_of(v, GDR_BLOCK_DMABUF)->state));
	fprintf(out, "gdrperf.peermem=%s\n", state_token(path_of(v, GDR_BLOCK_PEERMEM)->state));
	fprintf(out, "gdrperf.best-path=%s\n",
		usable(v->paths[0].state) ? gdr_path_key(v->paths[0].path) : "none");
	if (s.gdr_level[0])
		fprintf(out, "gdrperf.nccl-gdr-level=%s\n", s.gdr_level);
	if (s.gpu_nic_worst[0])
		fprintf(out, "gdrperf.gpu-nic-worst=%s\n", s.gpu_nic_worst);
	if (s.nccl_gdr[0])
		fprintf(out, "gdrperf.nccl-gdr=%s\n", s.nccl_gdr);
}

int gdr_doctor_prom(struct gdr_prom *p, const struct gdr_doctor *doc, const struct gdr_verdict *v)
{
	static const enum gdr_check_status statuses[] = { GDR_CHECK_PASS, GDR_CHECK_WARN,
							  GDR_CHECK_FAIL, GDR_CHECK_NA,
							  GDR_CHECK_INFO };
	struct gdr_prom_label l[4] = { { "host", doc->host } };
	struct gdr_doctor_nccl s;

	gdr_prom_family(p, "gdrperf_doctor_check",
			"1 for each gdr_doctor check; status pass, warn, fail, n-a or info.");
	for (unsigned int i = 0; i < doc->nchecks; i++) {
		l[1] = (struct gdr_prom_label){ "check", doc->checks[i].name };
		l[2] = (struct gdr_prom_label){ "status",
						gdr_check_status_name(doc->checks[i].status) };
		gdr_prom_sample(p, l, 3, "1");
	}
	gdr_prom_family(p, "gdrperf_doctor_checks", "How many gdr_doctor checks have the status.");
	for (size_t k = 0; k < GDR_ARRAY_SIZE(statuses); k++) {
		unsigned long long n = 0;

		for (unsigned int i = 0; i < doc->nchecks; i++)
			n += doc->checks[i].status == statuses[k];
		l[1] = (struct gdr_prom_label){ "status", gdr_check_status_name(statuses[k]) };
		gdr_prom_sample_u(p, l, 2, n);
	}
	gdr_prom_family(p, "gdrperf_doctor_path_usable",
			"1 when the GPUDirect path is ready or possible on the node, 0 when not.");
	for (unsigned int i = 0; i < GDR_ARRAY_SIZE(v->paths); i++) {
		l[1] = (struct gdr_prom_label){ "path", gdr_path_key(v->paths[i].path) };
		gdr_prom_sample(p, l, 2, usable(v->paths[i].state) ? "1" : "0");
	}
	gdr_prom_family(p, "gdrperf_doctor_path_state",
			"1; state of the GPUDirect path: ready, possible, blocked or not-needed.");
	for (unsigned int i = 0; i < GDR_ARRAY_SIZE(v->paths); i++) {
		l[1] = (struct gdr_prom_label){ "path", gdr_path_key(v->paths[i].path) };
		l[2] = (struct gdr_prom_label){ "state", state_token(v->paths[i].state) };
		gdr_prom_sample(p, l, 3, "1");
	}
	gdr_doctor_nccl_summary(doc, &s);
	gdr_prom_family(p, "gdrperf_doctor_nccl_info",
			"1; NCCL's effective NCCL_NET_GDR_LEVEL, the worst GPU-nearest NIC "
			"distance, and for how many GPUs NCCL would use GPUDirect RDMA (all, "
			"some, none); empty when not known.");
	l[1] = (struct gdr_prom_label){ "gdr_level", s.gdr_level };
	l[2] = (struct gdr_prom_label){ "gpu_nic_worst", s.gpu_nic_worst };
	l[3] = (struct gdr_prom_label){ "nccl_gdr", s.nccl_gdr };
	gdr_prom_sample(p, l, 4, "1");
	return p->err;
}
