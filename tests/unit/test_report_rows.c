/*
 * The report API row by row: the CSV header and each row against the
 * docs/csv-json.md contract (values, unknowns left empty, quoting, the same
 * digits under a comma-decimal locale), the table, latency columns, a
 * result as initialised. test_report_files.c has the CSV and JSON files.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_fixture.h"

static void test_header(void **state)
{
	const char *p;
	char line[8192];
	int n;

	(void)state;
	snprintf(line, sizeof(line), "%s\n", gdr_csv_header());
	p = line;
	n = parse_record(&p, fields, MAXFIELDS);
	assert_int_equal(n, NCOLS);
	assert_int_equal(n, GDR_CSV_COLUMNS);
	for (int i = 0; i < NCOLS; i++)
		assert_string_equal(fields[i], contract[i]);
	assert_null(strchr(gdr_csv_header(), '\n'));
}

static void test_row_values(void **state)
{
	struct gdr_result r;
	char row[GDR_CSV_ROW_MAX];
	int len;

	(void)state;
	fill(&r);
	len = gdr_csv_format(&r, row, sizeof(row));
	assert_true(len > 0);
	assert_int_equal((size_t)len, strlen(row));
	assert_int_equal(row[len - 1], '\n');
	assert_int_equal(parse_line(row), NCOLS);
	assert_string_equal(fields[COL("size_bytes")], "1048576");
	assert_string_equal(fields[COL("iters")], "5000");
	assert_string_equal(fields[COL("bidir")], "1");
	assert_string_equal(fields[COL("bw_peak_gbps")], "97.123");
	assert_string_equal(fields[COL("bw_avg_gbps")], "96.500");
	assert_string_equal(fields[COL("bw_median_gbps")], "96.500");
	assert_string_equal(fields[COL("bw_min_gbps")], "0.000");
	assert_string_equal(fields[COL("bw_max_gbps")], "97.000");
	assert_string_equal(fields[COL("msg_rate_mpps")], "0.011600");
	assert_string_equal(fields[COL("cpu_util_pct")], "12.3");
	assert_string_equal(fields[COL("gpu_name")], "NVIDIA H100 80GB HBM3");
	assert_string_equal(fields[COL("status")], "ok");
	assert_string_equal(fields[COL("note")], "");
	assert_string_equal(fields[COL("version")], "0.1.0");
	/* Each side its own memory (issue 48): the peer's path and its side, after bounce_blocks.
	 */
	assert_string_equal(fields[COL("path_remote")], "peermem");
	assert_int_equal(COL("gpu_remote"), COL("bounce_blocks") + 1);
	assert_string_equal(fields[COL("gpu_remote")], "1");
	assert_string_equal(fields[COL("gpu_bus_id_remote")], "0000:3b:00.0");
	assert_string_equal(fields[COL("gpu_name_remote")], "NVIDIA H200");
	assert_string_equal(fields[COL("nic_remote")], "mlx5_1");
	assert_string_equal(fields[COL("distance_remote")], "PXB");
	/* The run and its rounds (issue 51) follow them. */
	assert_int_equal(COL("run_id"), COL("distance_remote") + 1);
	assert_int_equal(COL("rep_t_end_s"), NCOLS - 1);
}

static void test_unknowns_empty(void **state)
{
	struct gdr_result r;
	char row[GDR_CSV_ROW_MAX];

	(void)state;
	fill(&r);
	r.cpu_util_pct = -1;
	r.distance[0] = '\0';
	r.gpu_numa[0] = '\0';
	assert_true(gdr_csv_format(&r, row, sizeof(row)) > 0);
	parse_line(row);
	assert_string_equal(fields[COL("cpu_util_pct")], "");
	assert_string_equal(fields[COL("distance")], "");
	assert_string_equal(fields[COL("gpu_numa")], "");
	assert_string_equal(fields[COL("bw_avg_gbps")], "96.500");
	/* No ceiling known: both columns empty, not 0. */
	assert_string_equal(fields[COL("ceiling_gbps")], "");
	assert_string_equal(fields[COL("pct_of_ceiling")], "");
	r.ceiling_gbps = 200;
	r.pct_of_ceiling = 48.24;
	assert_true(gdr_csv_format(&r, row, sizeof(row)) > 0);
	parse_line(row);
	assert_string_equal(fields[COL("ceiling_gbps")], "200.000");
	assert_string_equal(fields[COL("pct_of_ceiling")], "48.2");
	r.ceiling_gbps = 0;
	r.pct_of_ceiling = -1;

	/* A skipped path has no bandwidth: empty, not a misleading 0.000. */
	strcpy(r.status, "skipped");
	strcpy(r.note, "peermem: nvidia_peermem not loaded (/sys/module/nvidia_peermem absent)");
	r.bw_avg_gbps = 0;
	assert_true(gdr_csv_format(&r, row, sizeof(row)) > 0);
	assert_int_equal(parse_line(row), NCOLS);
	assert_string_equal(fields[COL("bw_peak_gbps")], "");
	assert_string_equal(fields[COL("bw_avg_gbps")], "");
	assert_string_equal(fields[COL("msg_rate_mpps")], "");
	assert_string_equal(fields[COL("status")], "skipped");
	assert_string_equal(fields[COL("note")], r.note);
}

