/*
 * The bounce pipeline's credit and sequence logic (see bounce.h): pure
 * bookkeeping on 64-bit chunk counters, so that every rule is tested without
 * a NIC or a GPU.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bounce.h"

int gdr_bounce_sm_init(struct gdr_bounce_sm *sm, int write, int producer, uint64_t size,
		       uint64_t chunk, unsigned int slots, unsigned int sq_max, uint64_t first,
		       uint64_t warmup, uint64_t iters)
{
	uint64_t cpm, msgs;

	memset(sm, 0, sizeof(*sm));
	if (size == 0 || chunk == 0 || slots == 0 || sq_max == 0 || iters == 0)
		return -EINVAL;
	cpm = size / chunk + (size % chunk != 0);
	msgs = warmup + iters;
	if (msgs < iters || msgs > (UINT64_MAX - first) / cpm)
		return -EINVAL;
	sm->write = !!write;
	sm->producer = !!producer;
	sm->slots = slots;
	sm->batch = slots / 4 ? slots / 4 : 1;
	sm->sq_max = sq_max;
	sm->size = size;
	sm->chunk = chunk;
	sm->cpm = cpm;
	sm->first = first;
	sm->barrier = first + warmup * cpm;
	sm->total = first + msgs * cpm;
	sm->copy_issued = sm->copy_done = first;
	sm->posted = sm->completed = first;
	sm->peer = sm->credited = first;
	return 0;
}

void gdr_bounce_sm_passive_peer(struct gdr_bounce_sm *sm)
{
	sm->passive_peer = 1;
}

void gdr_bounce_sm_span(const struct gdr_bounce_sm *sm, uint64_t c, uint64_t *off, uint64_t *len,
			unsigned int *slot)
{
	uint64_t o = ((c - sm->first) % sm->cpm) * sm->chunk;

	*off = o;
	*len = sm->size - o < sm->chunk ? sm->size - o : sm->chunk;
	*slot = (unsigned int)(c % sm->slots);
}

/* The send completion of a credit or an end notice: one of `out` in flight is done. */
static int one_done(unsigned int *out, const char *what, char *why, size_t wlen)
{
	if (*out == 0) {
		snprintf(why, wlen, "bounce: %s completion with no %s sent", what, what);
		return -EPROTO;
	}
	(*out)--;
	return 0;
}

static uint64_t in_flight(const struct gdr_bounce_sm *sm)
{
	return sm->posted - sm->completed + sm->credits_out + sm->ends_out;
}

/* A READ producer in duration mode posts readies up to `last` once it knows the end. */
static uint64_t post_limit(const struct gdr_bounce_sm *sm)
{
	return !sm->write && sm->producer && sm->duration && !sm->open ? sm->last : sm->total;
}

/* v from a 32-bit imm: the count at or after ref that has those low bits. */
static uint64_t expand(uint64_t ref, uint32_t imm)
{
	return ref + (uint32_t)(imm - (uint32_t)ref);
}

int gdr_bounce_sm_open(struct gdr_bounce_sm *sm)
{
	if (sm->open || sm->duration || sm->copy_issued != sm->first || sm->posted != sm->first ||
	    sm->peer != sm->first)
		return -EINVAL;
	sm->open = sm->duration = 1;
	sm->total = GDR_BOUNCE_OPEN;
	return 0;
}

int gdr_bounce_sm_close(struct gdr_bounce_sm *sm)
{
	/* What this side has started: copies (WRITE producer) or READs (READ consumer). */
	uint64_t started = sm->write ? sm->copy_issued : sm->posted;
	uint64_t end;

	if (!sm->open || sm->producer != sm->write)
		return -EALREADY;
	end = sm->first + ((started - sm->first) + sm->cpm - 1) / sm->cpm * sm->cpm;
	if (end < sm->barrier + sm->cpm)
		end = sm->barrier + sm->cpm;
	sm->total = end;
	sm->open = 0;
	/* A passive peer learns nothing: the run just stops at the boundary. */
	sm->end_tx = sm->passive_peer ? 2 : 1;
	sm->end_rx = sm->passive_peer;
	return 0;
}

