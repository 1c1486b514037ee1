/*
 * The fixture of the report tests (report_fixture.c): the docs/csv-json.md
 * column contract (NCOLS names, COL(name) the index), an RFC 4180 reader
 * (parse_record; parse_line into fields[]), fill() a result with every field
 * set, and tmpdir made and removed around the group (make_tmpdir,
 * remove_tmpdir). Include after cmocka_common.h or cmocka.h (fail_msg).
 */
#ifndef GDR_REPORT_FIXTURE_H
#define GDR_REPORT_FIXTURE_H

#include "report.h"

extern const char *const contract[];
extern const int report_ncols;
#define NCOLS report_ncols
/* Room for every column and then some: a row with one field too many must show. */
#define MAXFIELDS 80
#define COL(name) col_index(name)

int col_index(const char *name);
/* Room for the longest column (a list of GDR_REP_KEEP rounds). */
#define FIELD_LEN GDR_COL_MAX
int parse_record(const char **s, char f[][FIELD_LEN], int max);
extern char fields[MAXFIELDS][FIELD_LEN];
int parse_line(const char *line);
void fill(struct gdr_result *r);

extern char tmpdir[64];
int make_tmpdir(void **state);
int remove_tmpdir(void **state);

#endif
