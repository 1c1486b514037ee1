/*
 * The bounce pipeline's state machine (common/mem/bounce_sm.c): a producer and a
 * consumer wired through a simulated QP (two in-order wires, send
 * completions after delivery) and simulated copy streams, driven in random
 * orders, with the staging slots' contents tracked so that any reuse before
 * the protocol allows it shows as a wrong chunk. test_bounce_scripted.c has
 * the scripted cases and hostile peer input.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounce.h"

#define GARBAGE UINT64_MAX
#define EMPTY	(UINT64_MAX - 1)
#define QMAX	4096

struct q {
	uint64_t a[QMAX], b[QMAX];
	int kind[QMAX];
	unsigned int head, n;
};

static void q_push(struct q *q, int kind, uint64_t a, uint64_t b)
{
	unsigned int i = (q->head + q->n) % QMAX;

	assert_true(q->n < QMAX);
	q->kind[i] = kind;
	q->a[i] = a;
	q->b[i] = b;
	q->n++;
}

static void q_pop(struct q *q, int *kind, uint64_t *a, uint64_t *b)
{
	assert_true(q->n > 0);
	*kind = q->kind[q->head];
	*a = q->a[q->head];
	*b = q->b[q->head];
	q->head = (q->head + 1) % QMAX;
	q->n--;
}

enum { W_WRITE_IMM, W_READY, W_READ_REQ, W_CREDIT, W_END };
enum { S_POST, S_CREDIT, S_END };

struct side {
	struct gdr_bounce_sm sm;
	uint64_t slot[64]; /* chunk in the staging slot, EMPTY, or GARBAGE mid-copy */
	int pinned[64];	   /* producer/WRITE: a WRITE reads the slot until its completion */
	struct q copies;   /* in flight on the stream: chunk */
	struct q sendc;	   /* send completions to deliver */
	struct q recvc;	   /* receive completions to deliver: kind, imm */
};

struct world {
	struct side p, c;
	struct q to_c, to_p;	 /* wires: kind, chunk/value, slot */
	uint64_t next_delivered; /* consumer's H2D completions must come in sequence */
	int write;
	unsigned int rng;
	/* Duration mode: the timed side closes once this many timed chunks are delivered. */
	int duration;
	uint64_t close_after;
	char why[256];
};

static unsigned int rnd(struct world *w)
{
	w->rng = w->rng * 1103515245u + 12345u;
	return (w->rng >> 16) & 0x7fff;
}

static void world_init(struct world *w, int write, uint64_t size, uint64_t chunk,
		       unsigned int slots, unsigned int sq, uint64_t first, uint64_t warmup,
		       uint64_t iters, unsigned int seed)
{
	memset(w, 0, sizeof(*w));
	w->write = write;
	w->rng = seed;
	assert_int_equal(
	    gdr_bounce_sm_init(&w->p.sm, write, 1, size, chunk, slots, sq, first, warmup, iters),
	    0);
	assert_int_equal(
	    gdr_bounce_sm_init(&w->c.sm, write, 0, size, chunk, slots, sq, first, warmup, iters),
	    0);
	for (unsigned int i = 0; i < 64; i++)
		w->p.slot[i] = w->c.slot[i] = EMPTY;
	w->next_delivered = first;
}

static int slot_of(const struct side *s, uint64_t c)
{
	uint64_t off, len;
	unsigned int slot;

	gdr_bounce_sm_span(&s->sm, c, &off, &len, &slot);
	return (int)slot;
}