int gdr_bounce_sm_can_end(const struct gdr_bounce_sm *sm, uint64_t *value)
{
	if (sm->end_tx != 1 || in_flight(sm) >= sm->sq_max)
		return 0;
	if (!sm->write && sm->producer) {
		/* The answer goes after the last ready: the consumer then has them all. */
		if (sm->posted != sm->last)
			return 0;
		*value = sm->last;
		return 1;
	}
	*value = sm->total;
	return 1;
}

void gdr_bounce_sm_did_end(struct gdr_bounce_sm *sm)
{
	sm->end_tx = 2;
	sm->ends_out++;
}

int gdr_bounce_sm_end_done(struct gdr_bounce_sm *sm, char *why, size_t wlen)
{
	return one_done(&sm->ends_out, "end notice", why, wlen);
}

int gdr_bounce_sm_peer_end(struct gdr_bounce_sm *sm, uint32_t imm, char *why, size_t wlen)
{
	uint64_t v, ref = sm->peer;

	if (!sm->duration || (sm->producer && sm->write)) {
		snprintf(why, wlen, "bounce protocol error: end notice (imm %" PRIu32 ") %s", imm,
			 sm->duration ? "at the WRITE producer" : "outside duration mode");
		return -EPROTO;
	}
	if (!sm->write && !sm->producer) {
		/* READ consumer: the producer's answer, after every ready it posted. */
		if (sm->end_tx != 2 || sm->end_rx || imm != (uint32_t)sm->peer) {
			snprintf(why, wlen,
				 "bounce protocol error: end answer (imm %" PRIu32 ") with %" PRIu64
				 " readies received%s",
				 imm, sm->peer - sm->first,
				 sm->end_tx != 2 ? " before the end notice" : "");
			return -EPROTO;
		}
		sm->end_rx = 1;
		return 0;
	}
	v = expand(ref, imm);
	/*
	 * WRITE consumer: the producer started at most a ring beyond what it
	 * announced, then rounded up to a message. READ producer: the consumer
	 * read only what was announced, then rounded up.
	 */
	uint64_t reach = sm->producer ? sm->posted + sm->cpm : ref + sm->slots + sm->cpm;
	if (!sm->open || (v - sm->first) % sm->cpm || v < sm->barrier + sm->cpm || v > reach) {
		snprintf(why, wlen,
			 "bounce protocol error: end notice at chunk %" PRIu64 " (%s; %" PRIu64
			 " %s, %" PRIu64 " chunks a message)",
			 v - sm->first,
			 sm->open ? "not a message boundary the peer can reach"
				  : "the end is already known",
			 ref - sm->first, sm->producer ? "credited" : "announced", sm->cpm);
		return -EPROTO;
	}
	sm->total = v;
	sm->open = 0;
	sm->end_rx = 1;
	if (sm->producer) {
		sm->last = sm->posted > v ? sm->posted : v;
		sm->end_tx = 1;
	}
	return 0;
}

unsigned int gdr_bounce_sm_receives(const struct gdr_bounce_sm *sm, unsigned int cap)
{
	if (sm->passive_peer)
		return 0; /* what arrives is the session's (DONE, the next START's ACK) */
	if (sm->producer)
		return sm->peer < sm->total ? 1 : 0; /* credits (and the end notice), one by one */
	if (!sm->write && sm->duration && !sm->open)
		return sm->end_rx ? 0 : 1; /* stray readies, then the answer */
	/*
	 * A WRITE consumer in an open run: any receive may be the producer's
	 * end notice, and its DONE may already sit behind it (the producer is
	 * finished once every chunk is credited, which needs no end notice
	 * read here): one by one, or a batch takes the DONE (seen in the ASan
	 * pass, t_40_bounce -D 1). A READ consumer ends the run itself.
	 */
	if (sm->open)
		return sm->write ? 1 : cap;
	return sm->total - sm->peer < cap ? (unsigned int)(sm->total - sm->peer) : cap;
}

