#include "cmocka_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep.h"

/*
 * Every schedule for m = 2..65: each round pairs a node with at most one
 * peer, both ends agree on the pair and on who serves, every unordered pair
 * meets exactly once per pass (pairs) and every ring edge once, in the
 * fewest rounds; with both, each pair meets once in each direction.
 */
/* 3.7^k: budgets from 1 s to 480,000 s (an integer loop counter). */
static double budget_k(int k)
{
	double b = 1;

	while (k-- > 0)
		b *= 3.7;
	return b;
}

static void check_schedule(enum gdr_sweep_mode mode, unsigned int m, int both)
{
	unsigned int rounds = gdr_sweep_rounds(mode, m, both);
	unsigned char *met = calloc((size_t)m * m, 1);

	assert_non_null(met);
	for (unsigned int r = 0; r < rounds; r++) {
		unsigned int busy = 0;

		for (unsigned int x = 0; x < m; x++) {
			int serves, peer_serves;
			int p = gdr_sweep_peer(mode, m, both, r, x, &serves);

			if (p < 0) {
				assert_int_equal(serves, 0);
				continue;
			}
			busy++;
			assert_true((unsigned int)p < m);
			assert_int_not_equal(p, (int)x);
			/* The peer sees the same pair, with the other role. */
			assert_int_equal(
			    gdr_sweep_peer(mode, m, both, r, (unsigned int)p, &peer_serves),
			    (int)x);
			assert_int_not_equal(serves, peer_serves);
			if (serves)
				met[(size_t)p * m + x]++; /* [client][server] */
		}
		/* A perfect matching for an even m, all but one node for an odd m. */
		if (mode == GDR_SWEEP_PAIRS)
			assert_int_equal(busy, m % 2 ? m - 1 : m);
	}
	for (unsigned int a = 0; a < m; a++)
		for (unsigned int b = 0; b < m; b++) {
			unsigned int n = met[(size_t)a * m + b] + met[(size_t)b * m + a];
			unsigned int ring =
			    m == 2 ? a != b : (b == (a + 1) % m || a == (b + 1) % m);

			if (a == b)
				assert_int_equal(n, 0);
			else if (mode == GDR_SWEEP_PAIRS)
				assert_int_equal(n, both ? 2 : 1);
			else
				assert_int_equal(n, ring ? (both ? 2u : 1u) : 0u);
			if (both && n)
				assert_int_equal(met[(size_t)a * m + b], met[(size_t)b * m + a]);
		}
	if (mode == GDR_SWEEP_RING)
		/* node i sends to i + 1: i is the client of i + 1 in the first pass */
		for (unsigned int a = 0; a < m && m > 2; a++)
			assert_int_equal(met[(size_t)a * m + (a + 1) % m], 1);
	free(met);
}

static void test_pairs_schedule(void **state)
{
	(void)state;
	for (unsigned int m = 2; m <= 65; m++) {
		assert_int_equal(gdr_sweep_rounds(GDR_SWEEP_PAIRS, m, 0), m % 2 ? m : m - 1);
		assert_int_equal(gdr_sweep_rounds(GDR_SWEEP_PAIRS, m, 1), 2 * (m % 2 ? m : m - 1));
		check_schedule(GDR_SWEEP_PAIRS, m, 0);
		check_schedule(GDR_SWEEP_PAIRS, m, 1);
	}
}

static void test_ring_schedule(void **state)
{
	(void)state;
	for (unsigned int m = 2; m <= 65; m++) {
		assert_int_equal(gdr_sweep_rounds(GDR_SWEEP_RING, m, 0), m == 2	 ? 1
									 : m % 2 ? 3
										 : 2);
		check_schedule(GDR_SWEEP_RING, m, 0);
		check_schedule(GDR_SWEEP_RING, m, 1);
	}
}

