/*
 * Results as Prometheus metrics (docs/cluster-outputs.md): the rows the CSV
 * and JSON get, kept until the end and written whole through prom.c, only
 * when the run has rows, so that a run that fails before it measures leaves
 * an earlier file as it was. Values are the CSV's cells, so an empty cell is
 * a sample left out, never a 0.
 */
#include "config.h"

#include "prom.h"
#include "report.h"
#include "report_int.h"
#include "util.h"
#include "writer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct gdr_prom_rows {
	struct gdr_rows_keep k;
};

int gdr_prom_rows_open(struct gdr_prom_rows **out, const char *path, char *why, size_t wlen)
{
	struct gdr_prom_rows *pr = calloc(1, sizeof(*pr));
	int r;

	*out = NULL;
	if (!pr) {
		snprintf(why, wlen, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	r = gdr_keep_open(&pr->k, path, why, wlen);
	if (r) {
		free(pr);
		return r;
	}
	*out = pr;
	return 0;
}

int gdr_prom_rows_add(struct gdr_prom_rows *pr, const struct gdr_result *r)
{
	return gdr_keep_add(&pr->k, r);
}

/* Per-side paths (issue 48): the peer's path, a label only where it is not the row's own. */
static int has_remote(const struct gdr_result *r)
{
	return r->path_remote[0] && strcmp(r->path_remote, r->path);
}

/*
 * The labels every sample of a row has (size_bytes rendered into size),
 * path_remote too on a row whose sides differ; the count.
 */
#define ROW_LABELS 9
static int row_labels(const struct gdr_result *r, struct gdr_prom_label *l, char *size, size_t slen)
{
	snprintf(size, slen, "%llu", (unsigned long long)r->size_bytes);
	l[0] = (struct gdr_prom_label){ "host", r->host };
	l[1] = (struct gdr_prom_label){ "peer", r->peer };
	l[2] = (struct gdr_prom_label){ "role", r->role };
	l[3] = (struct gdr_prom_label){ "gpu", r->gpu };
	l[4] = (struct gdr_prom_label){ "nic", r->nic };
	l[5] = (struct gdr_prom_label){ "path", r->path };
	l[6] = (struct gdr_prom_label){ "verb", r->verb };
	l[7] = (struct gdr_prom_label){ "size_bytes", size };
	if (!has_remote(r))
		return 8;
	l[8] = (struct gdr_prom_label){ "path_remote", r->path_remote };
	return 9;
}

static int same_labels(const struct gdr_result *a, const struct gdr_result *b)
{
	return a->size_bytes == b->size_bytes && !strcmp(a->host, b->host) &&
	       !strcmp(a->peer, b->peer) && !strcmp(a->role, b->role) && !strcmp(a->gpu, b->gpu) &&
	       !strcmp(a->nic, b->nic) && !strcmp(a->path, b->path) && !strcmp(a->verb, b->verb) &&
	       !strcmp(has_remote(a) ? a->path_remote : "", has_remote(b) ? b->path_remote : "");
}

static size_t col_index(const char *name)
{
	for (size_t i = 0; i < gdr_report_ncols(); i++)
		if (!strcmp(gdr_report_col_name(i), name))
			return i;
	return (size_t)-1;
}

static int is_ok(const struct gdr_result *r)
{
	return !strcmp(r->status, "ok");
}

/* One family from one CSV column; suffix appended to the cell ("e-6": microseconds as seconds). */
static void column_family(struct gdr_prom *p, const struct gdr_result *rows, const int *keep,
			  size_t n, const char *metric, const char *help, const char *col,
			  const char *stat, const char *suffix, int started)
{
	struct gdr_prom_label l[ROW_LABELS + 1];
	char size[24], cell[64], val[80];
	size_t c = col_index(col);

	if (!started)
		gdr_prom_family(p, metric, help);
	for (size_t i = 0; i < n; i++) {
		if (!keep[i] || !is_ok(&rows[i]) ||
		    gdr_report_col_value(&rows[i], c, cell, sizeof(cell)) != GDR_VAL_NUM)
			continue;
		int nl = row_labels(&rows[i], l, size, sizeof(size));

		if (stat)
			l[nl] = (struct gdr_prom_label){ "stat", stat };
		snprintf(val, sizeof(val), "%s%s", cell, suffix);
		gdr_prom_sample(p, l, nl + (stat != NULL), val);
	}
}

int gdr_prom_rows_render(struct gdr_prom *p, const struct gdr_result *rows, size_t n)
{
	static const char *const lat[][2] = {
		{ "min", "lat_min_us" }, { "p50", "lat_p50_us" },   { "p90", "lat_p90_us" },
		{ "p99", "lat_p99_us" }, { "p999", "lat_p999_us" }, { "max", "lat_max_us" },
		{ "avg", "lat_avg_us" },
	};
	struct gdr_prom_label l[ROW_LABELS + 1];
	char size[24];
	int *keep = calloc(n ? n : 1, sizeof(*keep));

	if (!keep)
		return -ENOMEM;
	/* Two samples with one label set make the whole file invalid: the first row wins. */
	for (size_t i = 0; i < n; i++) {
		keep[i] = 1;
		for (size_t j = 0; j < i && keep[i]; j++)
			if (keep[j] && same_labels(&rows[i], &rows[j])) {
				keep[i] = 0;
				gdr_warn(
				    "--prom: the %s %s row of %llu bytes (%s %s, %s) repeats an "
				    "earlier row's labels: left out of the metrics",
				    rows[i].verb, rows[i].path,
				    (unsigned long long)rows[i].size_bytes, rows[i].gpu,
				    rows[i].nic, rows[i].status);
			}
	}
	column_family(p, rows, keep, n, "gdrperf_bw_gbps",
		      "Average bandwidth over the repeats, Gb/s (10^9 bit/s); CSV bw_avg_gbps.",
		      "bw_avg_gbps", NULL, "", 0);
	column_family(p, rows, keep, n, "gdrperf_bw_peak_gbps",
		      "Peak bandwidth of the repeats, Gb/s; CSV bw_peak_gbps.", "bw_peak_gbps",
		      NULL, "", 0);
	column_family(p, rows, keep, n, "gdrperf_bw_ceiling_gbps",
		      "The GPU-NIC pair's expected ceiling, Gb/s; CSV ceiling_gbps.",
		      "ceiling_gbps", NULL, "", 0);
	column_family(p, rows, keep, n, "gdrperf_bw_of_ceiling_percent",
		      "gdrperf_bw_gbps as a percentage of the ceiling; CSV pct_of_ceiling.",
		      "pct_of_ceiling", NULL, "", 0);
	for (size_t s = 0; s < GDR_ARRAY_SIZE(lat); s++)
		column_family(p, rows, keep, n, "gdrperf_lat_seconds",
			      "Latency tools: one-way latency in seconds, stat min, p50, p90, p99, "
			      "p999, max or avg; CSV lat_*_us.",
			      lat[s][1], lat[s][0], "e-6", s > 0);
	gdr_prom_family(p, "gdrperf_bench_status",
			"1 for every result row; status ok, skipped or failed.");
	for (size_t i = 0; i < n; i++) {
		if (!keep[i])
			continue;
		int nl = row_labels(&rows[i], l, size, sizeof(size));

		l[nl] = (struct gdr_prom_label){ "status", rows[i].status };
		gdr_prom_sample(p, l, nl + 1, "1");
	}
	free(keep);
	return p->err;
}

int gdr_prom_rows_close(struct gdr_prom_rows *pr, char *why, size_t wlen)
{
	struct gdr_prom p;
	int ret = 0;

	if (!pr)
		return 0;
	if (!pr->k.n)
		goto out_free;
	ret = gdr_prom_init(&p);
	if (!ret)
		gdr_prom_rows_render(&p, pr->k.rows, pr->k.n);
	ret = gdr_prom_write(&p, pr->k.path, why, wlen);
	gdr_prom_free(&p);
out_free:
	gdr_keep_free(&pr->k);
	free(pr);
	return ret;
}
