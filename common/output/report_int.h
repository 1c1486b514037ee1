/* Between report.c (the column table) and the files that write it (report_csv.c, report_json.c). */
#ifndef GDR_REPORT_INT_H
#define GDR_REPORT_INT_H

#include "report.h"

#include <stddef.h>

/* GDR_VAL_LIST: numbers with ';' between them (CSV as is, JSON an array). */
enum gdr_val_type { GDR_VAL_NULL, GDR_VAL_NUM, GDR_VAL_STR, GDR_VAL_LIST };

size_t gdr_report_ncols(void);
const char *gdr_report_col_name(size_t i);
/* Column i of r rendered into buf: unknown (""), a number, or text. */
enum gdr_val_type gdr_report_col_value(const struct gdr_result *r, size_t i, char *buf, size_t len);

/*
 * Rows kept for a file written whole at the end (report_json.c,
 * report_prom.c): open checks path now (gdr_out_check) and creates nothing.
 */
struct gdr_rows_keep {
	struct gdr_result *rows;
	size_t n, cap;
	char path[4096];
};
int gdr_keep_open(struct gdr_rows_keep *k, const char *path, char *why, size_t wlen);
int gdr_keep_add(struct gdr_rows_keep *k, const struct gdr_result *r);
void gdr_keep_free(struct gdr_rows_keep *k);

#endif
