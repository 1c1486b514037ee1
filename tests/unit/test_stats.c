#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "stats.h"

#define EPS 1e-12

static void test_odd(void **state)
{
	const double v[] = { 9.0, 1.0, 5.0, 3.0, 7.0 };
	const double copy[] = { 9.0, 1.0, 5.0, 3.0, 7.0 };
	struct gdr_stats s;

	(void)state;
	assert_int_equal(gdr_stats_compute(v, 5, &s), 0);
	assert_float_equal(s.min, 1.0, EPS);
	assert_float_equal(s.max, 9.0, EPS);
	assert_float_equal(s.peak, 9.0, EPS);
	assert_float_equal(s.median, 5.0, EPS);
	assert_float_equal(s.avg, 5.0, EPS);
	/* The caller's array keeps its order. */
	assert_memory_equal(v, copy, sizeof(v));
}

static void test_even(void **state)
{
	const double v[] = { 4.0, 1.0, 2.0, 10.0 };
	struct gdr_stats s;

	(void)state;
	assert_int_equal(gdr_stats_compute(v, 4, &s), 0);
	assert_float_equal(s.median, 3.0, EPS); /* mean of 2 and 4 */
	assert_float_equal(s.avg, 4.25, EPS);
	assert_float_equal(s.min, 1.0, EPS);
	assert_float_equal(s.max, 10.0, EPS);
}

static void test_one(void **state)
{
	const double v[] = { 42.5 };
	struct gdr_stats s;

	(void)state;
	assert_int_equal(gdr_stats_compute(v, 1, &s), 0);
	assert_float_equal(s.peak, 42.5, EPS);
	assert_float_equal(s.avg, 42.5, EPS);
	assert_float_equal(s.median, 42.5, EPS);
	assert_float_equal(s.min, 42.5, EPS);
	assert_float_equal(s.max, 42.5, EPS);
}

static void test_zero(void **state)
{
	const double v[] = { 1.0 };
	struct gdr_stats s;

	(void)state;
	memset(&s, 0x7f, sizeof(s));
	assert_int_equal(gdr_stats_compute(v, 0, &s), -EINVAL);
	assert_float_equal(s.peak, 0, 0);
	assert_float_equal(s.avg, 0, 0);
	assert_float_equal(s.median, 0, 0);
	assert_float_equal(s.min, 0, 0);
	assert_float_equal(s.max, 0, 0);
}

static void test_not_finite(void **state)
{
	double v[] = { 1.0, NAN, 3.0 };
	struct gdr_stats s;

	(void)state;
	assert_int_equal(gdr_stats_compute(v, 3, &s), -EINVAL);
	assert_float_equal(s.max, 0, 0);
	v[1] = INFINITY;
	assert_int_equal(gdr_stats_compute(v, 3, &s), -EINVAL);
}

/* Nearest-rank percentiles: the smallest sample with at least p% at or below it. */
static void test_percentiles(void **state)
{
	double v[1000];
	struct gdr_lat_stats l;

	(void)state;
	/* 1000 samples 1..1000 in reverse: p50 500, p90 900, p99 990, p99.9 999. */
	for (int i = 0; i < 1000; i++)
		v[i] = 1000 - i;
	assert_int_equal(gdr_lat_stats_compute(v, 1000, &l), 0);
	assert_float_equal(l.min, 1, EPS);
	assert_float_equal(l.p50, 500, EPS);
	assert_float_equal(l.p90, 900, EPS);
	assert_float_equal(l.p99, 990, EPS);
	assert_float_equal(l.p999, 999, EPS);
	assert_float_equal(l.max, 1000, EPS);
	assert_float_equal(l.avg, 500.5, EPS);
	assert_float_equal(v[0], 1000, EPS); /* input untouched */
	/* Few samples: the tail percentiles are the max, never past the end. */
	const double few[] = { 3.0, 1.0, 2.0 };
	assert_int_equal(gdr_lat_stats_compute(few, 3, &l), 0);
	assert_float_equal(l.p50, 2.0, EPS);
	assert_float_equal(l.p90, 3.0, EPS);
	assert_float_equal(l.p999, 3.0, EPS);
	assert_float_equal(l.avg, 2.0, EPS);
	/* One outlier in 100: p99 still the body, max the outlier. */
	for (int i = 0; i < 100; i++)
		v[i] = i == 37 ? 500.0 : 2.0;
	assert_int_equal(gdr_lat_stats_compute(v, 100, &l), 0);
	assert_float_equal(l.p99, 2.0, EPS);
	assert_float_equal(l.p999, 500.0, EPS);
	assert_float_equal(l.max, 500.0, EPS);
	/* 1001 samples: p99.9 = rank ceil(999.999) = 1000. */
	for (int i = 0; i < 1000; i++)
		v[i] = i + 1;
	double sorted1001[1001];
	for (int i = 0; i < 1001; i++)
		sorted1001[i] = i + 1;
	assert_float_equal(gdr_percentile_sorted(sorted1001, 1001, 99.9), 1000, EPS);
	assert_float_equal(gdr_percentile_sorted(sorted1001, 1001, 50), 501, EPS);
	assert_true(isnan(gdr_percentile_sorted(sorted1001, 0, 50)));
	/* Nothing or not finite: refused, all zero. */
	assert_int_equal(gdr_lat_stats_compute(v, 0, &l), -EINVAL);
	v[3] = NAN;
	assert_int_equal(gdr_lat_stats_compute(v, 10, &l), -EINVAL);
	assert_float_equal(l.max, 0, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_odd),	   cmocka_unit_test(test_even),
		cmocka_unit_test(test_one),	   cmocka_unit_test(test_zero),
		cmocka_unit_test(test_not_finite), cmocka_unit_test(test_percentiles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
