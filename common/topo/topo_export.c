/*
 * gdr_topo's CSV and JSON: one record per GPU x NIC pair. The file is built
 * in memory and handed to gdr_out_replace (atomic for a regular file, in
 * place for a FIFO, a device or stdout), so a reader never sees half of it.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_settings.h"
#include "topo_report.h"
#include "util.h"
#include "writer.h"

static const char csv_header[] =
    "gpu,gpu_bus_id,gpu_name,nic,nic_bus_id,distance,switches,pcie_bridges,host_bridges,"
    "gpu_numa,nic_numa,gpu_link,nic_link,nccl_gdr,nccl_verdict,reason\n";

static void csv_str(FILE *f, const char *s, int last)
{
	gdr_csv_field(f, s);
	fputc(last ? '\n' : ',', f);
}

/* Unknown numbers are empty in CSV and null in JSON. */
static void csv_int(FILE *f, int v)
{
	if (v >= 0)
		fprintf(f, "%d", v);
	fputc(',', f);
}

static void json_str(FILE *f, const char *key, const char *s, int null_if_empty)
{
	fprintf(f, "\"%s\": ", key);
	if (null_if_empty && !*s)
		fputs("null", f);
	else
		gdr_json_str(f, s);
}

static void json_int(FILE *f, const char *key, int v)
{
	if (v >= 0)
		fprintf(f, "\"%s\": %d", key, v);
	else
		fprintf(f, "\"%s\": null", key);
}

/*
 * A link as GB/s of payload: hwloc's "31.51 GB/s" as it is, sysfs's
 * "16.0 GT/s x16" through the line code (8b/10b below 8 GT/s, 128b/130b
 * from 8 GT/s); null when unknown.
 */
static void json_link(FILE *f, const char *key, const char *link)
{
	double v, rate;
	int width;
	char unit[8];

	/* JSON has no inf or nan: a link that reads as one (sysfs's "inf GT/s") is unknown. */
	if (sscanf(link, "%lf GB/%1[s]", &v, unit) == 2 && isfinite(v))
		fprintf(f, "\"%s\": %.2f", key, v);
	else if (sscanf(link, "%lf GT/s x%d", &rate, &width) == 2 && width > 0 && isfinite(rate))
		fprintf(f, "\"%s\": %.2f", key, rate * width * (rate < 8 ? 0.8 : 128.0 / 130) / 8);
	else
		fprintf(f, "\"%s\": null", key);
}

static const char *json_bool(int v)
{
	return v < 0 ? "null" : v ? "true" : "false";
}

/* Each GPU's nearest NIC(s), NCCL's decision and what would enable it. */
static void json_gpus(FILE *f, const struct gdr_topo *t, const struct gdr_nccl_env *env)
{
	struct gdr_nccl_judgement j;
	struct gdr_topo_pair p;
	char fix[64];
	int i, n, k;

	fputs(",\n  \"gpus\": [", f);
	if (gdr_nccl_judge_topo(t, env, &j)) {
		fputs("]", f);
		return;
	}
	for (i = 0; i < j.ngpu; i++) {
		const struct gdr_nccl_gpu *g = &j.gpu[i];

		fprintf(f, "%s\n    {\"gpu\": %d, ", i ? "," : "", i);
		json_str(f, "bus_id", gdr_topo_gpu(t, i)->bus_id, 0);
		fputs(", \"nearest_nics\": [", f);
		for (n = 0, k = 0; g->nearest.cls != GDR_TOPO_UNKNOWN && n < gdr_topo_nic_count(t);
		     n++) {
			gdr_topo_pair_idx(t, i, n, &p);
			if (p.cls != g->nearest.cls)
				continue;
			fputs(k++ ? ", " : "", f);
			gdr_json_str(f, p.nic);
		}
		fputs("], ", f);
		json_str(f, "nearest_distance", gdr_topo_class_name(g->nearest.cls), 0);
		fprintf(f, ", \"distance_assumed\": %s, \"nccl_gdr\": %s, ",
			json_bool(gdr_topo_pair_assumed(&g->nearest)), json_bool(g->use));
		json_str(f, "to_enable",
			 g->use == 0 ? gdr_nccl_enable_text(g->need, fix, sizeof(fix)) : "", 1);
		fputc('}', f);
	}
	fputs(j.ngpu ? "\n  ]" : "]", f);
	gdr_nccl_judgement_free(&j);
}

static void json_warnings(FILE *f, const struct gdr_topo *t)
{
	struct gdr_topo_warnings w;

	fputs(",\n  \"warnings\": [", f);
	if (gdr_topo_warnings(t, &w) == 0) {
		for (int i = 0; i < w.n; i++) {
			fputs(i ? ",\n    " : "\n    ", f);
			gdr_json_str(f, w.msg[i]);
		}
		fputs(w.n ? "\n  ]" : "]", f);
		gdr_topo_warnings_free(&w);
	} else {
		fputs("]", f);
	}
}

static const char *yes_no(int v)
{
	return v < 0 ? "unknown" : v ? "yes" : "no";
}

