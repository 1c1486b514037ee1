/*
 * The verdict's statistics, C side (common/core/decide.c): Student's t
 * against textbook values and against tests/stats/vectors.txt (which gdr-ab's
 * Python must give too), paired ratios, the margin's decisions, the rounds
 * rule's schedule and per-size decision, the family's size, whose turn.
 */
#include "cmocka_common.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif

static int close_to(double got, double want, double rel)
{
	return fabs(got - want) <= rel * fabs(want);
}

/* Every line of the vectors file that starts with kind, passed to fn. */
static unsigned int each_vector(const char *kind, void (*fn)(char *rest))
{
	char path[4096], line[4096];
	unsigned int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/stats/vectors.txt", SRCDIR);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		size_t k = strlen(kind);

		if (!strncmp(line, kind, k) && line[k] == ' ') {
			fn(line + k + 1);
			n++;
		}
	}
	fclose(f);
	return n;
}

static void check_table(char *rest)
{
	double q, df, t;

	assert_int_equal(sscanf(rest, "%lf %lf %lf", &q, &df, &t), 3);
	if (!close_to(gdr_t_upper(q, df), t, 1e-6))
		fail_msg("t(%g, %g) = %.10g, the table says %.10g", q, df, gdr_t_upper(q, df), t);
}

static void check_t(char *rest)
{
	double q, df, t;

	assert_int_equal(sscanf(rest, "%lf %lf %lf", &q, &df, &t), 3);
	if (!close_to(gdr_t_upper(q, df), t, 1e-9))
		fail_msg("t(%g, %g) = %.15g, the vectors say %.15g", q, df, gdr_t_upper(q, df), t);
	/* The tail at the quantile is q again. */
	assert_true(close_to(gdr_t_sf(t, df), q, 1e-7));
}

static void test_t_quantiles(void **state)
{
	(void)state;
	assert_true(each_vector("table", check_table) >= 6);
	assert_true(each_vector("t", check_t) >= 50);
	assert_true(isnan(gdr_t_upper(0, 4)));
	assert_true(isnan(gdr_t_upper(0.5, 4)));
	assert_true(isnan(gdr_t_upper(0.01, 0)));
	assert_true(isnan(gdr_t_sf(-1, 4)));
	assert_true(gdr_t_sf(INFINITY, 4) == 0);
}

/* "ratio Q | NUM... | DEN... -> EST LO HI" */
static void check_ratio(char *rest)
{
	double num[64], den[64], want[3], q;
	unsigned int n = 0, m = 0;
	struct gdr_ratio_iv iv;
	char *bar1 = strchr(rest, '|'), *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
	char *arrow = bar2 ? strstr(bar2, "->") : NULL, *p, *end;

	assert_non_null(arrow);
	q = strtod(rest, NULL);
	for (p = bar1 + 1; p < bar2 && n < 64; p = end) {
		num[n] = strtod(p, &end);
		if (end == p)
			break;
		n++;
	}
	for (p = bar2 + 1; p < arrow && m < 64; p = end) {
		den[m] = strtod(p, &end);
		if (end == p)
			break;
		m++;
	}
	assert_int_equal(n, m);
	assert_int_equal(sscanf(arrow + 2, "%lf %lf %lf", &want[0], &want[1], &want[2]), 3);
	assert_int_equal(gdr_paired_ratio(num, den, n, q, &iv), 0);
	if (!close_to(iv.est, want[0], 1e-9) || !close_to(iv.lo, want[1], 1e-9) ||
	    !close_to(iv.hi, want[2], 1e-9))
		fail_msg("ratio %.15g %.15g-%.15g, the vectors say %.15g %.15g-%.15g", iv.est,
			 iv.lo, iv.hi, want[0], want[1], want[2]);
}

static void test_paired_ratio(void **state)
{
	const double a[] = { 90, 91, 89 }, b[] = { 100, 100, 100 }, bad[] = { 90, 0, 89 };
	struct gdr_ratio_iv iv;

	(void)state;
	assert_true(each_vector("ratio", check_ratio) >= 4);
	/* Too few rounds, or a value that is no bandwidth: no interval. */
	assert_int_equal(gdr_paired_ratio(a, b, 2, 0.01, &iv), -EINVAL);
	assert_int_equal(gdr_paired_ratio(bad, b, 3, 0.01, &iv), -EINVAL);
	assert_int_equal(gdr_paired_ratio(b, bad, 3, 0.01, &iv), -EINVAL);
	/* The estimate is the geometric mean of the rounds' ratios, inside its interval. */
	assert_int_equal(gdr_paired_ratio(a, b, 3, 0.01, &iv), 0);
	assert_true(close_to(iv.est, cbrt(0.90 * 0.91 * 0.89), 1e-12));
	assert_true(iv.lo < iv.est && iv.est < iv.hi);
	assert_int_equal(iv.n, 3);
	assert_true(iv.df == 2);
}

static void test_margin(void **state)
{
	struct gdr_ratio_iv iv = { .lo = 0.96, .hi = 1.04 };

	(void)state;
	assert_int_equal(gdr_decide_margin(&iv, 0.05), GDR_DECIDE_WITHIN);
	iv.lo = 0.95; /* the zone's ends belong to it: 0.95 passes dmabuf>=0.95*host */
	assert_int_equal(gdr_decide_margin(&iv, 0.05), GDR_DECIDE_WITHIN);
	iv.lo = 0.94;
	assert_int_equal(gdr_decide_margin(&iv, 0.05), GDR_DECIDE_OPEN);
	iv.lo = 0.85;
	iv.hi = 0.949;
	assert_int_equal(gdr_decide_margin(&iv, 0.05), GDR_DECIDE_BELOW);
	iv.lo = 1.051;
	iv.hi = 1.2;
	assert_int_equal(gdr_decide_margin(&iv, 0.05), GDR_DECIDE_ABOVE);
	iv.lo = 0.90;
	iv.hi = 1.10;
	assert_int_equal(gdr_decide_margin(&iv, 0.05), GDR_DECIDE_OPEN);
	assert_string_equal(gdr_decision_name(GDR_DECIDE_BELOW), "below");
	assert_string_equal(gdr_decision_name((enum gdr_decision)9), "?");
}

