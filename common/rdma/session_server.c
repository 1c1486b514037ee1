/*
 * The server's choreography: it follows the client's plan. PLAN/ACK, then
 * per path the client's BUF answered with ours, then per size, repeat and
 * path (in turns, session_order.c) START/ACK, its side of the run,
 * DONE/RESULT; BYE at the end.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "session_int.h"
#include "util.h"

/*
 * This side's part of one repeat into res (the RESULT); -errno: the run is
 * over. ref_ns: when the ACK that started it was posted, our reference for
 * -b's common window (bidir.h).
 */
static int serve_repeat(struct sess *s, struct gdr_path *p, uint64_t size, uint64_t ref_ns,
			struct gdr_msg *res)
{
	struct gdr_loop_out lo;
	int r;

	memset(res, 0, sizeof(*res));
	res->type = GDR_MSG_RESULT;
	if (s->plan.latency) {
		/* WRITE: we answer every ping; READ: nothing to do until DONE. */
		res->u.meas.status =
		    gdr_path_is_write(&s->penv) ? p->ops->run_lat(p, size, NULL, s->why, WHY) : 0;
		if (res->u.meas.status)
			gdr_strlcpy(res->u.meas.text, s->why, sizeof(res->u.meas.text));
	} else if (s->plan.bidir) {
		res->u.meas.status = gdr_sess_run_bw(s, p, size, &lo);
		if (res->u.meas.status)
			gdr_strlcpy(res->u.meas.text, s->why, sizeof(res->u.meas.text));
		else
			gdr_sess_meas_from_loop(&res->u.meas, &lo, ref_ns, 0);
	} else if (p->ops->passive_runs) {
		/* The server is half of the pipeline: a failure ends the run. */
		r = gdr_sess_run_bw(s, p, size, &lo);
		if (r)
			return r;
	}
	return 0;
}

static int server_begin_size(struct sess *s, struct gdr_sess_path *e, uint64_t size)
{
	(void)size;
	if (s->plan.validate && gdr_path_checks_dst(&s->penv))
		return gdr_path_poison(&e->p, s->why, WHY);
	return 0;
}

/* One repeat of entry ei: the client's START must be the one the plan has next. */
static int server_repeat(struct sess *s, struct gdr_sess_path *e, unsigned int ei, uint64_t size,
			 unsigned int rep)
{
	int checks = s->plan.validate && gdr_path_checks_dst(&s->penv);
	int last = s->rounds.last, checked = s->rounds.checked;
	struct gdr_path *p = &e->p;
	struct gdr_msg m, done, res;
	uint64_t ref_ns;
	int r;

	r = gdr_sess_sync_point(s); /* launch */
	if (!r)
		r = gdr_sess_recv(s, &m, GDR_MSG_START);
	if (r)
		return r;
	if (m.u.start.size != size || m.u.start.repeat != rep || m.u.start.path != ei) {
		snprintf(s->why, WHY,
			 "protocol error: START for size %" PRIu64 " repeat %u path %u, "
			 "expected size %" PRIu64 " repeat %u path %u",
			 m.u.start.size, m.u.start.repeat, m.u.start.path, size, rep, ei);
		return -EPROTO;
	}
	if (p->ops->lat_arm)
		p->ops->lat_arm(p, size);
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_ACK;
	ref_ns = gdr_now_ns();
	e->rep_t0 = gdr_sess_elapsed(s, ref_ns);
	if (rep == 0)
		e->t_start = e->rep_t0;
	r = gdr_sess_send(s, &m);
	if (!r)
		r = serve_repeat(s, p, size, ref_ns, &res);
	/*
	 * The one wait that lasts as long as the measurement: probe the
	 * client meanwhile (every other wait is bounded by --timeout).
	 */
	if (!r)
		r = gdr_sess_recv_repeat(s, &done, GDR_MSG_DONE, size);
	e->t_end = e->rep_t1 = gdr_sess_elapsed(s, gdr_now_ns());
	if (r)
		return r;
	if (done.u.meas.status) {
		snprintf(s->why, WHY, "client: %s", done.u.meas.text);
		return done.u.meas.status;
	}
	if (!res.u.meas.status && checks && checked) {
		/* The writer into our destination: the client for WRITE, us for READ. */
		uint64_t n = gdr_path_is_write(&s->penv) ? done.u.meas.iters : res.u.meas.iters;

		r = gdr_path_check(p, size, s->plan.warmup + n, &res.u.meas, s->why, WHY);
		if (r && r != -EILSEQ)
			return r;
	}
	/* The client is idle until this RESULT: our copy rate is measured now, alone. */
	if (last && !s->plan.latency && !res.u.meas.status && p->kind == GDR_MEM_BOUNCE)
		gdr_sess_bounce_copy(s, size);
	r = gdr_sess_send(s, &res);
	if (r)
		return r;
	if (res.u.meas.status) {
		snprintf(s->why, WHY, "%s", res.u.meas.text);
		return res.u.meas.status;
	}
	if (s->plan.latency) {
		if (last)
			gdr_sess_emit_lat(s, p, size, done.u.meas.lat_us, "ok",
					  p->ops->lat_note(p));
		return 0;
	}
	return gdr_sess_record_repeat(s, p, size, &done.u.meas, &res.u.meas);
}

