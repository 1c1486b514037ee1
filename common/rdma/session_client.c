/*
 * The client's choreography: PLAN/ACK, then per path BUF/BUF, then per size,
 * repeat and path (in turns, session_order.c) START/ACK, the run,
 * DONE/RESULT; BYE at the end. Bandwidth and
 * latency share every exchange; only what one repeat measures differs.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "session_int.h"
#include "stats.h"
#include "util.h"

/*
 * START for one repeat, then the server's ACK: it is ready. *ref_ns, *unc_ns:
 * the repeat's reference on our clock, the midpoint of START..ACK, and half
 * that round trip (its uncertainty), for -b's common window (bidir.h).
 */
static int start_repeat(struct sess *s, unsigned int pi, unsigned int rep, uint64_t size,
			uint64_t *ref_ns, uint64_t *unc_ns)
{
	struct gdr_msg m, reply;
	uint64_t t_start, t_ack;
	int r;

	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_START;
	m.u.start.path = (uint8_t)pi;
	m.u.start.repeat = (uint16_t)rep;
	m.u.start.size = size;
	t_start = gdr_now_ns();
	r = gdr_sess_send(s, &m);
	if (!r)
		r = gdr_sess_recv(s, &reply, GDR_MSG_ACK);
	t_ack = gdr_now_ns();
	*unc_ns = (t_ack - t_start) / 2;
	*ref_ns = t_start + *unc_ns;
	return r;
}

/* A repeat that failed here: the server learns why from the DONE. */
static int fail_repeat(struct sess *s, int r)
{
	struct gdr_msg m;

	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_DONE;
	m.u.meas.status = r;
	gdr_strlcpy(m.u.meas.text, s->why, sizeof(m.u.meas.text));
	gdr_sess_send(s, &m);
	return r;
}

/* DONE with our measurement, then the server's RESULT (a failure there ends the run). */
static int finish_repeat(struct sess *s, const struct gdr_msg *done, struct gdr_msg *reply)
{
	int r = gdr_sess_send(s, done);

	if (!r)
		r = gdr_sess_recv(s, reply, GDR_MSG_RESULT);
	if (r)
		return r;
	if (reply->u.meas.status) {
		snprintf(s->why, WHY, "server: %s", reply->u.meas.text);
		return reply->u.meas.status;
	}
	return 0;
}

/* Latency: one repeat's samples, summarised over every repeat so far, into m. */
static int measure_lat(struct sess *s, struct gdr_sess_path *e, uint64_t size, unsigned int rep,
		       struct gdr_msg_meas *m)
{
	uint64_t n = s->plan.iters;
	struct gdr_lat_stats st;
	int r;

	r = e->p.ops->run_lat(&e->p, size, e->lat + (size_t)rep * n, s->why, WHY);
	if (!r)
		r = gdr_lat_stats_compute(e->lat, (size_t)(rep + 1) * n, &st);
	if (r == -ENOMEM)
		snprintf(s->why, WHY, "latency: out of memory sorting the samples");
	if (r)
		return r;
	m->iters = n;
	m->bytes = n * size;
	const double us[7] = { st.min, st.p50, st.p90, st.p99, st.p999, st.max, st.avg };
	memcpy(m->lat_us, us, sizeof(us));
	return 0;
}

static int alloc_lat(struct sess *s, struct gdr_sess_path *e)
{
	if (e->lat)
		return 0;
	e->lat = calloc((size_t)s->plan.iters * s->plan.repeat, sizeof(*e->lat));
	if (e->lat)
		return 0;
	snprintf(s->why, WHY, "out of memory for %" PRIu64 " latency samples",
		 s->plan.iters * s->plan.repeat);
	return -ENOMEM;
}

static int checks_dst(const struct sess *s)
{
	return !s->plan.latency && s->plan.validate && gdr_path_checks_dst(&s->penv);
}

/* The first repeat of a size: the samples' room, or a destination to check. */
static int client_begin_size(struct sess *s, struct gdr_sess_path *e, uint64_t size)
{
	(void)size;
	if (s->plan.latency)
		return alloc_lat(s, e);
	return checks_dst(s) ? gdr_path_poison(&e->p, s->why, WHY) : 0;
}

/* One repeat of entry ei: START/ACK, the run, DONE/RESULT; the row after the last. */
static int client_repeat(struct sess *s, struct gdr_sess_path *e, unsigned int ei, uint64_t size,
			 unsigned int rep)
{
	const struct gdr_path_env *env = &s->penv;
	struct gdr_path *p = &e->p;
	int lat = s->plan.latency;
	int checks = checks_dst(s);
	int last = s->rounds.last, checked = s->rounds.checked;
	struct gdr_msg m, reply;
	struct gdr_loop_out lo;
	uint64_t ref_ns, unc_ns;
	int r;

	r = gdr_sess_sync_point(s); /* launch */
	if (r)
		return r;
	if (p->ops->lat_arm)
		p->ops->lat_arm(p, size);
	r = start_repeat(s, ei, rep, size, &ref_ns, &unc_ns);
	if (r)
		return r;
	e->rep_t0 = gdr_sess_elapsed(s, gdr_now_ns());
	if (rep == 0)
		e->t_start = e->rep_t0;
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_DONE;
	if (lat) {
		r = measure_lat(s, e, size, rep, &m.u.meas);
	} else {
		r = gdr_sess_run_bw(s, p, size, &lo);
		if (!r)
			gdr_sess_meas_from_loop(&m.u.meas, &lo, ref_ns, unc_ns);
	}
	e->t_end = e->rep_t1 = gdr_sess_elapsed(s, gdr_now_ns());
	if (r)
		return fail_repeat(s, r);
	/*
	 * The check needs how many messages the writer issued: our own
	 * count for READ; for -b WRITE the server's, known up front
	 * unless -D, where its RESULT brings it.
	 */
	int deferred = checks && checked && gdr_path_is_write(env) && s->plan.duration_ms;
	if (checks && checked && !deferred) {
		r = gdr_path_check(p, size, s->plan.warmup + lo.iters, &m.u.meas, s->why, WHY);
		if (r && r != -EILSEQ)
			return r;
	}
	r = finish_repeat(s, &m, &reply);
	if (r)
		return r;
	if (lat) {
		if (last)
			gdr_sess_emit_lat(s, p, size, m.u.meas.lat_us, "ok", p->ops->lat_note(p));
		return 0;
	}
	if (deferred) {
		r = gdr_path_check(p, size, s->plan.warmup + reply.u.meas.iters, &m.u.meas, s->why,
				   WHY);
		if (r && r != -EILSEQ)
			return r;
	}
	return gdr_sess_record_repeat(s, p, size, &m.u.meas, &reply.u.meas);
}

