/*
 * The report API on files: a CSV file gets its header once, refuses one
 * with other columns, repairs a torn last row, rolls back a short write,
 * names what it cannot open; the JSON file is what a real parser reads,
 * its keys the CSV columns. test_report_rows.c has the row format.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"
#include "report_fixture.h"

static char *slurp(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void spit(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_csv_header_once(void **state)
{
	struct gdr_csv *csv;
	struct gdr_result r;
	char path[128], why[512];
	const char *p, *text;
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/once.csv", tmpdir);
	fill(&r);
	/* A run that opens and fails before its first row leaves no file, not a header. */
	assert_int_equal(gdr_csv_open(&csv, path, why, sizeof(why)), 0);
	gdr_csv_close(csv);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(gdr_csv_open(&csv, path, why, sizeof(why)), 0);
	assert_string_equal(gdr_csv_path(csv), path);
	assert_int_equal(gdr_csv_append(csv, &r), 0);
	strcpy(r.note, "two\nlines");
	assert_int_equal(gdr_csv_append(csv, &r), 0);
	gdr_csv_close(csv);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777 & ~0022, 0644 & ~0022);

	/* A second run appends below, without a second header. */
	assert_int_equal(gdr_csv_open(&csv, path, why, sizeof(why)), 0);
	strcpy(r.path, "bounce");
	assert_int_equal(gdr_csv_append(csv, &r), 0);
	gdr_csv_close(csv);

	text = slurp(path);
	p = text;
	assert_int_equal(parse_record(&p, fields, MAXFIELDS), NCOLS);
	assert_string_equal(fields[0], "timestamp");
	for (int i = 0; i < 3; i++) {
		assert_int_equal(parse_record(&p, fields, MAXFIELDS), NCOLS);
		assert_string_equal(fields[0], "2026-11-29T21:25:51Z");
	}
	assert_string_equal(fields[COL("path")], "bounce");
	assert_string_equal(p, "");
	assert_int_equal(strstr(text + 1, "timestamp,host") == NULL, 1);
}

static void test_csv_mismatched_header(void **state)
{
	struct gdr_csv *csv = (struct gdr_csv *)1;
	char path[128], why[512], other[4096];

	(void)state;
	snprintf(path, sizeof(path), "%s/other.csv", tmpdir);
	spit(path, "size,bw\n1,2\n");
	assert_int_equal(gdr_csv_open(&csv, path, why, sizeof(why)), -EINVAL);
	assert_null(csv);
	assert_non_null(strstr(why, path));
	assert_non_null(strstr(why, "different header"));
	assert_non_null(strstr(why, "column 1 is \"size\", expected \"timestamp\""));
	/* Untouched. */
	assert_string_equal(slurp(path), "size,bw\n1,2\n");

	/* An older layout with one column fewer is named as such. */
	snprintf(other, sizeof(other), "%s", gdr_csv_header());
	*strrchr(other, ',') = '\0';
	strcat(other, "\n");
	spit(path, other);
	assert_int_equal(gdr_csv_open(&csv, path, why, sizeof(why)), -EINVAL);
	char want[96];
	snprintf(want, sizeof(want), "it has %d columns, this version writes %d", NCOLS - 1, NCOLS);
	assert_non_null(strstr(why, want));
}

static void test_csv_torn_last_row(void **state)
{
	struct gdr_csv *csv;
	struct gdr_result r;
	char path[128], why[512], text[4096];
	const char *p;

	(void)state;
	snprintf(path, sizeof(path), "%s/torn.csv", tmpdir);
	snprintf(text, sizeof(text), "%s\n2026-11-29T21:25:51Z,node-a,no", gdr_csv_header());
	spit(path, text);
	fill(&r);
	assert_int_equal(gdr_csv_open(&csv, path, why, sizeof(why)), 0);
	assert_int_equal(gdr_csv_append(csv, &r), 0);
	gdr_csv_close(csv);
	p = slurp(path);
	assert_int_equal(count_lines(p), 3);
	assert_int_equal(parse_record(&p, fields, MAXFIELDS), NCOLS);
	assert_int_equal(parse_record(&p, fields, MAXFIELDS),
			 3); /* the fragment, on its own line */
	assert_int_equal(parse_record(&p, fields, MAXFIELDS), NCOLS);
	assert_string_equal(fields[COL("path")], "dmabuf");
	assert_string_equal(p, "");
}

