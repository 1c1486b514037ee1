"""Intervals from the repeats: how far a number can be trusted.

A bandwidth row carries its repeats' lowest and highest value (bw_min_gbps,
bw_max_gbps) and their count (repeats). The interval of a cell is the lowest
to the highest repeat over its rows: distribution-free, it holds the median
of the distribution the repeats come from with probability 1 - 2^(1-n) for n
repeats (75 % at 3, 94 % at 5, 99.8 % at 10), whatever that distribution is.

The ratio of a path to host gets the interval from the two cells' ends:
path min / host max .. path max / host min. It holds the ratio of the two
medians whenever both cells' intervals hold theirs (at 5 repeats each: at
least 87 %). One repeat in all gives no interval.
"""

import math

def coverage(n):
    """Probability that the min..max of N repeats holds their median."""
    return 1.0 - 2.0 ** (1 - n) if n and n >= 2 else 0.0


def cell_interval(rows):
    """(lo, hi, n) of the ok rows' repeats; lo and hi None when the rows give
    no interval (one repeat in all, or no min/max columns). A row without
    repeats counts as one repeat; one without min/max, at its value."""
    lo = hi = None
    n = 0
    spread_known = True
    for r in rows:
        v = r["vals"]
        if "bw" not in v:
            continue
        reps = r.get("repeats") or 1
        if reps >= 2 and "bw_min" in v and "bw_max" in v:
            a, b = v["bw_min"], v["bw_max"]
        else:
            a = b = v["bw"]
            if reps >= 2:
                spread_known = False  # several repeats, their spread not written
        n += reps  # repeats whose spread is unknown still are repeats: never "n=1"
        lo = a if lo is None else min(lo, a)
        hi = b if hi is None else max(hi, b)
    if n < 2 or not spread_known:
        return None, None, n
    return lo, hi, n


def ratio_interval(cell, ref):
    """(lo, hi) of CELL / REF, or (None, None) when either has no interval."""
    if cell.lo is None or ref.lo is None or not ref.lo or not ref.hi:
        return None, None
    return cell.lo / ref.hi, cell.hi / ref.lo


def holds(lo, hi, x):
    return lo is not None and lo <= x <= hi


def down(x):
    """X rounded down to 2 decimals, as text: an interval's low end, rounded outward."""
    return f"{math.floor(x * 100 + 1e-9) / 100:.2f}"


def up(x):
    """X rounded up to 2 decimals, as text: an interval's high end."""
    return f"{math.ceil(x * 100 - 1e-9) / 100:.2f}"


def num(x):
    """A Gb/s bound in at most 4 significant digits: 0.2584, 97.40, 398.2."""
    if x >= 1000:
        return f"{x:.0f}"
    return f"{x:.4g}" if x < 1 else f"{x:.{max(0, 3 - len(str(int(x))))}f}"


def rel_spread(lo, hi, mid):
    """(hi - lo) / mid as a fraction, or None."""
    if lo is None or not mid:
        return None
    return (hi - lo) / mid
