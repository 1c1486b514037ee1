/*
 * The bounce pipeline's state machine (common/mem/bounce_sm.c), scripted:
 * ring spans, what init refuses, lock-step and batched credits, the READ
 * warm-up barrier, the plan check, and hostile peer input (announces,
 * credits, end notices). test_bounce_sim.c drives it in random orders.
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

/* End notices nobody may send, or that point where the peer cannot be. */
static void test_hostile_end(void **state)
{
	struct gdr_bounce_sm cs, p;
	char why[256];
	uint64_t c, v;

	(void)state;
	/* Outside duration mode. */
	assert_int_equal(gdr_bounce_sm_init(&cs, 1, 0, 8192, 4096, 4, 8, 0, 0, 3), 0);
	assert_int_equal(gdr_bounce_sm_peer_end(&cs, 2, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "outside duration mode"));
	assert_int_equal(gdr_bounce_sm_close(&cs), -EALREADY);
	/* WRITE consumer, 2 chunks a message, 4 slots: not a boundary, before the
	 * announced chunks, beyond a ring, or twice. */
	assert_int_equal(gdr_bounce_sm_open(&cs), 0);
	assert_int_equal(gdr_bounce_sm_open(&cs), -EINVAL);
	/* Open: one at a time, the end notice's DONE may follow it. */
	assert_int_equal(gdr_bounce_sm_receives(&cs, 16), 1);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(gdr_bounce_sm_announce(&cs, i, why, sizeof(why)), 0);
	assert_int_equal(gdr_bounce_sm_peer_end(&cs, 5, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "end notice at chunk 5"));
	assert_int_equal(gdr_bounce_sm_peer_end(&cs, 2, why, sizeof(why)), -EPROTO);
	assert_int_equal(gdr_bounce_sm_peer_end(&cs, 12, why, sizeof(why)), -EPROTO);
	assert_int_equal(gdr_bounce_sm_peer_end(&cs, 8, why, sizeof(why)), 0);
	assert_int_equal(cs.total, 8);
	assert_int_equal(gdr_bounce_sm_receives(&cs, 16), 4);
	assert_int_equal(gdr_bounce_sm_peer_end(&cs, 8, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "already known"));
	/* The WRITE producer never receives one. */
	assert_int_equal(gdr_bounce_sm_init(&p, 1, 1, 4096, 4096, 2, 8, 0, 0, 1), 0);
	assert_int_equal(gdr_bounce_sm_open(&p), 0);
	assert_int_equal(gdr_bounce_sm_peer_end(&p, 1, why, sizeof(why)), -EPROTO);
	/* WRITE producer closing after 3 chunks started of 2-chunk messages: ends at 4. */
	assert_int_equal(gdr_bounce_sm_init(&p, 1, 1, 8192, 4096, 4, 8, 0, 0, 1), 0);
	assert_int_equal(gdr_bounce_sm_open(&p), 0);
	for (int i = 0; i < 3; i++) {
		assert_true(gdr_bounce_sm_can_copy(&p, &c));
		gdr_bounce_sm_did_copy(&p);
	}
	assert_int_equal(gdr_bounce_sm_close(&p), 0);
	assert_int_equal(p.total, 4);
	assert_true(gdr_bounce_sm_can_end(&p, &v));
	assert_int_equal(v, 4);
	gdr_bounce_sm_did_end(&p);
	assert_false(gdr_bounce_sm_can_end(&p, &v));
	assert_int_equal(gdr_bounce_sm_end_done(&p, why, sizeof(why)), 0);
	assert_int_equal(gdr_bounce_sm_end_done(&p, why, sizeof(why)), -EPROTO);
	/* READ consumer: the answer must count every ready received, and follow our notice. */
	assert_int_equal(gdr_bounce_sm_init(&cs, 0, 0, 4096, 4096, 4, 8, 0, 0, 1), 0);
	assert_int_equal(gdr_bounce_sm_open(&cs), 0);
	/* It ends the run itself: readies in batches while open. */
	assert_int_equal(gdr_bounce_sm_receives(&cs, 16), 16);
	assert_int_equal(gdr_bounce_sm_announce(&cs, 0, why, sizeof(why)), 0);
	assert_int_equal(gdr_bounce_sm_peer_end(&cs, 1, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "before the end notice"));
	assert_true(gdr_bounce_sm_can_post(&cs, &c));
	gdr_bounce_sm_did_post(&cs);
	assert_int_equal(gdr_bounce_sm_close(&cs), 0);
	assert_int_equal(cs.total, 1);
	assert_true(gdr_bounce_sm_can_end(&cs, &v));
	gdr_bounce_sm_did_end(&cs);
	/* A stray ready past the end is fine until the answer; the answer must count it. */
	assert_int_equal(gdr_bounce_sm_announce(&cs, 1, why, sizeof(why)), 0);
	assert_int_equal(gdr_bounce_sm_receives(&cs, 16), 1);
	assert_int_equal(gdr_bounce_sm_peer_end(&cs, 1, why, sizeof(why)), -EPROTO);
	assert_int_equal(gdr_bounce_sm_peer_end(&cs, 2, why, sizeof(why)), 0);
	assert_int_equal(gdr_bounce_sm_receives(&cs, 16), 0);
	assert_int_equal(gdr_bounce_sm_announce(&cs, 2, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "after the producer's end answer"));
	/* READ producer: the consumer cannot end past what was announced (plus a message). */
	assert_int_equal(gdr_bounce_sm_init(&p, 0, 1, 8192, 4096, 4, 8, 0, 0, 1), 0);
	assert_int_equal(gdr_bounce_sm_open(&p), 0);
	for (int i = 0; i < 2; i++) {
		assert_true(gdr_bounce_sm_can_copy(&p, &c));
		gdr_bounce_sm_did_copy(&p);
		gdr_bounce_sm_copy_done(&p);
		assert_true(gdr_bounce_sm_can_post(&p, &c));
		gdr_bounce_sm_did_post(&p);
	}
	assert_int_equal(gdr_bounce_sm_peer_end(&p, 6, why, sizeof(why)), -EPROTO);
	assert_int_equal(gdr_bounce_sm_peer_end(&p, 4, why, sizeof(why)), 0);
	assert_int_equal(p.last, 4);
	/* A credit beyond the end is refused. */
	assert_int_equal(gdr_bounce_sm_credit(&p, 5, why, sizeof(why)), -EPROTO);
}