/* Each step returns 1 when it did something. */
static int p_issue(struct world *w)
{
	uint64_t c;
	int did = 0;

	while (gdr_bounce_sm_can_copy(&w->p.sm, &c)) {
		int s = slot_of(&w->p, c);

		assert_int_equal(c, w->p.sm.copy_issued);
		/* D2H into a slot a WRITE still reads, or the consumer has not read: caught here or
		 * when the data is looked at. */
		assert_false(w->p.pinned[s]);
		/* Nothing timed starts before the consumer has all of the warm-up. */
		if (c >= w->p.sm.barrier)
			assert_true(w->c.sm.copy_done >= w->c.sm.barrier);
		w->p.slot[s] = GARBAGE;
		q_push(&w->p.copies, 0, c, (uint64_t)s);
		gdr_bounce_sm_did_copy(&w->p.sm);
		did = 1;
	}
	return did;
}

static int copy_complete(struct world *w, struct side *sd)
{
	int kind;
	uint64_t c, s;

	if (!sd->copies.n)
		return 0;
	q_pop(&sd->copies, &kind, &c, &s);
	if (sd == &w->p) {
		w->p.slot[s] = c;
	} else {
		/* H2D read the slot for the whole copy. */
		assert_int_equal(w->c.slot[s], c);
		assert_int_equal(c, w->next_delivered);
		w->next_delivered++;
		w->c.slot[s] = EMPTY;
	}
	gdr_bounce_sm_copy_done(&sd->sm);
	return 1;
}

static int c_issue(struct world *w)
{
	uint64_t c;
	int did = 0;

	while (gdr_bounce_sm_can_copy(&w->c.sm, &c)) {
		int s = slot_of(&w->c, c);

		assert_int_equal(w->c.slot[s], c);
		q_push(&w->c.copies, 0, c, (uint64_t)s);
		gdr_bounce_sm_did_copy(&w->c.sm);
		did = 1;
	}
	return did;
}

static int posts(struct world *w, struct side *sd)
{
	uint64_t c, v;
	int did = 0;

	while (gdr_bounce_sm_can_post(&sd->sm, &c)) {
		int s = slot_of(sd, c);

		assert_true(sd->sm.posted - sd->sm.completed + sd->sm.credits_out < sd->sm.sq_max);
		if (sd == &w->p) {
			assert_int_equal(w->p.slot[s], c); /* the D2H is done */
			if (w->write) {
				w->p.pinned[s] = 1;
				q_push(&w->to_c, W_WRITE_IMM, c, (uint64_t)s);
			} else {
				q_push(&w->to_c, W_READY, c, (uint64_t)s);
			}
		} else {
			q_push(&w->to_p, W_READ_REQ, c, (uint64_t)s);
		}
		gdr_bounce_sm_did_post(&sd->sm);
		did = 1;
	}
	while (gdr_bounce_sm_can_credit(&sd->sm, &v)) {
		assert_false(sd == &w->p);
		assert_true(v > sd->sm.credited);
		q_push(&w->to_p, W_CREDIT, v, 0);
		gdr_bounce_sm_did_credit(&sd->sm, v);
		did = 1;
	}
	while (gdr_bounce_sm_can_end(&sd->sm, &v)) {
		assert_true(w->duration);
		q_push(sd == &w->p ? &w->to_c : &w->to_p, W_END, v, 0);
		gdr_bounce_sm_did_end(&sd->sm);
		did = 1;
	}
	return did;
}

static int deliver_to_c(struct world *w)
{
	int kind;
	uint64_t c, s;

	if (!w->to_c.n)
		return 0;
	q_pop(&w->to_c, &kind, &c, &s);
	if (kind == W_WRITE_IMM) {
		/* The WRITE reads the producer's slot and lands in the consumer's. */
		assert_int_equal(w->p.slot[s], c);
		assert_int_equal(w->c.slot[s], EMPTY);
		w->c.slot[s] = c;
	}
	q_push(&w->c.recvc, kind, c, 0);
	q_push(&w->p.sendc, kind == W_END ? S_END : S_POST, c, 0);
	return 1;
}

