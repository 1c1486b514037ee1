/*
 * Shared by the options files only: the value parsers of options_value.c
 * (each prints "OPT 'VALUE': why (see --help)" and returns -EINVAL) and the
 * cross-option checks of options_check.c.
 */
#ifndef GDR_OPTIONS_INT_H
#define GDR_OPTIONS_INT_H

#include <stdint.h>

#include "options.h"

/* "OPT 'VAL': WHY (see --help)" on stderr; -EINVAL. */
int gdr_opt_bad(const char *opt, const char *val, const char *why);
/* A decimal integer in [min, max]. */
int gdr_opt_uint(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* A positive number of seconds up to max. */
int gdr_opt_seconds(const char *opt, const char *s, double max, double *out);
/* --repeat: N (fixed rounds) or MIN:MAX (rounds until decided, decide.h). */
int gdr_opt_repeat(const char *s, unsigned int *min, unsigned int *max);
/* A percentage in (0, max]: "5" or "5%" -> 0.05. */
int gdr_opt_pct(const char *opt, const char *s, double max, double *out);
/* -m: 256, 512, 1024, 2048 or 4096. */
int gdr_opt_mtu(const char *s, unsigned int *out);
/* -T/--tos, --tclass: 0..255 (the IP ToS byte; DSCP << 2 | ECN). */
int gdr_opt_tos(const char *opt, const char *s, int *out);
/* --label: UTF-8 without control bytes; a warning when it is cut. */
int gdr_opt_label(const char *s);
/*
 * --mem: "all" or a comma list of paths, each once; or a list of LOCAL:REMOTE
 * combinations (either side a path or all), each once.
 */
int gdr_opt_mem_list(struct gdr_opts *o, const char *arg);
/* --mem-remote: "all" or a comma list of paths, each once. */
int gdr_opt_mem_remote(struct gdr_opts *o, const char *arg);

/*
 * What gdr_opts_parse cannot check option by option: the size modes
 * (size_modes bits: 1 -s, 2 -a, 4 --sizes, whose value is sizes_arg), -n
 * against -D, -l and -Q against -t, the --use_cuda* aliases against --mem,
 * --gpu auto, --persistent. Fills in what follows from them (the sizes, the
 * paths of --gpu, a capped -Q). 0 or -EINVAL, with the message printed.
 */
int gdr_opts_check(struct gdr_opts *o, int size_modes, const char *sizes_arg, int use_cuda,
		   int use_cuda_dmabuf);

/* perftest options that change nothing here: -x always, the others with -v, once each. */
void gdr_opts_perftest_notes(const struct gdr_opts *o, int verbose);

#endif
