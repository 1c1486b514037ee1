#include "cmocka_common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bidir.h"
#include "loop.h"
#include "proto.h"

#include "sim_verbs.h"

/* A run at `bps` bytes/ns from t0 to t1, then at bps2 to t2 (t2 == t1: none), points every step. */
static void run_line(struct gdr_timeline *tl, int64_t t0, int64_t t1, double bps, int64_t t2,
		     double bps2, int64_t step)
{
	double bytes = 0;

	memset(tl, 0, sizeof(*tl));
	for (int64_t t = t0; t <= t2; t += step) {
		gdr_timeline_add(tl, t, (uint64_t)(bytes + 0.5));
		bytes += (t < t1 ? bps : bps2) * (double)step;
	}
}

static double whole_run(const struct gdr_timeline *tl)
{
	return (double)tl->bytes[tl->n - 1] * 1e9 / (double)(tl->t_ns[tl->n - 1] - tl->t_ns[0]);
}

/*
 * The bias -b had: both directions share the link at 1 byte/ns each; the
 * client finishes first, the server then runs alone at 2 bytes/ns. Its
 * whole-run average (1.33 GB/s) and the sum of both averages (2.33 GB/s)
 * count time when only one direction ran; over the overlap the server moved
 * 1 GB/s and the pair 2 GB/s.
 */
static void test_overlap_excludes_solo_tail(void **state)
{
	struct gdr_timeline c, s;
	double rate[2];

	(void)state;
	run_line(&c, 0, 1000000, 1.0, 1000000, 1.0, 10000);
	run_line(&s, 0, 1000000, 1.0, 1500000, 2.0, 10000);
	assert_true(fabs(whole_run(&s) - 1.3333e9) < 0.01e9);
	assert_int_equal(gdr_bidir_rates(&c, &s, whole_run(&c), whole_run(&s), rate), 1);
	assert_true(fabs(rate[0] - 1e9) < 0.01e9);
	assert_true(fabs(rate[1] - 1e9) < 0.01e9);
	assert_true(fabs(rate[0] + rate[1] - 2e9) < 0.02e9);
}

/*
 * The server started earlier on the common reference (it posts the ACK, the
 * client starts when it sees it) and ran alone first: that head is left out
 * too, and the window is shrunk by the uncertainty of the references.
 */
static void test_overlap_head_and_uncertainty(void **state)
{
	struct gdr_timeline c, s;
	struct gdr_bidir o;

	(void)state;
	run_line(&s, 0, 200000, 3.0, 1200000, 1.0, 10000);
	run_line(&c, 200000, 1200000, 1.0, 1200000, 1.0, 10000);
	c.unc_ns = 50000;
	assert_int_equal(gdr_bidir_overlap(&c, &s, &o), 0);
	assert_true(o.lo_ns >= 250000 && o.hi_ns <= 1150000);
	assert_true(fabs(o.bps[1] - 1e9) < 0.01e9);
	assert_true(fabs(o.bps[0] - 1e9) < 0.01e9);
}

/* No overlap longer than the uncertainty, or too few points inside: the averages, and 0. */
static void test_overlap_none(void **state)
{
	struct gdr_timeline c, s;
	struct gdr_bidir o;
	double rate[2];

	(void)state;
	run_line(&c, 0, 100000, 1.0, 100000, 1.0, 10000);
	run_line(&s, 0, 100000, 2.0, 100000, 2.0, 10000);
	c.unc_ns = 60000; /* the window would be [60000, 40000] */
	assert_int_equal(gdr_bidir_overlap(&c, &s, &o), -ENODATA);
	assert_int_equal(gdr_bidir_rates(&c, &s, 5, 7, rate), 0);
	assert_true(rate[0] == 5 && rate[1] == 7);
	/* Disjoint runs. */
	c.unc_ns = 0;
	run_line(&s, 200000, 300000, 1.0, 300000, 1.0, 10000);
	assert_int_equal(gdr_bidir_overlap(&c, &s, &o), -ENODATA);
	/* One point only inside the overlap: no rate from it. */
	run_line(&c, 0, 100000, 1.0, 100000, 1.0, 100000);
	run_line(&s, 50000, 150000, 1.0, 150000, 1.0, 100000);
	assert_int_equal(gdr_bidir_overlap(&c, &s, &o), -ENODATA);
}

/* Thinning keeps the first and the latest point, in order, within GDR_TL_POINTS. */
static void test_timeline_thinning(void **state)
{
	struct gdr_timeline tl;
	char why[128];

	(void)state;
	memset(&tl, 0, sizeof(tl));
	for (int64_t i = 0; i < 1000; i++) {
		gdr_timeline_add(&tl, 7 + i * 3, (uint64_t)i * 64);
		assert_true(tl.n <= GDR_TL_POINTS);
		assert_int_equal(tl.t_ns[0], 7);
		assert_int_equal(tl.t_ns[tl.n - 1], 7 + i * 3);
	}
	assert_true(tl.n >= GDR_TL_POINTS / 2);
	assert_int_equal(gdr_timeline_check(&tl, why, sizeof(why)), 0);
	gdr_timeline_rebase(&tl, 7, 5);
	assert_int_equal(tl.t_ns[0], 0);
	assert_int_equal(tl.unc_ns, 5);
	tl.bytes[3] = tl.bytes[2] - 1;
	assert_int_equal(gdr_timeline_check(&tl, why, sizeof(why)), -EINVAL);
}