static void test_span(void **state)
{
	struct gdr_bounce_sm sm;
	uint64_t off, len;
	unsigned int slot;

	(void)state;
	/* 10000 B in 4 KiB chunks: 4096, 4096, 1808; the next message starts at 0 again. */
	assert_int_equal(gdr_bounce_sm_init(&sm, 1, 1, 10000, 4096, 2, 4, 0, 0, 2), 0);
	assert_int_equal(sm.cpm, 3);
	assert_int_equal(sm.total, 6);
	gdr_bounce_sm_span(&sm, 2, &off, &len, &slot);
	assert_int_equal(off, 8192);
	assert_int_equal(len, 1808);
	assert_int_equal(slot, 0);
	gdr_bounce_sm_span(&sm, 3, &off, &len, &slot);
	assert_int_equal(off, 0);
	assert_int_equal(len, 4096);
	assert_int_equal(slot, 1);
	/* A multiple of the chunk: no empty tail chunk. */
	assert_int_equal(gdr_bounce_sm_init(&sm, 1, 1, 12288, 4096, 2, 4, 0, 0, 1), 0);
	assert_int_equal(sm.cpm, 3);
	gdr_bounce_sm_span(&sm, 2, &off, &len, &slot);
	assert_int_equal(off, 8192);
	assert_int_equal(len, 4096);
	/* Chunk larger than the message: one short chunk. */
	assert_int_equal(gdr_bounce_sm_init(&sm, 0, 0, 100, 4096, 2, 4, 0, 1, 1), 0);
	assert_int_equal(sm.cpm, 1);
	assert_int_equal(sm.barrier, 1);
	gdr_bounce_sm_span(&sm, 1, &off, &len, &slot);
	assert_int_equal(off, 0);
	assert_int_equal(len, 100);
}

