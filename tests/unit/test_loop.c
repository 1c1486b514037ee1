#include "cmocka_common.h"

#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "loop.h"
#include "pattern.h"
#include "stats.h"
#include "util.h"
#include "validate.h"

#include "sim_verbs.h"

/*
 * Simulate the posting rule against a device that completes only signaled
 * requests: the engine must never stall (a full window with no signaled
 * request outstanding) and must end with the last request signaled.
 */
static void simulate(unsigned int tx_depth, unsigned int post_list, unsigned int cq_mod,
		     uint64_t target)
{
	struct gdr_loop_cfg cfg = { .tx_depth = tx_depth,
				    .post_list = post_list,
				    .cq_mod = cq_mod };
	uint64_t posted = 0, done = 0, last_signal = 0, signals = 0;
	unsigned int unsignaled = 0;

	while (done < target) {
		int progressed = 0;
		for (;;) {
			uint64_t need = target - posted < post_list ? target - posted : post_list;
			if (need == 0 || tx_depth - (posted - done) < need)
				break;
			if (gdr_loop_signal(&unsignaled, posted, (unsigned int)need, done, target,
					    &cfg)) {
				last_signal = posted + need;
				signals++;
			}
			posted += need;
			progressed = 1;
		}
		/* The device completes everything up to the last signaled request. */
		if (last_signal > done) {
			done = last_signal;
			progressed = 1;
		}
		assert_true(progressed);
	}
	assert_int_equal(done, target);
	assert_int_equal(last_signal, target);
	/* Moderation works: far fewer signals than requests when cq_mod allows. */
	if (cq_mod >= 16 && post_list == 1 && target >= 1000 && tx_depth >= 2 * cq_mod)
		assert_true(signals * 4 < target);
}

static void test_signal_rule_never_stalls(void **state)
{
	(void)state;
	simulate(128, 1, 100, 5000);
	simulate(128, 4, 128, 5000);
	simulate(128, 128, 128, 1000);
	simulate(1, 1, 1, 10);
	simulate(16, 3, 16, 1001);
	simulate(7, 7, 5, 99);
	simulate(256, 1, 64, 100000);
}

static void test_pattern(void **state)
{
	uint8_t a[4099], b[4099];
	size_t off;
	uint8_t want, got;

	(void)state;
	gdr_pattern_fill(a, sizeof(a), 7, 0);
	gdr_pattern_fill(b, sizeof(b), 7, 1);
	assert_memory_not_equal(a, b, sizeof(a)); /* per QP */
	assert_int_equal(gdr_pattern_check(a, sizeof(a), 7, 0, &off, &want, &got), 0);
	assert_int_not_equal(gdr_pattern_check(a, sizeof(a), 8, 0, &off, &want, &got), 0);
	a[4097] ^= 1;
	assert_int_not_equal(gdr_pattern_check(a, sizeof(a), 7, 0, &off, &want, &got), 0);
	assert_int_equal(off, 4097);
	gdr_pattern_poison(b, sizeof(b), 7, 0);
	gdr_pattern_fill(a, sizeof(a), 7, 0);
	for (size_t i = 0; i < sizeof(a); i++)
		assert_int_not_equal(a[i], b[i]);
	assert_int_not_equal(gdr_pattern_check(b, sizeof(b), 7, 0, &off, &want, &got), 0);
	assert_int_equal(off, 0);
}

static void sim_run(struct sim *d, unsigned int nqps, struct gdr_loop_cfg *cfg,
		    struct gdr_loop_qp *qps, struct gdr_loop_out *out)
{
	char why[256] = "";

	for (unsigned int i = 0; i < nqps; i++)
		qps[i].qp = &d->qp[i];
	cfg->stall_timeout = 10;
	assert_int_equal(gdr_loop_run(&d->cq, qps, nqps, cfg, out, why, sizeof(why)), 0);
}

/*
 * Completions in bursts of 64 over 4 QPs of 50 messages: a peak taken
 * between two polls of one burst read as many times the link. The peak
 * must never exceed what the link can do, and is at least the average.
 */
