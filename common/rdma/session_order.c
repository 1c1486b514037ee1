/*
 * Paths side by side in time (issue 38). Every path's buffers are held at
 * once and the paths take turns: size by size, repeat by repeat, each path
 * once per round, each round starting one path further on. A slow drift of
 * the machine (clocks, heat, a neighbour) then lands on every path alike
 * instead of on whichever was measured first. Where the buffers do not fit
 * together, the run falls back to path by path and says so in every row.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_int.h"
#include "util.h"

void gdr_sess_slot(int rotate, unsigned int npaths, unsigned int nsizes, unsigned int repeat,
		   unsigned int k, struct gdr_slot *out)
{
	if (rotate) {
		unsigned int round = k / npaths;

		out->pos = k % npaths;
		out->entry = gdr_turn(npaths, round, out->pos);
		out->size = round / repeat;
		out->rep = round % repeat;
	} else {
		unsigned int per = nsizes * repeat;

		out->entry = k / per;
		out->pos = out->entry;
		out->size = k % per / repeat;
		out->rep = k % per % repeat;
	}
}

int gdr_sess_paths_build(struct sess *s)
{
	unsigned int n = 0;

	gdr_sess_paths_free(s);
	s->paths = calloc(GDR_MAX_PATHS, sizeof(*s->paths));
	if (!s->paths) {
		snprintf(s->why, WHY, "out of memory for the run's paths");
		return -ENOMEM;
	}
	/*
	 * One entry per combination of the client's path and the server's (each
	 * side its own memory, issue 48); --gpu-alloc all: every combination with
	 * a GPU side once per allocator, host on both sides once (both sides alike).
	 */
	for (int a = 0; a < GDR_GPU_ALLOC__COUNT; a++) {
		if (!(s->plan.gpu_allocs & (1u << a)))
			continue;
		for (unsigned int pi = 0; pi < s->plan.npairs; pi++) {
			if (!gdr_sess_first_alloc(s, a) &&
			    s->plan.pairs[pi].client == GDR_MEM_HOST &&
			    s->plan.pairs[pi].server == GDR_MEM_HOST)
				continue;
			s->paths[n].pi = pi;
			s->paths[n].alloc = a;
			s->paths[n].t_start = s->paths[n].t_end = -1;
			s->paths[n].order = -1;
			n++;
		}
	}
	s->npaths = n;
	return 0;
}

/* A failure that more memory, pinned or on the GPU, could have avoided. */
static int short_of_memory(int err)
{
	return err == -ENOMEM || err == -EAGAIN || err == -EPERM || err == -ENOSPC ||
	       err == -EFAULT;
}

void gdr_sess_paths_hold(struct sess *s)
{
	s->held = 1;
	s->major_note[0] = '\0';
	for (unsigned int i = 0; i < s->npaths; i++) {
		struct gdr_sess_path *e = &s->paths[i];
		char why[sizeof(e->p.skip)];
		unsigned int others = 0;

		gdr_sess_path_open(s, e);
		for (unsigned int j = 0; j < i; j++)
			others += s->paths[j].p.ok;
		if (e->p.ok || !others || !short_of_memory(e->p.err))
			continue;
		/* Short of memory beside the others: alone it may fit. */
		gdr_strlcpy(why, e->p.skip, sizeof(why));
		for (unsigned int j = 0; j <= i; j++)
			gdr_sess_path_close(s, &s->paths[j]);
		gdr_sess_path_open(s, e);
		int alone = e->p.ok;
		gdr_sess_path_close(s, e);
		if (alone) {
			s->held = 0;
			printf("%s: its buffers fit alone, not beside the other paths' (%s): "
			       "paths measured one after another\n",
			       gdr_mem_kind_name(e->p.kind), why);
			return;
		}
		for (unsigned int j = 0; j <= i; j++)
			gdr_sess_path_open(s, &s->paths[j]);
	}
}

void gdr_sess_paths_mode(struct sess *s, int peer_held)
{
	const char *me = s->client ? "client" : "server", *peer = s->client ? "server" : "client";

	s->rotate = s->held && peer_held;
	if (s->rotate || s->npaths < 2)
		return;
	if (!s->held && !peer_held)
		snprintf(s->major_note, sizeof(s->major_note),
			 "path-major: neither side could hold every path's buffers at once");
	else
		snprintf(s->major_note, sizeof(s->major_note),
			 "path-major: the %s could not hold every path's buffers at once",
			 s->held ? peer : me);
	printf("note: %s; drift between paths is not spread over them\n", s->major_note);
}

void gdr_sess_paths_free(struct sess *s)
{
	for (unsigned int i = 0; s->paths && i < s->npaths; i++) {
		gdr_sess_path_close(s, &s->paths[i]);
		free(s->paths[i].lat);
	}
	free(s->paths);
	s->paths = NULL;
	s->npaths = 0;
	s->cur = NULL;
}

void gdr_sess_set_cur(struct sess *s, struct gdr_sess_path *e)
{
	s->cur = e;
	s->cur_mem = e && e->p.ok ? &e->p.mem : NULL;
	if (e)
		s->env.gpu_alloc = (enum gdr_gpu_alloc)e->alloc;
}

double gdr_sess_elapsed(const struct sess *s, uint64_t ns)
{
	return ns > s->t0_ns ? (double)(ns - s->t0_ns) / 1e9 : 0;
}