static void test_init_rejects(void **state)
{
	struct gdr_bounce_sm sm;

	(void)state;
	assert_int_equal(gdr_bounce_sm_init(&sm, 1, 1, 0, 4096, 2, 4, 0, 0, 1), -EINVAL);
	assert_int_equal(gdr_bounce_sm_init(&sm, 1, 1, 4096, 0, 2, 4, 0, 0, 1), -EINVAL);
	assert_int_equal(gdr_bounce_sm_init(&sm, 1, 1, 4096, 4096, 0, 4, 0, 0, 1), -EINVAL);
	assert_int_equal(gdr_bounce_sm_init(&sm, 1, 1, 4096, 4096, 2, 0, 0, 0, 1), -EINVAL);
	assert_int_equal(gdr_bounce_sm_init(&sm, 1, 1, 4096, 4096, 2, 4, 0, 0, 0), -EINVAL);
	/* Chunk counts that do not fit 64 bits. */
	assert_int_equal(gdr_bounce_sm_init(&sm, 1, 1, 1ull << 30, 4096, 2, 4, 0, 0, 1ull << 50),
			 -EINVAL);
	assert_int_equal(gdr_bounce_sm_init(&sm, 1, 1, 4096, 4096, 2, 4, UINT64_MAX - 1, 0, 2),
			 -EINVAL);
	assert_int_equal(gdr_bounce_sm_init(&sm, 1, 1, 4096, 4096, 2, 4, 0, UINT64_MAX, 2),
			 -EINVAL);
}

/* A 1-slot ring is lock-step: copy, WRITE, completion and credit before the next copy. */
static void test_one_slot_write(void **state)
{
	struct gdr_bounce_sm p;
	char why[200];
	uint64_t c;

	(void)state;
	assert_int_equal(gdr_bounce_sm_init(&p, 1, 1, 8192, 4096, 1, 8, 0, 0, 1), 0);
	assert_true(gdr_bounce_sm_can_copy(&p, &c));
	assert_int_equal(c, 0);
	gdr_bounce_sm_did_copy(&p);
	assert_false(gdr_bounce_sm_can_copy(&p, &c)); /* slot busy */
	assert_false(gdr_bounce_sm_can_post(&p, &c)); /* copy not done */
	gdr_bounce_sm_copy_done(&p);
	assert_true(gdr_bounce_sm_can_post(&p, &c));
	gdr_bounce_sm_did_post(&p);
	assert_false(gdr_bounce_sm_can_copy(&p, &c)); /* the WRITE still reads the slot */
	assert_int_equal(gdr_bounce_sm_post_done(&p, why, sizeof(why)), 0);
	assert_true(gdr_bounce_sm_can_copy(&p, &c));
	assert_int_equal(c, 1);
	gdr_bounce_sm_did_copy(&p);
	gdr_bounce_sm_copy_done(&p);
	assert_false(gdr_bounce_sm_can_post(&p, &c)); /* no credit for the consumer's slot */
	assert_int_equal(gdr_bounce_sm_credit(&p, 1, why, sizeof(why)), 0);
	assert_true(gdr_bounce_sm_can_post(&p, &c));
	assert_int_equal(c, 1);
	gdr_bounce_sm_did_post(&p);
	assert_false(gdr_bounce_sm_finished(&p));
	assert_int_equal(gdr_bounce_sm_post_done(&p, why, sizeof(why)), 0);
	assert_false(gdr_bounce_sm_finished(&p)); /* the last credit is the end */
	assert_int_equal(gdr_bounce_sm_credit(&p, 2, why, sizeof(why)), 0);
	assert_true(gdr_bounce_sm_finished(&p));
	assert_int_equal(gdr_bounce_sm_delivered(&p), 2);
}

