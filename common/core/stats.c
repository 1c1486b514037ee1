#include "config.h"

#include "stats.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The finite values of v[0..n) sorted into a new array (*sorted, to free) and
 * their sum: what both summaries start from. -EINVAL on none or a non-finite one.
 */
static int sorted_copy(const double *v, size_t n, double **sorted, double *sum)
{
	double *s;

	*sorted = NULL;
	*sum = 0;
	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		/* NaN fails both comparisons; infinities exceed DBL_MAX. */
		if (!(v[i] >= -DBL_MAX && v[i] <= DBL_MAX))
			return -EINVAL;
	}
	s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	for (size_t i = 0; i < n; i++)
		*sum += s[i];
	*sorted = s;
	return 0;
}

int gdr_stats_compute(const double *v, size_t n, struct gdr_stats *out)
{
	double *sorted, sum;
	int ret = sorted_copy(v, n, &sorted, &sum);

	memset(out, 0, sizeof(*out));
	if (ret)
		return ret;
	out->min = sorted[0];
	out->max = sorted[n - 1];
	out->peak = out->max;
	out->avg = sum / (double)n;
	if (n % 2)
		out->median = sorted[n / 2];
	else
		out->median = (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	free(sorted);
	return 0;
}

void gdr_peak_init(struct gdr_peak *p, uint64_t min_cqes)
{
	memset(p, 0, sizeof(*p));
	p->gap = 1;
	p->min_cqes = min_cqes ? min_cqes : 1;
}

void gdr_peak_add(struct gdr_peak *p, uint64_t t_ns, uint64_t posted, uint64_t done, uint64_t cqes)
{
	struct gdr_peak_point x = { t_ns, posted, done, cqes };

	p->last = x;
	if (p->n && cqes - p->pt[p->n - 1].cqes < p->gap)
		return;
	if (p->n == GDR_PEAK_POINTS) {
		/* Thin to every other observation: windows stay, only coarser. */
		for (unsigned int i = 0; i < GDR_PEAK_POINTS / 2; i++)
			p->pt[i] = p->pt[2 * i];
		p->n = GDR_PEAK_POINTS / 2;
		p->gap *= 2;
		if (cqes - p->pt[p->n - 1].cqes < p->gap)
			return;
	}
	p->pt[p->n++] = x;
}

static double window_rate(const struct gdr_peak_point *a, const struct gdr_peak_point *b,
			  uint64_t min_cqes)
{
	if (b->cqes < a->cqes + min_cqes || b->t_ns <= a->t_ns || b->done <= a->posted)
		return 0;
	return (double)(b->done - a->posted) * 1e9 / (double)(b->t_ns - a->t_ns);
}

double gdr_peak_rate(const struct gdr_peak *p)
{
	double best = 0;

	/* The whole repeat is a window however few completions it has (the peak's one rule). */
	if (p->n)
		best = window_rate(&p->pt[0], &p->last, 0);
	for (unsigned int a = 0; a < p->n; a++) {
		for (unsigned int b = a + 1; b < p->n; b++) {
			double r = window_rate(&p->pt[a], &p->pt[b], p->min_cqes);
			if (r > best)
				best = r;
		}
		double r = window_rate(&p->pt[a], &p->last, p->min_cqes);
		if (r > best)
			best = r;
	}
	return best > 0 ? best : NAN;
}

double gdr_percentile_sorted(const double *sorted, size_t n, double p)
{
	/* Nearest rank ceil(p/100 * n), 1-based; the epsilon keeps 99.9% of 1000 at 999. */
	double x = p / 100.0 * (double)n - 1e-9;
	size_t rank = x > 0 ? (size_t)x : 0;

	if (n == 0)
		return NAN;
	if ((double)rank < x)
		rank++;
	if (rank < 1)
		rank = 1;
	return sorted[rank <= n ? rank - 1 : n - 1];
}

int gdr_lat_stats_compute(const double *v, size_t n, struct gdr_lat_stats *out)
{
	double *sorted, sum;
	int ret = sorted_copy(v, n, &sorted, &sum);

	memset(out, 0, sizeof(*out));
	if (ret)
		return ret;
	out->min = sorted[0];
	out->p50 = gdr_percentile_sorted(sorted, n, 50);
	out->p90 = gdr_percentile_sorted(sorted, n, 90);
	out->p99 = gdr_percentile_sorted(sorted, n, 99);
	out->p999 = gdr_percentile_sorted(sorted, n, 99.9);
	out->max = sorted[n - 1];
	out->avg = sum / (double)n;
	free(sorted);
	return 0;
}