static int deliver_to_p(struct world *w)
{
	int kind;
	uint64_t c, s;

	if (!w->to_p.n)
		return 0;
	q_pop(&w->to_p, &kind, &c, &s);
	if (kind == W_READ_REQ) {
		assert_int_equal(w->p.slot[s], c);
		assert_int_equal(w->c.slot[s], EMPTY);
		w->c.slot[s] = c;
		q_push(&w->c.sendc, S_POST, c, 0);
	} else {
		q_push(&w->p.recvc, kind, c, 0);
		q_push(&w->c.sendc, kind == W_END ? S_END : S_CREDIT, c, 0);
	}
	return 1;
}

static int send_complete(struct world *w, struct side *sd)
{
	int kind;
	uint64_t c, junk;

	if (!sd->sendc.n)
		return 0;
	q_pop(&sd->sendc, &kind, &c, &junk);
	if (kind == S_POST) {
		assert_int_equal(c, sd->sm.completed);
		assert_int_equal(gdr_bounce_sm_post_done(&sd->sm, w->why, sizeof(w->why)), 0);
		if (sd == &w->p && w->write)
			w->p.pinned[slot_of(&w->p, c)] = 0;
	} else if (kind == S_END) {
		assert_int_equal(gdr_bounce_sm_end_done(&sd->sm, w->why, sizeof(w->why)), 0);
	} else {
		assert_int_equal(gdr_bounce_sm_credit_done(&sd->sm, w->why, sizeof(w->why)), 0);
	}
	return 1;
}

static int recv_complete(struct world *w, struct side *sd)
{
	int kind;
	uint64_t v, junk;

	if (!sd->recvc.n)
		return 0;
	q_pop(&sd->recvc, &kind, &v, &junk);
	/* Never more receives than the side says the run can still bring. */
	assert_true(gdr_bounce_sm_receives(&sd->sm, 16) > 0);
	if (kind == W_END) {
		if (gdr_bounce_sm_peer_end(&sd->sm, (uint32_t)v, w->why, sizeof(w->why)))
			fail_msg("end notice refused: %s", w->why);
		return 1;
	}
	if (sd == &w->p)
		assert_int_equal(gdr_bounce_sm_credit(&sd->sm, (uint32_t)v, w->why, sizeof(w->why)),
				 0);
	else if (gdr_bounce_sm_announce(&sd->sm, (uint32_t)v, w->why, sizeof(w->why)))
		fail_msg("announce refused: %s", w->why);
	return 1;
}

/* Duration mode: the timed side (WRITE producer, READ consumer) ends the run. */
static int close_timed(struct world *w)
{
	struct side *t = w->write ? &w->p : &w->c;

	if (!w->duration || !t->sm.open ||
	    gdr_bounce_sm_delivered(&t->sm) < t->sm.barrier + w->close_after)
		return 0;
	assert_int_equal(gdr_bounce_sm_close(&t->sm), 0);
	assert_int_equal(gdr_bounce_sm_close(&t->sm), -EALREADY);
	assert_int_equal((t->sm.total - t->sm.first) % t->sm.cpm, 0);
	assert_true(t->sm.total >= t->sm.barrier + t->sm.cpm);
	return 1;
}

