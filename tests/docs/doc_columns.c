/*
 * doc_columns: print what the tools really write, for tests/docs/t_samples.sh
 * to hold the docs' samples against, from the one place each is defined:
 *   doc_columns csv        the CSV header (also the JSON keys, in order)
 *   doc_columns table      the bandwidth table's header lines, default and
 *                          --wide, in MB/sec and Gb/sec, then the latency
 *                          table's, default and --wide (one a line); each
 *                          again with per-side paths (path:remote)
 */
#include <stdio.h>
#include <string.h>

#include "report.h"

/* The header line of one table: gdr_table_header* prints a rule line first. */
static int table_line(void (*header)(FILE *, int), int flags)
{
	char buf[1024];
	char *line;
	FILE *mem = tmpfile();

	if (!mem) {
		perror("doc_columns: tmpfile");
		return -1;
	}
	header(mem, flags);
	rewind(mem);
	while ((line = fgets(buf, sizeof(buf), mem)) && line[0] == '-')
		;
	fclose(mem);
	if (!line) {
		fprintf(stderr, "doc_columns: a table header without its column line\n");
		return -1;
	}
	fputs(line, stdout);
	return 0;
}

int main(int argc, char **argv)
{
	static const int bw_flags[] = { 0, GDR_TABLE_WIDE, GDR_TABLE_GBITS,
					GDR_TABLE_GBITS | GDR_TABLE_WIDE };
	size_t i;

	if (argc == 2 && !strcmp(argv[1], "csv")) {
		printf("%s\n", gdr_csv_header());
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "table")) {
		for (int pairs = 0; pairs <= GDR_TABLE_PAIRS; pairs += GDR_TABLE_PAIRS) {
			for (i = 0; i < sizeof(bw_flags) / sizeof(bw_flags[0]); i++)
				if (table_line(gdr_table_header, bw_flags[i] | pairs))
					return 1;
			if (table_line(gdr_table_header_lat, pairs) ||
			    table_line(gdr_table_header_lat, GDR_TABLE_WIDE | pairs))
				return 1;
		}
		return 0;
	}
	fprintf(stderr, "usage: doc_columns csv|table\n");
	return 2;
}
