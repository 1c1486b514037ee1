/*
 * The control channel (ctl_conn.c) over the simulated device: what a send
 * that never completes says, that a waiting message is left for the reader
 * unless the send has failed, that a receive finds the peer's last
 * message although the peer has disconnected since, and what a send whose
 * peer disconnected before it completed comes to (a BYE: delivered).
 */
#include "cmocka_common.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "proto.h"

#include "sim_verbs.h"
#include "sim_conn.h"

struct rig {
	struct sim *d;
	struct gdr_conn c;
	struct rdma_cm_id id;
	struct ibv_mr mr;
	uint8_t ctrl[(1 + GDR_CTRL_SLOTS) * GDR_CTRL_MAX];
};

static struct rig *rig_new(int mute)
{
	struct rig *g = calloc(1, sizeof(*g));

	assert_non_null(g);
	g->d = sim_new(1000, 1);
	g->d->mute = mute;
	sim_conn_wire(&g->c, g->d, &g->id, &g->mr, g->ctrl);
	g->c.timeout = 0.3;
	strcpy(g->c.peer, "10.0.0.2");
	return g;
}

static void rig_free(struct rig *g)
{
	free(g->d);
	free(g);
}

/* The peer's message m has landed in receive slot `slot`. */
static void arrive(struct rig *g, unsigned int slot, const struct gdr_msg *m)
{
	int n = gdr_msg_encode(m, gdr_conn_slot(&g->c, slot), GDR_CTRL_MAX);
	struct ibv_wc *w = &g->d->rwc[g->d->rtail++ % 64];

	assert_true(n > 0);
	memset(w, 0, sizeof(*w));
	w->status = IBV_WC_SUCCESS;
	w->opcode = IBV_WC_RECV;
	w->wr_id = slot;
	w->byte_len = (uint32_t)n;
}

static const struct gdr_msg plan = { .type = GDR_MSG_PLAN };

static struct gdr_msg error_msg(int code, const char *text)
{
	struct gdr_msg m = { .type = GDR_MSG_ERROR };

	m.u.error.code = code;
	strcpy(m.u.error.text, text);
	return m;
}

/*
 * The server refused the PLAN, said why and closed; the PLAN's own
 * completion never came (its acknowledgement was lost): the server's reason,
 * not "no completion".
 */
static void test_peer_error_beats_timeout(void **state)
{
	struct rig *g = rig_new(1);
	struct gdr_msg err = error_msg(-EINVAL, "plan mismatch: -n/--iters: server has 10, "
						"client asks 20");
	char why[512];

	(void)state;
	arrive(g, 3, &err);
	assert_int_equal(gdr_ctrl_send(&g->c, &plan, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "10.0.0.2: plan mismatch: -n/--iters: server has 10"));
	assert_non_null(strstr(why, "PLAN"));
	rig_free(g);
}

/* A peer code that is not a negative errno is not passed on as one. */
static void test_peer_error_odd_code(void **state)
{
	struct rig *g = rig_new(1);
	struct gdr_msg err = error_msg(0, "gave up");
	char why[512];

	(void)state;
	arrive(g, 0, &err);
	assert_int_equal(gdr_ctrl_send(&g->c, &plan, why, sizeof(why)), -EIO);
	assert_non_null(strstr(why, "gave up"));
	rig_free(g);
}

/* Nothing from the peer, or only a message that is not an ERROR: the timeout, named. */
static void test_timeout_without_error(void **state)
{
	char why[512];

	(void)state;
	for (int with_ack = 0; with_ack <= 1; with_ack++) {
		struct rig *g = rig_new(1);
		struct gdr_msg ack = { .type = GDR_MSG_ACK };

		if (with_ack)
			arrive(g, 1, &ack);
		assert_int_equal(gdr_ctrl_send(&g->c, &plan, why, sizeof(why)), -ETIMEDOUT);
		assert_non_null(strstr(why, "sending PLAN to 10.0.0.2: no completion within"));
		rig_free(g);
	}
}

/*
 * A send that completes leaves what the receive CQ holds to the reader (a
 * bounce or latency loop takes its own receives): nothing is consumed.
 */
static void test_completed_send_leaves_receives(void **state)
{
	struct rig *g = rig_new(0);
	struct gdr_msg err = error_msg(-EIO, "not for the sender");
	char why[512];

	(void)state;
	arrive(g, 2, &err);
	assert_int_equal(gdr_ctrl_send(&g->c, &plan, why, sizeof(why)), 0);
	assert_int_equal(g->d->rhead, 0);
	assert_int_equal(g->d->rtail, 1);
	rig_free(g);
}

