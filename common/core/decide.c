/*
 * Paired ratios, their family-wise intervals and the rounds rule (decide.h).
 * Student's t comes from the regularized incomplete beta function, evaluated
 * by its continued fraction (DLMF 8.17.22) with the modified Lentz method;
 * the quantile by bisection on the upper tail, which keeps tails of 1e-9
 * exact where 1 - cdf would cancel.
 */
#include "config.h"

#include "decide.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <string.h>

#define CF_ITER_MAX 1000
#define CF_EPS	    1e-15
#define TINY	    1e-300

/* The continued fraction of I_x(a, b), good for x < (a + 1) / (a + b + 2). */
static double beta_cf(double a, double b, double x)
{
	double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0), h;

	if (fabs(d) < TINY)
		d = TINY;
	d = 1.0 / d;
	h = d;
	for (int k = 1; k <= CF_ITER_MAX; k++) {
		double m2 = 2.0 * k;
		/* The even step d_{2k}, then the odd step d_{2k+1}. */
		double num[2] = { k * (b - k) * x / ((a + m2 - 1.0) * (a + m2)),
				  -(a + k) * (a + b + k) * x / ((a + m2) * (a + m2 + 1.0)) };
		double delta = 1.0;

		for (int j = 0; j < 2; j++) {
			d = 1.0 + num[j] * d;
			if (fabs(d) < TINY)
				d = TINY;
			c = 1.0 + num[j] / c;
			if (fabs(c) < TINY)
				c = TINY;
			d = 1.0 / d;
			delta = c * d;
			h *= delta;
		}
		if (fabs(delta - 1.0) < CF_EPS)
			break;
	}
	return h;
}

/* I_x(a, b), the regularized incomplete beta function, 0 <= x <= 1. */
static double ibeta(double a, double b, double x)
{
	double lead;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	lead = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1.0) / (a + b + 2.0))
		return lead * beta_cf(a, b, x) / a;
	return 1.0 - lead * beta_cf(b, a, 1.0 - x) / b;
}

double gdr_t_sf(double t, double df)
{
	if (!(df > 0) || !(t >= 0))
		return NAN;
	if (isinf(t))
		return 0;
	return 0.5 * ibeta(df / 2.0, 0.5, df / (df + t * t));
}

double gdr_t_upper(double q, double df)
{
	double lo = 0, hi = 1;

	if (!(q > 0 && q < 0.5) || !(df > 0) || isinf(df))
		return NAN;
	while (gdr_t_sf(hi, df) > q) {
		lo = hi;
		hi *= 2;
		if (hi > 1e300)
			return NAN;
	}
	for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
		double mid = (lo + hi) / 2;

		if (gdr_t_sf(mid, df) > q)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double gdr_decide_tail(double alpha, unsigned int m, unsigned int k)
{
	return alpha / (2.0 * (m ? m : 1) * (k ? k : 1));
}

static int positive(double v)
{
	return v > 0 && v <= DBL_MAX;
}

int gdr_paired_ratio(const double *num, const double *den, unsigned int n, double q,
		     struct gdr_ratio_iv *out)
{
	double sum = 0, ss = 0, mean, t;

	memset(out, 0, sizeof(*out));
	if (n < GDR_DECIDE_MIN_ROUNDS)
		return -EINVAL;
	for (unsigned int r = 0; r < n; r++) {
		if (!positive(num[r]) || !positive(den[r]))
			return -EINVAL;
		sum += log(num[r]) - log(den[r]);
	}
	mean = sum / n;
	for (unsigned int r = 0; r < n; r++) {
		double dev = log(num[r]) - log(den[r]) - mean;

		ss += dev * dev;
	}
	out->n = n;
	out->mean = mean;
	out->df = n - 1;
	/*
	 * The values reach us with 6 significant digits (the CSV): a spread
	 * below that is rounding, not a measurement of no noise at all.
	 */
	out->se = fmax(sqrt(ss / (n - 1) / n), 1e-6);
	t = gdr_t_upper(q, out->df);
	if (isnan(t))
		return -EINVAL;
	out->est = exp(mean);
	out->lo = exp(mean - t * out->se);
	out->hi = exp(mean + t * out->se);
	return 0;
}

enum gdr_decision gdr_decide_margin(const struct gdr_ratio_iv *iv, double margin)
{
	if (iv->hi < 1.0 - margin)
		return GDR_DECIDE_BELOW;
	if (iv->lo > 1.0 + margin)
		return GDR_DECIDE_ABOVE;
	if (iv->lo >= 1.0 - margin && iv->hi <= 1.0 + margin)
		return GDR_DECIDE_WITHIN;
	return GDR_DECIDE_OPEN;
}

const char *gdr_decision_name(enum gdr_decision d)
{
	static const char *const names[] = { "open", "within", "below", "above" };

	return (unsigned int)d < sizeof(names) / sizeof(names[0]) ? names[d] : "?";
}

int gdr_decide_init(struct gdr_decide *d, unsigned int min, unsigned int max, double alpha,
		    double margin)
{
	unsigned int n;

	memset(d, 0, sizeof(*d));
	if (min == 0 || max < min || (min != max && min < GDR_DECIDE_MIN_ROUNDS))
		return -EINVAL;
	if (!(alpha > 0 && alpha < 1) || !(margin > 0 && margin < 1))
		return -EINVAL;
	d->alpha = alpha;
	d->margin = margin;
	d->min = min;
	d->max = max;
	for (n = min; d->nlooks < GDR_DECIDE_LOOKS_MAX;) {
		unsigned int next = (unsigned int)ceil(n * GDR_DECIDE_GROWTH);

		d->looks[d->nlooks++] = n;
		if (n >= max)
			break;
		if (next <= n)
			next = n + 1;
		/* The last look is max itself, even past the room of the table. */
		n = next > max || d->nlooks == GDR_DECIDE_LOOKS_MAX - 1 ? max : next;
	}
	return 0;
}

unsigned int gdr_decide_k(const struct gdr_decide *d)
{
	return d->nlooks ? d->nlooks : 1;
}

int gdr_decide_is_look(const struct gdr_decide *d, unsigned int n)
{
	for (unsigned int i = 0; i < d->nlooks; i++) {
		if (d->looks[i] == n)
			return 1;
	}
	return 0;
}

unsigned int gdr_decide_family(unsigned int nsizes, unsigned int npaths)
{
	return npaths > 1 ? (nsizes + 1) * (npaths - 1) : 0;
}

int gdr_decide_size(const struct gdr_decide *d, unsigned int m, const double *const *bps,
		    const int *ok, unsigned int nentries, unsigned int ref, unsigned int n)
{
	double q = gdr_decide_tail(d->alpha, m, gdr_decide_k(d));
	unsigned int others = 0;

	if (ref >= nentries || !ok[ref])
		return -EINVAL;
	for (unsigned int e = 0; e < nentries; e++) {
		struct gdr_ratio_iv iv;

		if (e == ref || !ok[e])
			continue;
		others++;
		if (gdr_paired_ratio(bps[e], bps[ref], n, q, &iv))
			return 0;
		if (gdr_decide_margin(&iv, d->margin) == GDR_DECIDE_OPEN)
			return 0;
	}
	return others ? 1 : -EINVAL;
}
