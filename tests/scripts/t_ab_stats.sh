#!/bin/sh
# gdr-ab's statistics (scripts/gdr_ab/stats.py, issue 51): Student's t and the
# paired ratios against tests/stats/vectors.txt, the values the bench's C
# (tests/unit/test_decide.c) must give too; Welch and the pooled summary;
# printed interval ends that never contradict the words. TAP output.
. "$(dirname "$0")/ab_lib.sh"
plan 6
pycheck() { # NAME PYTHON: the snippet exits 0
	name=$1
	shift
	printf '%s\n' "import sys, math" "sys.path.insert(0, '$srcdir/scripts')" \
		"sys.dont_write_bytecode = True" "from gdr_ab import stats" "$@" >"$tmp/check.py"
	check "$name" "$PYTHON" "$tmp/check.py"
}
V="$srcdir/tests/stats/vectors.txt"

pycheck "t quantiles: the textbook's to 1e-6, the C's vectors to 1e-9, their tails back" \
	"bad = []" \
	"for line in open('$V'):" \
	"    w = line.split()" \
	"    if w and w[0] in ('table', 't'):" \
	"        q, df, t = map(float, w[1:4])" \
	"        got = stats.t_upper(q, df)" \
	"        tol = 1e-6 if w[0] == 'table' else 1e-9" \
	"        if abs(got - t) > tol * t or abs(stats.t_sf(t, df) - q) > 1e-7 * q: bad.append(line)" \
	"assert not bad, bad"
pycheck "paired ratios: estimate and interval as the vectors say" \
	"n = 0" \
	"for line in open('$V'):" \
	"    if not line.startswith('ratio '): continue" \
	"    head, num, rest = line[6:].split('|')" \
	"    den, want = rest.split('->')" \
	"    iv = stats.paired([float(x) for x in num.split()], [float(x) for x in den.split()], float(head))" \
	"    for got, w in zip((iv.est, iv.lo, iv.hi), map(float, want.split())):" \
	"        assert abs(got - w) <= 1e-9 * w, (line, got, w)" \
	"    n += 1" \
	"assert n >= 4"
pycheck "too few rounds or lists apart: no interval; one value: the rounding floor, not zero width" \
	"assert stats.paired([1, 2], [1, 2], 0.01) is None" \
	"assert stats.paired([1, 2, 3], [1, 2], 0.01) is None" \
	"iv = stats.paired([5, 5, 5], [5, 5, 5], 0.01)" \
	"assert iv.lo < 1 < iv.hi and iv.hi / iv.lo < 1.001"
pycheck "Welch: two runs' rounds apart; the pooled summary narrower than a size alone" \
	"a = [90.1, 88.7, 91.5, 89.9, 90.4]; b = [100.2, 98.1, 101.0, 99.6, 100.3]" \
	"w = stats.welch(a, b, 0.005)" \
	"assert w.lo < 0.9 < w.hi < 0.95, (w.lo, w.hi)" \
	"s = [stats.paired(a, b, 0.005), stats.paired([x * 1.01 for x in a], b, 0.005)]" \
	"p = stats.pooled(s, 0.005)" \
	"assert p.hi / p.lo < min(c.hi / c.lo for c in s)" \
	"assert abs(math.log(p.est) - (math.log(s[0].est) + math.log(s[1].est)) / 2) < 1e-12"
pycheck "printed ends: rounded outward, and never 1.00 where the words exclude 1.0" \
	"assert stats.fmt_interval(0.9812, 0.9996, 'below') == '0.9812-0.9996'" \
	"assert stats.fmt_interval(1.0004, 1.02, 'above').split('-')[0] > '1.0'" \
	"assert stats.fmt_interval(0.9812, 0.9996, 'equal') == '0.98-1.00'" \
	"assert stats.fmt_interval(0.912, 0.948) == '0.91-0.95'"
pycheck "the margin's decisions: within, below, above, open" \
	"I = lambda lo, hi: type('I', (), {'lo': lo, 'hi': hi})" \
	"assert stats.decide_margin(I(0.95, 1.05), 0.05) == 'within'" \
	"assert stats.decide_margin(I(0.80, 0.949), 0.05) == 'below'" \
	"assert stats.decide_margin(I(1.051, 1.3), 0.05) == 'above'" \
	"assert stats.decide_margin(I(0.94, 1.0), 0.05) == 'open'"
done_testing
