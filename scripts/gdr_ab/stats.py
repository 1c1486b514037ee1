"""The verdict's statistics (docs/gdr-ab.md, "How the verdict is decided").

The same numbers as the bench's common/core/decide.c (the rounds rule), in
Python; tests/stats/vectors.txt pins both to the same values.

Model: in round r every path ran once, one after the other, so d_r = ln(path
Gb/s / reference Gb/s in that round) carries no slow drift of the machine.
The d_r are independent and normal with mean mu; exp(mu) is the ratio. Its
interval is Student's t interval of the mean of d. Every interval the
verdict prints is one of m (the family) and the run looked at its data K
times (the rounds rule's looks): each is taken at a two-sided level of
alpha / (m * K), so that all of them hold at once with probability at least
1 - alpha (Bonferroni), however the rounds were stopped at the looks.
"""

import math
from functools import lru_cache

MIN_ROUNDS = 3  # fewer rounds: no t interval (decide.h GDR_DECIDE_MIN_ROUNDS)
SE_FLOOR = 1e-6  # the CSV's 6 significant digits: less spread is rounding
_CF_EPS = 1e-15
_TINY = 1e-300


def _beta_cf(a, b, x):
    """The continued fraction of I_x(a, b) (DLMF 8.17.22), modified Lentz."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = _TINY if abs(d) < _TINY else d
    d = 1.0 / d
    h = d
    for k in range(1, 1001):
        m2 = 2.0 * k
        delta = 1.0
        for num in (k * (b - k) * x / ((a + m2 - 1.0) * (a + m2)),
                    -(a + k) * (a + b + k) * x / ((a + m2) * (a + m2 + 1.0))):
            d = 1.0 + num * d
            d = _TINY if abs(d) < _TINY else d
            c = 1.0 + num / c
            c = _TINY if abs(c) < _TINY else c
            d = 1.0 / d
            delta = c * d
            h *= delta
        if abs(delta - 1.0) < _CF_EPS:
            break
    return h


def _ibeta(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    lead = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                    + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return lead * _beta_cf(a, b, x) / a
    return 1.0 - lead * _beta_cf(b, a, 1.0 - x) / b


def t_sf(t, df):
    """P(T_df > t), t >= 0."""
    if math.isinf(t):
        return 0.0
    return 0.5 * _ibeta(df / 2.0, 0.5, df / (df + t * t))


@lru_cache(maxsize=4096)
def t_upper(q, df):
    """t > 0 with P(T_df > t) = q (0 < q < 0.5), by bisection on the tail."""
    if not (0 < q < 0.5) or not df > 0:
        return math.nan
    lo, hi = 0.0, 1.0
    while t_sf(hi, df) > q:
        lo, hi = hi, hi * 2
        if hi > 1e300:
            return math.nan
    for _ in range(200):
        if hi - lo <= 1e-13 * hi:
            break
        mid = (lo + hi) / 2
        if t_sf(mid, df) > q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def tail(alpha, m, k):
    """Each interval's one-sided tail: alpha / (2 m k)."""
    return alpha / (2.0 * max(m, 1) * max(k, 1))


class Interval:
    """A ratio and its interval; mean, se, df of the logs it comes from."""

    __slots__ = ("est", "lo", "hi", "mean", "se", "df", "n")

    def __init__(self, mean, se, df, n, q):
        self.mean, self.se, self.df, self.n = mean, se, df, n
        t = t_upper(q, round(df, 6))
        self.est = math.exp(mean)
        self.lo = math.exp(mean - t * se)
        self.hi = math.exp(mean + t * se)

    def excludes(self, x):
        return self.hi < x or self.lo > x


def log_mean_se(d):
    """(mean, se, df) of the values D (logs), with the rounding floor on se."""
    n = len(d)
    mean = math.fsum(d) / n
    ss = math.fsum((x - mean) ** 2 for x in d)
    return mean, max(math.sqrt(ss / (n - 1) / n), SE_FLOOR), n - 1


def paired(num, den, q):
    """The ratio num/den from rounds measured pairwise (num[r] beside den[r]),
    or None with fewer than MIN_ROUNDS pairs."""
    if len(num) < MIN_ROUNDS or len(num) != len(den):
        return None
    d = [math.log(a) - math.log(b) for a, b in zip(num, den)]
    mean, se, df = log_mean_se(d)
    return Interval(mean, se, df, len(d), q)


def level(values, q):
    """One path's Gb/s from its rounds (not a ratio): exp(mean log) and its interval."""
    if len(values) < MIN_ROUNDS:
        return None
    mean, se, df = log_mean_se([math.log(v) for v in values])
    return Interval(mean, se, df, len(values), q)


