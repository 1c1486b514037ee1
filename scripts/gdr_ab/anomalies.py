"""Anomalies: what makes a verdict untrustworthy, named instead of averaged away.

Per verb (bandwidth tables), each found cell gets a short tag in cell.flags
(the table marks it "!", the summary lists the tags) and one line says what,
where and what to do:

  above host    a GPU path faster than host memory beyond the spread
  above ceiling an average or a peak above the pair's ceiling_gbps
  CPU-bound     a client or server cpu_util_pct >= 95 %
  wide spread   a row whose repeats spread more than --max-spread
  one after another  rows of different paths at one size that did not
                overlap in time (t_start_s..t_end_s), so drift landed on one

Per verb (latency tables, lat_verb_anomalies):

  below host    a GPU path's median latency under host memory's fastest
                sample at the same size (its p50 below host's min)

and over the inputs: rows pooled from different hosts, NICs, GPUs, labels or
gdrperf versions, and an input given twice.
"""

from collections import OrderedDict

from .common import PATH_ORDER, fmt_size, ordered
from . import stats
from .spread import down, up
from .stats import fmt_interval

CPU_BUSY = 95.0
# A ratio this far above host with one repeat (no interval) is still worth a
# word: there is no spread to say it is noise.
ONE_REPEAT_ABOVE = 1.05
# The CSV keeps 3 decimals: a number a rounding step above the ceiling is not above it.
CEIL_SLACK = 1.001

WHY_ABOVE = {
    "bounce": "a bounce path cannot beat host memory on the same NIC",
    "dmabuf": "GPU memory cannot beat host memory on the same NIC",
    "peermem": "GPU memory cannot beat host memory on the same NIC",
}


def _sizes(sizes):
    sizes = sorted(sizes)
    if len(sizes) <= 3:
        return ", ".join(fmt_size(s) for s in sizes)
    return f"{len(sizes)} sizes {fmt_size(sizes[0])}..{fmt_size(sizes[-1])}"


def _flag(cell, tag):
    if tag not in cell.flags:
        cell.flags.append(tag)


def verb_anomalies(table, verb, max_spread, margin=0.05):
    """Lines for one verb of a bandwidth Table; marks the cells it names."""
    sizes = table.cells[verb]
    paths = ordered({p for c in sizes.values() for p in c}, PATH_ORDER)
    lines = []
    for p in paths:
        cells = [(s, sizes[s][p]) for s in sorted(sizes)
                 if p in sizes[s] and sizes[s][p].value is not None]
        lines += _above_host(p, cells)
        lines += _above_ceiling(p, cells)
        lines += _wide(p, cells, max_spread, margin)
        lines += _cpu(table, verb, p, cells)
    return lines


def _above_host(path, cells):
    """A GPU or bounce path faster than host: with rounds, claimed when its
    interval (at the verdict's error rate) lies above 1.0; without rounds the
    repeats' range or one repeat can only warn."""
    if path == "host":
        return []
    beyond = [(s, c) for s, c in cells if c.iv is not None and c.iv.lo > 1.0]
    ranged = [(s, c) for s, c in cells
              if c.iv is None and c.rlo is not None and c.rlo > 1.0]
    blind = [(s, c) for s, c in cells
             if c.iv is None and c.rlo is None and c.ratio is not None
             and c.ratio > ONE_REPEAT_ABOVE]
    lines = []
    why = WHY_ABOVE.get(path.partition(":")[0],
                        "a GPU path cannot beat host memory on the same NIC")
    fix = ("noise in host's rounds or an impaired host path (its NUMA node, the IOMMU): "
           "check host memory's path and measure again")
    for got, how in ((beyond, "above 1.0 at the error rate"),
                     (ranged, "the repeats' range; no rounds to judge it at the error rate")):
        if not got:
            continue
        s, top = max(got, key=lambda x: x[1].ratio)
        for _, c in got:
            _flag(c, "above host")
        lines.append(f"{path} {top.ratio:.2f}x host at {fmt_size(s)} "
                     f"({fmt_interval(top.rlo, top.rhi, 'above')}, {how}"
                     + (f"; also at {_sizes([x for x, _ in got if x != s])}"
                        if len(got) > 1 else "")
                     + f"): {why}: {fix}")
    if blind:
        s, top = max(blind, key=lambda x: x[1].ratio)
        for _, c in blind:
            _flag(c, "above host")
        lines.append(f"{path} {top.ratio:.2f}x host at {fmt_size(s)}"
                     + (f" (also at {_sizes([x for x, _ in blind if x != s])})"
                        if len(blind) > 1 else "")
                     + f" with one repeat, no spread to judge: {why}: {fix}")
    return lines


