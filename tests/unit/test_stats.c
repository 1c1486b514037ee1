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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_odd),	   cmocka_unit_test(test_even),
		cmocka_unit_test(test_one),	   cmocka_unit_test(test_zero),
		cmocka_unit_test(test_not_finite),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
