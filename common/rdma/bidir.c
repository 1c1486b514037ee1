#include "config.h"

#include "bidir.h"

#include <errno.h>
#include <stdio.h>

void gdr_timeline_add(struct gdr_timeline *tl, int64_t t_ns, uint64_t bytes)
{
	if (tl->n == GDR_TL_POINTS) {
		/* Keep points 0, 2, 4, ...: still spread over the whole run. */
		for (uint32_t i = 1; i < GDR_TL_POINTS / 2; i++) {
			tl->t_ns[i] = tl->t_ns[2 * i];
			tl->bytes[i] = tl->bytes[2 * i];
		}
		tl->n = GDR_TL_POINTS / 2;
	}
	tl->t_ns[tl->n] = t_ns;
	tl->bytes[tl->n] = bytes;
	tl->n++;
}

void gdr_timeline_rebase(struct gdr_timeline *tl, uint64_t ref_ns, uint64_t unc_ns)
{
	for (uint32_t i = 0; i < tl->n; i++)
		tl->t_ns[i] -= (int64_t)ref_ns;
	tl->unc_ns = unc_ns;
}

int gdr_timeline_check(const struct gdr_timeline *tl, char *why, size_t wlen)
{
	if (tl->n > GDR_TL_POINTS) {
		snprintf(why, wlen, "time line: %u points (at most %u)", tl->n, GDR_TL_POINTS);
		return -EINVAL;
	}
	for (uint32_t i = 1; i < tl->n; i++)
		if (tl->t_ns[i] < tl->t_ns[i - 1] || tl->bytes[i] < tl->bytes[i - 1]) {
			snprintf(why, wlen, "time line: point %u goes back in time or bytes", i);
			return -EINVAL;
		}
	return 0;
}

/* The rate between the first and the last of tl's points inside [lo, hi]; -1 if fewer than two. */
static double rate_inside(const struct gdr_timeline *tl, int64_t lo, int64_t hi)
{
	uint32_t i = 0, j;

	while (i < tl->n && tl->t_ns[i] < lo)
		i++;
	for (j = i; j + 1 < tl->n && tl->t_ns[j + 1] <= hi; j++)
		;
	if (i >= tl->n || j <= i || tl->t_ns[j] > hi || tl->t_ns[j] <= tl->t_ns[i])
		return -1;
	return (double)(tl->bytes[j] - tl->bytes[i]) * 1e9 / (double)(tl->t_ns[j] - tl->t_ns[i]);
}

int gdr_bidir_overlap(const struct gdr_timeline *a, const struct gdr_timeline *b,
		      struct gdr_bidir *o)
{
	int64_t unc = (int64_t)(a->unc_ns > b->unc_ns ? a->unc_ns : b->unc_ns);

	if (a->n < 2 || b->n < 2)
		return -ENODATA;
	o->lo_ns = (a->t_ns[0] > b->t_ns[0] ? a->t_ns[0] : b->t_ns[0]) + unc;
	o->hi_ns =
	    (a->t_ns[a->n - 1] < b->t_ns[b->n - 1] ? a->t_ns[a->n - 1] : b->t_ns[b->n - 1]) - unc;
	if (o->hi_ns <= o->lo_ns)
		return -ENODATA;
	o->bps[0] = rate_inside(a, o->lo_ns, o->hi_ns);
	o->bps[1] = rate_inside(b, o->lo_ns, o->hi_ns);
	return o->bps[0] < 0 || o->bps[1] < 0 ? -ENODATA : 0;
}

int gdr_bidir_rates(const struct gdr_timeline *cli, const struct gdr_timeline *srv, double avg_c,
		    double avg_s, double rate[2])
{
	struct gdr_bidir o;

	if (gdr_bidir_overlap(cli, srv, &o)) {
		rate[0] = avg_c;
		rate[1] = avg_s;
		return 0;
	}
	rate[0] = o.bps[0];
	rate[1] = o.bps[1];
	return 1;
}
