#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"

/* clang-format off */
/* The docs/csv-json.md contract, written out independently of report.c. */
static const char *const contract[] = {
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
};
/* clang-format on */
#define NCOLS	  ((int)(sizeof(contract) / sizeof(contract[0])))
#define COL(name) col_index(name)

static int col_index(const char *name)
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
static int parse_record(const char **s, char f[][600], int max)
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
				if (k >= 599)
					return -1;
			}
			if (*p != ',' && *p != '\n')
				return -1;
		} else {
			while (*p && *p != ',' && *p != '\n') {
				if (*p == '"' || k >= 599)
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

static char fields[64][600];

static int parse_line(const char *line)
{
	const char *p = line;
	int n = parse_record(&p, fields, 64);

	assert_true(n > 0);
	assert_string_equal(p, ""); /* exactly one record */
	return n;
}

static void fill(struct gdr_result *r)
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
	strcpy(r->note, "");
	strcpy(r->label, "run-1");
	strcpy(r->version, "0.1.0");
}

static void test_header(void **state)
{
	const char *p;
	char line[4096];
	int n;

	(void)state;
	snprintf(line, sizeof(line), "%s\n", gdr_csv_header());
	p = line;
	n = parse_record(&p, fields, 64);
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

static char tmpdir[64];

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

static int make_tmpdir(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/gdr-report-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

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
	assert_int_equal(parse_record(&p, fields, 64), NCOLS);
	assert_string_equal(fields[0], "timestamp");
	for (int i = 0; i < 3; i++) {
		assert_int_equal(parse_record(&p, fields, 64), NCOLS);
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
	assert_int_equal(parse_record(&p, fields, 64), NCOLS);
	assert_int_equal(parse_record(&p, fields, 64), 3); /* the fragment, on its own line */
	assert_int_equal(parse_record(&p, fields, 64), NCOLS);
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
		 "assert rows[1][\"status\"] == \"skipped\"\n",
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
	assert_int_equal(parse_record(&p, fields, 64), NCOLS);
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
	assert_int_equal(parse_record(&p, fields, 64), NCOLS);
	assert_string_equal(fields[COL("lat_min_us")], "1.500");
	assert_string_equal(fields[COL("lat_p50_us")], "2.250");
	assert_string_equal(fields[COL("lat_p999_us")], "5.000");
	assert_string_equal(fields[COL("lat_max_us")], "60.125");
	assert_string_equal(fields[COL("bw_avg_gbps")], "");
	assert_string_equal(fields[COL("msg_rate_mpps")], "");
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	gdr_table_header_lat(f);
	gdr_table_row_lat(f, &r);
	fclose(f);
	assert_non_null(strstr(buf, "t_p99.9[usec]"));
	assert_non_null(strstr(buf, " dmabuf   write  1048576    5000         1.500        2.250"));
	assert_non_null(strstr(buf, "60.125       2.500        ok"));
	free(buf);
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
		cmocka_unit_test(test_csv_header_once),
		cmocka_unit_test(test_csv_mismatched_header),
		cmocka_unit_test(test_csv_torn_last_row),
		cmocka_unit_test(test_csv_short_write_rolled_back),
		cmocka_unit_test(test_csv_unwritable),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_keys_are_csv_columns),
		cmocka_unit_test(test_json_empty_and_unwritable),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_latency_columns),
		cmocka_unit_test(test_result_init),
	};
	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