static void test_peak_bursty_cq(void **state)
{
	static uint8_t src[4096], dst[4096];
	struct gdr_loop_qp qps[SIM_QPS] = { { 0 } };
	struct gdr_loop_cfg cfg = { .opcode = IBV_WR_RDMA_WRITE,
				    .size = 4096,
				    .iters = 50,
				    .tx_depth = 128,
				    .post_list = 1,
				    .cq_mod = 1 };
	struct gdr_loop_out out;
	double link_bps = 1e9 / 2000 * 4096;

	(void)state;
	for (unsigned int i = 0; i < SIM_QPS; i++) {
		qps[i].laddr = (uintptr_t)src;
		qps[i].raddr = (uintptr_t)dst;
	}
	struct sim *d = sim_new(2000, 64);
	sim_run(d, SIM_QPS, &cfg, qps, &out);
	assert_int_equal(out.iters, 50);
	assert_int_equal(out.msgs, 200);
	double avg = (double)out.bytes * 1e9 / out.elapsed_ns;
	assert_true(isfinite(out.peak_bps));
	assert_true(out.peak_bps <= link_bps * 1.0001);
	assert_true(out.peak_bps >= avg * 0.9999);
	free(d);

	/* A longer run, moderated, smaller bursts, post lists: the same bounds. */
	cfg.iters = 3000;
	cfg.tx_depth = 32;
	cfg.cq_mod = 8;
	cfg.post_list = 4;
	d = sim_new(1000, 8);
	link_bps = 1e9 / 1000 * 4096;
	sim_run(d, 2, &cfg, qps, &out);
	avg = (double)out.bytes * 1e9 / out.elapsed_ns;
	assert_int_equal(out.iters, 3000);
	assert_true(isfinite(out.peak_bps));
	assert_true(out.peak_bps <= link_bps * 1.0001);
	assert_true(out.peak_bps >= avg * 0.9999);
	free(d);
}

/*
 * Too few completions for a window of several per QP inside the repeat: the
 * peak is the whole repeat's rate (the one rule for every path), never none.
 */
static void test_peak_short_is_the_repeat(void **state)
{
	static uint8_t src[64], dst[64];
	struct gdr_loop_qp qps[SIM_QPS] = { { 0 } };
	struct gdr_loop_cfg cfg = { .opcode = IBV_WR_RDMA_WRITE,
				    .size = 64,
				    .iters = 4,
				    .tx_depth = 16,
				    .post_list = 1,
				    .cq_mod = 4 };
	struct gdr_loop_out out;
	struct sim *d = sim_new(1000, 1);

	(void)state;
	for (unsigned int i = 0; i < 2; i++) {
		qps[i].laddr = (uintptr_t)src;
		qps[i].raddr = (uintptr_t)dst;
	}
	sim_run(d, 2, &cfg, qps, &out);
	assert_int_equal(out.msgs, 8);
	assert_true(isfinite(out.peak_bps));
	/* The repeat's own average, within the cycle counter's calibration. */
	assert_float_equal(out.peak_bps, (double)out.bytes * 1e9 / out.elapsed_ns,
			   out.peak_bps * 0.05);
	free(d);
}

/* The peak window arithmetic on its own: a burst seen late cannot make a rate. */
static void test_peak_windows(void **state)
{
	struct gdr_peak p;

	(void)state;
	gdr_peak_init(&p, 2);
	/* 100 messages posted at once at t=0; the link needs 1 us each; seen in 2 bursts. */
	gdr_peak_add(&p, 0, 100, 0, 0);
	gdr_peak_add(&p, 50000, 100, 50, 1);
	gdr_peak_add(&p, 50100, 100, 99, 2); /* 49 more seen 100 ns later */
	gdr_peak_add(&p, 100000, 100, 100, 3);
	/* posted 100 before t=0 counts nothing after it: no window counts a message. */
	assert_true(isnan(gdr_peak_rate(&p)));
	/* Windows inside need 5 completions: only the whole repeat is one, 100 in 100 us. */
	gdr_peak_init(&p, 5);
	gdr_peak_add(&p, 0, 0, 0, 0);
	gdr_peak_add(&p, 50000, 100, 50, 1);
	gdr_peak_add(&p, 50100, 100, 99, 2);
	gdr_peak_add(&p, 100000, 100, 100, 3);
	assert_true(isfinite(gdr_peak_rate(&p)));
	assert_float_equal(gdr_peak_rate(&p), 100 * 1e9 / 100000, 1e-3);
	gdr_peak_init(&p, 2);
	gdr_peak_add(&p, 0, 0, 0, 0);
	gdr_peak_add(&p, 50000, 100, 50, 1);
	gdr_peak_add(&p, 50100, 100, 99, 2);
	gdr_peak_add(&p, 100000, 100, 100, 3);
	/* From the start: 99 messages by 50.1 us, never the 49 in 100 ns. */
	assert_float_equal(gdr_peak_rate(&p), 99 * 1e9 / 50100, 1e-3);
	/* Thinning keeps the bound and the latest point. */
	gdr_peak_init(&p, 1);
	for (uint64_t i = 0; i <= 100000; i++)
		gdr_peak_add(&p, i * 1000, i + 8, i, i);
	assert_true(p.n <= GDR_PEAK_POINTS);
	assert_true(gdr_peak_rate(&p) <= 1e6 * 1.0001);
	assert_true(gdr_peak_rate(&p) > 0.99e6);
}

