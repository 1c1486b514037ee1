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
from .spread import down, up

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


def verb_anomalies(table, verb, max_spread):
    """Lines for one verb of a bandwidth Table; marks the cells it names."""
    sizes = table.cells[verb]
    paths = ordered({p for c in sizes.values() for p in c}, PATH_ORDER)
    lines = []
    for p in paths:
        cells = [(s, sizes[s][p]) for s in sorted(sizes)
                 if p in sizes[s] and sizes[s][p].value is not None]
        lines += _above_host(p, cells)
        lines += _above_ceiling(p, cells)
        lines += _wide(p, cells, max_spread)
        lines += _cpu(table, verb, p, cells)
    return lines


def _above_host(path, cells):
    if path == "host":
        return []
    beyond = [(s, c) for s, c in cells if c.rlo is not None and c.rlo > 1.0]
    blind = [(s, c) for s, c in cells
             if c.rlo is None and c.ratio is not None and c.ratio > ONE_REPEAT_ABOVE]
    lines = []
    why = WHY_ABOVE.get(path, "a GPU path cannot beat host memory on the same NIC")
    if beyond:
        s, top = max(beyond, key=lambda x: x[1].ratio)
        for _, c in beyond:
            _flag(c, "above host")
        lines.append(f"{path} {top.ratio:.2f}x host at {fmt_size(s)} "
                     f"({down(top.rlo)}-{up(top.rhi)}, above 1.0 beyond the spread"
                     + (f"; also at {_sizes([x for x, _ in beyond if x != s])}"
                        if len(beyond) > 1 else "")
                     + f"): {why}: noise or an impaired host path; rerun with --repeat 5")
    if blind:
        s, top = max(blind, key=lambda x: x[1].ratio)
        for _, c in blind:
            _flag(c, "above host")
        lines.append(f"{path} {top.ratio:.2f}x host at {fmt_size(s)}"
                     + (f" (also at {_sizes([x for x, _ in blind if x != s])})"
                        if len(blind) > 1 else "")
                     + f" with one repeat, no spread to judge: {why}: noise or an impaired "
                       f"host path; rerun with --repeat 5")
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


def _wide(path, cells, bound):
    wide = []
    for s, c in cells:
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
    s, _, w = max(wide, key=lambda x: x[2])
    others = [x[0] for x in wide if x[0] != s]
    return [f"{path} repeats spread {w * 100:.0f} % at {fmt_size(s)} (more than --max-spread "
            f"{bound:g} %" + (f"; also at {_sizes(others)}" if others else "") + "): a noisy "
            "machine or link; its intervals are wide, and gates on it may stay undecided"]


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


def timing_anomalies(rows):
    """Lines per verb ({verb: [line]}): paths at one size, in one file and on
    one side, whose rows did not overlap in time (t_start_s..t_end_s)."""
    groups = OrderedDict()
    for r in rows:
        v = r["vals"]
        if r["status"] != "ok" or "t_start" not in v or "t_end" not in v:
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
    return {verb: [f"paths measured one after another at {_sizes(sizes)} (their "
                   f"t_start_s..t_end_s do not overlap): drift lands on one path; a rotating "
                   f"run interleaves them"] for verb, sizes in apart.items()}


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
        for role in sorted({r["role"] for r in rows}):
            seen = OrderedDict()
            for r in rows:
                if r["role"] != role or col not in r:
                    continue
                v = r[col].strip()
                if v or col == "label":
                    seen[v] = seen.get(v, 0) + 1
            if len(seen) > 1:
                what = ", ".join(f"{v or '(none)'} ({n} rows)" for v, n in list(seen.items())[:4])
                more = f" and {len(seen) - 4} more" if len(seen) > 4 else ""
                kind = rows[0]["kind"] if rows else ""
                lines.append(f"{role or 'the'}{' latency' if kind == 'lat' else ''} rows pooled from different {noun}: {what}{more}: "
                             f"one verdict over several machines or runs; compare them apart"
                             + (" (or --matrix)" if col == "host" else ""))
                break
    return lines
