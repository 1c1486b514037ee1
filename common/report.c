#include "config.h"

#include "report.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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
	COL_GBPS, /* Gb/s, 3 decimals; empty when <= 0 (unknown), also on skipped rows */
};

struct col {
	const char *name;
	enum col_kind kind;
	size_t off;
};

/* clang-format off */
#define C(field, kind) { #field, kind, offsetof(struct gdr_result, field) }
/* clang-format on */
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
	C(ceiling_gbps, COL_GBPS), C(pct_of_ceiling, COL_PCT),
};
#undef C

_Static_assert(sizeof(cols) / sizeof(cols[0]) == GDR_CSV_COLUMNS, "CSV column count");

static const char csv_header[] =
    "timestamp,host,peer,role,verb,path,path_remote,size_bytes,iters,qps,tx_depth,post_list,"
    "bidir,repeats,bw_peak_gbps,bw_avg_gbps,bw_median_gbps,bw_min_gbps,bw_max_gbps,"
    "msg_rate_mpps,cpu_util_pct,gpu,gpu_bus_id,gpu_name,nic,nic_bus_id,distance,pcie_bridges,"
    "gpu_numa,nic_numa,status,note,label,version,ceiling_gbps,pct_of_ceiling";

const char *gdr_csv_header(void)
{
	return csv_header;
}

/* A bounded output buffer that remembers overflow instead of failing each call. */
struct out {
	char *buf;
	size_t len;
	size_t pos;
	int full;
};

static void out_putc(struct out *o, char c)
{
	if (o->pos + 1 < o->len)
		o->buf[o->pos++] = c;
	else
		o->full = 1;
}

static void out_puts(struct out *o, const char *s)
{
	while (*s)
		out_putc(o, *s++);
}

static int out_finish(struct out *o)
{
	if (o->len)
		o->buf[o->pos < o->len ? o->pos : o->len - 1] = '\0';
	return o->full ? -ENOSPC : (int)o->pos;
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

enum val_type { VAL_NULL, VAL_NUM, VAL_STR };

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
	case COL_GBPS:
		d = *(const double *)(const void *)base;
		if (!(d > 0) || !is_finite(d)) {
			gdr_strlcpy(buf, "", len);
			return VAL_NULL;
		}
		fmt_fixed(d, 3, buf, len);
		return VAL_NUM;
	case COL_PCT:
		d = *(const double *)(const void *)base;
		if (!(d >= 0) || !is_finite(d)) {
			gdr_strlcpy(buf, "", len);
			return VAL_NULL;
		}
		fmt_fixed(d, 1, buf, len);
		return VAL_NUM;
	}
	buf[0] = '\0';
	return VAL_NULL;
}

/* RFC 4180: quote a field that holds a comma, a quote or a line break; double inner quotes. */
static void csv_field(struct out *o, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		out_puts(o, s);
		return;
	}
	out_putc(o, '"');
	for (; *s; s++) {
		if (*s == '"')
			out_putc(o, '"');
		out_putc(o, *s);
	}
	out_putc(o, '"');
}

int gdr_csv_format(const struct gdr_result *r, char *buf, size_t len)
{
	struct out o = { .buf = buf, .len = len };
	char val[sizeof(r->note)];
	size_t i;

	for (i = 0; i < GDR_ARRAY_SIZE(cols); i++) {
		if (i)
			out_putc(&o, ',');
		col_value(r, &cols[i], val, sizeof(val));
		csv_field(&o, val);
	}
	out_putc(&o, '\n');
	return out_finish(&o);
}

struct gdr_csv {
	int fd;
	int regular; /* a pipe or terminal gets no header check and no rollback */
	char path[4096];
};

const char *gdr_csv_path(const struct gdr_csv *csv)
{
	return csv->path;
}

