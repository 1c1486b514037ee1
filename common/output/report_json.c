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
	struct gdr_result *rows;
	size_t n, cap;
	char path[4096];
};

int gdr_json_open(struct gdr_json **out, const char *path, char *why, size_t wlen)
{
	struct gdr_json *js;
	int r;

	*out = NULL;
	if (strlen(path) >= sizeof(js->path)) {
		snprintf(why, wlen, "%.64s...: %s", path, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	/* The file is written at close: whatever would stop it then must fail now. */
	r = gdr_out_check(path, why, wlen);
	if (r)
		return r;
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

static void json_object(FILE *f, const struct gdr_result *r)
{
	char val[sizeof(r->note)];
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
	if (!js->n)
		goto out_free;
	mem = open_memstream(&buf, &len);
	if (!mem) {
		ret = -ENOMEM;
		snprintf(why, wlen, "%s: %s", js->path, strerror(ENOMEM));
		goto out_free;
	}
	fputc('[', mem);
	for (i = 0; i < js->n; i++) {
		fputs(i ? ",\n  " : "\n  ", mem);
		json_object(mem, &js->rows[i]);
	}
	fputs("\n]\n", mem);
	if (fclose(mem)) {
		ret = -ENOMEM;
		snprintf(why, wlen, "%s: %s", js->path, strerror(ENOMEM));
		goto out_free;
	}
	ret = gdr_out_replace(js->path, buf, len, why, wlen);
out_free:
	free(buf);
	free(js->rows);
	free(js);
	return ret;
}
