/*
 * What test_report_rows.c and test_report_files.c share: the CSV column
 * contract, a reader for the rows, a filled-in result, and a private
 * directory for the files the cases write.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_fixture.h"

/* clang-format off */
/* The docs/csv-json.md contract, written out independently of report.c. */
const char *const contract[] = {
	"timestamp",	"host",		  "peer",
	"role",		"verb",		  "path",
	"path_remote",	"size_bytes",	  "iters",
	"qps",		"tx_depth",	  "post_list",
	"bidir",	"repeats",	  "bw_peak_gbps",
	"bw_avg_gbps",	"bw_median_gbps", "bw_min_gbps",
	"bw_max_gbps",	"msg_rate_mpps",  "cpu_util_pct",
	"gpu",		"gpu_bus_id",	  "gpu_name",
	"nic",		"nic_bus_id",	  "distance",
	"pcie_bridges", "gpu_numa",	  "nic_numa",
	"status",	"note",		  "label",
	"version",
	/* appended: GPU provenance and cost (docs/gpu-paths.md) */
	"reg_us",	"dereg_us",	  "reg_call",
	"gpu_alloc",	"dmabuf_mapping", "relaxed_ordering",
	"gpu_uuid",	"cuda_driver",	  "kernel",
	"libibverbs",	"nic_fw",
	/* appended: ceiling (docs/pcie-health.md) */
	"ceiling_gbps",	"pct_of_ceiling",
	/* appended: latency (docs/latency.md) */
	"lat_min_us",	"lat_p50_us",	  "lat_p90_us",
	"lat_p99_us",	"lat_p999_us",	  "lat_max_us",
	"lat_avg_us",
	/* appended: the traffic class QP 0 got (docs/perftest-options.md) */
	"tos",
	/* appended: when the row was measured (issue 38, docs/csv-json.md) */
	"t_start_s",	"t_end_s",	  "order",
	/* appended: bounce (docs/bounce.md) */
	"bounce_chunk", "bounce_copy",	  "bounce_blocks",
	/* appended: the peer's side of the combination (issue 48, docs/csv-json.md) */
	"gpu_remote",	"gpu_bus_id_remote", "gpu_name_remote",
	"nic_remote",	"distance_remote",
	/* appended: the run and its rounds (issue 51, docs/csv-json.md "Rounds") */
	"run_id",	"looks",	  "stop",
	"rep_bw_gbps",	"rep_t_start_s",  "rep_t_end_s",
};
/* clang-format on */

const int report_ncols = (int)(sizeof(contract) / sizeof(contract[0]));

int col_index(const char *name)
{
	for (int i = 0; i < NCOLS; i++)
		if (!strcmp(contract[i], name))
			return i;
	fail_msg("no column %s", name);
	return -1;
}

/*
 * A tiny RFC 4180 reader, independent of the writer: one record from *s
 * (quoted fields may hold commas, "" and newlines), fields into f[].
 * Returns the field count, -1 on a malformed record.
 */
int parse_record(const char **s, char f[][FIELD_LEN], int max)
{
	const char *p = *s;
	int n = 0;

	for (;;) {
		size_t k = 0;

		if (n == max)
			return -1;
		if (*p == '"') {
			p++;
			for (;;) {
				if (!*p)
					return -1;
				if (*p == '"' && p[1] == '"') {
					f[n][k++] = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					f[n][k++] = *p++;
				}
				if (k >= FIELD_LEN - 1)
					return -1;
			}
			if (*p != ',' && *p != '\n')
				return -1;
		} else {
			while (*p && *p != ',' && *p != '\n') {
				if (*p == '"' || k >= FIELD_LEN - 1)
					return -1;
				f[n][k++] = *p++;
			}
		}
		f[n++][k] = '\0';
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p != '\n')
			return -1;
		*s = p + 1;
		return n;
	}
}

char fields[MAXFIELDS][FIELD_LEN];

int parse_line(const char *line)
{
	const char *p = line;
	int n = parse_record(&p, fields, MAXFIELDS);

	assert_true(n > 0);
	assert_string_equal(p, ""); /* exactly one record */
	return n;
}

void fill(struct gdr_result *r)
{
	gdr_result_init(r);
	strcpy(r->timestamp, "2026-11-29T21:25:51Z");
	strcpy(r->host, "node-a");
	strcpy(r->peer, "node-b");
	strcpy(r->role, "client");
	strcpy(r->verb, "write");
	strcpy(r->path, "dmabuf");
	strcpy(r->path_remote, "peermem");
	r->size_bytes = 1048576;
	r->iters = 5000;
	r->qps = 2;
	r->tx_depth = 128;
	r->post_list = 1;
	r->bidir = 1;
	r->repeats = 5;
	r->bw_peak_gbps = 97.12345;
	r->bw_avg_gbps = 96.5;
	r->bw_median_gbps = 96.4996;
	r->bw_min_gbps = 0.0004;
	r->bw_max_gbps = 97.0;
	r->msg_rate_mpps = 0.0116;
	r->cpu_util_pct = 12.25;
	strcpy(r->gpu, "0");
	strcpy(r->gpu_bus_id, "0000:17:00.0");
	strcpy(r->gpu_name, "NVIDIA H100 80GB HBM3");
	strcpy(r->nic, "mlx5_0");
	strcpy(r->nic_bus_id, "0000:18:00.0");
	strcpy(r->distance, "PIX");
	strcpy(r->pcie_bridges, "1");
	strcpy(r->gpu_numa, "0");
	strcpy(r->nic_numa, "0");
	strcpy(r->gpu_remote, "1");
	strcpy(r->gpu_bus_id_remote, "0000:3b:00.0");
	strcpy(r->gpu_name_remote, "NVIDIA H200");
	strcpy(r->nic_remote, "mlx5_1");
	strcpy(r->distance_remote, "PXB");
	strcpy(r->note, "");
	strcpy(r->label, "run-1");
	strcpy(r->version, "0.1.0");
	strcpy(r->run_id, "00c0ffee12345678");
	r->looks = 11;
	strcpy(r->stop, "decided");
	r->nrep = 3;
	r->rep_bw_gbps[0] = 96.5;
	r->rep_bw_gbps[1] = 0.0241234;
	r->rep_bw_gbps[2] = 1234.5678;
	r->rep_t_start_s[0] = 0.5;
	r->rep_t_start_s[1] = 1.25;
	r->rep_t_start_s[2] = 2;
	r->rep_t_end_s[0] = 0.75;
	r->rep_t_end_s[1] = 1.5;
	r->rep_t_end_s[2] = 2.0000004;
}

char tmpdir[64];

int make_tmpdir(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/gdr-report-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

int remove_tmpdir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}
