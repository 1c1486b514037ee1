#include "config.h"

#include "report.h"
#include "report_int.h"
#include "util.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * One table drives CSV, JSON and the header so that the three can never
 * disagree on order or names. The header literal below is checked against
 * it by the unit tests (JSON keys vs CSV header).
 */
enum col_kind {
	COL_STR,    /* text; empty = unknown */
	COL_NUMSTR, /* text that is an integer when known (NUMA node, bridge count) */
	COL_U64,
	COL_UINT,
	COL_INT,
	COL_BW,	  /* Gb/s, 3 decimals; empty unless the row is a measurement */
	COL_RATE, /* Mpps, 6 decimals as perftest prints it (8 MiB messages run at ~0.001 Mpps) */
	COL_PCT,  /* %, 1 decimal; empty when < 0 */
	COL_US,	  /* microseconds, 1 decimal; empty when < 0 (not measured) */
	COL_LAT,  /* us, 3 decimals; empty unless > 0 on a measurement (bandwidth rows) */
	COL_GBPS, /* Gb/s, 3 decimals; empty when <= 0 (unknown), also on skipped rows */
	COL_SEC,  /* seconds, 6 decimals; empty when < 0 (not measured) */
	COL_ORD,  /* int; empty when < 0 */
	COL_LOOKS, /* unsigned; empty when 0 (unknown) or the row is no measurement */
	/* Lists of the row's rounds (nrep values, ';' between them; JSON: an array): */
	COL_REP_BW,  /* Gb/s, 6 significant digits */
	COL_REP_SEC, /* seconds, 6 decimals */
};

struct col {
	const char *name;
	enum col_kind kind;
	size_t off;
};

/* clang-format off */
#define C(field, kind) { #field, kind, offsetof(struct gdr_result, field) }
static const struct col cols[] = {
	C(timestamp, COL_STR),	   C(host, COL_STR),
	C(peer, COL_STR),	   C(role, COL_STR),
	C(verb, COL_STR),	   C(path, COL_STR),
	C(path_remote, COL_STR),   C(size_bytes, COL_U64),
	C(iters, COL_U64),	   C(qps, COL_UINT),
	C(tx_depth, COL_UINT),	   C(post_list, COL_UINT),
	C(bidir, COL_INT),	   C(repeats, COL_UINT),
	C(bw_peak_gbps, COL_BW),   C(bw_avg_gbps, COL_BW),
	C(bw_median_gbps, COL_BW), C(bw_min_gbps, COL_BW),
	C(bw_max_gbps, COL_BW),	   C(msg_rate_mpps, COL_RATE),
	C(cpu_util_pct, COL_PCT),  C(gpu, COL_STR),
	C(gpu_bus_id, COL_STR),	   C(gpu_name, COL_STR),
	C(nic, COL_STR),	   C(nic_bus_id, COL_STR),
	C(distance, COL_STR),	   C(pcie_bridges, COL_NUMSTR),
	C(gpu_numa, COL_NUMSTR),   C(nic_numa, COL_NUMSTR),
	C(status, COL_STR),	   C(note, COL_STR),
	C(label, COL_STR),	   C(version, COL_STR),
	C(reg_us, COL_US),	   C(dereg_us, COL_US),
	C(reg_call, COL_STR),	   C(gpu_alloc, COL_STR),
	C(dmabuf_mapping, COL_STR), C(relaxed_ordering, COL_NUMSTR),
	C(gpu_uuid, COL_STR),	   C(cuda_driver, COL_STR),
	C(kernel, COL_STR),	   C(libibverbs, COL_STR),
	C(nic_fw, COL_STR),
	C(ceiling_gbps, COL_GBPS), C(pct_of_ceiling, COL_PCT),
	C(lat_min_us, COL_LAT),	   C(lat_p50_us, COL_LAT),
	C(lat_p90_us, COL_LAT),	   C(lat_p99_us, COL_LAT),
	C(lat_p999_us, COL_LAT),   C(lat_max_us, COL_LAT),
	C(lat_avg_us, COL_LAT),
	C(tos, COL_NUMSTR),
	C(t_start_s, COL_SEC),	   C(t_end_s, COL_SEC),
	C(order, COL_ORD),
	C(bounce_chunk, COL_NUMSTR),
	C(bounce_copy, COL_STR),
	C(bounce_blocks, COL_NUMSTR),
	C(gpu_remote, COL_STR),
	C(gpu_bus_id_remote, COL_STR),
	C(gpu_name_remote, COL_STR),
	C(nic_remote, COL_STR),
	C(distance_remote, COL_STR),
	C(run_id, COL_STR),	   C(looks, COL_LOOKS),
	C(stop, COL_STR),
	C(rep_bw_gbps, COL_REP_BW),
	C(rep_t_start_s, COL_REP_SEC), C(rep_t_end_s, COL_REP_SEC),
};
#undef C
/* clang-format on */

