/*
 * common/output/prom.c and report_prom.c: the Prometheus text format
 * (docs/cluster-outputs.md). Escaping of label values and HELP text, names
 * out of the format refused, one block per family, the bench rows as
 * metrics on a synthetic row set (a repeated label set left out, empty CSV
 * cells left out), and that a failed write leaves the earlier file.
 */
#include "cmocka_common.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prom.h"
#include "report.h"

static char tmpdir[64];
static char why[1024];

static int make_tmpdir(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/gdr-prom-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/*
 * With GDRPERF_PROM_KEEP=DIR, each text a test checks is also left in
 * DIR/unit-NAME.prom, for tests/doctor/test_cluster.sh to put through promtool.
 */
static void keep(const char *name, const char *text)
{
	const char *dir = getenv("GDRPERF_PROM_KEEP");
	char path[4096];
	FILE *f;

	if (!dir || !*dir)
		return;
	snprintf(path, sizeof(path), "%s/unit-%s.prom", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void test_escaping(void **state)
{
	struct gdr_prom p;
	struct gdr_prom_label l[] = {
		{ "a", "back\\slash \"quoted\"\nline" },
		{ "b", "tab\there \xff bad, \xc3\xa9 good" },
		{ "c", NULL },
	};
	const char *text;
	size_t len;

	(void)state;
	assert_int_equal(gdr_prom_init(&p), 0);
	gdr_prom_family(&p, "gdrperf_x", "help with \\ and\nnewline and \"quotes\"");
	gdr_prom_sample(&p, l, 3, "1");
	gdr_prom_sample_u(&p, NULL, 0, 42);
	text = gdr_prom_text(&p, &len);
	assert_non_null(text);
	assert_string_equal(text, "# HELP gdrperf_x help with \\\\ and\\nnewline and \"quotes\"\n"
				  "# TYPE gdrperf_x gauge\n"
				  "gdrperf_x{a=\"back\\\\slash \\\"quoted\\\"\\nline\","
				  "b=\"tab here \xef\xbf\xbd bad, \xc3\xa9 good\",c=\"\"} 1\n"
				  "gdrperf_x 42\n");
	assert_int_equal(len, strlen(text));
	keep("escaping", text);
	gdr_prom_free(&p);
	gdr_prom_free(&p); /* idempotent */
}

static void expect_invalid(void (*bad)(struct gdr_prom *))
{
	struct gdr_prom p;
	size_t len;

	assert_int_equal(gdr_prom_init(&p), 0);
	bad(&p);
	assert_null(gdr_prom_text(&p, &len));
	assert_int_equal(p.err, -EINVAL);
	gdr_prom_free(&p);
}

static void family_twice(struct gdr_prom *p)
{
	gdr_prom_family(p, "gdrperf_a", "a");
	gdr_prom_family(p, "gdrperf_b", "b");
	gdr_prom_family(p, "gdrperf_a", "a again");
}

static void bad_metric_name(struct gdr_prom *p)
{
	gdr_prom_family(p, "1gdrperf", "starts with a digit");
}

static void bad_label_name(struct gdr_prom *p)
{
	struct gdr_prom_label l = { "size-bytes", "1" };

	gdr_prom_family(p, "gdrperf_a", "a");
	gdr_prom_sample(p, &l, 1, "1");
}

static void reserved_label_name(struct gdr_prom *p)
{
	struct gdr_prom_label l = { "__name__", "x" };

	gdr_prom_family(p, "gdrperf_a", "a");
	gdr_prom_sample(p, &l, 1, "1");
}

static void sample_before_family(struct gdr_prom *p)
{
	gdr_prom_sample(p, NULL, 0, "1");
}

static void test_names_and_families(void **state)
{
	(void)state;
	assert_true(gdr_prom_name_ok("gdrperf_bw_gbps", 0));
	assert_true(gdr_prom_name_ok("job:gdrperf_bw:avg", 0));
	assert_false(gdr_prom_name_ok("job:x", 1));
	assert_false(gdr_prom_name_ok("", 0));
	assert_false(gdr_prom_name_ok("a.b", 0));
	expect_invalid(family_twice);
	expect_invalid(bad_metric_name);
	expect_invalid(bad_label_name);
	expect_invalid(reserved_label_name);
	expect_invalid(sample_before_family);
}

static void row(struct gdr_result *r, const char *path, const char *status, uint64_t size,
		double bw)
{
	gdr_result_init(r);
	strcpy(r->host, "nodeA");
	strcpy(r->peer, "nodeB");
	strcpy(r->role, "client");
	strcpy(r->verb, "write");
	strcpy(r->path, path);
	strcpy(r->status, status);
	strcpy(r->gpu, "GPU0");
	strcpy(r->nic, "mlx5_0");
	r->size_bytes = size;
	r->bw_avg_gbps = bw;
	r->bw_peak_gbps = bw + 1;
}

/* Four rows as the bench tools make them: measured, repeated, skipped, latency. */
static const char *const rows_text =
    "# HELP gdrperf_bw_gbps Average bandwidth over the repeats, Gb/s (10^9 bit/s); CSV "
    "bw_avg_gbps.\n"
    "# TYPE gdrperf_bw_gbps gauge\n"
    "gdrperf_bw_gbps{host=\"nodeA\",peer=\"nodeB\",role=\"client\",gpu=\"GPU0\",nic=\"mlx5_0\","
    "path=\"dmabuf\",verb=\"write\",size_bytes=\"8388608\"} 97.214\n"
    "# HELP gdrperf_bw_peak_gbps Peak bandwidth of the repeats, Gb/s; CSV bw_peak_gbps.\n"
    "# TYPE gdrperf_bw_peak_gbps gauge\n"
    "gdrperf_bw_peak_gbps{host=\"nodeA\",peer=\"nodeB\",role=\"client\",gpu=\"GPU0\","
    "nic=\"mlx5_0\",path=\"dmabuf\",verb=\"write\",size_bytes=\"8388608\"} 98.214\n"
    "# HELP gdrperf_bw_ceiling_gbps The GPU-NIC pair's expected ceiling, Gb/s; CSV "
    "ceiling_gbps.\n"
    "# TYPE gdrperf_bw_ceiling_gbps gauge\n"
    "gdrperf_bw_ceiling_gbps{host=\"nodeA\",peer=\"nodeB\",role=\"client\",gpu=\"GPU0\","
    "nic=\"mlx5_0\",path=\"dmabuf\",verb=\"write\",size_bytes=\"8388608\"} 100.000\n"
    "# HELP gdrperf_bw_of_ceiling_percent gdrperf_bw_gbps as a percentage of the ceiling; CSV "
    "pct_of_ceiling.\n"
    "# TYPE gdrperf_bw_of_ceiling_percent gauge\n"
    "gdrperf_bw_of_ceiling_percent{host=\"nodeA\",peer=\"nodeB\",role=\"client\",gpu=\"GPU0\","
    "nic=\"mlx5_0\",path=\"dmabuf\",verb=\"write\",size_bytes=\"8388608\"} 97.2\n"
    "# HELP gdrperf_lat_seconds Latency tools: one-way latency in seconds, stat min, p50, p90, "
    "p99, p999, max or avg; CSV lat_*_us.\n"
    "# TYPE gdrperf_lat_seconds gauge\n"
    "gdrperf_lat_seconds{host=\"nodeA\",peer=\"nodeB\",role=\"client\",gpu=\"GPU0\","
    "nic=\"mlx5_0\",path=\"host\",verb=\"write\",size_bytes=\"64\",stat=\"p50\"} 2.500e-6\n"
    "gdrperf_lat_seconds{host=\"nodeA\",peer=\"nodeB\",role=\"client\",gpu=\"GPU0\","
    "nic=\"mlx5_0\",path=\"host\",verb=\"write\",size_bytes=\"64\",stat=\"p999\"} 11.125e-6\n"
    "# HELP gdrperf_bench_status 1 for every result row; status ok, skipped or failed.\n"
    "# TYPE gdrperf_bench_status gauge\n"
    "gdrperf_bench_status{host=\"nodeA\",peer=\"nodeB\",role=\"client\",gpu=\"GPU0\","
    "nic=\"mlx5_0\",path=\"dmabuf\",verb=\"write\",size_bytes=\"8388608\",status=\"ok\"} 1\n"
    "gdrperf_bench_status{host=\"nodeA\",peer=\"nodeB\",role=\"client\",gpu=\"GPU0\","
    "nic=\"mlx5_0\",path=\"peermem\",verb=\"write\",size_bytes=\"8388608\",status=\"skipped\"} 1\n"
    "gdrperf_bench_status{host=\"nodeA\",peer=\"nodeB\",role=\"client\",gpu=\"GPU0\","
    "nic=\"mlx5_0\",path=\"host\",verb=\"write\",size_bytes=\"64\",status=\"ok\"} 1\n";

static void make_rows(struct gdr_result *r)
{
	row(&r[0], "dmabuf", "ok", 8388608, 97.214);
	r[0].ceiling_gbps = 100;
	r[0].pct_of_ceiling = 97.214;
	/* The same labels again (a second run of the size): left out, the first row kept. */
	row(&r[1], "dmabuf", "ok", 8388608, 50);
	/* A skipped path: its status only, never a bandwidth of 0. */
	row(&r[2], "peermem", "skipped", 8388608, 0);
	/* A latency row: no bandwidth (NaN, an empty CSV cell), the percentiles measured. */
	row(&r[3], "host", "ok", 64, NAN);
	r[3].bw_peak_gbps = NAN;
	r[3].lat_p50_us = 2.5;
	r[3].lat_p999_us = 11.125;
}

static void test_rows_render(void **state)
{
	struct gdr_result r[4];
	struct gdr_prom p;
	const char *text;
	size_t len;

	(void)state;
	make_rows(r);
	assert_int_equal(gdr_prom_init(&p), 0);
	assert_int_equal(gdr_prom_rows_render(&p, r, 4), 0);
	text = gdr_prom_text(&p, &len);
	assert_non_null(text);
	assert_string_equal(text, rows_text);
	keep("bench-rows", text);
	gdr_prom_free(&p);
}

/*
 * Each side its own memory (issue 48): host:host and host:peermem of one size
 * are two series, the second labelled path_remote; a row whose sides agree
 * keeps the labels it always had.
 */
static void test_rows_per_side(void **state)
{
	struct gdr_result r[3];
	struct gdr_prom p;
	const char *text;
	size_t len;

	(void)state;
	row(&r[0], "host", "ok", 4096, 10);
	strcpy(r[0].path_remote, "host");
	row(&r[1], "host", "ok", 4096, 20);
	strcpy(r[1].path_remote, "peermem");
	row(&r[2], "host", "ok", 4096, 30); /* host:peermem again: left out */
	strcpy(r[2].path_remote, "peermem");
	assert_int_equal(gdr_prom_init(&p), 0);
	assert_int_equal(gdr_prom_rows_render(&p, r, 3), 0);
	text = gdr_prom_text(&p, &len);
	assert_non_null(text);
	assert_non_null(strstr(text,
			       "gdrperf_bw_gbps{host=\"nodeA\",peer=\"nodeB\",role=\"client\","
			       "gpu=\"GPU0\",nic=\"mlx5_0\",path=\"host\",verb=\"write\","
			       "size_bytes=\"4096\"} 10.000\n"));
	assert_non_null(strstr(text,
			       "gdrperf_bw_gbps{host=\"nodeA\",peer=\"nodeB\",role=\"client\","
			       "gpu=\"GPU0\",nic=\"mlx5_0\",path=\"host\",verb=\"write\","
			       "size_bytes=\"4096\",path_remote=\"peermem\"} 20.000\n"));
	assert_null(strstr(text, "} 30.000"));
	keep("bench-per-side", text);
	gdr_prom_free(&p);
}

static void test_rows_file(void **state)
{
	struct gdr_prom_rows *pr;
	struct gdr_result r[4];
	char path[128], buf[8192];
	int i;

	(void)state;
	make_rows(r);
	snprintf(path, sizeof(path), "%s/bench.prom", tmpdir);
	/* No rows: nothing written, the earlier file kept. */
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("earlier\n", f);
	fclose(f);
	assert_int_equal(gdr_prom_rows_open(&pr, path, why, sizeof(why)), 0);
	assert_int_equal(gdr_prom_rows_close(pr, why, sizeof(why)), 0);
	read_file(path, buf, sizeof(buf));
	assert_string_equal(buf, "earlier\n");
	/* Rows: the file replaced whole. */
	assert_int_equal(gdr_prom_rows_open(&pr, path, why, sizeof(why)), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(gdr_prom_rows_add(pr, &r[i]), 0);
	assert_int_equal(gdr_prom_rows_close(pr, why, sizeof(why)), 0);
	read_file(path, buf, sizeof(buf));
	assert_string_equal(buf, rows_text);
	/* A directory, or a file in a directory that is not there: refused at open, naming it. */
	assert_int_equal(gdr_prom_rows_open(&pr, tmpdir, why, sizeof(why)), -EISDIR);
	assert_non_null(strstr(why, tmpdir));
	snprintf(path, sizeof(path), "%s/none/bench.prom", tmpdir);
	assert_int_equal(gdr_prom_rows_open(&pr, path, why, sizeof(why)), -ENOENT);
	assert_null(pr);
}

static void bad_family(struct gdr_prom *p)
{
	gdr_prom_family(p, "bad name", "x");
}

static void test_failed_write_keeps_old(void **state)
{
	struct gdr_prom p;
	char path[128], buf[256];

	(void)state;
	snprintf(path, sizeof(path), "%s/keep.prom", tmpdir);
	assert_int_equal(gdr_prom_init(&p), 0);
	gdr_prom_family(&p, "gdrperf_a", "a");
	gdr_prom_sample(&p, NULL, 0, "1");
	assert_int_equal(gdr_prom_write(&p, path, why, sizeof(why)), 0);
	gdr_prom_free(&p);
	read_file(path, buf, sizeof(buf));
	assert_string_equal(buf, "# HELP gdrperf_a a\n# TYPE gdrperf_a gauge\ngdrperf_a 1\n");
	/* Output that went wrong is never written: the earlier file stays. */
	assert_int_equal(gdr_prom_init(&p), 0);
	gdr_prom_family(&p, "gdrperf_a", "a");
	bad_family(&p);
	assert_int_equal(gdr_prom_write(&p, path, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "keep.prom"));
	gdr_prom_free(&p);
	read_file(path, buf, sizeof(buf));
	assert_string_equal(buf, "# HELP gdrperf_a a\n# TYPE gdrperf_a gauge\ngdrperf_a 1\n");
	/* A write that fails (the directory in the way): -EISDIR, nothing changed. */
	assert_int_equal(gdr_prom_init(&p), 0);
	gdr_prom_family(&p, "gdrperf_b", "b");
	assert_int_equal(gdr_prom_write(&p, tmpdir, why, sizeof(why)), -EISDIR);
	gdr_prom_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escaping),    cmocka_unit_test(test_names_and_families),
		cmocka_unit_test(test_rows_render), cmocka_unit_test(test_rows_per_side),
		cmocka_unit_test(test_rows_file),   cmocka_unit_test(test_failed_write_keeps_old),
	};

	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