def lat_verb_anomalies(table, verb):
    """Lines for one verb of a latency Table; marks the cells it names. A
    latency row is one run of many samples: its spread is its percentiles, so
    a GPU path is 'below host' only when its median lies under host's fastest
    sample (lat_min_us) at that size, not when the medians merely differ."""
    sizes = table.cells[verb]
    paths = ordered({p for c in sizes.values() for p in c}, PATH_ORDER)
    lines = []
    for p in paths:
        if p == "host":
            continue
        below = []
        for s in sorted(sizes):
            c, h = sizes[s].get(p), sizes[s].get("host")
            if c is None or h is None or c.value is None:
                continue
            host_min = h.metrics.get("min_us")
            if host_min is not None and c.value < host_min:
                below.append((s, c, host_min))
        if not below:
            continue
        for _, c, _m in below:
            _flag(c, "below host")
        s, c, m = min(below, key=lambda x: x[1].value / x[2])
        why = WHY_ABOVE.get(p, "a GPU path cannot beat host memory on the same NIC")
        lines.append(f"{p} p50 {c.value:.2f} us at {fmt_size(s)}, under host's fastest sample "
                     f"({m:.2f} us)"
                     + (f"; also at {_sizes([x for x, _, _ in below if x != s])}"
                        if len(below) > 1 else "")
                     + f": {why}: noise or an impaired host path; rerun")
    return lines


def _above_ceiling(path, cells):
    over = []
    for s, c in cells:
        if c.ceiling is None:
            continue
        for what, v in (("average", c.value), ("peak", c.metrics.get("bw_peak"))):
            if v is not None and v > c.ceiling * CEIL_SLACK:
                over.append((s, c, what, v))
                break
    if not over:
        return []
    for _, c, _, _ in over:
        _flag(c, "above ceiling")
    s, c, what, v = max(over, key=lambda x: x[3] / x[1].ceiling)
    # A bounce ceiling may be the copy rate measured at the row's chunk (its note says).
    why = ("a port rate or PCIe link misread, or the copy rate in the row's note read low"
           if path == "bounce" else "a port rate or PCIe link misread")
    fix = "gdr_doctor --measure" if path == "bounce" else "gdr_doctor"
    return [f"{path} {what} {v:.3f} Gb/s above the pair's ceiling {c.ceiling:.3f} Gb/s at "
            f"{_sizes([x[0] for x in over])}: the ceiling is wrong ({why}) or the timing is; "
            f"check {fix}"]


def _wide(path, cells, bound, margin):
    """Spread that changes a decision: with rounds, a cell whose interval is
    wider than BOUND % and still straddles an end of the margin's zone (the
    noise, not the rounds' count, keeps it open); without rounds, repeats
    spread more than BOUND % of their median (the old files' view)."""
    wide = []
    for s, c in cells:
        if c.iv is not None:
            width = c.iv.hi / c.iv.lo - 1.0
            if width * 100 > bound and stats.decide_margin(c.iv, margin) == "open":
                wide.append((s, c, width))
            continue
        if c.runs:
            continue  # rounds: their spread shows in the ratios' intervals, judged above
        worst = 0.0
        for r in c.rows:
            v = r["vals"]
            if (r["status"] == "ok" and (r.get("repeats") or 1) >= 2 and "bw_min" in v
                    and "bw_max" in v):
                mid = v.get("bw_median") or v.get("bw")
                if mid:
                    worst = max(worst, (v["bw_max"] - v["bw_min"]) / mid)
        if worst * 100 > bound:
            wide.append((s, c, worst))
    if not wide:
        return []
    for _, c, _ in wide:
        _flag(c, "wide spread")
    s, c, w = max(wide, key=lambda x: x[2])
    others = [x[0] for x in wide if x[0] != s]
    what = "interval spans" if c.iv is not None else "repeats spread"
    return [f"{path} {what} {w * 100:.0f} % at {fmt_size(s)} (more than --max-spread "
            f"{bound:g} %" + (f"; also at {_sizes(others)}" if others else "") + "): a noisy "
            "machine or link leaves it undecided; more rounds (--repeat MIN:MAX) or a "
            "quieter machine"]


def _cpu(table, verb, path, cells):
    busy = OrderedDict()  # role -> [(size, pct)]
    for s, c in cells:
        for r in table.groups.get((verb, s, path), []):
            pct = r["vals"].get("cpu")
            if r["status"] == "ok" and pct is not None and pct >= CPU_BUSY:
                busy.setdefault(r["role"] or "a", []).append((s, pct))
                _flag(c, "CPU-bound")
    lines = []
    for role, got in busy.items():
        top = max(p for _, p in got)
        lines.append(f"{path}: {role} CPU at {top:.0f} % (>= {CPU_BUSY:g} % at "
                     f"{_sizes({s for s, _ in got})}): the CPU, not the path, may set this "
                     f"number")
    return lines


MAJOR_NOTE = "path-major:"