/* Chunks from the barrier on start only once everything before it is delivered. */
static int past_barrier_ok(const struct gdr_bounce_sm *sm, uint64_t c)
{
	return c < sm->barrier || gdr_bounce_sm_delivered(sm) >= sm->barrier;
}

int gdr_bounce_sm_can_copy(const struct gdr_bounce_sm *sm, uint64_t *c)
{
	uint64_t n = sm->copy_issued;

	if (n >= sm->total)
		return 0;
	if (sm->producer) {
		/*
		 * The slot of chunk n last held chunk n - slots: free once its WRITE
		 * completed (WRITE) or the consumer's READ of it did (READ: a credit).
		 */
		uint64_t freed = sm->write ? sm->completed : sm->peer;

		if (n - freed >= sm->slots || !past_barrier_ok(sm, n))
			return 0;
	} else {
		/* The chunk must be in the local slot: arrived (WRITE) or read (READ). */
		if (n >= (sm->write ? sm->peer : sm->completed))
			return 0;
	}
	*c = n;
	return 1;
}

void gdr_bounce_sm_did_copy(struct gdr_bounce_sm *sm)
{
	sm->copy_issued++;
}

void gdr_bounce_sm_copy_done(struct gdr_bounce_sm *sm)
{
	if (sm->copy_done < sm->copy_issued)
		sm->copy_done++;
}

int gdr_bounce_sm_can_post(const struct gdr_bounce_sm *sm, uint64_t *c)
{
	uint64_t n = sm->posted;

	if (in_flight(sm) >= sm->sq_max || n >= post_limit(sm))
		return 0;
	if (sm->producer) {
		if (n >= sm->copy_done)
			return 0;
		/* WRITE lands in the consumer's slot: it needs a credit. */
		if (sm->write && n - sm->peer >= sm->slots)
			return 0;
	} else {
		if (sm->write)
			return 0;
		/*
		 * READ: announced (a passive producer's chunks all are), and the own
		 * slot's previous chunk already copied to the GPU.
		 */
		if ((!sm->passive_peer && n >= sm->peer) || n - sm->copy_done >= sm->slots ||
		    !past_barrier_ok(sm, n))
			return 0;
	}
	*c = n;
	return 1;
}

void gdr_bounce_sm_did_post(struct gdr_bounce_sm *sm)
{
	sm->posted++;
}

int gdr_bounce_sm_can_credit(const struct gdr_bounce_sm *sm, uint64_t *value)
{
	uint64_t v;

	if (sm->producer || sm->passive_peer || in_flight(sm) >= sm->sq_max)
		return 0;
	/* WRITE: a slot is free after its H2D copy; READ: the producer's slot after our READ. */
	v = sm->write ? sm->copy_done : sm->completed;
	/*
	 * READ: the credit that completes the warm-up is held until the warm-up's
	 * last copy is done, so that the producer stages no timed chunk before the
	 * consumer's clock starts.
	 */
	if (!sm->write && sm->credited < sm->barrier && v >= sm->barrier &&
	    sm->copy_done < sm->barrier)
		v = sm->barrier - 1;
	if (v <= sm->credited)
		return 0;
	if (v - sm->credited < sm->batch && v != sm->total && v != sm->barrier)
		return 0;
	*value = v;
	return 1;
}

void gdr_bounce_sm_did_credit(struct gdr_bounce_sm *sm, uint64_t value)
{
	sm->credited = value;
	sm->credits_out++;
}

int gdr_bounce_sm_post_done(struct gdr_bounce_sm *sm, char *why, size_t wlen)
{
	if (sm->completed >= sm->posted) {
		snprintf(why, wlen, "bounce: send completion with nothing posted");
		return -EPROTO;
	}
	sm->completed++;
	/* A passive consumer holds what a completed WRITE put there: it counts as credited. */
	if (sm->passive_peer && sm->producer && sm->write)
		sm->peer = sm->completed;
	return 0;
}

int gdr_bounce_sm_credit_done(struct gdr_bounce_sm *sm, char *why, size_t wlen)
{
	return one_done(&sm->credits_out, "credit", why, wlen);
}