/* A write cut short (disk full; here the file size limit) must not leave part of a row. */
static void test_csv_short_write_rolled_back(void **state)
{
	struct gdr_csv *csv;
	struct gdr_result r;
	struct rlimit old, lim;
	char path[128], why[512];
	struct stat before, after;
	void (*old_handler)(int);
	int ret;

	(void)state;
	snprintf(path, sizeof(path), "%s/full.csv", tmpdir);
	fill(&r);
	assert_int_equal(gdr_csv_open(&csv, path, why, sizeof(why)), 0);
	assert_int_equal(gdr_csv_append(csv, &r), 0);
	assert_int_equal(stat(path, &before), 0);

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)before.st_size + 50;
	old_handler = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	ret = gdr_csv_append(csv, &r);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, old_handler);

	assert_int_equal(ret, -ENOSPC);
	/* The message names the file and the errno text. */
	assert_non_null(strstr(gdr_csv_error(csv), path));
	assert_non_null(strstr(gdr_csv_error(csv), strerror(ENOSPC)));
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(after.st_size, before.st_size);
	/* And the file goes on normally afterwards. */
	assert_int_equal(gdr_csv_append(csv, &r), 0);
	gdr_csv_close(csv);
	assert_int_equal(count_lines(slurp(path)), 3);
}