static void csv_body(FILE *f, const struct gdr_topo *t, const struct gdr_nccl_env *env)
{
	struct gdr_topo_pair p;
	char verdict[192];
	int i, j;

	fputs(csv_header, f);
	for (i = 0; i < gdr_topo_gpu_count(t); i++)
		for (j = 0; j < gdr_topo_nic_count(t); j++) {
			gdr_topo_pair(t, gdr_topo_gpu(t, i)->bus_id, gdr_topo_nic(t, j)->name, &p);
			csv_int(f, p.gpu_index);
			csv_str(f, p.gpu_bus_id, 0);
			csv_str(f, p.gpu_name, 0);
			csv_str(f, p.nic, 0);
			csv_str(f, p.nic_bus_id, 0);
			csv_str(f, gdr_topo_class_name(p.cls), 0);
			csv_int(f, p.switches);
			csv_int(f, p.bridges);
			csv_int(f, p.host_bridges);
			csv_int(f, p.gpu_numa);
			csv_int(f, p.nic_numa);
			csv_str(f, p.gpu_link, 0);
			csv_str(f, p.nic_link, 0);
			csv_str(f, yes_no(gdr_nccl_would_use(env, p.cls)), 0);
			csv_str(f, gdr_nccl_verdict(env, p.cls, verdict, sizeof(verdict)), 0);
			csv_str(f, p.reason, 1);
		}
}

static void json_body(FILE *f, const struct gdr_topo *t, const struct gdr_nccl_env *env)
{
	const char *src = gdr_topo_source(t);
	struct gdr_topo_pair p;
	char verdict[192];
	int i, j, k = 0, use;

	fputs("{\n  ", f);
	json_str(f, "source", src ? src : "", 1);
	fputs(",\n  ", f);
	json_str(f, "nccl_net_gdr_level", gdr_nccl_level_name(env->level), 0);
	fprintf(f, ",\n  \"nccl_net_gdr_level_set\": %s,\n  ", env->level_set ? "true" : "false");
	json_int(f, "nccl_net_gdr_read", env->read);
	fprintf(f,
		",\n  \"nccl_dmabuf_enable\": %d,\n  \"nccl_dmabuf_enable_set\": %s,\n"
		"  \"nccl_net_gdr_c2c\": %d,\n  \"nccl_net_gdr_c2c_set\": %s",
		gdr_nccl_dmabuf_on(env), json_bool(env->dmabuf_set), gdr_nccl_c2c_on(env),
		json_bool(env->c2c_set));
	json_gpus(f, t, env);
	json_warnings(f, t);
	fputs(",\n  \"pairs\": [", f);
	for (i = 0; i < gdr_topo_gpu_count(t); i++)
		for (j = 0; j < gdr_topo_nic_count(t); j++) {
			gdr_topo_pair(t, gdr_topo_gpu(t, i)->bus_id, gdr_topo_nic(t, j)->name, &p);
			use = gdr_nccl_would_use(env, p.cls);
			fprintf(f, "%s\n    {", k++ ? "," : "");
			json_int(f, "gpu", p.gpu_index);
			fputs(", ", f);
			json_str(f, "gpu_bus_id", p.gpu_bus_id, 0);
			fputs(", ", f);
			json_str(f, "gpu_name", p.gpu_name, 0);
			fputs(", ", f);
			json_str(f, "nic", p.nic, 0);
			fputs(", ", f);
			json_str(f, "nic_bus_id", p.nic_bus_id, 1);
			fputs(", ", f);
			json_str(f, "distance", gdr_topo_class_name(p.cls), 0);
			fputs(", ", f);
			json_int(f, "switches", p.switches);
			fputs(", ", f);
			json_int(f, "pcie_bridges", p.bridges);
			fputs(", ", f);
			json_int(f, "host_bridges", p.host_bridges);
			fputs(", ", f);
			json_int(f, "gpu_numa", p.gpu_numa);
			fputs(", ", f);
			json_int(f, "nic_numa", p.nic_numa);
			fputs(", ", f);
			json_link(f, "gpu_link_gbytes_s", p.gpu_link);
			fputs(", ", f);
			json_link(f, "nic_link_gbytes_s", p.nic_link);
			fprintf(f, ", \"distance_assumed\": %s, \"nccl_gdr\": %s, ",
				json_bool(gdr_topo_pair_assumed(&p)), json_bool(use));
			json_str(f, "nccl_verdict",
				 gdr_nccl_verdict(env, p.cls, verdict, sizeof(verdict)), 0);
			fputs(", ", f);
			json_str(f, "reason", p.reason, 0);
			gdr_topo_json_pcie(f, t, &p);
			fputc('}', f);
		}
	fputs(k ? "\n  ]\n}\n" : "]\n}\n", f);
}

static int write_with(void (*body)(FILE *, const struct gdr_topo *, const struct gdr_nccl_env *),
		      const struct gdr_topo *t, const struct gdr_nccl_env *env, const char *path,
		      char *why, size_t wlen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int err;

	if (!mem) {
		snprintf(why, wlen, "%s: %s", path, strerror(errno));
		return -ENOMEM;
	}
	body(mem, t, env);
	if (fclose(mem)) {
		free(buf);
		snprintf(why, wlen, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	err = gdr_out_replace(path, buf, len, why, wlen);
	free(buf);
	return err;
}

int gdr_topo_write_csv(const struct gdr_topo *t, const struct gdr_nccl_env *env, const char *path,
		       char *why, size_t wlen)
{
	return write_with(csv_body, t, env, path, why, wlen);
}

int gdr_topo_write_json(const struct gdr_topo *t, const struct gdr_nccl_env *env, const char *path,
			char *why, size_t wlen)
{
	return write_with(json_body, t, env, path, why, wlen);
}
