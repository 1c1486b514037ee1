/*
 * The verdict's statistics, C side (docs/gdr-ab.md, "How the verdict is
 * decided"): paired ratios from rounds, their intervals at a family-wise error
 * rate, and the rule that adds rounds at a size until its answer is known.
 * gdr-ab (scripts/gdr_ab/stats.py) computes the same numbers in Python;
 * tests/stats/vectors.txt pins both to the same values.
 *
 * The model: in round r every path ran once, one after the other, so the log
 * of a path's bandwidth over the reference's in that round, d_r, carries no
 * slow drift of the machine. The d_r are taken as independent and normal
 * (mean mu, unknown variance); exp(mu) is the ratio. Its interval is Student's
 * t interval of the mean of d at a two-sided level of alpha / (m * K): m
 * intervals in the family, K looks at the data (Bonferroni over both), so
 * every interval of a run holds at once with probability >= 1 - alpha,
 * however the rounds were stopped at the looks.
 */
#ifndef GDR_DECIDE_H
#define GDR_DECIDE_H

#include <stddef.h>

/* Fewer rounds than this give no t interval (gdr-ab keeps the min..max view there). */
#define GDR_DECIDE_MIN_ROUNDS 3
#define GDR_DECIDE_LOOKS_MAX  64
/* The looks of the schedule grow by this factor (at least one round each). */
#define GDR_DECIDE_GROWTH 1.25

/*
 * Whose turn it is: in round g of a run (counted over every size) the n
 * paths run one after another starting at path g mod n, so that a slow
 * drift lands on each path alike (session_order.c).
 */
static inline unsigned int gdr_turn(unsigned int n, unsigned int g, unsigned int pos)
{
	return n ? (g + pos) % n : 0;
}

/* t > 0 with P(T_df > t) = q, for 0 < q < 0.5 and df > 0; NAN outside. */
double gdr_t_upper(double q, double df);
/* P(T_df > t) for t >= 0. */
double gdr_t_sf(double t, double df);

/* The one-sided tail of each interval: alpha / (2 m k). */
double gdr_decide_tail(double alpha, unsigned int m, unsigned int k);

/* A ratio with its interval: est = exp(mean d), [lo, hi] = exp(mean d -+ t * se). */
struct gdr_ratio_iv {
	double est, lo, hi;
	double mean, se, df; /* of d, on the log scale */
	unsigned int n;
};

/*
 * The ratio num/den from n paired values (num[r] and den[r] measured in the
 * same round), its interval with one-sided tail q. 0, or -EINVAL when n is
 * below GDR_DECIDE_MIN_ROUNDS or a value is not a positive finite number.
 */
int gdr_paired_ratio(const double *num, const double *den, unsigned int n, double q,
		     struct gdr_ratio_iv *out);

/* What an interval says against the margin e (0.05: the zone 0.95..1.05). */
enum gdr_decision {
	GDR_DECIDE_OPEN = 0, /* straddles an end of the zone: more rounds */
	GDR_DECIDE_WITHIN,   /* inside the zone: equal within the margin */
	GDR_DECIDE_BELOW,    /* below the zone */
	GDR_DECIDE_ABOVE,    /* above the zone */
};
enum gdr_decision gdr_decide_margin(const struct gdr_ratio_iv *iv, double margin);
const char *gdr_decision_name(enum gdr_decision d);

/*
 * The rounds rule of one run: at least min rounds at a size, at most max,
 * a look after round min and then at rounds growing by GDR_DECIDE_GROWTH up to
 * max. A size stops only at a look (decided, max, or the time budget spent),
 * so K, what the error rate is divided by, is the number of looks; a fixed
 * run (min == max) has one look and K = 1.
 */
struct gdr_decide {
	double alpha;  /* family-wise error rate, 0.01 */
	double margin; /* the equivalence zone's half-width, 0.05 */
	unsigned int min, max;
	unsigned int looks[GDR_DECIDE_LOOKS_MAX];
	unsigned int nlooks;
};
/* 0, or -EINVAL (min < GDR_DECIDE_MIN_ROUNDS unless min == max, max < min, alpha or margin out of
 * (0, 1)). */
int gdr_decide_init(struct gdr_decide *d, unsigned int min, unsigned int max, double alpha,
		    double margin);
unsigned int gdr_decide_k(const struct gdr_decide *d);
/* Whether the rule looks at the data after round n (1-based). */
int gdr_decide_is_look(const struct gdr_decide *d, unsigned int n);
/*
 * The intervals a run's verdict holds: for each of npaths paths but the
 * reference, one per size and one for the summary over the sizes.
 */
unsigned int gdr_decide_family(unsigned int nsizes, unsigned int npaths);

/*
 * One size after round n: every path's ratio to the reference (ref) decided
 * against the margin? bps[e][r]: entry e's bandwidth in round r; ok[e]: the
 * entry measured (a skipped path is left out). m: the family's size. Returns
 * 1 when every ratio is decided, 0 when one is open, -EINVAL when there is
 * nothing to decide (no reference, or no other path).
 */
int gdr_decide_size(const struct gdr_decide *d, unsigned int m, const double *const *bps,
		    const int *ok, unsigned int nentries, unsigned int ref, unsigned int n);

#endif
