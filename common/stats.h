/* Summary of per-repeat measurements: what the table and CSV call peak/avg/median/min/max. */
#ifndef GDR_STATS_H
#define GDR_STATS_H

#include <stddef.h>

struct gdr_stats {
	double peak, avg, median, min, max;
};

/*
 * Summarise n per-repeat values (bandwidths in Gb/s, or any rate).
 * avg is the arithmetic mean of the values; median of an even count is the
 * mean of the middle two. peak is set to max: per-repeat values cannot show
 * anything finer, so a caller that measured a finer-grained peak (perftest
 * style, over windows inside a repeat) overwrites it.
 * n == 0 or a non-finite value: *out all zero, -EINVAL. -ENOMEM if the sort
 * copy cannot be allocated. The input array is not modified.
 */
int gdr_stats_compute(const double *v, size_t n, struct gdr_stats *out);

#endif