/* 8 slots: credits every 2 chunks, and always at the end and at the warm-up boundary. */
static void test_credit_batching(void **state)
{
	struct gdr_bounce_sm cs;
	char why[200];
	uint64_t c, v;

	(void)state;
	/* 1 warm-up message of 3 chunks, 2 timed ones. */
	assert_int_equal(gdr_bounce_sm_init(&cs, 1, 0, 12288, 4096, 8, 64, 0, 1, 2), 0);
	assert_int_equal(cs.batch, 2);
	for (uint32_t i = 0; i < 9; i++)
		assert_int_equal(gdr_bounce_sm_announce(&cs, i, why, sizeof(why)),
				 i < 8 ? 0 : -EPROTO);
	while (gdr_bounce_sm_can_copy(&cs, &c))
		gdr_bounce_sm_did_copy(&cs);
	assert_int_equal(cs.copy_issued, 8);
	gdr_bounce_sm_copy_done(&cs);
	assert_false(gdr_bounce_sm_can_credit(&cs, &v)); /* 1 < batch */
	gdr_bounce_sm_copy_done(&cs);
	assert_true(gdr_bounce_sm_can_credit(&cs, &v));
	assert_int_equal(v, 2);
	gdr_bounce_sm_did_credit(&cs, v);
	gdr_bounce_sm_copy_done(&cs);
	/* Chunk 3 completes the warm-up: credited at once. */
	assert_true(gdr_bounce_sm_can_credit(&cs, &v));
	assert_int_equal(v, 3);
	gdr_bounce_sm_did_credit(&cs, v);
	assert_true(gdr_bounce_sm_timed_started(&cs));
	for (int i = 0; i < 5; i++)
		gdr_bounce_sm_copy_done(&cs);
	assert_true(gdr_bounce_sm_can_credit(&cs, &v));
	assert_int_equal(v, 8);
	gdr_bounce_sm_did_credit(&cs, v);
	assert_int_equal(gdr_bounce_sm_announce(&cs, 8, why, sizeof(why)), 0);
	gdr_bounce_sm_did_copy(&cs);
	gdr_bounce_sm_copy_done(&cs);
	/* The last chunk: credited although below the batch. */
	assert_true(gdr_bounce_sm_can_credit(&cs, &v));
	assert_int_equal(v, 9);
	gdr_bounce_sm_did_credit(&cs, v);
	assert_false(gdr_bounce_sm_finished(&cs)); /* four credits (2, 3, 8, 9) in flight */
	for (int i = 0; i < 4; i++)
		assert_int_equal(gdr_bounce_sm_credit_done(&cs, why, sizeof(why)), 0);
	assert_true(gdr_bounce_sm_finished(&cs));
	assert_int_equal(gdr_bounce_sm_credit_done(&cs, why, sizeof(why)), -EPROTO);
}

