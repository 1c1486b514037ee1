"""The verdict: every claim gdr-ab prints, at one family-wise error rate.

judge(rows, rules) builds the tables (table.py), pairs each path with host
round by round (the rounds of one run, rep_bw_gbps), takes every interval
the output can claim on at alpha / (m * K) (stats.py: m intervals, K looks),
and derives from those intervals alone:

  a cell's words   '0.90x' (below host), '≈ host' (holds 1.0), above host;
  the summary      per verb and path, pooled over the summary's sizes;
  stars            host best at a size beyond every GPU path's interval;
  'above host'     a GPU or bounce path above host beyond its interval: an
                   anomaly (impossible on one NIC), never a star;
  the gate         each --expect rule PASS, FAIL or UNDECIDED (gate.py).

Since every claim follows from intervals that hold all at once with
probability >= 1 - alpha, the chance that any claim of a run is false is at
most alpha (under the model of stats.py). A rule whose cells carry an
anomaly that voids the comparison is UNDECIDED and says which.
tests/scripts/ab_sim_check.py measures all of it on runs with a known truth.
"""

from collections import OrderedDict

from . import anomalies, gate as gatemod, stats
from .table import BW, LAT, Table, pairs, summary_window

DEFAULT_ALPHA = 0.01
DEFAULT_MARGIN = 0.05
parse_rules = gatemod.parse_rules


class Family:
    """The family of intervals: its error rate, its size and the margin."""

    def __init__(self, alpha, m, margin):
        self.alpha, self.m, self.margin = alpha, m, margin

    def q(self, k):
        return stats.tail(self.alpha, self.m, k)


class Claim:
    """A summary: its interval (None without rounds), what it says (below,
    above, equal: it holds 1.0), and the sizes whose own interval says
    otherwise [(size, cell)]."""

    def __init__(self, iv, word, apart=()):
        self.iv, self.word, self.apart = iv, word, list(apart)


def word_of(iv):
    if iv is None:
        return None
    if iv.hi < 1.0:
        return "below"
    if iv.lo > 1.0:
        return "above"
    return "equal"


def ref_cell(table, verb, size, cell, path="host"):
    """PATH's cell at VERB/SIZE from rows of CELL's role (the table's own when it is)."""
    own = table.cells.get(verb, {}).get(size, {}).get(path)
    if own is not None and own.role == cell.role:
        return own
    return table.same_role(verb, size, path, cell)


class Verdict:
    """What judge() found; gdr-ab prints it, the simulation test counts it."""

    def __init__(self):
        self.tables = []
        self.family = None
        self.summaries = OrderedDict()  # (verb, path) -> Claim
        self.stars = set()  # (verb, size, path)
        self.above_host = set()  # (verb, size, path)
        self.gate = []  # (rule text, verb, outcome)
        self.gate_lines = []  # (outcome, line)
        self.per_size = []  # (rule, verb, size, outcome) for --prom
        self.per_verb = {}  # anomaly lines by table key
        self.about_inputs = []


def _paired_cells(bw):
    """Each GPU path's cell that can be judged against host's: its rounds
    paired with host's, or (a file without rounds) both rows' ranges:
    [(verb, size, path, cell)], cell.method saying which."""
    out = []
    for verb, sizes in bw.cells.items():
        for size, cells in sizes.items():
            for path, cell in cells.items():
                if path == "host" or cell.value is None:
                    continue
                ref = ref_cell(bw, verb, size, cell)
                if ref is None or "one after another" in cell.flags + ref.flags:
                    continue
                cell.k = max(cell.looks, ref.looks)
                if cell.runs and ref.runs:
                    cell.pairs = pairs(cell, ref)
                    if len(cell.pairs[0]) >= stats.MIN_ROUNDS:
                        cell.method = "rounds"
                elif cell.spread is not None and ref.spread is not None:
                    cell.pairs = (cell.spread, ref.spread)
                    cell.method = "range"
                if cell.method:
                    out.append((verb, size, path, cell))
    return out


def _summary_cells(bw, paired):
    """{(verb, path): [(size, cell)]} of the paired cells in each verb's summary window."""
    by = OrderedDict()
    ok = {(v, s, p) for v, s, p, _c in paired}
    for verb, sizes in bw.cells.items():
        win, _where = summary_window(sizes, BW)
        for size in win:
            for path, cell in sizes[size].items():
                if (verb, size, path) in ok:
                    by.setdefault((verb, path), []).append((size, cell))
    return by


def judge(rows, rules=(), alpha=DEFAULT_ALPHA, margin=DEFAULT_MARGIN, max_spread=10.0,
          baseline=None, dups=(), across_pairs=False):
    """The verdict on ROWS (one kind or both): tables, claims, anomalies, gate.
    BASELINE: {kind name: Table} of a saved run ('baseline' in rules)."""
    v = Verdict()
    bw = Table([r for r in rows if r["kind"] == BW.name], BW)
    lat = Table([r for r in rows if r["kind"] == LAT.name], LAT)
    v.tables = [bw, lat]
    # Paths one after another: their rounds are no pairs (drift lands between them).
    timing = anomalies.timing_anomalies([r for r in rows if r["kind"] == BW.name], bw)
    paired = _paired_cells(bw)
    windows = _summary_cells(bw, paired)
    extra = gatemod.extra_intervals(rules, {BW.name: bw, LAT.name: lat}, baseline)
    fam = Family(alpha, len(paired) + len(windows) + extra, margin)
    v.family = bw.family = lat.family = fam
    for verb, size, path, cell in paired:
        if cell.method == "rounds":
            cell.iv = stats.paired(cell.pairs[0], cell.pairs[1], fam.q(cell.k))
        else:
            cell.iv = stats.unpaired(cell.pairs[0], cell.pairs[1], fam.q(cell.k))
        cell.word = word_of(cell.iv)
        cell.ratio, cell.rlo, cell.rhi = cell.iv.est, cell.iv.lo, cell.iv.hi
    bw.summaries = {}
    for (verb, path), cells in windows.items():
        k = max(c.k for _s, c in cells)
        iv = stats.pooled([c.iv for _s, c in cells], fam.q(k))
        word = word_of(iv)
        apart = [(s, c) for s, c in cells
                 if c.word in ("below", "above") and c.word != word]
        bw.summaries[(verb, path)] = v.summaries[(verb, path)] = Claim(iv, word, apart)
    v.per_verb, v.about_inputs = anomalies.find(bw, lat, rows, dups, max_spread, margin,
                                                across_pairs, timing)
    for verb, sizes in bw.cells.items():
        for size, cells in sizes.items():
            for path, cell in cells.items():
                if "above host" in cell.flags and cell.iv is not None:
                    v.above_host.add((verb, size, path))
            _star(bw, verb, size, cells, v)
    if rules:
        v.gate_lines = gatemod.evaluate(rules, {BW.name: bw, LAT.name: lat}, baseline=baseline,
                                        per_size=v.per_size, family=fam, verdict=v)
    return v


def _star(bw, verb, size, cells, v):
    """The star: host at a size where every other path measured is below it
    at the error rate, and nothing voids the comparison. A GPU path above
    host is an anomaly (one NIC), so it never gets one."""
    for c in cells.values():
        c.best = False
    host = cells.get("host")
    others = [c for p, c in cells.items() if p != "host" and c.value is not None]
    if host is None or host.value is None or not others:
        return
    if any(c.word != "below" for c in others):
        return
    if any(anomalies.VOIDS & set(c.flags) for c in cells.values()):
        return
    host.best = True
    v.stars.add((verb, size, "host"))
