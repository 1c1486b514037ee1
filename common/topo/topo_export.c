/*
 * gdr_topo's CSV and JSON: one record per GPU x NIC pair. The file is built
 * in memory and handed to gdr_out_replace (atomic for a regular file, in
 * place for a FIFO, a device or stdout), so a reader never sees half of it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
			json_str(f, "gpu_link", p.gpu_link, 1);
			fputs(", ", f);
			json_str(f, "nic_link", p.nic_link, 1);
			fprintf(f, ", \"nccl_gdr\": %s, ",
				use < 0 ? "null"
				: use	? "true"
					: "false");
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