/* The first repeat of a size on e: a fresh sum, and its row when latency cannot run it. */
static int begin_size(struct sess *s, const struct gdr_sess_side *side, struct gdr_sess_path *e,
		      uint64_t size, unsigned int pos)
{
	char why[8];

	memset(&e->acc, 0, sizeof(e->acc));
	e->t_start = e->t_end = -1;
	e->order = (int)pos;
	e->skip_size = e->p.ops->lat_skip(&e->p, size, why, sizeof(why));
	if (e->skip_size) {
		gdr_sess_skip_lat_size(s, &e->p, size);
		return 0;
	}
	return side->begin_size(s, e, size);
}

/* One timed repeat of entry ei at size index si: the entry's turn in its round. */
static int slot(struct sess *s, const struct gdr_sess_side *side, unsigned int ei, unsigned int si,
		unsigned int rep, unsigned int pos)
{
	struct gdr_sess_path *e = &s->paths[ei];
	uint64_t size = s->plan.sizes[si];
	int r = 0;

	if (!e->ready) /* path by path: its buffers now */
		r = side->ready(s, ei);
	if (r)
		return r;
	gdr_sess_set_cur(s, e);
	if (e->p.ok && rep == 0)
		r = begin_size(s, side, e, size, pos);
	if (r)
		return r;
	if (!e->p.ok || e->skip_size)
		return gdr_sess_sync_point(s); /* launch: its turn passes */
	return side->repeat(s, e, ei, size, rep);
}

void gdr_sess_end_size(struct sess *s, unsigned int si, int only)
{
	char note[GDR_TEXT_MAX];

	for (unsigned int i = 0; i < s->npaths; i++) {
		struct gdr_sess_path *e = &s->paths[i];

		if ((only >= 0 && i != (unsigned int)only) || !e->p.ok || e->skip_size ||
		    !e->acc.n || s->plan.latency)
			continue;
		gdr_sess_set_cur(s, e);
		gdr_sess_emit_measured(s, &e->p, s->plan.sizes[si], "ok",
				       gdr_sess_row_note(&e->p, note, sizeof(note)));
	}
	gdr_sess_set_cur(s, NULL);
}

/* --validate after a look: the destinations cleared again for the rounds to come. */
static int rearm(struct sess *s, const struct gdr_sess_side *side, unsigned int si)
{
	int r = 0;

	for (unsigned int i = 0; !r && i < s->npaths; i++) {
		struct gdr_sess_path *e = &s->paths[i];

		if (e->p.ok && !e->skip_size) {
			gdr_sess_set_cur(s, e);
			r = side->begin_size(s, e, s->plan.sizes[si]);
		}
	}
	return r;
}

/*
 * In turns: size by size, round by round, every path once per round, round
 * g of the run (counted over the sizes) starting at path g mod n; a size
 * ends after its fixed rounds, or when the client's look says so.
 */
static int run_in_turns(struct sess *s, const struct gdr_sess_side *side)
{
	struct gdr_sess_rounds *ro = &s->rounds;
	unsigned int n = s->npaths, g = 0;
	int r = 0;

	for (unsigned int si = 0; !r && si < s->plan.nsizes; si++) {
		unsigned int rep = 0;
		int more = 1;

		ro->size_t0 = gdr_sess_elapsed(s, gdr_now_ns());
		ro->stop = ro->decide ? "" : "fixed";
		for (; !r && more; rep++) {
			int look = ro->decide && gdr_decide_is_look(&ro->rule, rep + 1);

			ro->last = !ro->decide && rep + 1 == ro->fixed;
			ro->checked = ro->decide ? look : ro->last;
			for (unsigned int pos = 0; !r && pos < n; pos++)
				r = slot(s, side, gdr_turn(n, g + rep, pos), si, rep, pos);
			if (r)
				break;
			if (look)
				r = side->look(s, si, rep + 1, &more);
			else
				more = ro->decide || rep + 1 < ro->fixed;
			if (!r && more && ro->checked && s->plan.validate)
				r = rearm(s, side, si);
		}
		g += rep;
		if (!r && !ro->decide)
			gdr_sess_end_size(s, si, -1);
	}
	return r;
}

/* One after another: path by path, size by size, the fixed rounds of each. */
static int run_path_major(struct sess *s, const struct gdr_sess_side *side)
{
	struct gdr_sess_rounds *ro = &s->rounds;
	int r = 0;

	for (unsigned int ei = 0; !r && ei < s->npaths; ei++) {
		for (unsigned int si = 0; !r && si < s->plan.nsizes; si++) {
			for (unsigned int rep = 0; !r && rep < ro->fixed; rep++) {
				ro->last = ro->checked = rep + 1 == ro->fixed;
				r = slot(s, side, ei, si, rep, ei);
			}
			if (!r)
				gdr_sess_end_size(s, si, (int)ei);
		}
		gdr_sess_path_close(s, &s->paths[ei]);
	}
	return r;
}

int gdr_sess_run_slots(struct sess *s, const struct gdr_sess_side *side)
{
	unsigned int n = s->npaths;
	int r;

	/* The first exchange settles the order; in turns, every BUF before any START. */
	r = side->ready(s, 0);
	for (unsigned int i = 1; s->rotate && !r && i < n; i++)
		r = side->ready(s, i);
	if (!r) {
		gdr_sess_rounds_mode(s);
		r = s->rotate ? run_in_turns(s, side) : run_path_major(s, side);
	}
	gdr_sess_set_cur(s, NULL);
	for (unsigned int i = 0; i < n; i++)
		gdr_sess_path_close(s, &s->paths[i]);
	return r;
}