/* --validate over the simulated device: every message at its own place, a lost one named. */
struct vrun {
	uint8_t *mem; /* per QP: source half, destination half */
	size_t src_len, dst_len;
	struct gdr_vlayout l;
};

static int vrun(enum ibv_wr_opcode op, uint64_t size, unsigned int nqps, uint64_t iters,
		unsigned int warmup, unsigned int drop_qp, uint64_t drop_msg, uint64_t shift_msg,
		struct gdr_vbad *bad, unsigned int *bad_qp)
{
	struct gdr_loop_qp qps[SIM_QPS] = { { 0 } };
	struct gdr_loop_cfg cfg = { .opcode = op,
				    .size = (uint32_t)size,
				    .iters = iters,
				    .warmup = warmup,
				    .tx_depth = 16,
				    .post_list = 2,
				    .cq_mod = 4 };
	struct gdr_loop_out out;
	struct vrun v;
	struct sim *d = sim_new(10, 1);
	int r = 0;

	gdr_validate_lengths(size, 1, &v.src_len, &v.dst_len);
	gdr_validate_layout(&v.l, size, 1, v.src_len, v.dst_len);
	size_t per = v.src_len + v.dst_len;
	v.mem = malloc(per * nqps);
	uint8_t *want = malloc(v.src_len), *poison = malloc(v.dst_len);
	assert_non_null(v.mem);
	assert_non_null(want);
	assert_non_null(poison);
	cfg.stride = v.l.stride;
	for (unsigned int q = 0; q < nqps; q++) {
		uint8_t *srcp = v.mem + q * per, *dstp = srcp + v.src_len;

		gdr_pattern_fill(srcp, v.src_len, 5, q);
		gdr_pattern_poison(dstp, v.dst_len, 5, q);
		/* The requester's local side: source for WRITE, destination for READ. */
		qps[q].laddr = (uintptr_t)(op == IBV_WR_RDMA_WRITE ? srcp : dstp);
		qps[q].raddr = (uintptr_t)(op == IBV_WR_RDMA_WRITE ? dstp : srcp);
		qps[q].lslots = op == IBV_WR_RDMA_WRITE ? v.l.src_slots : v.l.dst_slots;
		qps[q].rslots = op == IBV_WR_RDMA_WRITE ? v.l.dst_slots : v.l.src_slots;
	}
	d->drop_qp = drop_qp;
	d->drop_msg = drop_msg;
	d->shift_msg = shift_msg;
	d->shift_by = v.l.stride;
	if (op == IBV_WR_RDMA_READ)
		d->shift_by = 0; /* a READ's remote is the source: shifting it reads another slot */
	sim_run(d, nqps, &cfg, qps, &out);
	for (unsigned int q = 0; q < nqps && !r; q++) {
		uint8_t *dstp = v.mem + q * per + v.src_len;

		gdr_pattern_fill(want, v.src_len, 5, q);
		gdr_pattern_poison(poison, v.dst_len, 5, q);
		r = gdr_validate_check(want, dstp, poison, size, &v.l, warmup + out.iters, bad);
		*bad_qp = q;
	}
	free(want);
	free(poison);
	free(v.mem);
	free(d);
	return r;
}