static void test_out_of_range(void **state)
{
	int serves = 7;

	(void)state;
	assert_int_equal(gdr_sweep_rounds(GDR_SWEEP_PAIRS, 1, 0), 0);
	assert_int_equal(gdr_sweep_rounds(GDR_SWEEP_FIXED, 8, 0), 0);
	assert_int_equal(gdr_sweep_rounds(GDR_SWEEP_PAIRS, GDR_SWEEP_MAX_NODES + 1, 0), 0);
	assert_int_equal(gdr_sweep_peer(GDR_SWEEP_PAIRS, 4, 0, 3, 0, &serves), -1);
	assert_int_equal(serves, 0);
	assert_int_equal(gdr_sweep_peer(GDR_SWEEP_PAIRS, 4, 0, 0, 4, &serves), -1);
	assert_int_equal(gdr_sweep_mode_parse("pairs"), GDR_SWEEP_PAIRS);
	assert_int_equal(gdr_sweep_mode_parse("ring"), GDR_SWEEP_RING);
	assert_int_equal(gdr_sweep_mode_parse("fixed"), GDR_SWEEP_FIXED);
	assert_int_equal(gdr_sweep_mode_parse("all"), -EINVAL);
}

static struct gdr_result row(const char *host, const char *peer, const char *role, const char *verb,
			     uint64_t size, double gbps, const char *status)
{
	struct gdr_result r;

	gdr_result_init(&r);
	snprintf(r.host, sizeof(r.host), "%s", host);
	snprintf(r.peer, sizeof(r.peer), "%s", peer);
	snprintf(r.role, sizeof(r.role), "%s", role);
	snprintf(r.verb, sizeof(r.verb), "%s", verb);
	snprintf(r.path, sizeof(r.path), "host");
	snprintf(r.nic, sizeof(r.nic), "nic-%s", host);
	r.size_bytes = size;
	r.bw_median_gbps = gbps;
	r.bw_avg_gbps = gbps;
	snprintf(r.status, sizeof(r.status), "%s", status);
	return r;
}

static const char names3[3][64] = { "a", "b", "c" };

/* Three nodes, c slow: two of the three pairs are slow, c is still named. */
static void test_outlier_three_nodes(void **state)
{
	struct gdr_result rows[] = {
		row("b", "a", "client", "write", 1 << 20, 10.0, "ok"),
		row("a", "b", "server", "write", 1 << 20, 9.0, "ok"),
		row("c", "a", "client", "write", 1 << 20, 2.0, "ok"),
		/* c as the receiver too: a slow node is found whichever way the data flows */
		row("b", "c", "client", "write", 1 << 20, 2.2, "ok"),
		/* a smaller size does not enter the matrix */
		row("c", "b", "client", "write", 4096, 0.1, "ok"),
	};
	struct gdr_sweep_report rep;
	struct gdr_sweep_outlier o[3];

	(void)state;
	assert_int_equal(gdr_sweep_report_build(&rep, names3, 3, rows, 5), 0);
	assert_int_equal(rep.nviews, 1);
	assert_int_equal(rep.views[0].size_bytes, 1 << 20);
	/* the client's row wins over the server's; write: client sends */
	assert_true(rep.views[0].cell[1 * 3 + 0].gbps == 10.0);
	assert_true(rep.views[0].cell[1 * 3 + 2].gbps == 2.2);
	assert_true(rep.views[0].cell[2 * 3 + 1].gbps < 0);
	assert_true(rep.views[0].cell[0 * 3 + 1].gbps < 0);
	assert_int_equal(gdr_sweep_outliers(&rep.views[0], 0.9, o), 1);
	assert_int_equal(o[0].node, 2);
	assert_true(o[0].node_gbps == 2.1);
	assert_true(o[0].ref_gbps == 10.0);
	assert_string_equal(rep.nic[2], "nic-c");
	/* the median of all pairs (2.2) would not have named c */
	assert_int_equal(gdr_sweep_outliers(&rep.views[0], 0.1, o), 0);
	gdr_sweep_report_free(&rep);
}

static void test_failed_and_read(void **state)
{
	struct gdr_result rows[] = {
		row("b", "a", "client", "read", 65536, 5.0, "ok"),
		row("c", "a", "client", "read", 0, 0, "failed"),
		row("x", "a", "client", "read", 65536, 5.0, "ok"), /* not a node */
	};
	struct gdr_sweep_report rep;
	struct gdr_sweep_outlier o[3];
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(gdr_sweep_report_build(&rep, names3, 3, rows, 3), 0);
	/* read: the server (a) sends to the client (b) */
	assert_true(rep.views[0].cell[0 * 3 + 1].gbps == 5.0);
	assert_int_equal(rep.views[0].cell[0 * 3 + 2].failed, 1);
	assert_int_equal(gdr_sweep_outliers(&rep.views[0], 0.9, o), 0);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	gdr_sweep_report_print(f, &rep, 0.9);
	fclose(f);
	assert_non_null(strstr(buf, "sweep: read host at 64 KiB"));
	assert_non_null(strstr(buf, "sweep: failed: a -> c (read host)"));
	assert_non_null(strstr(buf, "sweep: no slow node"));
	free(buf);
	gdr_sweep_report_free(&rep);
	assert_int_equal(gdr_sweep_report_build(&rep, names3, 1, rows, 3), -EINVAL);
}