_Static_assert(sizeof(cols) / sizeof(cols[0]) == GDR_CSV_COLUMNS, "CSV column count");

static const char csv_header[] =
    "timestamp,host,peer,role,verb,path,path_remote,size_bytes,iters,qps,tx_depth,post_list,"
    "bidir,repeats,bw_peak_gbps,bw_avg_gbps,bw_median_gbps,bw_min_gbps,bw_max_gbps,"
    "msg_rate_mpps,cpu_util_pct,gpu,gpu_bus_id,gpu_name,nic,nic_bus_id,distance,pcie_bridges,"
    "gpu_numa,nic_numa,status,note,label,version,"
    "reg_us,dereg_us,reg_call,gpu_alloc,dmabuf_mapping,relaxed_ordering,gpu_uuid,cuda_driver,"
    "kernel,libibverbs,nic_fw,ceiling_gbps,pct_of_ceiling,"
    "lat_min_us,lat_p50_us,lat_p90_us,lat_p99_us,lat_p999_us,lat_max_us,lat_avg_us,"
    "tos,t_start_s,t_end_s,order,bounce_chunk,bounce_copy,bounce_blocks,"
    "gpu_remote,gpu_bus_id_remote,gpu_name_remote,nic_remote,distance_remote,"
    "run_id,looks,stop,rep_bw_gbps,rep_t_start_s,rep_t_end_s";

const char *gdr_csv_header(void)
{
	return csv_header;
}

static int is_finite(double v)
{
	return v >= -DBL_MAX && v <= DBL_MAX;
}

/*
 * Fixed-point formatting by integer arithmetic: printf's %f takes its
 * decimal point from LC_NUMERIC, and a CSV written under de_DE must still
 * read back as numbers. Non-finite values give "" (unknown).
 */
static const char *fmt_fixed(double v, unsigned int decimals, char *buf, size_t len)
{
	unsigned long long scale = 1, u, ip, fp;
	int neg = v < 0;
	double a = neg ? -v : v;
	unsigned int i;

	if (!is_finite(v)) {
		gdr_strlcpy(buf, "", len);
		return buf;
	}
	for (i = 0; i < decimals; i++)
		scale *= 10;
	if (a * (double)scale >= 9.0e18) {
		/* Out of range for the integer path; "%.0f" prints no decimal point. */
		snprintf(buf, len, "%.0f", v);
		return buf;
	}
	u = (unsigned long long)(a * (double)scale + 0.5);
	ip = u / scale;
	fp = u % scale;
	if (u == 0)
		neg = 0;
	if (decimals)
		snprintf(buf, len, "%s%llu.%0*llu", neg ? "-" : "", ip, (int)decimals, fp);
	else
		snprintf(buf, len, "%s%llu", neg ? "-" : "", ip);
	return buf;
}

/*
 * v with 6 significant digits, without printf's locale: a per-round
 * bandwidth of Soft-RoCE (0.024 Gb/s) keeps as many digits as one of 400.
 */
static const char *fmt_sig(double v, char *buf, size_t len)
{
	double a = v < 0 ? -v : v;
	int decimals = 5;

	/* The digits before the point take from the 6, the zeros after it give. */
	if (a >= 1)
		decimals -= (int)floor(log10(a));
	else if (a > 0)
		decimals += (int)ceil(-log10(a) - 1e-12);
	if (decimals < 0)
		decimals = 0;
	if (decimals > 12)
		decimals = 12;
	return fmt_fixed(v, (unsigned int)decimals, buf, len);
}

/* A row's rounds (rep_*), ';' between them; "" when there are none or one is not finite. */
static void fmt_reps(const struct gdr_result *r, const double *v, int sig, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int k = 0; k < r->nrep && k < GDR_REP_KEEP; k++) {
		char one[40];

		if (!is_finite(v[k]) || v[k] < 0) {
			buf[0] = '\0';
			return;
		}
		if (sig)
			fmt_sig(v[k], one, sizeof(one));
		else
			fmt_fixed(v[k], 6, one, sizeof(one));
		if (used + strlen(one) + 2 > len) {
			buf[0] = '\0';
			return;
		}
		used += (size_t)snprintf(buf + used, len - used, "%s%s", k ? ";" : "", one);
	}
}