static int write_all_once(int fd, const char *buf, size_t len)
{
	ssize_t n;

	do
		n = write(fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -ENOSPC;
}

static unsigned int count_columns(const char *line)
{
	unsigned int n = 1;

	for (; *line; line++)
		n += *line == ',';
	return n;
}

static int write_header(int fd)
{
	char line[sizeof(csv_header) + 1];

	memcpy(line, csv_header, sizeof(csv_header) - 1);
	line[sizeof(csv_header) - 1] = '\n';
	return write_all_once(fd, line, sizeof(csv_header));
}

/* Name the first column where line differs from our header, for the refusal message. */
static void header_diff(const char *line, char *what, size_t len)
{
	const char *a = line, *b = csv_header;
	unsigned int col = 1;

	if (!*line) {
		gdr_strlcpy(what, "the first line is empty", len);
		return;
	}
	for (;; col++) {
		size_t la = strcspn(a, ","), lb = strcspn(b, ",");

		if (la != lb || strncmp(a, b, la)) {
			snprintf(what, len, "column %u is \"%.*s\", expected \"%.*s\"", col,
				 (int)(la > 40 ? 40 : la), a, (int)lb, b);
			return;
		}
		if (!a[la] || !b[lb])
			break;
		a += la + 1;
		b += lb + 1;
	}
	snprintf(what, len, "it has %u columns, this version writes %d", count_columns(line),
		 GDR_CSV_COLUMNS);
}

/*
 * Existing, non-empty regular file: its first line must be our header. Its
 * last byte must be a newline; if not, a row was cut short (a crash of a
 * writer that did not write whole rows, or a full disk) and we start a new
 * line so that our rows stay intact and the torn one stays a single
 * malformed line that readers skip. Refusing would stop an unattended sweep
 * over a fragment that carries no data anyway.
 */
static int csv_check_existing(struct gdr_csv *csv, off_t size, char *why, size_t wlen)
{
	char first[sizeof(csv_header) + 2], what[160];
	size_t hlen = sizeof(csv_header) - 1;
	ssize_t n;
	char *nl;
	char last;

	n = pread(csv->fd, first, sizeof(first) - 1, 0);
	if (n < 0) {
		int e = errno;

		snprintf(why, wlen, "%s: cannot read the existing header: %s", csv->path,
			 strerror(e));
		return -e;
	}
	first[n] = '\0';
	nl = strchr(first, '\n');
	if (nl) {
		*nl = '\0';
		if (nl > first && nl[-1] == '\r')
			nl[-1] = '\0';
	} else if ((size_t)n > hlen) {
		first[hlen + 1] = '\0';
	}
	if (strcmp(first, csv_header)) {
		header_diff(first, what, sizeof(what));
		snprintf(
		    why, wlen,
		    "%s: not a gdrperf %s CSV file: its first line is a different header (%s); "
		    "write to another file or move this one away",
		    csv->path, PACKAGE_VERSION, what);
		return -EINVAL;
	}
	if (pread(csv->fd, &last, 1, size - 1) != 1) {
		snprintf(why, wlen, "%s: cannot read the last byte: %s", csv->path,
			 strerror(errno ? errno : EIO));
		return -EIO;
	}
	if (last != '\n') {
		gdr_warn(
		    "%s: last line has no newline (a row cut short by a crash or a full disk); "
		    "it is left as it is and new rows start on a new line",
		    csv->path);
		return write_all_once(csv->fd, "\n", 1);
	}
	return 0;
}

int gdr_csv_open(struct gdr_csv **out, const char *path, char *why, size_t wlen)
{
	struct gdr_csv *csv;
	struct stat st;
	int ret;

	*out = NULL;
	csv = calloc(1, sizeof(*csv));
	if (!csv) {
		snprintf(why, wlen, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	gdr_strlcpy(csv->path, path, sizeof(csv->path));
	/* O_RDWR: the header check reads; O_APPEND: every row lands at the end even when shared. */
	csv->fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (csv->fd < 0 && (errno == EACCES || errno == EINVAL || errno == ENXIO))
		csv->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (csv->fd < 0) {
		ret = -errno;
		snprintf(why, wlen, "%s: cannot open for appending results: %s", path,
			 strerror(-ret));
		goto out_free;
	}
	if (fstat(csv->fd, &st)) {
		ret = -errno;
		snprintf(why, wlen, "%s: fstat: %s", path, strerror(-ret));
		goto out_close;
	}
	csv->regular = S_ISREG(st.st_mode);
	/* A full disk fails now, before the run, not row by row after it (rows are ~500 B). */
	struct statvfs vfs;
	if (csv->regular && !fstatvfs(csv->fd, &vfs) &&
	    (uint64_t)vfs.f_bavail * vfs.f_frsize < 2 * GDR_CSV_ROW_MAX) {
		ret = -ENOSPC;
		snprintf(why, wlen, "%s: %s (%llu bytes free)", path, strerror(ENOSPC),
			 (unsigned long long)vfs.f_bavail * vfs.f_frsize);
		goto out_close;
	}
	if (!csv->regular) {
		/* A pipe or terminal is a fresh stream each run: header always. */
		ret = write_header(csv->fd);
		if (ret) {
			snprintf(why, wlen, "%s: cannot write the header: %s", path,
				 strerror(-ret));
			goto out_close;
		}
		*out = csv;
		return 0;
	}
	/* Two runs sharing one file must not both see it empty and both write the header. */
	(void)flock(csv->fd, LOCK_EX);
	if (fstat(csv->fd, &st)) {
		ret = -errno;
		snprintf(why, wlen, "%s: fstat: %s", path, strerror(-ret));
		goto out_unlock;
	}
	if (st.st_size == 0) {
		ret = write_header(csv->fd);
		if (ret) {
			/* Leave an empty file, not half a header. */
			if (ftruncate(csv->fd, 0))
				ret = -errno;
			snprintf(why, wlen, "%s: cannot write the header: %s", path,
				 strerror(-ret));
			goto out_unlock;
		}
	} else {
		ret = csv_check_existing(csv, st.st_size, why, wlen);
		if (ret)
			goto out_unlock;
	}
	(void)flock(csv->fd, LOCK_UN);
	*out = csv;
	return 0;

out_unlock:
	(void)flock(csv->fd, LOCK_UN);
out_close:
	close(csv->fd);
out_free:
	free(csv);
	return ret;
}

int gdr_csv_append(struct gdr_csv *csv, const struct gdr_result *r)
{
	char row[GDR_CSV_ROW_MAX];
	struct stat st;
	int n, ret;

	n = gdr_csv_format(r, row, sizeof(row));
	if (n < 0)
		return n;
	if (!csv->regular)
		return write_all_once(csv->fd, row, n);
	(void)flock(csv->fd, LOCK_EX);
	if (fstat(csv->fd, &st)) {
		ret = -errno;
		goto out_unlock;
	}
	ret = write_all_once(csv->fd, row, n);
	/* A short write (disk full) leaves part of a row: cut it off again. */
	if (ret == -ENOSPC && ftruncate(csv->fd, st.st_size))
		ret = -errno;
out_unlock:
	(void)flock(csv->fd, LOCK_UN);
	return ret;
}

void gdr_csv_close(struct gdr_csv *csv)
{
	if (!csv)
		return;
	close(csv->fd);
	free(csv);
}

/* JSON */

struct gdr_json {
	struct gdr_result *rows;
	size_t n, cap;
	char path[4096];
};

int gdr_json_open(struct gdr_json **out, const char *path, char *why, size_t wlen)
{
	struct gdr_json *js;
	char dir[4096];
	struct stat st;
	char *slash;

	*out = NULL;
	if (strlen(path) + 5 >= sizeof(js->path)) {
		snprintf(why, wlen, "%.64s...: path too long", path);
		return -ENAMETOOLONG;
	}
	gdr_strlcpy(dir, path, sizeof(dir));
	slash = strrchr(dir, '/');
	if (!slash)
		gdr_strlcpy(dir, ".", sizeof(dir));
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	/* The file is written whole at the end (tmp + rename): the directory must take it. */
	if (stat(dir, &st)) {
		int e = errno;

		snprintf(why, wlen, "%s: directory %s: %s", path, dir, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, wlen, "%s: %s is not a directory", path, dir);
		return -ENOTDIR;
	}
	if (access(dir, W_OK | X_OK)) {
		int e = errno;
		snprintf(why, wlen, "%s: directory %s is not writable: %s", path, dir, strerror(e));
		return -e;
	}
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		snprintf(why, wlen, "%s: is a directory", path);
		return -EISDIR;
	}
	js = calloc(1, sizeof(*js));
	if (!js) {
		snprintf(why, wlen, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	gdr_strlcpy(js->path, path, sizeof(js->path));
	*out = js;
	return 0;
}

int gdr_json_add(struct gdr_json *js, const struct gdr_result *r)
{
	if (js->n == js->cap) {
		size_t cap = js->cap ? js->cap * 2 : 64;
		struct gdr_result *rows = realloc(js->rows, cap * sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		js->rows = rows;
		js->cap = cap;
	}
	js->rows[js->n++] = *r;
	return 0;
}

/* Length of the valid UTF-8 sequence at p, 0 if it is not one (RFC 3629 table). */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* A JSON string; bytes that are not UTF-8 (a driver's odd GPU name) become U+FFFD. */
static void json_str(struct out *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[8];

	out_putc(o, '"');
	while (*p) {
		size_t n;

		if (*p == '"' || *p == '\\') {
			out_putc(o, '\\');
			out_putc(o, (char)*p++);
		} else if (*p == '\n') {
			out_puts(o, "\\n");
			p++;
		} else if (*p == '\t') {
			out_puts(o, "\\t");
			p++;
		} else if (*p == '\r') {
			out_puts(o, "\\r");
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", *p++);
			out_puts(o, esc);
		} else if (*p < 0x80) {
			out_putc(o, (char)*p++);
		} else if ((n = utf8_len(p)) != 0) {
			while (n--)
				out_putc(o, (char)*p++);
		} else {
			out_puts(o, "\\ufffd");
			p++;
		}
	}
	out_putc(o, '"');
}

static int json_object(const struct gdr_result *r, char *buf, size_t len)
{
	struct out o = { .buf = buf, .len = len };
	char val[sizeof(r->note)];
	size_t i;

	out_putc(&o, '{');
	for (i = 0; i < GDR_ARRAY_SIZE(cols); i++) {
		if (i)
			out_puts(&o, ", ");
		json_str(&o, cols[i].name);
		out_puts(&o, ": ");
		switch (col_value(r, &cols[i], val, sizeof(val))) {
		case VAL_NULL:
			out_puts(&o, "null");
			break;
		case VAL_NUM:
			out_puts(&o, val);
			break;
		case VAL_STR:
			json_str(&o, val);
			break;
		}
	}
	out_putc(&o, '}');
	return out_finish(&o);
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int json_write(const struct gdr_json *js, int fd)
{
	/* Every string escaped as \u00XX would take 6x its struct size. */
	char obj[6 * sizeof(struct gdr_result) + 1024];
	size_t i;
	int n, ret;

	ret = write_all(fd, "[", 1);
	for (i = 0; i < js->n && !ret; i++) {
		ret = write_all(fd, i ? ",\n  " : "\n  ", i ? 4 : 3);
		if (ret)
			break;
		n = json_object(&js->rows[i], obj, sizeof(obj));
		if (n < 0)
			return n;
		ret = write_all(fd, obj, (size_t)n);
	}
	if (!ret)
		ret = write_all(fd, "\n]\n", 3);
	return ret;
}

int gdr_json_close(struct gdr_json *js, char *why, size_t wlen)
{
	char tmp[sizeof(js->path) + 8];
	int fd, ret;

	if (!js)
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp", js->path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, wlen, "%s: cannot create: %s", tmp, strerror(-ret));
		goto out_free;
	}
	ret = json_write(js, fd);
	/* rename(2) must not publish a file whose data is still only in the page cache. */
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (ret) {
		snprintf(why, wlen, "%s: cannot write: %s", tmp, strerror(-ret));
		goto out_unlink;
	}
	if (rename(tmp, js->path)) {
		ret = -errno;
		snprintf(why, wlen, "%s: cannot rename to %s: %s", tmp, js->path, strerror(-ret));
		goto out_unlink;
	}
	goto out_free;

out_unlink:
	unlink(tmp);
out_free:
	free(js->rows);
	free(js);
	return ret;
}

/* Human table, perftest's layout with the path and verb in front. */

#define TABLE_DASHES                                                                               \
	"----------------------------------------------------------------------------------------" \
	"-----------------------------------"

void gdr_table_header(FILE *out, int gbits)
{
	const char *u = gbits ? "Gb/sec" : "MB/sec";
	char peak[24], avg[24], med[24], min[24], max[24];

	snprintf(peak, sizeof(peak), "BW peak[%s]", u);
	snprintf(avg, sizeof(avg), "BW average[%s]", u);
	snprintf(med, sizeof(med), "BW median[%s]", u);
	snprintf(min, sizeof(min), "BW min[%s]", u);
	snprintf(max, sizeof(max), "BW max[%s]", u);
	fprintf(out, "%s\n", TABLE_DASHES);
	fprintf(out, " %-8s %-6s %-10s %-12s %-16s %-19s %-18s %-15s %-15s %-14s %s\n", "path",
		"verb", "#bytes", "#iterations", peak, avg, med, min, max, "MsgRate[Mpps]",
		"status");
}

void gdr_table_row(FILE *out, const struct gdr_result *r, int gbits)
{
	/* MB/s is 10^6 bytes/s: Gb/s * 10^9 / 8 / 10^6. */
	double k = gbits ? 1.0 : 125.0;
	char peak[32], avg[32], med[32], min[32], max[32], rate[32];

	if (!is_measurement(r)) {
		fprintf(out, " %-8s %-6s %-10llu %s: %s\n", r->path, r->verb,
			(unsigned long long)r->size_bytes, r->status,
			r->note[0] ? r->note : "(no reason given)");
		return;
	}
	fmt_fixed(r->bw_peak_gbps * k, 3, peak, sizeof(peak));
	fmt_fixed(r->bw_avg_gbps * k, 3, avg, sizeof(avg));
	fmt_fixed(r->bw_median_gbps * k, 3, med, sizeof(med));
	fmt_fixed(r->bw_min_gbps * k, 3, min, sizeof(min));
	fmt_fixed(r->bw_max_gbps * k, 3, max, sizeof(max));
	fmt_fixed(r->msg_rate_mpps, 6, rate, sizeof(rate));
	fprintf(out, " %-8s %-6s %-10llu %-12llu %-16s %-19s %-18s %-15s %-15s %-14s %s%s%s\n",
		r->path, r->verb, (unsigned long long)r->size_bytes, (unsigned long long)r->iters,
		peak, avg, med, min, max, rate, r->status[0] ? r->status : "ok",
		r->note[0] ? ": " : "", r->note);
}

void gdr_result_init(struct gdr_result *r)
{
	time_t now = time(NULL);
	struct tm tm;

	/* Callers fill a stack struct field by field: whatever they skip must read as unknown. */
	memset(r, 0, sizeof(*r));
	r->cpu_util_pct = -1;
	r->pct_of_ceiling = -1;
	gdr_strlcpy(r->status, "ok", sizeof(r->status));
	if (gmtime_r(&now, &tm))
		strftime(r->timestamp, sizeof(r->timestamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (gethostname(r->host, sizeof(r->host)))
		r->host[0] = '\0';
	/* POSIX leaves a truncated name unterminated. */
	r->host[sizeof(r->host) - 1] = '\0';
	gdr_strlcpy(r->version, PACKAGE_VERSION, sizeof(r->version));
}
