/*
 * The server's choreography: it follows the client's plan. PLAN/ACK, then
 * per path the client's BUF answered with ours, then per size and repeat
 * START/ACK, its side of the run, DONE/RESULT; BYE at the end.
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

static int server_size(struct sess *s, struct gdr_path *p, uint64_t size,
		       const struct gdr_msg *start)
{
	int checks = s->plan.validate && gdr_path_checks_dst(&s->penv);
	struct gdr_msg m, done, res;
	uint64_t ref_ns;
	int r;

	for (unsigned int rep = 0;; rep++) {
		int last = rep + 1 == s->plan.repeat;

		if (rep == 0) {
			memset(&s->acc, 0, sizeof(s->acc));
			m = *start;
		} else {
			r = gdr_sess_sync_point(s); /* launch */
			if (!r)
				r = gdr_sess_recv(s, &m, GDR_MSG_START);
			if (r)
				return r;
		}
		if (m.u.start.size != size || m.u.start.repeat != rep) {
			snprintf(s->why, WHY,
				 "protocol error: START for size %" PRIu64 " repeat %u, "
				 "expected size %" PRIu64 " repeat %u",
				 m.u.start.size, m.u.start.repeat, size, rep);
			return -EPROTO;
		}
		if (rep == 0 && checks) {
			r = gdr_path_poison(p, s->why, WHY);
			if (r)
				return r;
		}
		if (p->ops->lat_arm)
			p->ops->lat_arm(p, size);
		memset(&m, 0, sizeof(m));
		m.type = GDR_MSG_ACK;
		ref_ns = gdr_now_ns();
		r = gdr_sess_send(s, &m);
		if (!r)
			r = serve_repeat(s, p, size, ref_ns, &res);
		/*
		 * The one wait that lasts as long as the measurement: probe the
		 * client meanwhile (every other wait is bounded by --timeout).
		 */
		if (!r)
			r = gdr_sess_recv_repeat(s, &done, GDR_MSG_DONE, size);
		if (r)
			return r;
		if (done.u.meas.status) {
			snprintf(s->why, WHY, "client: %s", done.u.meas.text);
			return done.u.meas.status;
		}
		if (!res.u.meas.status && checks && last) {
			/* The writer into our destination: the client for WRITE, us for READ. */
			uint64_t n =
			    gdr_path_is_write(&s->penv) ? done.u.meas.iters : res.u.meas.iters;

			r = gdr_path_check(p, size, s->plan.warmup + n, &res.u.meas, s->why, WHY);
			if (r && r != -EILSEQ)
				return r;
		}
		r = gdr_sess_send(s, &res);
		if (r)
			return r;
		if (res.u.meas.status) {
			snprintf(s->why, WHY, "%s", res.u.meas.text);
			return res.u.meas.status;
		}
		if (s->plan.latency) {
			if (last) {
				gdr_sess_emit_lat(s, p, size, done.u.meas.lat_us, "ok",
						  p->ops->lat_note(p));
				return 0;
			}
			continue;
		}
		r = gdr_sess_record_repeat(s, p, size, &done.u.meas, &res.u.meas);
		if (r)
			return r;
		if (last)
			break;
	}
	char note[GDR_TEXT_MAX];
	gdr_sess_emit_measured(s, p, size, "ok", gdr_sess_row_note(p, note, sizeof(note)));
	return 0;
}

static int server_path(struct sess *s, unsigned int pi, const struct gdr_msg *bufmsg)
{
	struct gdr_path p;
	struct gdr_msg m;
	int r;

	gdr_sess_path_open(s, &p, pi);
	if (bufmsg->u.buf.kind != s->plan.mem[pi]) {
		snprintf(s->why, WHY, "protocol error: client offered path %s, plan says %s",
			 gdr_mem_kind_name((enum gdr_mem_kind)bufmsg->u.buf.kind),
			 gdr_mem_kind_name((enum gdr_mem_kind)s->plan.mem[pi]));
		r = -EPROTO;
		goto out;
	}
	gdr_path_describe(&p, &m);
	r = gdr_path_accept(&p, &bufmsg->u.buf, s->why, WHY);
	if (!r)
		r = gdr_sess_send(s, &m);
	if (r)
		goto out;
	if (gdr_sess_path_begin(s, &p, &r))
		goto out;
	for (unsigned int i = 0; i < s->plan.nsizes && !r; i++) {
		char why[8];

		if (p.ops->lat_skip(&p, s->plan.sizes[i], why, sizeof(why))) {
			r = gdr_sess_skip_lat_size(s, &p, s->plan.sizes[i]);
			continue;
		}
		r = gdr_sess_sync_point(s); /* launch */
		if (!r)
			r = gdr_sess_recv(s, &m, GDR_MSG_START);
		if (!r && m.u.start.path != pi) {
			snprintf(s->why, WHY, "protocol error: START for path %u during path %u",
				 m.u.start.path, pi);
			r = -EPROTO;
		}
		if (!r)
			r = server_size(s, &p, s->plan.sizes[i], &m);
	}
out:
	gdr_sess_path_close(s, &p);
	return r;
}

int gdr_sess_server_run(struct sess *s)
{
	struct gdr_msg m;
	int r;

	r = gdr_sess_recv(s, &m, GDR_MSG_PLAN);
	if (r)
		return r;
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
	/* The plan is the server's own from here on: its options stay as given. */
	s->plan = m.u.plan;
	memset(&m, 0, sizeof(m));
	m.type = GDR_MSG_ACK;
	r = gdr_sess_send(s, &m);
	if (!r)
		gdr_sess_prepare(s);
	for (int a = 0; a < GDR_GPU_ALLOC__COUNT && !r; a++) {
		if (!(s->plan.gpu_allocs & (1u << a)))
			continue;
		s->env.gpu_alloc = (enum gdr_gpu_alloc)a;
		for (unsigned int pi = 0; pi < s->plan.nmem && !r; pi++) {
			if (!gdr_sess_first_alloc(s, a) && s->plan.mem[pi] == GDR_MEM_HOST)
				continue;
			r = gdr_sess_recv(s, &m, GDR_MSG_BUF);
			if (!r)
				r = server_path(s, pi, &m);
		}
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