int gdr_bounce_sm_announce(struct gdr_bounce_sm *sm, uint32_t imm, char *why, size_t wlen)
{
	const char *what = sm->write ? "RDMA WRITE with immediate" : "ready notice";

	if (sm->producer) {
		snprintf(why, wlen, "bounce protocol error: %s (imm %" PRIu32 ") at the producer",
			 what, imm);
		return -EPROTO;
	}
	if (!sm->write && sm->duration) {
		/* READ, duration mode: readies past the end may come, up to the answer. */
		if (sm->end_rx) {
			snprintf(why, wlen,
				 "bounce protocol error: %s (imm %" PRIu32
				 ") after the producer's end answer",
				 what, imm);
			return -EPROTO;
		}
	} else if (sm->peer >= sm->total) {
		snprintf(why, wlen,
			 "bounce protocol error: %s (imm %" PRIu32 ") after the last of %" PRIu64
			 " chunks",
			 what, imm, sm->total - sm->first);
		return -EPROTO;
	}
	if (imm != (uint32_t)sm->peer) {
		snprintf(why, wlen,
			 "bounce protocol error: %s for chunk %" PRIu32 ", expected chunk %" PRIu32,
			 what, imm, (uint32_t)sm->peer);
		return -EPROTO;
	}
	if (sm->peer - sm->credited >= sm->slots) {
		snprintf(
		    why, wlen,
		    "bounce protocol error: the producer overran the staging ring (chunk %" PRIu32
		    " with %" PRIu64 " chunks uncredited, %u slots)",
		    imm, sm->peer - sm->credited, sm->slots);
		return -EPROTO;
	}
	sm->peer++;
	return 0;
}

int gdr_bounce_sm_credit(struct gdr_bounce_sm *sm, uint32_t imm, char *why, size_t wlen)
{
	uint32_t delta = imm - (uint32_t)sm->peer;
	uint64_t v = sm->peer + delta;

	if (!sm->producer) {
		snprintf(why, wlen,
			 "bounce protocol error: credit (imm %" PRIu32 ") at the consumer", imm);
		return -EPROTO;
	}
	/* Both the no-op and anything beyond what was sent: the window is at most slots wide. */
	if (delta == 0 || delta > sm->posted - sm->peer || v > sm->total) {
		snprintf(why, wlen,
			 "bounce protocol error: credit up to chunk %" PRIu32 " but %" PRIu32
			 " already credited and %" PRIu32 " sent",
			 imm, (uint32_t)sm->peer, (uint32_t)sm->posted);
		return -EPROTO;
	}
	sm->peer = v;
	return 0;
}

uint64_t gdr_bounce_sm_delivered(const struct gdr_bounce_sm *sm)
{
	/* Producer: credits say what the consumer has (WRITE: in its GPU; READ: read). */
	return sm->producer ? sm->peer : sm->copy_done;
}

int gdr_bounce_sm_timed_started(const struct gdr_bounce_sm *sm)
{
	return gdr_bounce_sm_delivered(sm) >= sm->barrier;
}

int gdr_bounce_sm_finished(const struct gdr_bounce_sm *sm)
{
	if (in_flight(sm) || sm->open || sm->end_tx == 1)
		return 0;
	if (sm->producer)
		return sm->peer == sm->total && sm->completed == post_limit(sm) &&
		       sm->posted == post_limit(sm) && sm->copy_done == sm->copy_issued;
	return sm->copy_done == sm->total && (sm->passive_peer || sm->credited == sm->total) &&
	       (sm->write || sm->completed == sm->total) &&
	       (sm->write || !sm->duration || sm->end_rx);
}

int gdr_bounce_plan_check(int bidir, uint64_t chunk, uint32_t max_msg_sz, char *why, size_t wlen)
{
	if (bidir) {
		snprintf(why, wlen, "bounce: -b/--bidirectional is not supported on this path");
		return -EOPNOTSUPP;
	}
	if (max_msg_sz && chunk > max_msg_sz) {
		snprintf(why, wlen,
			 "bounce: --bounce-chunk %" PRIu64 " exceeds max_msg_sz %" PRIu32, chunk,
			 max_msg_sz);
		return -EINVAL;
	}
	return 0;
}
