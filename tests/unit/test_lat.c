#include "cmocka_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "lat_loop.h"
#include "stats.h"

#include "sim_verbs.h"
#include "sim_conn.h"

/*
 * The latency engine over the simulated device, in loopback: our message
 * lands in our own buffer (host: the polled byte; GPU: an immediate on our
 * own receive CQ), so a run measures the engine's own round trip.
 */
struct rig {
	struct sim *d;
	struct gdr_conn c;
	struct rdma_cm_id id;
	struct ibv_mr mr;
	uint8_t ctrl[4096];
	uint8_t src[4096], dst[4096];
};

static void rig_init(struct rig *g, uint64_t ns_per_msg)
{
	memset(g, 0, sizeof(*g));
	g->d = sim_new(ns_per_msg, 1);
	sim_conn_wire(&g->c, g->d, &g->id, &g->mr, g->ctrl);
	strcpy(g->c.peer, "sim");
}

static struct gdr_lat_cfg cfg_for(struct rig *g, int write, int imm, uint32_t size)
{
	struct gdr_lat_cfg cfg = {
		.write = write,
		.initiator = 1,
		.imm = imm,
		.size = size,
		.iters = 200,
		.warmup = 5,
		.laddr = (uintptr_t)(write ? g->src : g->dst),
		.raddr = (uintptr_t)(write ? g->dst : g->src),
		.stall_timeout = 5,
	};

	if (write && !imm) {
		cfg.src_last = &g->src[size - 1];
		cfg.dst_last = &g->dst[size - 1];
	}
	return cfg;
}

static void test_write_poll_and_imm(void **state)
{
	struct rig g;
	double us[200];
	char why[256];
	struct gdr_lat_stats st;

	(void)state;
	for (int imm = 0; imm <= 1; imm++) {
		rig_init(&g, 20000); /* 20 us per message on the simulated link */
		struct gdr_lat_cfg cfg = cfg_for(&g, 1, imm, 64);

		memset(us, 0, sizeof(us));
		assert_int_equal(gdr_lat_run(&g.c, &cfg, us, why, sizeof(why)), 0);
		assert_int_equal(gdr_lat_stats_compute(us, 200, &st), 0);
		/*
		 * Loopback: the answer lands at post time, but each message first
		 * waits for the previous one's completion, 20 us after its post:
		 * most samples are about half of that.
		 */
		assert_true(st.min > 0 && st.max >= st.p50);
		assert_true(st.p50 >= 5.0);
		assert_int_equal(g.d->seq[0], 205); /* warmup + iters messages */
		/* imm: every receive slot taken was given back. */
		assert_int_equal(g.d->reposts, imm ? 205 : 0);
		free(g.d);
	}
}

static void test_read(void **state)
{
	struct rig g;
	double us[200];
	char why[256];

	(void)state;
	rig_init(&g, 5000);
	struct gdr_lat_cfg cfg = cfg_for(&g, 0, 0, 4096);

	memset(g.src, 0x5a, sizeof(g.src));
	assert_int_equal(gdr_lat_run(&g.c, &cfg, us, why, sizeof(why)), 0);
	for (int i = 0; i < 200; i++)
		assert_true(us[i] >= 5.0); /* post to completion: one link time at least */
	assert_int_equal(g.dst[4095], 0x5a);
	free(g.d);
}

/* A control message where an immediate was expected: a protocol error, named. */
static void test_control_message_instead(void **state)
{
	struct rig g;
	double us[200];
	char why[256];

	(void)state;
	rig_init(&g, 1000);
	g.d->answer_ctrl = 1;
	struct gdr_lat_cfg cfg = cfg_for(&g, 1, 1, 64);
	assert_int_equal(gdr_lat_run(&g.c, &cfg, us, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "a control message"));
	free(g.d);
}

/* A peer that never answers: the stall timeout, not a hang. */
static void test_silent_peer(void **state)
{
	struct rig g;
	double us[200];
	char why[256];

	(void)state;
	for (int imm = 0; imm <= 1; imm++) {
		rig_init(&g, 1000);
		g.d->mute = 1;
		struct gdr_lat_cfg cfg = cfg_for(&g, 1, imm, 64);
		cfg.stall_timeout = 0.3;
		assert_int_equal(gdr_lat_run(&g.c, &cfg, us, why, sizeof(why)), -ETIMEDOUT);
		assert_non_null(strstr(why, "no "));
		free(g.d);
	}
}

static void test_stamp(void **state)
{
	uint8_t s = 0;

	(void)state;
	for (int i = 0; i < 1000; i++) {
		uint8_t n = gdr_lat_stamp(s);
		assert_true(n != 0 && n != s);
		s = n;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_poll_and_imm),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_control_message_instead),
		cmocka_unit_test(test_silent_peer),
		cmocka_unit_test(test_stamp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