static int is_measurement(const struct gdr_result *r)
{
	/* A skipped or failed row carries no bandwidth: 0 would read as a result. */
	return r->status[0] == '\0' || !strcmp(r->status, "ok");
}

/* -?(0|[1-9][0-9]*): what JSON accepts as an integer, so "01" or "+1" stay text. */
static int is_json_int(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		return s[1] == '\0';
	if (*s < '1' || *s > '9')
		return 0;
	while (*s >= '0' && *s <= '9')
		s++;
	return *s == '\0';
}

enum val_type { VAL_NULL, VAL_NUM, VAL_STR, VAL_LIST };

/* Render column c of r into buf; says whether it is unknown, a number or text. */
static enum val_type col_value(const struct gdr_result *r, const struct col *c, char *buf,
			       size_t len)
{
	const char *base = (const char *)r + c->off;
	double d;

	switch (c->kind) {
	case COL_STR:
	case COL_NUMSTR:
		gdr_strlcpy(buf, base, len);
		if (!buf[0])
			return VAL_NULL;
		return c->kind == COL_NUMSTR && is_json_int(buf) ? VAL_NUM : VAL_STR;
	case COL_U64:
		snprintf(buf, len, "%llu",
			 (unsigned long long)*(const uint64_t *)(const void *)base);
		return VAL_NUM;
	case COL_UINT:
		snprintf(buf, len, "%u", *(const unsigned int *)(const void *)base);
		return VAL_NUM;
	case COL_INT:
		snprintf(buf, len, "%d", *(const int *)(const void *)base);
		return VAL_NUM;
	case COL_BW:
	case COL_RATE:
		d = *(const double *)(const void *)base;
		if (!is_measurement(r) || !is_finite(d)) {
			gdr_strlcpy(buf, "", len);
			return VAL_NULL;
		}
		fmt_fixed(d, c->kind == COL_BW ? 3 : 6, buf, len);
		return VAL_NUM;
	case COL_LAT:
		d = *(const double *)(const void *)base;
		if (!is_measurement(r) || !(d > 0) || !is_finite(d)) {
			gdr_strlcpy(buf, "", len);
			return VAL_NULL;
		}
		fmt_fixed(d, 3, buf, len);
		return VAL_NUM;
	case COL_GBPS:
		d = *(const double *)(const void *)base;
		if (!(d > 0) || !is_finite(d)) {
			gdr_strlcpy(buf, "", len);
			return VAL_NULL;
		}
		fmt_fixed(d, 3, buf, len);
		return VAL_NUM;
	case COL_PCT:
	case COL_US:
	case COL_SEC:
		d = *(const double *)(const void *)base;
		if (!(d >= 0) || !is_finite(d)) {
			gdr_strlcpy(buf, "", len);
			return VAL_NULL;
		}
		fmt_fixed(d, c->kind == COL_SEC ? 6 : 1, buf, len);
		return VAL_NUM;
	case COL_ORD:
		if (*(const int *)(const void *)base < 0) {
			gdr_strlcpy(buf, "", len);
			return VAL_NULL;
		}
		snprintf(buf, len, "%d", *(const int *)(const void *)base);
		return VAL_NUM;
	case COL_LOOKS:
		if (!is_measurement(r) || !r->looks) {
			gdr_strlcpy(buf, "", len);
			return VAL_NULL;
		}
		snprintf(buf, len, "%u", r->looks);
		return VAL_NUM;
	case COL_REP_BW:
	case COL_REP_SEC:
		if (!is_measurement(r)) {
			gdr_strlcpy(buf, "", len);
			return VAL_NULL;
		}
		fmt_reps(r, (const double *)(const void *)base, c->kind == COL_REP_BW, buf, len);
		return buf[0] ? VAL_LIST : VAL_NULL;
	}
	buf[0] = '\0';
	return VAL_NULL;
}

/* For report_csv.c and report_json.c: the columns by index. */
size_t gdr_report_ncols(void)
{
	return GDR_ARRAY_SIZE(cols);
}

const char *gdr_report_col_name(size_t i)
{
	return cols[i].name;
}

enum gdr_val_type gdr_report_col_value(const struct gdr_result *r, size_t i, char *buf, size_t len)
{
	switch (col_value(r, &cols[i], buf, len)) {
	case VAL_NUM:
		return GDR_VAL_NUM;
	case VAL_STR:
		return GDR_VAL_STR;
	case VAL_LIST:
		return GDR_VAL_LIST;
	case VAL_NULL:
		break;
	}
	return GDR_VAL_NULL;
}

/* Human table, perftest's layout with the path and verb in front. */

/* As wide as the default table's header (and within GDR_TABLE_COLS). */
#define TABLE_DASHES                                                                               \
	"----------------------------------------------------------------------------------------" \
	"----------------------"

