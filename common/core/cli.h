/* What every C tool's command line shares: --version and the "did you mean" of a typo. */
#ifndef GDR_CLI_H
#define GDR_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

/* "PROG (gdrperf) VERSION" on out: the one --version format of all tools. */
void gdr_cli_version(FILE *out);

/*
 * The long option of opts nearest to arg ("--report-gbits" -> "report_gbits"),
 * or NULL when none is near enough to be a typo. '-' and '_' count as the
 * same; the rest is an edit distance of at most 2 (1 for names of up to 4).
 */
const char *gdr_cli_nearest(const char *arg, const struct option *opts);

/*
 * After getopt_long returned '?' for argv[optind - 1]: "unknown option 'ARG'"
 * on stderr, with "did you mean --NAME?" when one is near, else "see --help"
 * and hint (when not NULL: where else to look). -EINVAL.
 */
int gdr_cli_unknown(int argc, char **argv, const struct option *opts, const char *hint);

/*
 * After getopt_long returned ':' (a value option last without its value):
 * "option '--NAME' needs a value" on stderr, or '-X' for a letter of a
 * cluster ("-as": '-s', not '-as'). -EINVAL.
 */
int gdr_cli_no_value(char **argv);

#endif
