#include "config.h"

#include "stats.h"

#include <errno.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int gdr_stats_compute(const double *v, size_t n, struct gdr_stats *out)
{
	double *sorted, sum = 0;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		/* NaN fails both comparisons; infinities exceed DBL_MAX. */
		if (!(v[i] >= -DBL_MAX && v[i] <= DBL_MAX))
			return -EINVAL;
	}
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, v, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	for (i = 0; i < n; i++)
		sum += sorted[i];
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