static void test_hostile_announce(void **state)
{
	struct gdr_bounce_sm cs, p;
	char why[256];

	(void)state;
	assert_int_equal(gdr_bounce_sm_init(&cs, 1, 0, 4096, 4096, 4, 8, 0, 0, 3), 0);
	/* Out of sequence: a skipped or repeated chunk. */
	assert_int_equal(gdr_bounce_sm_announce(&cs, 1, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "expected chunk 0"));
	assert_int_equal(gdr_bounce_sm_announce(&cs, 0xffffffffu, why, sizeof(why)), -EPROTO);
	assert_int_equal(gdr_bounce_sm_announce(&cs, 0, why, sizeof(why)), 0);
	assert_int_equal(gdr_bounce_sm_announce(&cs, 0, why, sizeof(why)), -EPROTO);
	assert_int_equal(gdr_bounce_sm_announce(&cs, 1, why, sizeof(why)), 0);
	assert_int_equal(gdr_bounce_sm_announce(&cs, 2, why, sizeof(why)), 0);
	/* Past the end of the run. */
	assert_int_equal(gdr_bounce_sm_announce(&cs, 3, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "after the last of 3 chunks"));

	/* A producer that ignores credits overruns the ring. */
	assert_int_equal(gdr_bounce_sm_init(&cs, 0, 0, 4096, 4096, 2, 8, 0, 0, 10), 0);
	assert_int_equal(gdr_bounce_sm_announce(&cs, 0, why, sizeof(why)), 0);
	assert_int_equal(gdr_bounce_sm_announce(&cs, 1, why, sizeof(why)), 0);
	assert_int_equal(gdr_bounce_sm_announce(&cs, 2, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "overran"));

	/* Announcements are for consumers only. */
	assert_int_equal(gdr_bounce_sm_init(&p, 1, 1, 4096, 4096, 2, 8, 0, 0, 10), 0);
	assert_int_equal(gdr_bounce_sm_announce(&p, 0, why, sizeof(why)), -EPROTO);
}

static void test_hostile_credit(void **state)
{
	struct gdr_bounce_sm p, cs;
	char why[256];
	uint64_t c;

	(void)state;
	assert_int_equal(gdr_bounce_sm_init(&p, 1, 1, 4096, 4096, 4, 8, 0, 0, 10), 0);
	/* Nothing sent yet: no credit can be due. */
	assert_int_equal(gdr_bounce_sm_credit(&p, 1, why, sizeof(why)), -EPROTO);
	for (int i = 0; i < 3; i++) {
		assert_true(gdr_bounce_sm_can_copy(&p, &c));
		gdr_bounce_sm_did_copy(&p);
		gdr_bounce_sm_copy_done(&p);
		assert_true(gdr_bounce_sm_can_post(&p, &c));
		gdr_bounce_sm_did_post(&p);
	}
	assert_int_equal(gdr_bounce_sm_credit(&p, 4, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "3 sent"));
	assert_int_equal(gdr_bounce_sm_credit(&p, 0, why, sizeof(why)), -EPROTO); /* no-op */
	assert_int_equal(gdr_bounce_sm_credit(&p, 0x80000000u, why, sizeof(why)), -EPROTO);
	assert_int_equal(gdr_bounce_sm_credit(&p, 0xffffffffu, why, sizeof(why)), -EPROTO);
	assert_int_equal(gdr_bounce_sm_credit(&p, 2, why, sizeof(why)), 0);
	assert_int_equal(gdr_bounce_sm_credit(&p, 1, why, sizeof(why)), -EPROTO); /* backwards */
	assert_int_equal(gdr_bounce_sm_credit(&p, 3, why, sizeof(why)), 0);
	assert_int_equal(p.peer, 3);
	/* Completions nobody posted. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(gdr_bounce_sm_post_done(&p, why, sizeof(why)), 0);
	assert_int_equal(gdr_bounce_sm_post_done(&p, why, sizeof(why)), -EPROTO);
	/* Credits are for producers only. */
	assert_int_equal(gdr_bounce_sm_init(&cs, 1, 0, 4096, 4096, 2, 8, 0, 0, 10), 0);
	assert_int_equal(gdr_bounce_sm_credit(&cs, 1, why, sizeof(why)), -EPROTO);
}