/* Two nodes: no node can be told from the other. */
static void test_two_nodes(void **state)
{
	static const char names2[2][64] = { "a", "b" };
	struct gdr_result rows[] = { row("b", "a", "client", "write", 4096, 1.0, "ok") };
	struct gdr_sweep_report rep;
	struct gdr_sweep_outlier o[2];

	(void)state;
	assert_int_equal(gdr_sweep_report_build(&rep, names2, 2, rows, 1), 0);
	assert_int_equal(gdr_sweep_outliers(&rep.views[0], 0.9, o), 0);
	gdr_sweep_report_free(&rep);
}

/* --time-budget: the -D chosen fits the budget, and 0.01 s more would not. */
static void test_budget(void **state)
{
	char why[512];
	double d = 0;

	(void)state;
	/* 64 nodes, 63 rounds, 2 paths: 126 s of connections, (600 - 126) / 126 s each. */
	assert_int_equal(gdr_sweep_budget(600, 63, 2, 1, 1, &d, why, sizeof(why)), 0);
	assert_true(d > 3.76 - 1e-9 && d < 3.76 + 1e-9);
	assert_true(gdr_sweep_time(63, 2, 1, 1, 3.76) < 599.76 + 1e-6);
	assert_true(gdr_sweep_time(63, 2, 1, 1, 3.77) > 600);
	for (unsigned int rounds = 1; rounds <= 65; rounds += 4)
		for (unsigned int nmem = 1; nmem <= 3; nmem++)
			for (unsigned int nsizes = 1; nsizes <= 23; nsizes += 11)
				for (unsigned int rep = 1; rep <= 5; rep += 2)
					for (int k = 0; k < 11; k++) {
						double b = budget_k(k);
						int r = gdr_sweep_budget(b, rounds, nmem, nsizes,
									 rep, &d, why, sizeof(why));
						double t = gdr_sweep_time(rounds, nmem, nsizes, rep,
									  GDR_SWEEP_MIN_D);

						if (t > b) {
							assert_int_equal(r, -ERANGE);
							continue;
						}
						assert_int_equal(r, 0);
						assert_true(d >= GDR_SWEEP_MIN_D && d <= 86400);
						assert_true(
						    d * 100 - (double)(long long)(d * 100 + 0.5) <
							1e-6 &&
						    (double)(long long)(d * 100 + 0.5) - d * 100 <
							1e-6);
						assert_true(gdr_sweep_time(rounds, nmem, nsizes,
									   rep, d) <= b + 1e-6);
						if (d < 86400)
							assert_true(gdr_sweep_time(rounds, nmem,
										   nsizes, rep,
										   d + 0.01) > b);
					}
	/* Too short: the message says what the sweep needs at the shortest -D. */
	assert_int_equal(gdr_sweep_budget(100, 63, 2, 1, 1, &d, why, sizeof(why)), -ERANGE);
	assert_non_null(strstr(why, "139 s or more"));
	assert_int_equal(gdr_sweep_budget(100, 0, 2, 1, 1, &d, why, sizeof(why)), -EINVAL);
	assert_int_equal(gdr_sweep_budget(100, 3, 0, 1, 1, &d, why, sizeof(why)), -EINVAL);
	/* A budget far above what one pair needs: -D at its maximum. */
	assert_int_equal(gdr_sweep_budget(30 * 86400, 1, 1, 1, 1, &d, why, sizeof(why)), 0);
	assert_true(d == 86400);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairs_schedule),	cmocka_unit_test(test_ring_schedule),
		cmocka_unit_test(test_out_of_range),	cmocka_unit_test(test_outlier_three_nodes),
		cmocka_unit_test(test_failed_and_read), cmocka_unit_test(test_two_nodes),
		cmocka_unit_test(test_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