/*
 * The client's word after a look: it must name the size and round we are
 * at. When the size ends, our rows (and a bounce row's copy rate, measured
 * while the client waits) come before the ACK.
 */
static int server_look(struct sess *s, unsigned int si, unsigned int rounds, int *more)
{
	struct gdr_msg m;
	int r = gdr_sess_recv(s, &m, GDR_MSG_ROUND);

	if (r)
		return r;
	if (m.u.round.size != si || m.u.round.rounds != rounds ||
	    (m.u.round.stop == GDR_ROUND_MORE && rounds >= s->rounds.rule.max)) {
		snprintf(s->why, WHY,
			 "protocol error: ROUND for size %u after %u rounds (%s), expected size %u "
			 "after %u of at most %u",
			 m.u.round.size, m.u.round.rounds,
			 m.u.round.stop ? gdr_round_stop_name(m.u.round.stop) : "more", si, rounds,
			 s->rounds.rule.max);
		return -EPROTO;
	}
	*more = m.u.round.stop == GDR_ROUND_MORE;
	if (!*more)
		gdr_sess_rounds_end(s, si, rounds, m.u.round.stop);
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_ACK;
	return gdr_sess_send(s, &m);
}

/* The client's BUF for entry ei answered with ours (the first says who holds every path). */
static int server_ready(struct sess *s, unsigned int ei)
{
	struct gdr_sess_path *e = &s->paths[ei];
	struct gdr_msg m, bufmsg;
	int r;

	r = gdr_sess_recv(s, &bufmsg, GDR_MSG_BUF);
	if (r)
		return r;
	if (bufmsg.u.buf.kind != gdr_sess_kind(s, e->pi, 1)) {
		snprintf(s->why, WHY, "protocol error: client offered path %s, plan says %s",
			 gdr_mem_kind_name((enum gdr_mem_kind)bufmsg.u.buf.kind),
			 gdr_mem_kind_name(gdr_sess_kind(s, e->pi, 1)));
		return -EPROTO;
	}
	if (!e->open)
		gdr_sess_path_open(s, e);
	gdr_sess_set_cur(s, e);
	if (ei == 0)
		gdr_sess_paths_mode(s, bufmsg.u.buf.held);
	gdr_path_describe(&e->p, &m);
	m.u.buf.held = (uint8_t)s->held;
	gdr_sess_side_info(s, e->p.kind, &m.u.buf.side);
	e->peer_side = bufmsg.u.buf.side;
	r = gdr_path_accept(&e->p, &bufmsg.u.buf, s->why, WHY);
	if (!r)
		r = gdr_sess_send(s, &m);
	if (r)
		return r;
	e->ready = 1;
	return gdr_sess_path_begin(s, &e->p);
}

static const struct gdr_sess_side server_side = {
	.ready = server_ready,
	.begin_size = server_begin_size,
	.repeat = server_repeat,
	.look = server_look,
};

int gdr_sess_server_run(struct sess *s)
{
	struct gdr_msg m;
	int r;

	r = gdr_sess_recv(s, &m, GDR_MSG_PLAN);
	if (r)
		return r;
	s->t0_ns = gdr_now_ns();
	r = gdr_plan_check(s->o, &m.u.plan, s->why, WHY);
	for (unsigned int i = 0; !r && i < m.u.plan.nsizes; i++) {
		if (s->conn.max_msg_sz && m.u.plan.sizes[i] > s->conn.max_msg_sz) {
			snprintf(s->why, WHY, "size %" PRIu64 " exceeds %s's max_msg_sz %u",
				 m.u.plan.sizes[i], s->conn.nic, s->conn.max_msg_sz);
			r = -EINVAL;
		}
	}
	if (r) {
		gdr_ctl_send_error(&s->ctl, r, s->why);
		return r;
	}
	/*
	 * The plan is the server's own from here on: its options stay as given.
	 * Its own --mem makes the server's side (issue 48); the ACK tells the
	 * client which, so that both build the same combinations.
	 */
	s->plan = m.u.plan;
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_ACK;
	for (unsigned int i = 0; i < s->run->server_nmem && i < GDR_MEM__COUNT; i++)
		m.u.error.mem[m.u.error.nmem++] = (uint8_t)s->run->server_mem[i];
	r = gdr_plan_server_side(&s->plan, m.u.error.mem, m.u.error.nmem, s->why, WHY);
	if (r) {
		gdr_ctl_send_error(&s->ctl, r, s->why);
		return r;
	}
	if (s->plan.sides != GDR_SIDES_SERVER)
		m.u.error.nmem = 0; /* the client's plan stands as it is */
	r = gdr_sess_send(s, &m);
	if (!r) {
		gdr_sess_prepare(s);
		r = gdr_sess_paths_build(s);
	}
	if (!r) {
		gdr_sess_paths_hold(s);
		r = gdr_sess_run_slots(s, &server_side);
	}
	/*
	 * No BYE either says why: a client whose BYE got no acknowledgement
	 * takes a disconnect without an ERROR as its BYE delivered (ctl_conn.c).
	 */
	if (!r)
		r = gdr_sess_recv(s, &m, GDR_MSG_BYE);
	if (r && r != -ECONNRESET)
		gdr_ctl_send_error(&s->ctl, r, s->why);
	return r;
}
