/* The main of gdr_write_bw and gdr_read_bw: options, signals, session, exit status. */
#ifndef GDR_BENCH_H
#define GDR_BENCH_H

#include "options.h"

int gdr_bench_main(int argc, char **argv, enum gdr_verb verb);
/* gdr_write_lat / gdr_read_lat: the same session, ping-pong latency (lat_loop.h). */
int gdr_bench_lat_main(int argc, char **argv, enum gdr_verb verb);

#endif
