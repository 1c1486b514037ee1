/* Summary of per-repeat measurements: what the table and CSV call peak/avg/median/min/max. */
#ifndef GDR_STATS_H
#define GDR_STATS_H

#include <stddef.h>
#include <stdint.h>

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

/*
 * Peak rate inside a repeat, perftest's way: over a window from one
 * observation a to a later one b, count only the messages POSTED after a and
 * COMPLETED (seen) by b, divided by t_b - t_a. That is a lower bound of what
 * the link really moved in the window, however the CQ batches, delays or
 * bursts its completions, so the peak can never exceed the real rate by an
 * artefact of when completions were seen. A window inside the repeat must
 * also span at least min_cqes completions (several per QP) to count: a
 * shorter one times a burst, not the link. The whole repeat (the first
 * observation to the last) is always a window, however few completions it
 * has: the peak is never below the repeat's average and never missing for a
 * repeat that completed a message, the one rule for every path (bounce,
 * whose completions come in bursts, has only that window). Memory is fixed:
 * observations are thinned (every other one dropped, the spacing doubled)
 * when the table fills; the first and the latest are always kept.
 */
#define GDR_PEAK_POINTS 256
struct gdr_peak_point {
	uint64_t t_ns, posted, done, cqes;
};
struct gdr_peak {
	struct gdr_peak_point pt[GDR_PEAK_POINTS];
	struct gdr_peak_point last;
	unsigned int n;
	uint64_t gap;	   /* completions between kept observations */
	uint64_t min_cqes; /* a window spans at least this many completions */
};
void gdr_peak_init(struct gdr_peak *p, uint64_t min_cqes);
/* An observation at t_ns: posted requests so far, done messages completed, cqes completions seen.
 */
void gdr_peak_add(struct gdr_peak *p, uint64_t t_ns, uint64_t posted, uint64_t done, uint64_t cqes);
/* Best messages/s over the whole repeat and the windows long enough; NAN when nothing completed. */
double gdr_peak_rate(const struct gdr_peak *p);

/*
 * Latency summary of n samples (microseconds): nearest-rank percentiles on
 * the sorted samples (the smallest sample with at least p% of the samples at
 * or below it), the average of all samples. 0, -EINVAL (n == 0 or a value
 * not finite), -ENOMEM. The input is not modified.
 */
struct gdr_lat_stats {
	double min, p50, p90, p99, p999, max, avg;
};
int gdr_lat_stats_compute(const double *v, size_t n, struct gdr_lat_stats *out);
/* The nearest-rank percentile p (0 < p <= 100) of n sorted values. */
double gdr_percentile_sorted(const double *sorted, size_t n, double p);

#endif
