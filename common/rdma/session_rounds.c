/*
 * How many rounds a size takes (issue 51, decide.h). Fixed: --repeat N, or
 * the fewest rounds of --repeat MIN:MAX where rounds cannot stop when
 * decided (paths measured one after another; several pairs launched at once,
 * whose rounds must stay in step). Rounds until decided: after each look of the
 * rule the client asks whether every path's ratio to the reference (host,
 * else the first path measured) is decided against --margin at the run's
 * family-wise error rate, and tells the server with ROUND.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "session_int.h"
#include "util.h"

/* Host on both sides (gdr-ab's "host"): the reference of the ratios. */
static int is_host(const struct gdr_path *p)
{
	return p->kind == GDR_MEM_HOST && p->peer_kind == GDR_MEM_HOST;
}

/* The reference of the ratios: host's entry when it measures, else the first that does. */
static int reference(const struct sess *s)
{
	for (unsigned int i = 0; i < s->npaths; i++) {
		if (s->paths[i].p.ok && is_host(&s->paths[i].p))
			return (int)i;
	}
	for (unsigned int i = 0; i < s->npaths; i++) {
		if (s->paths[i].p.ok)
			return (int)i;
	}
	return -1;
}

void gdr_sess_rounds_mode(struct sess *s)
{
	struct gdr_sess_rounds *ro = &s->rounds;
	const struct gdr_plan *p = &s->plan;
	unsigned int measured = 0;

	memset(ro, 0, sizeof(*ro));
	ro->fixed = p->repeat;
	ro->k = 1;
	ro->stop = "fixed";
	if (p->repeat_min == p->repeat)
		return;
	ro->fixed = p->repeat_min;
	if (!s->rotate || (s->run->sync && s->run->sync->pairs > 1)) {
		printf("note: %u rounds per size, fixed: rounds stop when decided only with the "
		       "paths in turns and one pair (%s)\n",
		       ro->fixed,
		       !s->rotate ? "these paths are measured one after another"
				  : "launched pairs keep their rounds in step");
		return;
	}
	if (gdr_decide_init(&ro->rule, p->repeat_min, p->repeat, p->alpha_ppm / 1e6,
			    p->margin_ppm / 1e6))
		return; /* the plan's decoder refused what this could not take */
	for (unsigned int i = 0; i < s->npaths; i++)
		measured += s->paths[i].p.ok;
	ro->decide = 1;
	ro->k = gdr_decide_k(&ro->rule);
	ro->family = gdr_decide_family(p->nsizes, measured);
	ro->stop = "";
	if (!s->client)
		return;
	int ref = reference(s);

	printf("rounds: %u to %u per size, until each path's ratio to %s is known within "
	       "1 -+ %g %% or beyond (error rate %g %% over %u intervals and %u looks)\n",
	       p->repeat_min, p->repeat,
	       ref >= 0 && is_host(&s->paths[ref].p) ? "host" : "the first path",
	       100 * ro->rule.margin, 100 * ro->rule.alpha, ro->family, ro->k);
}

unsigned int gdr_sess_rounds_decide(struct sess *s, unsigned int rounds)
{
	const struct gdr_sess_rounds *ro = &s->rounds;
	const double *bps[GDR_MAX_PATHS];
	int ok[GDR_MAX_PATHS], ref = reference(s), got;
	unsigned int n = s->npaths < GDR_MAX_PATHS ? s->npaths : GDR_MAX_PATHS;

	for (unsigned int i = 0; i < n; i++) {
		bps[i] = s->paths[i].acc.bps;
		ok[i] = s->paths[i].p.ok && !s->paths[i].skip_size && s->paths[i].acc.n >= rounds;
	}
	got = ref < 0
		  ? -1
		  : gdr_decide_size(&ro->rule, ro->family, bps, ok, n, (unsigned int)ref, rounds);
	if (got < 0)
		return GDR_ROUND_NOTHING;
	if (got > 0)
		return GDR_ROUND_DECIDED;
	if (rounds >= ro->rule.max)
		return GDR_ROUND_MAX;
	if (s->plan.size_us &&
	    gdr_sess_elapsed(s, gdr_now_ns()) - ro->size_t0 >= s->plan.size_us / 1e6)
		return GDR_ROUND_BUDGET;
	return GDR_ROUND_MORE;
}

void gdr_sess_rounds_end(struct sess *s, unsigned int si, unsigned int rounds, unsigned int stop)
{
	static const char *const why[GDR_ROUND__END] = {
		[GDR_ROUND_DECIDED] = "decided: every ratio known within the margin or beyond it",
		[GDR_ROUND_MAX] = "not decided: the most rounds --repeat allows",
		[GDR_ROUND_BUDGET] = "not decided: --time-per-size spent",
		[GDR_ROUND_NOTHING] = "nothing to decide: fewer than two paths measured",
	};

	s->rounds.stop = gdr_round_stop_name(stop);
	gdr_sess_end_size(s, si, -1);
	if (stop < GDR_ROUND__END && why[stop])
		printf("   %u rounds: %s\n", rounds, why[stop]);
}

void gdr_sess_rounds_fill(const struct sess *s, struct gdr_result *r, const struct gdr_acc *a)
{
	r->repeats = a->n;
	r->looks = s->rounds.k;
	gdr_strlcpy(r->stop, s->rounds.stop ? s->rounds.stop : "", sizeof(r->stop));
	r->nrep = a->n <= GDR_REP_KEEP ? a->n : 0;
	for (unsigned int k = 0; k < r->nrep; k++) {
		r->rep_bw_gbps[k] = a->bps[k] * 8 / 1e9;
		r->rep_t_start_s[k] = a->t0[k];
		r->rep_t_end_s[k] = a->t1[k];
	}
}