/* "looks MIN MAX -> LOOK..." */
static void check_looks(char *rest)
{
	unsigned int min, max, want[GDR_DECIDE_LOOKS_MAX], n = 0;
	char *p = strstr(rest, "->"), *end;
	struct gdr_decide d;

	assert_int_equal(sscanf(rest, "%u %u", &min, &max), 2);
	for (p += 2; n < GDR_DECIDE_LOOKS_MAX; p = end) {
		want[n] = (unsigned int)strtoul(p, &end, 10);
		if (end == p)
			break;
		n++;
	}
	assert_int_equal(gdr_decide_init(&d, min, max, 0.01, 0.05), 0);
	assert_int_equal(d.nlooks, n);
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(d.looks[i], want[i]);
}

static void test_schedule(void **state)
{
	struct gdr_decide d;

	(void)state;
	assert_true(each_vector("looks", check_looks) >= 4);
	assert_int_equal(gdr_decide_init(&d, 5, 40, 0.01, 0.05), 0);
	/* K counts the looks (a size stops only at one); fixed rounds look once. */
	assert_int_equal(gdr_decide_k(&d), d.nlooks);
	assert_int_equal(gdr_decide_k(&d), 10);
	assert_true(gdr_decide_is_look(&d, 5) && gdr_decide_is_look(&d, 40));
	assert_false(gdr_decide_is_look(&d, 6) || gdr_decide_is_look(&d, 4));
	assert_int_equal(gdr_decide_init(&d, 5, 5, 0.01, 0.05), 0);
	assert_int_equal(gdr_decide_k(&d), 1);
	/* Refused: fewer than 3 rounds to decide on, an empty range, rates out of (0, 1). */
	assert_int_equal(gdr_decide_init(&d, 2, 40, 0.01, 0.05), -EINVAL);
	assert_int_equal(gdr_decide_init(&d, 9, 8, 0.01, 0.05), -EINVAL);
	assert_int_equal(gdr_decide_init(&d, 0, 0, 0.01, 0.05), -EINVAL);
	assert_int_equal(gdr_decide_init(&d, 5, 40, 0, 0.05), -EINVAL);
	assert_int_equal(gdr_decide_init(&d, 5, 40, 0.01, 1), -EINVAL);
	/* A long range still ends on its MAX, within the table. */
	assert_int_equal(gdr_decide_init(&d, 3, 10000, 0.01, 0.05), 0);
	assert_int_equal(d.looks[d.nlooks - 1], 10000);
	assert_true(d.nlooks <= GDR_DECIDE_LOOKS_MAX);
	/* The family of a run: a size's cell and the summary, per path but the reference. */
	assert_int_equal(gdr_decide_family(3, 4), 12);
	assert_int_equal(gdr_decide_family(23, 4), 72);
	assert_int_equal(gdr_decide_family(3, 1), 0);
	assert_true(close_to(gdr_decide_tail(0.01, 12, 10), 0.01 / 240, 1e-15));
	/* Whose turn: round g starts one path further on. */
	assert_int_equal(gdr_turn(4, 0, 0), 0);
	assert_int_equal(gdr_turn(4, 1, 0), 1);
	assert_int_equal(gdr_turn(4, 5, 3), 0);
	assert_int_equal(gdr_turn(0, 5, 3), 0);
}

/* A size's decision: every path against the reference, or keep going. */
static void test_decide_size(void **state)
{
	double host[40], gap[40], same[40], noisy[40];
	const double *bps[4] = { host, gap, same, noisy };
	int ok[4] = { 1, 1, 1, 0 };
	struct gdr_decide d;
	unsigned int m = gdr_decide_family(3, 3);

	(void)state;
	assert_int_equal(gdr_decide_init(&d, 5, 40, 0.01, 0.05), 0);
	for (int r = 0; r < 40; r++) {
		double e = (r % 5 - 2) * 0.002; /* a spread of 0.4 %, the same each round */

		host[r] = 95.0 * (1 + e);
		gap[r] = 85.5 * (1 - e / 2);
		same[r] = 95.0 * (1 - e / 3);
		noisy[r] = 95.0 * (r % 2 ? 1.3 : 0.7);
	}
	/* 0.90x and 1.00x, each quiet: decided at the first look. */
	assert_int_equal(gdr_decide_size(&d, m, bps, ok, 4, 0, 5), 1);
	/* A path of 30 % noise: no decision at 5 rounds. */
	ok[3] = 1;
	assert_int_equal(gdr_decide_size(&d, m + 3, bps, ok, 4, 0, 5), 0);
	/* Nothing to decide: the reference skipped, or alone. */
	ok[0] = 0;
	assert_int_equal(gdr_decide_size(&d, m, bps, ok, 4, 0, 5), -EINVAL);
	int alone[1] = { 1 };
	assert_int_equal(gdr_decide_size(&d, m, bps, alone, 1, 0, 5), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_t_quantiles), cmocka_unit_test(test_paired_ratio),
		cmocka_unit_test(test_margin),	    cmocka_unit_test(test_schedule),
		cmocka_unit_test(test_decide_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
