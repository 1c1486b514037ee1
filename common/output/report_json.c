/*
 * Results as JSON: one array of objects, keys the CSV columns in order,
 * written whole at the end through gdr_out_replace (never half a file), and
 * only when the run has at least one row: a run that fails before it
 * measures leaves an earlier report as it was.
 */
#include "config.h"

#include "report.h"
#include "report_int.h"
#include "util.h"
#include "writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gdr_json {
	struct gdr_rows_keep k;
};

int gdr_keep_open(struct gdr_rows_keep *k, const char *path, char *why, size_t wlen)
{
	memset(k, 0, sizeof(*k));
	if (strlen(path) >= sizeof(k->path)) {
		snprintf(why, wlen, "%.64s...: %s", path, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	gdr_strlcpy(k->path, path, sizeof(k->path));
	/* The file is written at close: whatever would stop it then must fail now. */
	return gdr_out_check(path, why, wlen);
}

int gdr_keep_add(struct gdr_rows_keep *k, const struct gdr_result *r)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 64;
		struct gdr_result *rows = realloc(k->rows, cap * sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		k->rows = rows;
		k->cap = cap;
	}
	k->rows[k->n++] = *r;
	return 0;
}

void gdr_keep_free(struct gdr_rows_keep *k)
{
	free(k->rows);
	k->rows = NULL;
	k->n = k->cap = 0;
}

int gdr_json_open(struct gdr_json **out, const char *path, char *why, size_t wlen)
{
	struct gdr_json *js = calloc(1, sizeof(*js));
	int r;

	*out = NULL;
	if (!js) {
		snprintf(why, wlen, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	r = gdr_keep_open(&js->k, path, why, wlen);
	if (r) {
		free(js);
		return r;
	}
	*out = js;
	return 0;
}

int gdr_json_add(struct gdr_json *js, const struct gdr_result *r)
{
	return gdr_keep_add(&js->k, r);
}

static void json_object(FILE *f, const struct gdr_result *r)
{
	char val[GDR_COL_MAX];
	size_t i;

	fputc('{', f);
	for (i = 0; i < gdr_report_ncols(); i++) {
		if (i)
			fputs(", ", f);
		gdr_json_str(f, gdr_report_col_name(i));
		fputs(": ", f);
		switch (gdr_report_col_value(r, i, val, sizeof(val))) {
		case GDR_VAL_NULL:
			fputs("null", f);
			break;
		case GDR_VAL_NUM:
			fputs(val, f);
			break;
		case GDR_VAL_STR:
			gdr_json_str(f, val);
			break;
		case GDR_VAL_LIST:
			fputc('[', f);
			for (const char *p = val; *p; p++) {
				if (*p == ';')
					fputs(", ", f);
				else
					fputc(*p, f);
			}
			fputc(']', f);
			break;
		}
	}
	fputc('}', f);
}

int gdr_json_close(struct gdr_json *js, char *why, size_t wlen)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *mem;
	int ret = 0;

	if (!js)
		return 0;
	if (!js->k.n)
		goto out_free;
	mem = open_memstream(&buf, &len);
	if (!mem) {
		ret = -ENOMEM;
		snprintf(why, wlen, "%s: %s", js->k.path, strerror(ENOMEM));
		goto out_free;
	}
	fputc('[', mem);
	for (i = 0; i < js->k.n; i++) {
		fputs(i ? ",\n  " : "\n  ", mem);
		json_object(mem, &js->k.rows[i]);
	}
	fputs("\n]\n", mem);
	if (fclose(mem)) {
		ret = -ENOMEM;
		snprintf(why, wlen, "%s: %s", js->k.path, strerror(ENOMEM));
		goto out_free;
	}
	ret = gdr_out_replace(js->k.path, buf, len, why, wlen);
out_free:
	free(buf);
	gdr_keep_free(&js->k);
	free(js);
	return ret;
}
