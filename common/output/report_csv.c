/*
 * Results as CSV: one whole row per write(2), appended, the header together
 * with the first row of a new file (common/output/writer.c does the file part).
 */
#include "config.h"

#include "report.h"
#include "report_int.h"
#include "util.h"
#include "writer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int gdr_csv_format(const struct gdr_result *r, char *buf, size_t len)
{
	struct gdr_obuf o = { .buf = buf, .len = len };
	char val[GDR_COL_MAX];
	size_t i;

	for (i = 0; i < gdr_report_ncols(); i++) {
		if (i)
			gdr_obuf_putc(&o, ',');
		gdr_report_col_value(r, i, val, sizeof(val));
		gdr_csv_field_buf(&o, val);
	}
	gdr_obuf_putc(&o, '\n');
	return gdr_obuf_finish(&o);
}

struct gdr_csv {
	struct gdr_append out;
	char *head; /* the header line with its newline */
	char why[4096 + 256];
};

const char *gdr_csv_path(const struct gdr_csv *csv)
{
	return csv->out.path;
}

const char *gdr_csv_error(const struct gdr_csv *csv)
{
	return csv->why;
}

static unsigned int count_columns(const char *line)
{
	unsigned int n = 1;

	for (; *line; line++)
		n += *line == ',';
	return n;
}

/* Name the first column where line differs from our header, for the refusal message. */
static void header_diff(const char *line, char *what, size_t len)
{
	const char *a = line, *b = gdr_csv_header();
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

/* An existing, non-empty file: its first line must be our header. */
static int check_header(int fd, off_t size, const char *path, char *why, size_t wlen)
{
	const char *header = gdr_csv_header();
	size_t hlen = strlen(header);
	char what[160], *first, *nl;
	ssize_t n;

	(void)size;
	first = malloc(hlen + 3);
	if (!first) {
		snprintf(why, wlen, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	n = pread(fd, first, hlen + 2, 0);
	if (n < 0) {
		int e = errno;

		snprintf(why, wlen, "%s: cannot read the existing header: %s", path, strerror(e));
		free(first);
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
	if (strcmp(first, header)) {
		header_diff(first, what, sizeof(what));
		snprintf(
		    why, wlen,
		    "%s: not a gdrperf %s CSV file: its first line is a different header (%s); "
		    "write to another file or move this one away",
		    path, PACKAGE_VERSION, what);
		free(first);
		return -EINVAL;
	}
	free(first);
	return 0;
}

int gdr_csv_open(struct gdr_csv **out, const char *path, char *why, size_t wlen)
{
	const char *header = gdr_csv_header();
	size_t hlen = strlen(header);
	struct gdr_csv *csv;
	int ret;

	*out = NULL;
	csv = calloc(1, sizeof(*csv));
	if (csv)
		csv->head = malloc(hlen + 2);
	if (!csv || !csv->head) {
		free(csv);
		snprintf(why, wlen, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	memcpy(csv->head, header, hlen);
	memcpy(csv->head + hlen, "\n", 2);
	/* Room for a few rows: a full disk fails now, not row by row after the run. */
	ret = gdr_append_open(&csv->out, path, 2 * GDR_CSV_ROW_MAX, check_header, why, wlen);
	if (ret) {
		gdr_csv_close(csv);
		return ret;
	}
	*out = csv;
	return 0;
}

int gdr_csv_append(struct gdr_csv *csv, const struct gdr_result *r)
{
	char row[GDR_CSV_ROW_MAX];
	int n;

	n = gdr_csv_format(r, row, sizeof(row));
	if (n < 0) {
		snprintf(csv->why, sizeof(csv->why), "%s: a row longer than %d bytes",
			 csv->out.path, GDR_CSV_ROW_MAX);
		return n;
	}
	return gdr_append_row(&csv->out, csv->head, row, (size_t)n, csv->why, sizeof(csv->why));
}

void gdr_csv_close(struct gdr_csv *csv)
{
	if (!csv)
		return;
	gdr_append_close(&csv->out);
	free(csv->head);
	free(csv);
}
