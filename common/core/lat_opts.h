/* gdr_write_lat / gdr_read_lat: their --help and the options a ping-pong refuses. */
#ifndef GDR_LAT_OPTS_H
#define GDR_LAT_OPTS_H

#include <stdio.h>

#include "options.h"

void gdr_lat_usage(FILE *out, enum gdr_verb verb);
/* 1 if argv asks for --help / -h (before any parsing, which would print the bandwidth text). */
int gdr_lat_wants_help(int argc, char **argv);
/* After gdr_opts_parse: 0, or -EINVAL after printing why an option does not apply. */
int gdr_lat_opts_check(const struct gdr_opts *o);

#endif