/*
 * After a look: the rule's word to the server, its ACK (it has written its
 * rows when the size ends), then ours: the two sides never measure a copy
 * rate for a bounce row at once.
 */
static int client_look(struct sess *s, unsigned int si, unsigned int rounds, int *more)
{
	unsigned int stop = gdr_sess_rounds_decide(s, rounds);
	struct gdr_msg m, reply;
	int r;

	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_ROUND;
	m.u.round.size = (uint16_t)si;
	m.u.round.rounds = (uint16_t)rounds;
	m.u.round.stop = (uint8_t)stop;
	r = gdr_sess_send(s, &m);
	if (!r)
		r = gdr_sess_recv(s, &reply, GDR_MSG_ACK);
	if (r)
		return r;
	*more = stop == GDR_ROUND_MORE;
	if (!*more)
		gdr_sess_rounds_end(s, si, rounds, stop);
	return 0;
}

/* Entry ei's BUF exchange (the first one says whether each side holds every path). */
static int client_ready(struct sess *s, unsigned int ei)
{
	struct gdr_sess_path *e = &s->paths[ei];
	struct gdr_msg m, reply;
	int r;

	if (!e->open)
		gdr_sess_path_open(s, e);
	gdr_sess_set_cur(s, e);
	gdr_path_describe(&e->p, &m);
	m.u.buf.held = (uint8_t)s->held;
	gdr_sess_side_info(s, e->p.kind, &m.u.buf.side);
	r = gdr_sess_send(s, &m);
	if (!r)
		r = gdr_sess_recv(s, &reply, GDR_MSG_BUF);
	if (!r)
		r = gdr_path_accept(&e->p, &reply.u.buf, s->why, WHY);
	if (r)
		return r;
	e->peer_side = reply.u.buf.side;
	if (ei == 0)
		gdr_sess_paths_mode(s, reply.u.buf.held);
	e->ready = 1;
	return gdr_sess_path_begin(s, &e->p);
}

static const struct gdr_sess_side client_side = {
	.ready = client_ready,
	.begin_size = client_begin_size,
	.repeat = client_repeat,
	.look = client_look,
};

int gdr_sess_client_run(struct sess *s)
{
	struct gdr_msg m, reply;
	struct timespec ts;
	int r;

	s->t0_ns = gdr_now_ns();
	clock_gettime(CLOCK_REALTIME, &ts);
	gdr_plan_from_opts(s->o, (uint32_t)(ts.tv_nsec ^ getpid()), &s->plan);
	s->plan.run_id = gdr_run_id((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
				    (uint64_t)getpid());
	/* The run's -D: a sweep's --time-budget chooses it for every rank. */
	s->plan.duration_ms = gdr_plan_duration_ms(s->run->duration);
	/* Sizes above the port's max_msg_sz cannot be one message: clamp them, say so. */
	for (unsigned int i = 0; i < s->plan.nsizes; i++) {
		if (s->conn.max_msg_sz && s->plan.sizes[i] > s->conn.max_msg_sz) {
			gdr_warn("%s: size %" PRIu64 " exceeds max_msg_sz %u: using %u",
				 s->conn.nic, s->plan.sizes[i], s->conn.max_msg_sz,
				 s->conn.max_msg_sz);
			s->plan.sizes[i] = s->conn.max_msg_sz;
		}
	}
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_PLAN;
	m.u.plan = s->plan;
	r = gdr_sess_send(s, &m);
	if (!r)
		r = gdr_sess_recv(s, &reply, GDR_MSG_ACK);
	if (r)
		return r;
	/* The server's own --mem chose its side: the same combinations as the server's. */
	if (reply.u.error.nmem && s->plan.sides != GDR_SIDES_SAME) {
		snprintf(s->why, WHY,
			 "protocol error: the server chose its side for a plan that names it");
		r = -EPROTO;
	} else {
		r = gdr_plan_server_side(&s->plan, reply.u.error.mem, reply.u.error.nmem, s->why,
					 WHY);
	}
	if (r) {
		gdr_ctl_send_error(&s->ctl, r, s->why);
		return r;
	}
	gdr_sess_prepare(s);
	r = gdr_sess_paths_build(s);
	if (!r) {
		gdr_sess_paths_hold(s);
		r = gdr_sess_run_slots(s, &client_side);
	}
	if (r) {
		gdr_ctl_send_error(&s->ctl, r, s->why);
		return r;
	}
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_BYE;
	return gdr_sess_send(s, &m);
}