/* The time line travels in DONE/RESULT; a peer's line that goes back in time is refused. */
static void test_timeline_wire(void **state)
{
	struct gdr_msg in, out;
	uint8_t buf[GDR_CTRL_MAX];
	char why[256];
	int n;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = GDR_MSG_RESULT;
	run_line(&in.u.meas.tl, -5000, 1000000, 1.0, 1000000, 1.0, 10000);
	in.u.meas.tl.unc_ns = 1234;
	n = gdr_msg_encode(&in, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(gdr_msg_decode(buf, (size_t)n, &out, why, sizeof(why)), 0);
	assert_int_equal(out.u.meas.tl.n, in.u.meas.tl.n);
	assert_int_equal(out.u.meas.tl.unc_ns, 1234);
	assert_memory_equal(out.u.meas.tl.t_ns, in.u.meas.tl.t_ns, in.u.meas.tl.n * 8);
	assert_memory_equal(out.u.meas.tl.bytes, in.u.meas.tl.bytes, in.u.meas.tl.n * 8);
	in.u.meas.tl.t_ns[4] = in.u.meas.tl.t_ns[3] - 1;
	n = gdr_msg_encode(&in, buf, sizeof(buf));
	assert_int_equal(gdr_msg_decode(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
}

/*
 * One run of the loop on a simulated 2-QP link: its time line spans the run,
 * from the first post to the last completion, all bytes. Returns the highest
 * rate, as a multiple of the link's, from the first point after the start to
 * any later point: the points in between are where the completions were seen.
 */
static double loop_timeline_once(void)
{
	static uint8_t src[4096], dst[4096];
	struct gdr_loop_qp qps[2] = { { 0 } };
	struct gdr_loop_cfg cfg = { .opcode = IBV_WR_RDMA_WRITE,
				    .size = 4096,
				    .iters = 400,
				    .tx_depth = 32,
				    .post_list = 1,
				    .cq_mod = 4,
				    .stall_timeout = 10 };
	struct gdr_loop_out out;
	struct sim *d = sim_new(2000, 1);
	char why[256] = "";
	double link = 1e9 / 2000 * 4096, worst = 0;

	for (unsigned int i = 0; i < 2; i++) {
		qps[i].qp = &d->qp[i];
		qps[i].laddr = (uintptr_t)src;
		qps[i].raddr = (uintptr_t)dst;
	}
	assert_int_equal(gdr_loop_run(&d->cq, qps, 2, &cfg, &out, why, sizeof(why)), 0);
	assert_true(out.tl.n >= GDR_TL_POINTS / 2 && out.tl.n <= GDR_TL_POINTS);
	assert_int_equal(gdr_timeline_check(&out.tl, why, sizeof(why)), 0);
	assert_int_equal(out.tl.bytes[0], 0);
	assert_int_equal(out.tl.bytes[out.tl.n - 1], out.bytes);
	assert_int_equal((uint64_t)(out.tl.t_ns[out.tl.n - 1] - out.tl.t_ns[0]), out.elapsed_ns);
	for (uint32_t i = 2; i + 1 < out.tl.n; i++) {
		double r = (double)(out.tl.bytes[i] - out.tl.bytes[1]) * 1e9 /
			   (double)(out.tl.t_ns[i] - out.tl.t_ns[1]);

		if (r / link > worst)
			worst = r / link;
	}
	free(d);
	return worst;
}

/*
 * No point of the time line runs ahead of the link (5 % margin). A point is
 * stamped just after the poll that saw it: a test descheduled between the
 * two (a loaded CI machine, ASan) stamps it late, and the next points then
 * read above the link. That is the scheduler, not the loop, so such a run
 * is tried again, up to 5 runs; a loop that records its points wrongly
 * fails all of them.
 */
static void test_loop_timeline(void **state)
{
	double worst = 0;

	(void)state;
	for (int attempt = 1; attempt <= 5; attempt++) {
		worst = loop_timeline_once();
		if (worst <= 1.05)
			break;
		fprintf(stderr, "# run %d: a point at %.3fx the link; once more\n", attempt,
			worst);
	}
	assert_true(worst <= 1.05);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overlap_excludes_solo_tail),
		cmocka_unit_test(test_overlap_head_and_uncertainty),
		cmocka_unit_test(test_overlap_none),
		cmocka_unit_test(test_timeline_thinning),
		cmocka_unit_test(test_timeline_wire),
		cmocka_unit_test(test_loop_timeline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