static void test_quoting(void **state)
{
	struct gdr_result r;
	char row[GDR_CSV_ROW_MAX];
	const char *note = "mlx5_0: ibv_reg_dmabuf_mr: \"Operation not supported\", retry\nline 2";

	(void)state;
	fill(&r);
	strcpy(r.note, note);
	strcpy(r.label, "a,b");
	strcpy(r.gpu_name, "GPU \"x\"");
	strcpy(r.peer, "cr\rhere");
	assert_true(gdr_csv_format(&r, row, sizeof(row)) > 0);
	assert_non_null(strstr(row, ",\"a,b\","));
	assert_non_null(strstr(row, ",\"GPU \"\"x\"\"\","));
	assert_int_equal(parse_line(row), NCOLS);
	assert_string_equal(fields[COL("note")], note);
	assert_string_equal(fields[COL("label")], "a,b");
	assert_string_equal(fields[COL("gpu_name")], "GPU \"x\"");
	assert_string_equal(fields[COL("peer")], "cr\rhere");
	assert_string_equal(fields[COL("nic")], "mlx5_0");
}

static void test_format_nospace(void **state)
{
	struct gdr_result r;
	char row[40];

	(void)state;
	fill(&r);
	assert_int_equal(gdr_csv_format(&r, row, sizeof(row)), -ENOSPC);
	assert_true(strlen(row) < sizeof(row));
}

static int decimal_comma(void)
{
	return localeconv()->decimal_point[0] == ',';
}

/*
 * Build de_DE into a private LOCPATH when the machine has no comma-decimal
 * locale installed (minimal containers ship only C.UTF-8).
 */
static const char *comma_locale(const char *dir)
{
	static const char *const names[] = { "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8" };
	char cmd[512];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (setlocale(LC_NUMERIC, names[i]) && decimal_comma())
			return names[i];
	snprintf(cmd, sizeof(cmd), "localedef -i de_DE -f UTF-8 '%s/de_DE.UTF-8' >/dev/null 2>&1",
		 dir);
	if (system(cmd) != 0)
		return NULL;
	setenv("LOCPATH", dir, 1);
	if (setlocale(LC_NUMERIC, "de_DE.UTF-8") && decimal_comma())
		return "de_DE.UTF-8";
	return NULL;
}

static void test_locale_independent(void **state)
{
	struct gdr_result r;
	char row[GDR_CSV_ROW_MAX], printf_says[32];
	const char *name;

	(void)state;
	name = comma_locale(tmpdir);
	if (!name) {
		/* Nothing to switch to: say so rather than pretend (cmocka's skip reads as FAIL in
		 * TAP). */
		print_message("# no comma-decimal locale and no localedef: checked under C only\n");
	} else {
		snprintf(printf_says, sizeof(printf_says), "%.1f", 1.5);
		assert_string_equal(printf_says, "1,5"); /* the trap is armed */
	}
	fill(&r);
	assert_true(gdr_csv_format(&r, row, sizeof(row)) > 0);
	setlocale(LC_NUMERIC, "C");
	unsetenv("LOCPATH");
	assert_int_equal(parse_line(row), NCOLS);
	assert_string_equal(fields[COL("bw_peak_gbps")], "97.123");
	assert_string_equal(fields[COL("cpu_util_pct")], "12.3");
	assert_string_equal(fields[COL("msg_rate_mpps")], "0.011600");
}