/* Random interleaving until both sides are finished; fails on a deadlock. */
static void world_run(struct world *w)
{
	unsigned long steps = 0;

	while (!gdr_bounce_sm_finished(&w->p.sm) || !gdr_bounce_sm_finished(&w->c.sm)) {
		int did = 0;

		/* Try a random action first; if nothing is enabled, try them all in order. */
		for (unsigned int k = 0, first = rnd(w) % 12; k < 12 && !did; k++) {
			switch ((first + k) % 12) {
			case 0:
				did = p_issue(w);
				break;
			case 1:
				did = copy_complete(w, &w->p);
				break;
			case 2:
				did = posts(w, &w->p);
				break;
			case 3:
				did = deliver_to_c(w);
				break;
			case 4:
				did = recv_complete(w, &w->c);
				break;
			case 5:
				did = c_issue(w);
				break;
			case 6:
				did = copy_complete(w, &w->c);
				break;
			case 7:
				did = posts(w, &w->c);
				break;
			case 8:
				did = deliver_to_p(w);
				break;
			case 9:
				did = recv_complete(w, &w->p) || send_complete(w, &w->p);
				break;
			case 10:
				did = send_complete(w, &w->c);
				break;
			case 11:
				did = close_timed(w);
				break;
			}
		}
		if (!did)
			fail_msg("deadlock: P copied %llu posted %llu completed %llu credits %llu; "
				 "C announced %llu copied %llu credited %llu",
				 (unsigned long long)w->p.sm.copy_done,
				 (unsigned long long)w->p.sm.posted,
				 (unsigned long long)w->p.sm.completed,
				 (unsigned long long)w->p.sm.peer, (unsigned long long)w->c.sm.peer,
				 (unsigned long long)w->c.sm.copy_done,
				 (unsigned long long)w->c.sm.credited);
		assert_true(++steps < 10000000);
	}
	assert_int_equal(w->next_delivered, w->c.sm.total);
	/* Both sides agree on where the run ended. */
	assert_int_equal(w->p.sm.total, w->c.sm.total);
	assert_int_equal(w->p.copies.n + w->c.copies.n + w->to_c.n + w->to_p.n, 0);
	assert_int_equal(w->p.sendc.n + w->c.sendc.n + w->p.recvc.n + w->c.recvc.n, 0);
}

/*
 * Every geometry, in random orders. duration: open-ended runs (-D) that the
 * timed side closes after a random number of timed chunks, with the same
 * slot and ordering checks; else runs of 1, 3, 5, 7 messages.
 */
static void sweep(int write, uint64_t first, int duration)
{
	static const uint64_t sizes[] = { 4096, 12288, 10000, 65536, 1 };
	static const unsigned int slots[] = { 1, 2, 3, 4, 8, 16 };
	static const unsigned int sqs[] = { 1, 2, 64 };
	struct world *w = malloc(sizeof(*w));
	unsigned int seed = duration ? 7 : 1;

	assert_non_null(w);
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
		for (size_t sl = 0; sl < sizeof(slots) / sizeof(slots[0]); sl++)
			for (size_t qi = 0; qi < sizeof(sqs) / sizeof(sqs[0]); qi++)
				for (uint64_t warm = 0; warm <= 2; warm += 2)
					for (unsigned int rep = 0; rep < 4; rep++, seed++) {
						world_init(w, write, sizes[si], 4096, slots[sl],
							   sqs[qi], first, warm,
							   duration ? 1 : 1 + rep * 2, seed);
						if (duration) {
							assert_int_equal(
							    gdr_bounce_sm_open(&w->p.sm), 0);
							assert_int_equal(
							    gdr_bounce_sm_open(&w->c.sm), 0);
							w->duration = 1;
							w->close_after = rep * 5 + rnd(w) % 7;
						}
						world_run(w);
						assert_true(w->c.sm.total >=
							    w->c.sm.barrier + w->c.sm.cpm);
					}
	free(w);
}

static void test_duration_random(void **state)
{
	(void)state;
	sweep(1, 0, 1);
	sweep(0, 0, 1);
	sweep(1, (1ull << 32) - 9, 1);
	sweep(0, (1ull << 32) - 3, 1);
}

static void test_write_pipeline_random(void **state)
{
	(void)state;
	sweep(1, 0, 0);
}

static void test_read_pipeline_random(void **state)
{
	(void)state;
	sweep(0, 0, 0);
}

/* Sequence numbers and cumulative credits cross 2^32 in the middle of the run. */
static void test_wraparound(void **state)
{
	(void)state;
	sweep(1, (1ull << 32) - 7, 0);
	sweep(0, (1ull << 32) - 5, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_pipeline_random),
		cmocka_unit_test(test_read_pipeline_random),
		cmocka_unit_test(test_wraparound),
		cmocka_unit_test(test_duration_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