/*
 * The client's BYE landed and the client disconnected, both after the
 * server's last empty poll of its receive CQ: the BYE, not "disconnected".
 */
static void test_last_message_beats_disconnect(void **state)
{
	struct rig *g = rig_new(0);
	struct gdr_msg bye = { .type = GDR_MSG_BYE }, m;
	char why[512] = "";

	(void)state;
	arrive(g, 1, &bye);
	g->d->rlate = 2; /* the poll before arming and the one after it */
	g->c.peer_gone = 1;
	assert_int_equal(gdr_ctrl_recv(&g->c, &m, 5, why, sizeof(why)), 0);
	assert_int_equal(m.type, GDR_MSG_BYE);
	assert_int_equal(g->d->reposts, 1);
	rig_free(g);
}

/* Gone with nothing left on the CQ: "disconnected" at once, not the timeout. */
static void test_disconnect_with_nothing_left(void **state)
{
	struct rig *g = rig_new(0);
	struct gdr_msg m;
	char why[512] = "";
	double t0 = gdr_now_s();

	(void)state;
	g->c.peer_gone = 1;
	assert_int_equal(gdr_ctrl_recv(&g->c, &m, 5, why, sizeof(why)), -ECONNRESET);
	assert_non_null(strstr(why, "peer 10.0.0.2 disconnected"));
	assert_true(gdr_now_s() - t0 < 4);
	rig_free(g);
}

/*
 * The server took our BYE and disconnected; the BYE's acknowledgement was
 * lost and rxe resends it forever (mute: no completion ever). The plan is
 * finished: delivered, at once, not "no completion" after --timeout.
 */
static void test_bye_counts_delivered_on_clean_disconnect(void **state)
{
	struct rig *g = rig_new(1);
	struct gdr_msg bye = { .type = GDR_MSG_BYE };
	char why[512] = "";
	double t0 = gdr_now_s();

	(void)state;
	g->c.timeout = 30;
	g->c.peer_gone = 1;
	assert_int_equal(gdr_ctrl_send(&g->c, &bye, why, sizeof(why)), 0);
	assert_true(gdr_now_s() - t0 < 10);
	rig_free(g);
}

/* ... unless the server gave up on it first and said why: its reason. */
static void test_bye_gets_peer_error_on_disconnect(void **state)
{
	struct rig *g = rig_new(1);
	struct gdr_msg bye = { .type = GDR_MSG_BYE };
	struct gdr_msg err = error_msg(-ETIMEDOUT, "no message from 10.0.0.1 within 3 s");
	char why[512] = "";
	double t0 = gdr_now_s();

	(void)state;
	arrive(g, 2, &err);
	g->c.timeout = 30;
	g->c.peer_gone = 1;
	assert_int_equal(gdr_ctrl_send(&g->c, &bye, why, sizeof(why)), -ETIMEDOUT);
	assert_non_null(strstr(why, "10.0.0.2: no message from 10.0.0.1 within 3 s"));
	assert_true(gdr_now_s() - t0 < 10);
	rig_free(g);
}

/* Any other message to a peer that left: it will not be answered; said at once. */
static void test_other_send_fails_on_disconnect(void **state)
{
	struct rig *g = rig_new(1);
	char why[512] = "";
	double t0 = gdr_now_s();

	(void)state;
	g->c.timeout = 30;
	g->c.peer_gone = 1;
	assert_int_equal(gdr_ctrl_send(&g->c, &plan, why, sizeof(why)), -ECONNRESET);
	assert_non_null(strstr(why, "peer 10.0.0.2 disconnected before our PLAN completed"));
	assert_true(gdr_now_s() - t0 < 10);
	rig_free(g);
}

/* A send that completes is done, gone peer or not. */
static void test_completed_send_beats_disconnect(void **state)
{
	struct rig *g = rig_new(0);
	char why[512] = "";

	(void)state;
	g->c.peer_gone = 1;
	assert_int_equal(gdr_ctrl_send(&g->c, &plan, why, sizeof(why)), 0);
	rig_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peer_error_beats_timeout),
		cmocka_unit_test(test_peer_error_odd_code),
		cmocka_unit_test(test_timeout_without_error),
		cmocka_unit_test(test_completed_send_leaves_receives),
		cmocka_unit_test(test_last_message_beats_disconnect),
		cmocka_unit_test(test_disconnect_with_nothing_left),
		cmocka_unit_test(test_bye_counts_delivered_on_clean_disconnect),
		cmocka_unit_test(test_bye_gets_peer_error_on_disconnect),
		cmocka_unit_test(test_other_send_fails_on_disconnect),
		cmocka_unit_test(test_completed_send_beats_disconnect),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