static void test_table(void **state)
{
	struct gdr_result r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	fill(&r);
	r.bw_avg_gbps = 8.0;
	gdr_table_header(f, 1);
	gdr_table_row(f, &r, 1);
	gdr_table_header(f, 0);
	gdr_table_row(f, &r, 0);
	strcpy(r.path, "peermem");
	strcpy(r.status, "skipped");
	strcpy(r.note, "nvidia_peermem not loaded");
	gdr_table_row(f, &r, 1);
	/* No peak (no window long enough): "-", never 0 or a number. */
	strcpy(r.path, "host");
	strcpy(r.status, "ok");
	r.note[0] = '\0';
	r.bw_peak_gbps = NAN;
	gdr_table_row(f, &r, 1);
	/* The share of the ceiling, when the pair's ceiling is known. */
	strcpy(r.path, "bounce");
	r.bw_peak_gbps = 9.0;
	r.pct_of_ceiling = 12.34;
	gdr_table_row(f, &r, 1);
	fclose(f);
	assert_non_null(strstr(buf, " 12.3      ok\n"));
	assert_non_null(
	    strstr(buf, " host     write  1048576    5000         -                8.000"));
	assert_non_null(strstr(buf, "BW average[Gb/sec]"));
	assert_non_null(strstr(buf, "BW average[MB/sec]"));
	assert_non_null(strstr(buf, "MsgRate[Mpps]  %ceiling  status"));
	/* Gb/s row: path, verb, bytes, iterations, then peak and avg. */
	assert_non_null(
	    strstr(buf, " dmabuf   write  1048576    5000         97.123           8.000"));
	/* MB/sec is perftest's 2^20 B/s: 8 Gb/s is 10^9 B/s = 953.674 MB/sec. */
	assert_non_null(strstr(buf, "11578.017        953.674"));
	assert_non_null(
	    strstr(buf, " peermem  write  1048576    skipped: nvidia_peermem not loaded\n"));
	/* Columns line up: every data row puts #iterations where the header does. */
	{
		const char *h = strstr(buf, "#iterations");
		const char *line_start = h;

		while (line_start > buf && line_start[-1] != '\n')
			line_start--;
		assert_int_equal(h - line_start, strstr(buf, "5000 ") - strstr(buf, " dmabuf"));
	}
	free(buf);
}

/*
 * Per-side paths (issue 48): the first column is this side's path and the
 * peer's, "path:remote", wide enough for peermem:peermem; the default
 * bandwidth table still fits 120 columns, the latency table's 7 more (its
 * columns are as wide as their headers).
 */
static void test_table_pairs(void **state)
{
	struct gdr_result r;
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0, longest = 0;
	FILE *f;

	(void)state;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	fill(&r);
	r.bw_avg_gbps = 8.0;
	r.bw_peak_gbps = 123456.789;
	gdr_table_header(f, GDR_TABLE_PAIRS | GDR_TABLE_GBITS);
	gdr_table_row(f, &r, GDR_TABLE_PAIRS | GDR_TABLE_GBITS);
	strcpy(r.path, "peermem");
	strcpy(r.status, "skipped");
	strcpy(r.note, "server (remote): rxeB: ibv_reg_dmabuf_mr: Operation not supported");
	gdr_table_row(f, &r, GDR_TABLE_PAIRS);
	fflush(f);
	assert_non_null(strstr(buf, " path:remote     verb   #bytes     #iterations"));
	assert_non_null(
	    strstr(buf, " dmabuf:peermem  write  1048576    5000         123456.789       8.000"));
	assert_non_null(
	    strstr(buf, " peermem:peermem write  1048576    skipped: server (remote): "));
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strlen(line) > longest)
			longest = strlen(line);
	assert_true(longest <= GDR_TABLE_COLS);
	fclose(f);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	r.lat_p50_us = 3.5;
	strcpy(r.status, "ok");
	r.note[0] = '\0';
	gdr_table_header_lat(f, GDR_TABLE_PAIRS);
	gdr_table_row_lat(f, &r, GDR_TABLE_PAIRS);
	fclose(f);
	assert_non_null(strstr(buf, " path:remote     verb  #bytes     #iterations t_min[usec]"));
	assert_non_null(strstr(buf, " peermem:peermem write 1048576    5000        "));
	longest = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strlen(line) > longest)
			longest = strlen(line);
	assert_true(longest <= GDR_TABLE_COLS + 7);
	free(buf);
}