/* The first column: the path, or (GDR_TABLE_PAIRS) this side's and the peer's. */
#define PATH_W	    8
#define PATH_PAIR_W 15

static int path_width(int flags)
{
	return flags & GDR_TABLE_PAIRS ? PATH_PAIR_W : PATH_W;
}

static const char *path_cell(const struct gdr_result *r, int flags, char *buf, size_t len)
{
	if (!(flags & GDR_TABLE_PAIRS))
		return r->path;
	snprintf(buf, len, "%s:%s", r->path, r->path_remote[0] ? r->path_remote : "?");
	return buf;
}

static const char *path_head(int flags)
{
	return flags & GDR_TABLE_PAIRS ? "path:remote" : "path";
}

void gdr_table_header(FILE *out, int flags)
{
	/* perftest's units: MB/sec is 2^20 B/s, Gb/sec is 10^9 bit/s (perftest_resources.c). */
	const char *u = flags & GDR_TABLE_GBITS ? "Gb/sec" : "MB/sec";
	char peak[24], avg[24], med[24], min[24], max[24];

	snprintf(peak, sizeof(peak), "BW peak[%s]", u);
	snprintf(avg, sizeof(avg), "BW average[%s]", u);
	snprintf(med, sizeof(med), "BW median[%s]", u);
	snprintf(min, sizeof(min), "BW min[%s]", u);
	snprintf(max, sizeof(max), "BW max[%s]", u);
	fprintf(out, "%s\n", TABLE_DASHES);
	if (flags & GDR_TABLE_WIDE)
		fprintf(out, " %-*s %-6s %-10s %-12s %-16s %-19s %-18s %-15s %-15s %-14s %-9s %s\n",
			path_width(flags), path_head(flags), "verb", "#bytes", "#iterations", peak,
			avg, med, min, max, "MsgRate[Mpps]", "%ceiling", "status");
	else
		fprintf(out, " %-*s %-6s %-10s %-12s %-16s %-19s %-14s %-9s %s\n",
			path_width(flags), path_head(flags), "verb", "#bytes", "#iterations", peak,
			avg, "MsgRate[Mpps]", "%ceiling", "status");
}

/* A bandwidth cell: "-" when unknown (a repeat that completed nothing). */
static const char *table_bw(double gbps, double k, char *buf, size_t len)
{
	if (!is_finite(gbps) || gbps < 0) {
		gdr_strlcpy(buf, "-", len);
		return buf;
	}
	return fmt_fixed(gbps * k, 3, buf, len);
}

/*
 * The row's note after a line of used columns: on the line when it fits
 * GDR_TABLE_COLS, else on lines below, indented and cut at spaces.
 */
static void table_note(FILE *out, int used, const char *sep, const char *note, int wide)
{
	const int indent = 3;
	size_t width = GDR_TABLE_COLS - indent;

	if (!*note || wide || used + strlen(sep) + strlen(note) <= GDR_TABLE_COLS) {
		fprintf(out, "%s%s\n", *note ? sep : "", note);
		return;
	}
	fputc('\n', out);
	while (*note) {
		size_t n = strlen(note);

		if (n > width) {
			n = width;
			while (n > width / 2 && note[n] != ' ')
				n--;
			if (note[n] != ' ')
				n = width; /* one long word: cut it */
		}
		fprintf(out, "%*s%.*s\n", indent, "", (int)n, note);
		note += n;
		while (*note == ' ')
			note++;
	}
}