/* READ: the warm-up's last credit waits for the consumer's last warm-up copy. */
static void test_read_barrier(void **state)
{
	struct gdr_bounce_sm cs;
	char why[256];
	uint64_t c, v;

	(void)state;
	assert_int_equal(gdr_bounce_sm_init(&cs, 0, 0, 4096, 4096, 4, 8, 0, 2, 2), 0);
	assert_int_equal(gdr_bounce_sm_announce(&cs, 0, why, sizeof(why)), 0);
	assert_int_equal(gdr_bounce_sm_announce(&cs, 1, why, sizeof(why)), 0);
	for (int i = 0; i < 2; i++) {
		assert_true(gdr_bounce_sm_can_post(&cs, &c));
		gdr_bounce_sm_did_post(&cs);
		assert_int_equal(gdr_bounce_sm_post_done(&cs, why, sizeof(why)), 0);
	}
	/* Both READs done, copies not: only chunk 0's credit may go. */
	assert_true(gdr_bounce_sm_can_credit(&cs, &v));
	assert_int_equal(v, 1);
	gdr_bounce_sm_did_credit(&cs, v);
	assert_false(gdr_bounce_sm_can_credit(&cs, &v));
	assert_false(gdr_bounce_sm_timed_started(&cs));
	while (gdr_bounce_sm_can_copy(&cs, &c))
		gdr_bounce_sm_did_copy(&cs);
	gdr_bounce_sm_copy_done(&cs);
	gdr_bounce_sm_copy_done(&cs);
	assert_true(gdr_bounce_sm_timed_started(&cs));
	assert_true(gdr_bounce_sm_can_credit(&cs, &v));
	assert_int_equal(v, 2);
}

static void test_plan_check(void **state)
{
	char why[200];

	(void)state;
	assert_int_equal(gdr_bounce_plan_check(0, 262144, 1u << 31, why, sizeof(why)), 0);
	assert_int_equal(gdr_bounce_plan_check(1, 262144, 0, why, sizeof(why)), -EOPNOTSUPP);
	assert_non_null(strstr(why, "-b/--bidirectional"));
	assert_int_equal(gdr_bounce_plan_check(0, 1u << 20, 65536, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "max_msg_sz"));
}

/*
 * Bounce on one side only (issue 48): the side that stages runs the pipeline
 * alone against a passive peer whose buffer is registered directly (a WRITE
 * producer, a READ consumer). Driven in random orders with in-order copy and
 * send completions: it never waits for the peer (no receives, credits or
 * end notices), never reuses a staging slot before the chunk in it is done
 * with, starts no timed chunk before the warm-up is delivered, and finishes
 * with every chunk delivered, in iteration and in duration mode.
 */