/* The default table fits 120 columns, a long note wrapped below its row; --wide has all. */
static void test_table_width(void **state)
{
	struct gdr_result r;
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0, longest = 0;
	unsigned int lines = 0;
	FILE *f;

	(void)state;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	fill(&r);
	r.bw_peak_gbps = 123456.789;
	memset(r.note, 'x', 40);
	strcpy(r.note + 40, " a warning that goes on and on about what the run saw on this path, "
			    "and then on some more, well past any terminal's width");
	gdr_table_header(f, 0);
	gdr_table_row(f, &r, 0);
	strcpy(r.status, "skipped");
	gdr_table_row(f, &r, GDR_TABLE_GBITS);
	fclose(f);
	assert_null(strstr(buf, "BW median"));
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lines++;
		if (strlen(line) > longest)
			longest = strlen(line);
	}
	assert_true(longest <= GDR_TABLE_COLS);
	assert_true(lines >= 6); /* dashes, header, two rows, their notes on lines below */
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	strcpy(r.status, "ok");
	gdr_table_header(f, GDR_TABLE_WIDE);
	gdr_table_row(f, &r, GDR_TABLE_WIDE);
	fclose(f);
	assert_non_null(strstr(buf, "BW median[MB/sec]  BW min[MB/sec]  BW max[MB/sec]"));
	assert_non_null(strstr(buf, "ok: xxxx")); /* --wide: the note stays on its row */
	free(buf);
}

/* Latency rows: their columns filled, the bandwidth ones empty; the reverse on bandwidth rows. */
static void test_latency_columns(void **state)
{
	struct gdr_result r;
	char row[GDR_CSV_ROW_MAX], *buf = NULL;
	const char *p = row;
	size_t len = 0;
	FILE *f;

	(void)state;
	fill(&r);
	assert_true(gdr_csv_format(&r, row, sizeof(row)) > 0);
	assert_int_equal(parse_record(&p, fields, MAXFIELDS), NCOLS);
	assert_string_equal(fields[COL("lat_p50_us")], "");
	assert_string_equal(fields[COL("lat_avg_us")], "");
	r.bw_peak_gbps = r.bw_avg_gbps = r.bw_median_gbps = r.bw_min_gbps = r.bw_max_gbps = NAN;
	r.msg_rate_mpps = NAN;
	r.lat_min_us = 1.5;
	r.lat_p50_us = 2.25;
	r.lat_p90_us = 3;
	r.lat_p99_us = 4;
	r.lat_p999_us = 5;
	r.lat_max_us = 60.125;
	r.lat_avg_us = 2.5;
	assert_true(gdr_csv_format(&r, row, sizeof(row)) > 0);
	p = row;
	assert_int_equal(parse_record(&p, fields, MAXFIELDS), NCOLS);
	assert_string_equal(fields[COL("lat_min_us")], "1.500");
	assert_string_equal(fields[COL("lat_p50_us")], "2.250");
	assert_string_equal(fields[COL("lat_p999_us")], "5.000");
	assert_string_equal(fields[COL("lat_max_us")], "60.125");
	assert_string_equal(fields[COL("bw_avg_gbps")], "");
	assert_string_equal(fields[COL("msg_rate_mpps")], "");
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	gdr_table_header_lat(f, 0);
	gdr_table_row_lat(f, &r, 0);
	fclose(f);
	assert_non_null(strstr(buf, "t_p99.9[usec]"));
	assert_null(strstr(buf, "t_p90[usec]")); /* --wide only: the default fits 120 columns */
	assert_non_null(strstr(buf, " dmabuf   write 1048576    5000        1.500       2.250"));
	assert_non_null(strstr(buf, "60.125      2.500       ok"));
	for (const char *l = buf; *l;) {
		size_t n = strcspn(l, "\n");

		assert_true(n <= GDR_TABLE_COLS);
		l += n + (l[n] == '\n');
	}
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	gdr_table_header_lat(f, GDR_TABLE_WIDE);
	gdr_table_row_lat(f, &r, GDR_TABLE_WIDE);
	fclose(f);
	assert_non_null(strstr(buf, "t_p50[usec] t_p90[usec] t_p99[usec]"));
	assert_non_null(strstr(buf, "2.250       3.000"));
	free(buf);
}

/* When a row ran (issue 38): seconds with 6 decimals and its turn; empty until measured. */
static void test_time_columns(void **state)
{
	struct gdr_result r;
	char row[GDR_CSV_ROW_MAX];
	const char *p = row;

	(void)state;
	gdr_result_init(&r);
	assert_true(gdr_csv_format(&r, row, sizeof(row)) > 0);
	assert_int_equal(parse_record(&p, fields, MAXFIELDS), NCOLS);
	assert_string_equal(fields[COL("t_start_s")], "");
	assert_string_equal(fields[COL("t_end_s")], "");
	assert_string_equal(fields[COL("order")], "");
	r.t_start_s = 0.5;
	r.t_end_s = 12.25;
	r.order = 0;
	assert_true(gdr_csv_format(&r, row, sizeof(row)) > 0);
	p = row;
	assert_int_equal(parse_record(&p, fields, MAXFIELDS), NCOLS);
	assert_string_equal(fields[COL("t_start_s")], "0.500000");
	assert_string_equal(fields[COL("t_end_s")], "12.250000");
	assert_string_equal(fields[COL("order")], "0");
	/* Appended after tos (column 55), so older readers keep their places. */
	const char *h = gdr_csv_header();
	assert_non_null(strstr(h, ",lat_avg_us,tos,t_start_s,t_end_s,order,"));
}