static void test_csv_unwritable(void **state)
{
	struct gdr_csv *csv;
	char path[128], why[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/no/such/dir/x.csv", tmpdir);
	assert_int_equal(gdr_csv_open(&csv, path, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, path));
	assert_non_null(strstr(why, "No such file"));

	assert_int_equal(gdr_csv_open(&csv, tmpdir, why, sizeof(why)), -EISDIR);
	assert_non_null(strstr(why, tmpdir));

	if (geteuid() != 0) {
		snprintf(path, sizeof(path), "%s/ro", tmpdir);
		assert_int_equal(mkdir(path, 0500), 0);
		strcat(path, "/x.csv");
		assert_int_equal(gdr_csv_open(&csv, path, why, sizeof(why)), -EACCES);
	}
}

static int run_python(const char *script, const char *arg)
{
	char cmd[8192];
	const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";

	snprintf(cmd, sizeof(cmd), "%s -c '%s' '%s' >/dev/null", py, script, arg);
	return system(cmd);
}

static void test_json(void **state)
{
	struct gdr_json *js;
	struct gdr_result r;
	char path[128], tmp[160], why[512];
	const char *text;

	(void)state;
	snprintf(path, sizeof(path), "%s/out.json", tmpdir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	assert_int_equal(gdr_json_open(&js, path, why, sizeof(why)), 0);
	fill(&r);
	r.cpu_util_pct = -1;
	strcpy(r.note, "quote \" back\\slash tab\t nl\n ctl\x01 bad\xff utf8 \xc3\xa9");
	strcpy(r.pcie_bridges, "01");
	assert_int_equal(gdr_json_add(js, &r), 0);
	strcpy(r.status, "skipped");
	strcpy(r.note, "no GPU");
	strcpy(r.gpu_numa, "-1");
	r.gpu_name[0] = '\0';
	assert_int_equal(gdr_json_add(js, &r), 0);
	/* Nothing on disk before close: a killed run leaves no half file. */
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(gdr_json_close(js, why, sizeof(why)), 0);
	assert_int_equal(access(tmp, F_OK), -1);

	text = slurp(path);
	assert_int_equal(text[0], '[');
	assert_non_null(strstr(text, "\"cpu_util_pct\": null"));
	assert_non_null(strstr(text, "\"size_bytes\": 1048576"));
	assert_non_null(strstr(text, "\"bw_peak_gbps\": 97.123"));
	assert_non_null(strstr(text, "\"pcie_bridges\": \"01\""));
	assert_non_null(strstr(text, "\"gpu_numa\": -1"));
	assert_non_null(strstr(text, "\"nic_numa\": 0"));
	assert_non_null(strstr(text, "\\u0001"));
	assert_non_null(strstr(text, "\\ufffd"));
}

/* A real JSON parser agrees, and the keys are the CSV columns in order. */
static void test_json_keys_are_csv_columns(void **state)
{
	struct gdr_json *js;
	struct gdr_result r;
	char path[128], why[512], script[4096];

	(void)state;
	snprintf(path, sizeof(path), "%s/keys.json", tmpdir);
	assert_int_equal(gdr_json_open(&js, path, why, sizeof(why)), 0);
	fill(&r);
	strcpy(r.note, "quote \" back\\slash tab\t nl\n ctl\x01 bad\xff utf8 \xc3\xa9");
	assert_int_equal(gdr_json_add(js, &r), 0);
	strcpy(r.status, "skipped");
	r.gpu_name[0] = '\0';
	assert_int_equal(gdr_json_add(js, &r), 0);
	assert_int_equal(gdr_json_close(js, why, sizeof(why)), 0);
	snprintf(script, sizeof(script),
		 "import json,sys\n"
		 "rows = json.load(open(sys.argv[1]))\n"
		 "assert len(rows) == 2\n"
		 "h = \"%s\".split(\",\")\n"
		 "assert all(list(x) == h for x in rows), list(rows[0])\n"
		 "assert rows[0][\"bw_avg_gbps\"] == 96.5\n"
		 "assert rows[0][\"cpu_util_pct\"] == 12.3\n"
		 "assert rows[0][\"note\"].startswith(\"quote \\\" back\\\\slash tab\\t nl\\n\")\n"
		 "assert rows[0][\"note\"].endswith(\"bad\\ufffd utf8 \\u00e9\")\n"
		 "assert rows[1][\"bw_avg_gbps\"] is None\n"
		 "assert rows[1][\"gpu_name\"] is None\n"
		 "assert rows[1][\"status\"] == \"skipped\"\n"
		 "assert rows[0][\"rep_bw_gbps\"] == [96.5, 0.0241234, 1234.57]\n"
		 "assert rows[0][\"rep_t_end_s\"] == [0.75, 1.5, 2.0]\n"
		 "assert rows[0][\"looks\"] == 11 and rows[0][\"stop\"] == \"decided\"\n"
		 "assert rows[1][\"rep_bw_gbps\"] is None\n",
		 gdr_csv_header());
	assert_int_equal(run_python(script, path), 0);
}

static void test_json_empty_and_unwritable(void **state)
{
	struct gdr_json *js;
	char path[128], why[512];

	(void)state;
	/* No rows (a run that failed before it measured): no file is created... */
	snprintf(path, sizeof(path), "%s/empty.json", tmpdir);
	assert_int_equal(gdr_json_open(&js, path, why, sizeof(why)), 0);
	assert_int_equal(gdr_json_close(js, why, sizeof(why)), 0);
	assert_int_equal(access(path, F_OK), -1);
	/* ...and an earlier report is not turned into "[]". */
	spit(path, "[{\"earlier\": 1}]\n");
	assert_int_equal(gdr_json_open(&js, path, why, sizeof(why)), 0);
	assert_int_equal(gdr_json_close(js, why, sizeof(why)), 0);
	assert_string_equal(slurp(path), "[{\"earlier\": 1}]\n");

	snprintf(path, sizeof(path), "%s/nodir/x.json", tmpdir);
	assert_int_equal(gdr_json_open(&js, path, why, sizeof(why)), -ENOENT);
	assert_null(js);
	assert_non_null(strstr(why, path));
	assert_int_equal(gdr_json_open(&js, tmpdir, why, sizeof(why)), -EISDIR);
	snprintf(path, sizeof(path), "%s/empty.json/x.json", tmpdir);
	assert_int_equal(gdr_json_open(&js, path, why, sizeof(why)), -ENOTDIR);
	if (geteuid() != 0) {
		snprintf(path, sizeof(path), "%s/rodir", tmpdir);
		assert_int_equal(mkdir(path, 0500), 0);
		strcat(path, "/x.json");
		assert_int_equal(gdr_json_open(&js, path, why, sizeof(why)), -EACCES);
		assert_non_null(strstr(why, "not writable"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv_header_once),
		cmocka_unit_test(test_csv_mismatched_header),
		cmocka_unit_test(test_csv_torn_last_row),
		cmocka_unit_test(test_csv_short_write_rolled_back),
		cmocka_unit_test(test_csv_unwritable),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_keys_are_csv_columns),
		cmocka_unit_test(test_json_empty_and_unwritable),
	};
	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