static void test_validate_lost_message(void **state)
{
	struct gdr_vbad bad;
	unsigned int q;
	struct gdr_vlayout l;
	size_t sl, dl;

	(void)state;
	/* 256 KiB messages: 16 destination slots, 17 source slots. */
	gdr_validate_lengths(256 << 10, 1, &sl, &dl);
	gdr_validate_layout(&l, 256 << 10, 1, sl, dl);
	assert_int_equal(l.dst_slots, 16);
	assert_int_equal(l.src_slots, 17);
	assert_int_equal(gdr_validate_covered(&l, 40), 16);
	/* Nothing lost: passes, WRITE and READ, warmup included in the sequence. */
	assert_int_equal(vrun(IBV_WR_RDMA_WRITE, 256 << 10, 2, 36, 4, UINT32_MAX, UINT64_MAX,
			      UINT64_MAX, &bad, &q),
			 0);
	assert_int_equal(vrun(IBV_WR_RDMA_READ, 256 << 10, 2, 36, 4, UINT32_MAX, UINT64_MAX,
			      UINT64_MAX, &bad, &q),
			 0);
	/* Message 30 of 40 on QP 1 never lands: named, on QP 1. */
	assert_int_equal(vrun(IBV_WR_RDMA_WRITE, 256 << 10, 2, 36, 4, 1, 30, UINT64_MAX, &bad, &q),
			 -EILSEQ);
	assert_int_equal(q, 1);
	assert_int_equal(bad.msg, 30);
	assert_int_equal(bad.off, (size_t)(30 % 16) * (256 << 10));
	assert_int_equal(vrun(IBV_WR_RDMA_READ, 256 << 10, 2, 36, 4, 0, 39, UINT64_MAX, &bad, &q),
			 -EILSEQ);
	assert_int_equal(q, 0);
	assert_int_equal(bad.msg, 39);
	/* The very first message of a short run (all covered). */
	assert_int_equal(vrun(IBV_WR_RDMA_WRITE, 1000, 1, 100, 0, 0, 0, UINT64_MAX, &bad, &q),
			 -EILSEQ);
	assert_int_equal(bad.msg, 0);
	/* Message 37 lands one slot further: 37's slot misses it (38 overwrites the other). */
	assert_int_equal(
	    vrun(IBV_WR_RDMA_WRITE, 256 << 10, 1, 40, 0, UINT32_MAX, UINT64_MAX, 37, &bad, &q),
	    -EILSEQ);
	assert_int_equal(bad.msg, 37);
	/* A short run, message 5 one slot too far: it lands where no message was meant to. */
	assert_int_equal(
	    vrun(IBV_WR_RDMA_WRITE, 4096, 1, 6, 0, UINT32_MAX, UINT64_MAX, 5, &bad, &q), -EILSEQ);
	assert_int_equal(bad.msg, 5); /* its own slot is still poison: found first */
}

/*
 * Duration mode: the clock is read only every so many polls (cycles.h), yet
 * the run ends near -D, every QP at the same count, nothing left in flight.
 */
static void test_duration_mode(void **state)
{
	static uint8_t src[4096], dst[4096];
	struct gdr_loop_qp qps[SIM_QPS] = { { 0 } };
	struct gdr_loop_cfg cfg = { .opcode = IBV_WR_RDMA_READ,
				    .size = 4096,
				    .duration = 0.2,
				    .tx_depth = 128,
				    .post_list = 1,
				    .cq_mod = 100 };
	struct gdr_loop_out out;

	(void)state;
	for (unsigned int i = 0; i < SIM_QPS; i++) {
		qps[i].laddr = (uintptr_t)src;
		qps[i].raddr = (uintptr_t)dst;
	}
	struct sim *d = sim_new(20000, 1);
	sim_run(d, SIM_QPS, &cfg, qps, &out);
	assert_true(out.iters >= 1);
	assert_int_equal(out.msgs, out.iters * SIM_QPS);
	assert_true(out.elapsed_ns >= 200000000ull);
	assert_true(out.elapsed_ns < 10000000000ull);
	for (unsigned int i = 0; i < SIM_QPS; i++)
		assert_int_equal(d->seq[i], out.iters); /* posted == completed: none in flight */
	assert_int_equal(d->head, d->tail);
	free(d);
}

/*
 * Duration mode when every post is slow (Soft-RoCE runs the transport in the
 * post's system call): the clock is read every so many posts as well as
 * polls, so the run still ends near -D. Reading it every 64 polls only, each
 * poll refilling a window of 100 at 1 ms a message, -D 0.05 posted over 6000
 * messages (6 s) before the first look at the clock.
 */
static void test_duration_slow_posts(void **state)
{
	static uint8_t src[4096], dst[4096];
	struct gdr_loop_qp qps[1] = { { 0 } };
	struct gdr_loop_cfg cfg = { .opcode = IBV_WR_RDMA_WRITE,
				    .size = 4096,
				    .duration = 0.05,
				    .tx_depth = 128,
				    .post_list = 1,
				    .cq_mod = 100 };
	struct gdr_loop_out out;

	(void)state;
	qps[0].laddr = (uintptr_t)src;
	qps[0].raddr = (uintptr_t)dst;
	struct sim *d = sim_new(1000, 1);
	d->post_ns = 1000000;
	sim_run(d, 1, &cfg, qps, &out);
	/*
	 * Past -D at most one clock's worth of posts (64) and one window (128)
	 * to drain; a loaded machine only sleeps longer, which posts fewer.
	 */
	assert_true(out.msgs >= 1);
	assert_true(out.msgs <= 50 + 64 + 128 + 1);
	assert_int_equal(d->seq[0], out.msgs);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signal_rule_never_stalls),
		cmocka_unit_test(test_pattern),
		cmocka_unit_test(test_peak_bursty_cq),
		cmocka_unit_test(test_peak_short_is_the_repeat),
		cmocka_unit_test(test_peak_windows),
		cmocka_unit_test(test_validate_lost_message),
		cmocka_unit_test(test_duration_mode),
		cmocka_unit_test(test_duration_slow_posts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