void gdr_table_row(FILE *out, const struct gdr_result *r, int flags)
{
	/* MB/sec is perftest's 2^20 bytes/s: Gb/s * 10^9 / 8 / 2^20. */
	double k = flags & GDR_TABLE_GBITS ? 1.0 : GDR_MBPS_PER_GBPS;
	char peak[32], avg[32], med[32], min[32], max[32], rate[32], pct[32], path[40];
	int wide = !!(flags & GDR_TABLE_WIDE), n, pw = path_width(flags);
	const char *pc = path_cell(r, flags, path, sizeof(path));

	if (!is_measurement(r)) {
		n = fprintf(out, " %-*s %-6s %-10llu %s", pw, pc, r->verb,
			    (unsigned long long)r->size_bytes, r->status);
		table_note(out, n, ": ", r->note[0] ? r->note : "(no reason given)", wide);
		return;
	}
	table_bw(r->bw_peak_gbps, k, peak, sizeof(peak));
	table_bw(r->bw_avg_gbps, k, avg, sizeof(avg));
	table_bw(r->bw_median_gbps, k, med, sizeof(med));
	table_bw(r->bw_min_gbps, k, min, sizeof(min));
	table_bw(r->bw_max_gbps, k, max, sizeof(max));
	fmt_fixed(r->msg_rate_mpps, 6, rate, sizeof(rate));
	/* The average as a share of the pair's expected ceiling (docs/pcie-health.md). */
	if (r->pct_of_ceiling >= 0 && is_finite(r->pct_of_ceiling))
		fmt_fixed(r->pct_of_ceiling, 1, pct, sizeof(pct));
	else
		gdr_strlcpy(pct, "-", sizeof(pct));
	if (wide)
		n = fprintf(
		    out, " %-*s %-6s %-10llu %-12llu %-16s %-19s %-18s %-15s %-15s %-14s %-9s %s",
		    pw, pc, r->verb, (unsigned long long)r->size_bytes,
		    (unsigned long long)r->iters, peak, avg, med, min, max, rate, pct,
		    r->status[0] ? r->status : "ok");
	else
		n = fprintf(out, " %-*s %-6s %-10llu %-12llu %-16s %-19s %-14s %-9s %s", pw, pc,
			    r->verb, (unsigned long long)r->size_bytes,
			    (unsigned long long)r->iters, peak, avg, rate, pct,
			    r->status[0] ? r->status : "ok");
	table_note(out, n, ": ", r->note, wide);
}

/*
 * perftest's ib_*_lat layout, with the path and verb in front and our
 * percentiles; t_p90 only with GDR_TABLE_WIDE, so that the default fits
 * GDR_TABLE_COLS (CSV and JSON always have it).
 */
void gdr_table_header_lat(FILE *out, int flags)
{
	fprintf(out, "%s\n", TABLE_DASHES);
	fprintf(out, " %-*s %-5s %-10s %-11s %-11s %-11s ", path_width(flags), path_head(flags),
		"verb", "#bytes", "#iterations", "t_min[usec]", "t_p50[usec]");
	if (flags & GDR_TABLE_WIDE)
		fprintf(out, "%-11s ", "t_p90[usec]");
	fprintf(out, "%-11s %-13s %-11s %-11s %s\n", "t_p99[usec]", "t_p99.9[usec]", "t_max[usec]",
		"t_avg[usec]", "status");
}

void gdr_table_row_lat(FILE *out, const struct gdr_result *r, int flags)
{
	const double v[7] = { r->lat_min_us,  r->lat_p50_us, r->lat_p90_us, r->lat_p99_us,
			      r->lat_p999_us, r->lat_max_us, r->lat_avg_us };
	char c[7][32];
	int n;

	if (!is_measurement(r)) {
		gdr_table_row(out, r, flags); /* a skip or failure: its note, wrapped to fit */
		return;
	}
	for (int i = 0; i < 7; i++) {
		if (v[i] > 0 && is_finite(v[i]))
			fmt_fixed(v[i], 3, c[i], sizeof(c[i]));
		else
			gdr_strlcpy(c[i], "-", sizeof(c[i]));
	}
	char path[40];

	n = fprintf(out, " %-*s %-5s %-10llu %-11llu %-11s %-11s ", path_width(flags),
		    path_cell(r, flags, path, sizeof(path)), r->verb,
		    (unsigned long long)r->size_bytes, (unsigned long long)r->iters, c[0], c[1]);
	if (flags & GDR_TABLE_WIDE)
		n += fprintf(out, "%-11s ", c[2]);
	n += fprintf(out, "%-11s %-13s %-11s %-11s %s", c[3], c[4], c[5], c[6],
		     r->status[0] ? r->status : "ok");
	table_note(out, n, ": ", r->note, flags & GDR_TABLE_WIDE);
}

void gdr_result_init(struct gdr_result *r)
{
	time_t now = time(NULL);
	struct tm tm;

	/* Callers fill a stack struct field by field: whatever they skip must read as unknown. */
	memset(r, 0, sizeof(*r));
	r->cpu_util_pct = -1;
	r->reg_us = r->dereg_us = -1;
	r->pct_of_ceiling = -1;
	r->t_start_s = r->t_end_s = -1;
	r->order = -1;
	gdr_strlcpy(r->status, "ok", sizeof(r->status));
	if (gmtime_r(&now, &tm))
		strftime(r->timestamp, sizeof(r->timestamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (gethostname(r->host, sizeof(r->host)))
		r->host[0] = '\0';
	/* POSIX leaves a truncated name unterminated. */
	r->host[sizeof(r->host) - 1] = '\0';
	gdr_strlcpy(r->version, PACKAGE_VERSION, sizeof(r->version));
}