static void alone(int write, uint64_t size, uint64_t chunk, unsigned int slots, uint64_t warmup,
		  uint64_t iters, int duration, unsigned int seed)
{
	struct gdr_bounce_sm sm;
	uint64_t slot[16], copying = 0, c, v, steps = 0;
	unsigned int ncopy = 0, r = seed;
	char why[256];

	assert_true(slots <= 16);
	for (unsigned int i = 0; i < slots; i++)
		slot[i] = UINT64_MAX;
	assert_int_equal(
	    gdr_bounce_sm_init(&sm, write, write, size, chunk, slots, 4, 0, warmup, iters), 0);
	gdr_bounce_sm_passive_peer(&sm);
	if (duration)
		assert_int_equal(gdr_bounce_sm_open(&sm), 0);
	while (!gdr_bounce_sm_finished(&sm)) {
		assert_true(++steps < 1000000);
		assert_int_equal(gdr_bounce_sm_receives(&sm, 16), 0);
		assert_false(gdr_bounce_sm_can_credit(&sm, &v));
		assert_false(gdr_bounce_sm_can_end(&sm, &v));
		r = r * 1103515245u + 12345u;
		switch ((r >> 16) % 5) {
		case 0: /* a copy starts: D2H before the WRITE, H2D after the READ */
			if (!gdr_bounce_sm_can_copy(&sm, &c))
				break;
			if (write) {
				/* The slot's last chunk went out: its WRITE completed. */
				assert_true(slot[c % slots] == UINT64_MAX ||
					    slot[c % slots] < sm.completed);
				/* No timed chunk before the warm-up is in the peer's memory. */
				assert_true(c < sm.barrier || sm.completed >= sm.barrier);
			} else {
				assert_int_equal(slot[c % slots], c); /* read in, not yet copied */
			}
			gdr_bounce_sm_did_copy(&sm);
			ncopy++;
			break;
		case 1: /* the oldest copy completes (one stream) */
			if (!ncopy)
				break;
			if (write)
				slot[copying % slots] = copying;
			else
				slot[copying % slots] = UINT64_MAX;
			copying++;
			ncopy--;
			gdr_bounce_sm_copy_done(&sm);
			break;
		case 2: /* a WRITE from a staged slot, or a READ into a free one */
			if (!gdr_bounce_sm_can_post(&sm, &c))
				break;
			if (write) {
				assert_int_equal(slot[c % slots], c);
			} else {
				assert_true(slot[c % slots] == UINT64_MAX);
				assert_true(c < sm.barrier || sm.copy_done >= sm.barrier);
			}
			gdr_bounce_sm_did_post(&sm);
			break;
		case 3: /* the oldest WRITE or READ completes */
			if (sm.completed == sm.posted)
				break;
			if (!write)
				slot[sm.completed % slots] = sm.completed;
			assert_int_equal(gdr_bounce_sm_post_done(&sm, why, sizeof(why)), 0);
			break;
		default: /* duration mode: the timed side ends the run */
			if (duration && sm.open && sm.posted > sm.barrier + 3)
				assert_int_equal(gdr_bounce_sm_close(&sm), 0);
			break;
		}
	}
	assert_false(sm.open);
	assert_int_equal((sm.total - sm.barrier) % sm.cpm, 0);
	assert_true(sm.total > sm.barrier);
	if (!duration)
		assert_int_equal(sm.total, (warmup + iters) * sm.cpm);
	assert_int_equal(gdr_bounce_sm_delivered(&sm), sm.total);
	assert_int_equal(sm.posted, sm.total);
	assert_int_equal(sm.completed, sm.total);
	assert_int_equal(sm.copy_done, sm.total);
	assert_int_equal(sm.credited, 0); /* no credit ever went out */
}

static void test_passive_peer(void **state)
{
	(void)state;
	for (unsigned int seed = 1; seed <= 40; seed++) {
		alone(1, 12288, 4096, 2, 2, 5, 0, seed); /* WRITE: 3 chunks a message, 2 slots */
		alone(0, 12288, 4096, 2, 2, 5, 0, seed); /* READ */
		alone(1, 10000, 4096, 1, 1, 3, 0, seed); /* a partial last chunk, 1 slot */
		alone(0, 4096, 4096, 3, 0, 7, 0, seed);	 /* no warm-up */
		alone(1, 8192, 4096, 4, 2, 1, 1, seed);	 /* duration mode */
		alone(0, 8192, 4096, 4, 2, 1, 1, seed);
	}
}

/* Without a passive peer the same consumer waits for the producer's readies. */
static void test_passive_peer_needed(void **state)
{
	struct gdr_bounce_sm sm;
	uint64_t c;

	(void)state;
	assert_int_equal(gdr_bounce_sm_init(&sm, 0, 0, 4096, 4096, 2, 4, 0, 0, 2), 0);
	assert_false(gdr_bounce_sm_can_post(&sm, &c));
	assert_int_equal(gdr_bounce_sm_receives(&sm, 16), 2);
	gdr_bounce_sm_passive_peer(&sm);
	assert_true(gdr_bounce_sm_can_post(&sm, &c));
	assert_int_equal(c, 0);
	assert_int_equal(gdr_bounce_sm_receives(&sm, 16), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span),
		cmocka_unit_test(test_init_rejects),
		cmocka_unit_test(test_one_slot_write),
		cmocka_unit_test(test_credit_batching),
		cmocka_unit_test(test_read_barrier),
		cmocka_unit_test(test_plan_check),
		/* hostile peer input */
		cmocka_unit_test(test_hostile_announce),
		cmocka_unit_test(test_hostile_credit),
		cmocka_unit_test(test_hostile_end),
		cmocka_unit_test(test_passive_peer),
		cmocka_unit_test(test_passive_peer_needed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