def timing_anomalies(rows, table=None):
    """Lines per verb ({verb: [line]}): paths at one size, in one file and on
    one side, whose rows did not overlap in time (t_start_s..t_end_s), or
    whose rows say they were measured path by path (the note the bench writes
    when it could not hold every path's buffers at once). With TABLE, every
    cell at such a size is flagged: its comparisons are void."""
    groups = OrderedDict()
    major = OrderedDict()
    for r in rows:
        if r["status"] != "ok":
            continue
        if MAJOR_NOTE in r["note"]:
            major.setdefault(r["verb_key"], set()).add(r["size_bytes"])
        v = r["vals"]
        if "t_start" not in v or "t_end" not in v:
            continue
        key = (r["verb_key"], r["_file"], r.get("host", ""), r["role"], r["size_bytes"])
        groups.setdefault(key, {}).setdefault(r["path"], []).append((v["t_start"], v["t_end"]))
    apart = OrderedDict()
    for (verb, _f, _h, _r, size), paths in groups.items():
        if len(paths) < 2:
            continue
        spans = [(min(a for a, _ in t), max(b for _, b in t)) for t in paths.values()]
        if any(a[1] < b[0] or b[1] < a[0] for i, a in enumerate(spans) for b in spans[i + 1:]):
            apart.setdefault(verb, set()).add(size)
    out = OrderedDict()
    for verb in list(apart) + [v for v in major if v not in apart]:
        sizes = apart.get(verb, set()) | major.get(verb, set())
        if table is not None:
            for size in sizes:
                for c in table.cells.get(verb, {}).get(size, {}).values():
                    _flag(c, "one after another")
        how = ("their t_start_s..t_end_s do not overlap" if verb in apart
               else "their rows' note says path-major")
        out[verb] = [f"paths measured one after another at {_sizes(sizes)} ({how}): drift "
                     f"lands on one path, so no comparison between them is judged; a run "
                     f"that holds every path's buffers takes them in turns"]
    return out


# What voids a comparison at a size (gate.py): impossible numbers, or paths not side by side.
VOIDS = frozenset(("above host", "one after another"))
CPU_COST_GAP = 10.0  # percentage points of cpu_util_pct: two paths' CPU costs differ


def find(bw, lat, rows, dups, max_spread, margin, across_pairs=False, timing=None):
    """({table key: [line]}, [line about the inputs]): every anomaly, its cells
    flagged. TIMING: timing_anomalies' lines when they were found already."""
    per_verb = {}
    for verb in bw.verbs():
        per_verb[verb] = verb_anomalies(bw, verb, max_spread, margin)
    for verb in lat.verbs():
        lines = lat_verb_anomalies(lat, verb)
        if lines:
            per_verb[LAT_KEY + verb] = lines
    if timing is None:
        timing = timing_anomalies([r for r in rows if r["kind"] == "bw"], bw)
    for verb, lines in timing.items():
        per_verb.setdefault(verb, []).extend(lines)
    inputs = list(dups)
    for kind in ("bw", "lat"):  # a latency run is not pooled with a bandwidth run
        inputs += pooled([r for r in rows if r["kind"] == kind], across_pairs)
    return per_verb, inputs


# A latency table's lines are keyed apart from the bandwidth table's of the same verb.
LAT_KEY = "latency "


POOL_COLUMNS = (("host", "hosts"), ("nic", "NICs"), ("gpu_uuid", "GPUs"),
                ("gpu_name", "GPU models"), ("label", "labels"), ("version", "gdrperf versions"))


def pooled(rows, across_pairs=False):
    """Lines for rows pooled from different hosts, NICs, GPUs, labels or
    versions (per role: a gathered file has both sides). ACROSS_PAIRS (the
    --matrix/--aggregate views, made for several pairs) leaves out hosts,
    NICs, GPUs and labels."""
    lines = []
    for col, noun in POOL_COLUMNS:
        if across_pairs and col != "version":
            continue
        # One pass: (role, value) -> rows, in the order first seen.
        counts = OrderedDict()
        for r in rows:
            if col in r:
                key = (r["role"], r[col].strip())
                counts[key] = counts.get(key, 0) + 1
        for role in sorted({role for role, _v in counts}):
            seen = OrderedDict((v, n) for (ro, v), n in counts.items()
                               if ro == role and (v or col == "label"))
            if len(seen) > 1:
                what = ", ".join(f"{v or '(none)'} ({n} rows)" for v, n in list(seen.items())[:4])
                more = f" and {len(seen) - 4} more" if len(seen) > 4 else ""
                kind = rows[0]["kind"] if rows else ""
                lines.append(f"{role or 'the'}{' latency' if kind == 'lat' else ''} rows pooled from different {noun}: {what}{more}: "
                             f"one verdict over several machines or runs; compare them apart"
                             + (" (or --matrix)" if col == "host" else ""))
                break
    return lines