def welch(a, b, q):
    """The ratio of two independent sets of rounds (a baseline of another run):
    exp(mean log a - mean log b), Welch-Satterthwaite df."""
    if len(a) < MIN_ROUNDS or len(b) < MIN_ROUNDS:
        return None
    ma, sa, _ = log_mean_se([math.log(v) for v in a])
    mb, sb, _ = log_mean_se([math.log(v) for v in b])
    se = math.sqrt(sa * sa + sb * sb)
    df = se ** 4 / (sa ** 4 / (len(a) - 1) + sb ** 4 / (len(b) - 1))
    return Interval(ma - mb, se, df, min(len(a), len(b)), q)


@lru_cache(maxsize=None)
def d2(n):
    """E[range] of n standard normal values: the range's scale (Tippett),
    by integrating 1 - F(x)^n - (1 - F(x))^n over x (Simpson, 4000 steps)."""
    def f(x):
        p = 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))
        return 1.0 - p ** n - (1.0 - p) ** n
    a, b, k = -12.0, 12.0, 4000
    h = (b - a) / k
    tot = f(a) + f(b) + sum((4 if i % 2 else 2) * f(a + i * h) for i in range(1, k))
    return tot * h / 3.0


def from_range(mean, lo, hi, n):
    """(mean, se, df) of log Gb/s from a row's summary alone (files without
    rounds): the log sd from the repeats' range over d2(n), df 0.9 (n - 1)
    (the range's spread as a chi's, Patnaik). An approximation: the
    simulation measures what it is worth (docs/gdr-ab.md)."""
    if n < MIN_ROUNDS or not 0 < lo <= mean <= hi:
        return None
    sd = (math.log(hi) - math.log(lo)) / d2(n)
    return math.log(mean), max(sd / math.sqrt(n), SE_FLOOR), 0.9 * (n - 1)


def combine(parts):
    """Several rows' (mean, se, df) of one cell as one: their mean, the se of
    that mean, Welch-Satterthwaite df (each row counts once)."""
    if len(parts) == 1:
        return parts[0]
    k = len(parts)
    var = math.fsum(p[1] ** 2 for p in parts) / (k * k)
    den = math.fsum((p[1] ** 2 / (k * k)) ** 2 / p[2] for p in parts)
    return math.fsum(p[0] for p in parts) / k, math.sqrt(var), var * var / den


def unpaired(a, b, q):
    """The ratio of two (mean, se, df) of logs measured apart: Welch."""
    se = math.sqrt(a[1] ** 2 + b[1] ** 2)
    df = se ** 4 / (a[1] ** 4 / a[2] + b[1] ** 4 / b[2])
    return Interval(a[0] - b[0], se, df, 0, q)


def pooled(cells, q):
    """The summary over several sizes: the mean of their log ratios (each size
    counts once), its se from theirs, Welch-Satterthwaite df."""
    cells = [c for c in cells if c is not None]
    if not cells:
        return None
    k = len(cells)
    mean = math.fsum(c.mean for c in cells) / k
    var = math.fsum(c.se ** 2 for c in cells) / (k * k)
    den = math.fsum((c.se ** 2 / (k * k)) ** 2 / c.df for c in cells)
    df = var * var / den if den > 0 else sum(c.df for c in cells)
    return Interval(mean, math.sqrt(var), df, sum(c.n for c in cells), q)


def decide_margin(iv, margin):
    """What IV says against the zone 1 -+ MARGIN: within, below, above or open."""
    if iv.hi < 1.0 - margin:
        return "below"
    if iv.lo > 1.0 + margin:
        return "above"
    if iv.lo >= 1.0 - margin and iv.hi <= 1.0 + margin:
        return "within"
    return "open"


def fmt_ratio(est, word=None):
    """'0.93': 2 decimals, more where the words say below or above 1.0 and
    2 decimals would print 1.00."""
    for dec in (2, 3, 4, 5, 6):
        text = f"{est:.{dec}f}"
        if word not in ("below", "above") or float(text) != 1.0:
            return text
    return f"{est:.6f}"


def fmt_interval(lo, hi, word=None, at=1.0):
    """'0.93-0.97': ends rounded outward to 2 decimals, more where the words
    say the interval lies below or above AT (1.0, or a rule's threshold) and
    2 decimals would print AT itself at an end."""
    for dec in (2, 3, 4, 5, 6):
        scale = 10 ** dec
        a = math.floor(lo * scale + 1e-9) / scale
        b = math.ceil(hi * scale - 1e-9) / scale
        if word == "below" and b >= at > hi:
            continue
        if word == "above" and a <= at < lo:
            continue
        return f"{a:.{dec}f}-{b:.{dec}f}"
    return f"{lo:.6f}-{hi:.6f}"