/*
 * Each round's numbers (issue 51): bandwidths with 6 significant digits
 * whatever their size, times with 6 decimals, ';' between rounds, empty on
 * a row that measured nothing or when a value is not a number.
 */
static void test_round_columns(void **state)
{
	struct gdr_result r;
	char row[GDR_CSV_ROW_MAX];
	const char *p = row;

	(void)state;
	fill(&r);
	assert_true(gdr_csv_format(&r, row, sizeof(row)) > 0);
	assert_int_equal(parse_record(&p, fields, MAXFIELDS), NCOLS);
	assert_string_equal(fields[COL("run_id")], "00c0ffee12345678");
	assert_string_equal(fields[COL("looks")], "11");
	assert_string_equal(fields[COL("stop")], "decided");
	assert_string_equal(fields[COL("rep_bw_gbps")], "96.5000;0.0241234;1234.57");
	assert_string_equal(fields[COL("rep_t_start_s")], "0.500000;1.250000;2.000000");
	assert_string_equal(fields[COL("rep_t_end_s")], "0.750000;1.500000;2.000000");
	/* Every round kept: the longest row still fits, and so does each list. */
	r.nrep = GDR_REP_KEEP;
	for (unsigned int k = 0; k < GDR_REP_KEEP; k++) {
		r.rep_bw_gbps[k] = 0.000123456 + k;
		r.rep_t_start_s[k] = r.rep_t_end_s[k] = 86400.123456 + k;
	}
	assert_true(gdr_csv_format(&r, row, sizeof(row)) > 0);
	p = row;
	assert_int_equal(parse_record(&p, fields, MAXFIELDS), NCOLS);
	assert_non_null(strstr(fields[COL("rep_bw_gbps")], "0.000123456;1.00012;"));
	assert_non_null(strstr(fields[COL("rep_t_end_s")], ";86527.123456"));
	r.rep_bw_gbps[5] = NAN;
	assert_true(gdr_csv_format(&r, row, sizeof(row)) > 0);
	p = row;
	assert_int_equal(parse_record(&p, fields, MAXFIELDS), NCOLS);
	assert_string_equal(fields[COL("rep_bw_gbps")], "");
	strcpy(r.status, "skipped");
	assert_true(gdr_csv_format(&r, row, sizeof(row)) > 0);
	p = row;
	assert_int_equal(parse_record(&p, fields, MAXFIELDS), NCOLS);
	assert_string_equal(fields[COL("looks")], "");
	assert_string_equal(fields[COL("rep_t_start_s")], "");
	assert_string_equal(fields[COL("run_id")], "00c0ffee12345678");
}

static void test_result_init(void **state)
{
	struct gdr_result r;

	(void)state;
	memset(&r, 0x55, sizeof(r));
	gdr_result_init(&r);
	assert_int_equal(strlen(r.timestamp), 20);
	assert_int_equal(r.timestamp[4], '-');
	assert_int_equal(r.timestamp[10], 'T');
	assert_int_equal(r.timestamp[19], 'Z');
	assert_true(strlen(r.host) > 0);
	assert_string_equal(r.version, PACKAGE_VERSION);
	assert_string_equal(r.status, "ok");
	assert_true(r.cpu_util_pct < 0);
	assert_int_equal(r.size_bytes, 0);
	assert_string_equal(r.note, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_row_values),
		cmocka_unit_test(test_unknowns_empty),
		cmocka_unit_test(test_quoting),
		cmocka_unit_test(test_format_nospace),
		cmocka_unit_test(test_locale_independent),
		cmocka_unit_test(test_latency_columns),
		/* the text table; a result as initialised */
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_table_width),
		cmocka_unit_test(test_table_pairs),
		cmocka_unit_test(test_time_columns),
		cmocka_unit_test(test_round_columns),
		cmocka_unit_test(test_result_init),
	};
	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
