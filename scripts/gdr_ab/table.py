"""The verdict: per verb, size and path, the median of the rows and its ratio
to `host`, the tables and summary lines printed from it, and its CSV form.

One Table holds one kind of row: "bw" (bandwidth, Gb/s, higher is better) or
"lat" (latency, us, lower is better).
"""

import csv
import io
import textwrap
import statistics
from collections import Counter, OrderedDict

from .common import PATH_ORDER, fmt_size, ordered, verb_sort
from .rows import BW_COLUMN, LAT_COLUMNS, LAT_MAIN
from .spread import cell_interval, down, holds, num, ratio_interval, up
from . import stats
from .stats import fmt_interval, fmt_ratio

# The bandwidth summary compares paths where bandwidth has levelled off; the
# latency summary where latency is latency and not size / bandwidth.
BLOCK = 4  # paths per block of a table
BIG = 1 << 20
SMALL = 4096


class Kind:
    def __init__(self, name, main, unit, higher_better, column, noun):
        self.name, self.main, self.unit = name, main, unit
        self.higher_better, self.column, self.noun = higher_better, column, noun

    def better(self, a, b):
        return a > b if self.higher_better else a < b


BW = Kind("bw", "bw", "Gb/s", True, BW_COLUMN, "bandwidth")
LAT = Kind("lat", LAT_MAIN, "us", False, LAT_COLUMNS[LAT_MAIN], "latency")
KINDS = {"bw": BW, "lat": LAT}


class Medians:
    """A metric's median over the rows' values, taken when first asked for:
    a table of 10^6 rows asks for a few metrics of a few cells."""

    def __init__(self, rows):
        self._rows = rows
        self._got = {}

    def get(self, metric, default=None):
        if metric not in self._got:
            vals = [v[metric] for v in (r["vals"] for r in self._rows) if metric in v]
            self._got[metric] = statistics.median(vals) if vals else None
        got = self._got[metric]
        return default if got is None else got

    def __getitem__(self, metric):
        got = self.get(metric)
        if got is None:
            raise KeyError(metric)
        return got

    def __contains__(self, metric):
        return self.get(metric) is not None


class Cell:
    """One verb/path/size: the rows that count and what they say."""

    def __init__(self, rows, kind):
        clients = [r for r in rows if r["role"] == "client"]
        self.role = "client" if clients else "other"
        self.rows = clients or rows
        main = kind.main
        ok_rows, bad, ceil = [], [], []
        # The rounds (issue 51): per run, each round's Gb/s in order (rows
        # that kept them: rep_bw_gbps), and the most looks a row's rule took.
        self.runs = OrderedDict()
        self.looks = 1
        for i, r in enumerate(self.rows):
            v = r["vals"]
            # The ceiling holds whatever the run's outcome: every row may carry it.
            if "ceiling" in v:
                ceil.append(v["ceiling"])
            if r["status"] != "ok":
                bad.append(r)
                continue
            ok_rows.append(r)
            if main not in v:
                bad.append(r)
            reps = r["reps"] if kind is BW else None
            if reps:
                key = (r["_file"], r.get("run_id") or f"row {i}")
                self.runs.setdefault(key, []).extend(reps)
                looks = r["looks"]
                if looks and looks > self.looks:
                    self.looks = looks
        self.metrics = Medians(ok_rows)
        self.ceiling = statistics.median(ceil) if ceil else None
        self.value = self.metrics.get(main)
        # The repeats' interval (bandwidth only: a latency row is one run of
        # many samples, its percentiles are its spread).
        self.lo, self.hi, self.n_rep = (cell_interval(ok_rows) if kind is BW
                                        else (None, None, len(ok_rows)))
        self.rlo = self.rhi = None  # the ratio's interval, set by the Table
        self.flags = []  # anomalies found in this cell (short tags)
        self.n_ok = len(ok_rows) - (len(bad) - (len(self.rows) - len(ok_rows)))
        self.n_bad = len(bad)
        noval = "no bandwidth" if kind is BW else "no latency"
        statuses = Counter(r["status"] if r["status"] != "ok" else noval for r in bad)
        self.status = "ok" if self.n_ok else statuses.most_common(1)[0][0]
        # A row whose number was ignored (NaN, out of range) says so when it has no note.
        notes = Counter(r["note"].strip() or r.get("_why", "") for r in bad
                        if r["note"].strip() or r.get("_why"))
        self.reason = notes.most_common(1)[0][0] if notes else ""
        self.ratio = None
        self.best = False
        # Without rounds (an older file), the rows' repeats summarised: the
        # approximate (mean, se, df) of its log Gb/s from their range.
        self.spread = None
        if kind is BW and not self.runs and ok_rows:
            got = [stats.from_range(r["vals"]["bw"], r["vals"]["bw_min"], r["vals"]["bw_max"],
                                    r["repeats"])
                   for r in ok_rows if "bw" in r["vals"] and "bw_min" in r["vals"]
                   and "bw_max" in r["vals"] and (r.get("repeats") or 1) >= stats.MIN_ROUNDS]
            if got and len(got) == len(ok_rows) and None not in got:
                self.spread = stats.combine(got)
        self.pairs = ((), ())  # what iv is taken from (verdict.py)
        self.k = self.looks    # the looks of the rows it pairs with host's
        self.iv = None      # the ratio to host (stats.Interval), by verdict.py
        self.word = None    # what iv says: below, above or equal (it holds 1.0)
        self.method = None  # "rounds" (paired) or "range" (a file without rounds)

    def why_not(self, metric):
        """Why this cell has no value for METRIC, in words."""
        if self.status == "ok":
            return f"no {metric} value in its ok rows"
        return self.status + (f": {self.reason}" if self.reason else "")


class Table:
    """{verb: {size: {path: Cell}}} of one kind, with ratios to host and the best path."""

    def __init__(self, rows, kind):
        self.kind = kind
        self._roles = {}  # same_role's cells of the other role
        self.groups = OrderedDict()
        for r in rows:
            self.groups.setdefault((r["verb_key"], r["size_bytes"], r["path"]), []).append(r)
        self.cells = {}
        for (verb, size, path), grp in self.groups.items():
            self.cells.setdefault(verb, {}).setdefault(size, {})[path] = Cell(grp, kind)
        for verb, sizes in self.cells.items():
            for size, cells in sizes.items():
                for path, cell in cells.items():
                    ref = self.same_role(verb, size, "host", cell)
                    if cell.value is not None and ref is not None and ref.value:
                        cell.ratio = cell.value / ref.value
                        if path != "host":
                            cell.rlo, cell.rhi = ratio_interval(cell, ref)
                self._best(cells)

    def _best(self, cells):
        """The * goes to the best path at a size; for bandwidth only when its
        interval lies clear of every other path's (best beyond the spread)."""
        measured = [c for c in cells.values() if c.value is not None]
        if not measured:
            return
        pick = max if self.kind.higher_better else min
        top = pick(measured, key=lambda c: c.value)
        others = [c for c in measured if c is not top]
        if self.kind is BW:
            # One repeat (no interval) never gets the star, even alone at its size.
            if top.lo is None or any(c.lo is None or c.hi >= top.lo for c in others):
                return
        for c in measured:
            c.best = c.value == top.value

    def same_role(self, verb, size, path, cell):
        """PATH's cell at VERB/SIZE from rows of CELL's role (None: no such rows)."""
        own = self.cells.get(verb, {}).get(size, {}).get(path)
        if own is not None and own.role == cell.role:
            return own
        key = (verb, size, path, cell.role == "client")
        if key not in self._roles:
            rows = [r for r in self.groups.get((verb, size, path), [])
                    if (r["role"] == "client") == (cell.role == "client")]
            self._roles[key] = Cell(rows, self.kind) if rows else None
        return self._roles[key]

    def verbs(self):
        return sorted(self.cells, key=verb_sort)

    def has_values(self):
        return any(c.value is not None for v in self.cells.values()
                   for s in v.values() for c in s.values())


def pairs(cell, ref):
    """(num, den): the rounds CELL and REF measured in the same run, side by side."""
    num, den = [], []
    for key, a in cell.runs.items():
        b = ref.runs.get(key)
        if b:
            n = min(len(a), len(b))
            num += a[:n]
            den += b[:n]
    return num, den


def title(verb, kind):
    return verb if kind is BW else f"{verb} latency"


def ratio_text(cell, path):
    """'0.93x 0.91-0.95' (below host at the error rate), '≈ host 0.97-1.05'
    (its interval holds 1.0), '1.29x 1.10-1.45' (above); without rounds
    '0.93x [0.91-0.95]' (the repeats' range: no claim) or '1.29x n=1'. The
    host itself and a cell without a host ratio show their Gb/s range in
    parentheses (host's ratio is 1 by definition: not printed, so that an
    interval and a mark fit the column)."""
    if cell.ratio is None or path == "host":
        if cell.lo is None:
            return "n=1" if cell.n_rep == 1 else ""
        return f"({num(cell.lo)}-{num(cell.hi)})"
    if cell.iv is not None:
        head = "≈ host" if cell.word == "equal" else f"{fmt_ratio(cell.ratio, cell.word)}x"
        return f"{head} {fmt_interval(cell.rlo, cell.rhi, cell.word)}"
    if cell.rlo is None:
        return f"{cell.ratio:4.2f}x" + (" n=1" if cell.n_rep == 1 else "")
    return f"{cell.ratio:4.2f}x [{down(cell.rlo)}-{up(cell.rhi)}]"


def cell_text(cell, path="", kind=None):
    if cell is None:
        return "-  "
    if cell.value is None:
        return cell.status + "  "
    # Two characters always (anomaly, best), so that marked cells line up.
    mark = f"{('!' if cell.flags else '') + ('*' if cell.best else ''):<2}"
    if kind is not BW:
        ratio = f"{cell.ratio:5.2f}x" if cell.ratio is not None else "     -"
        return f"{cell.value:9.3f} {ratio}{mark}"
    return f"{cell.value:8.3f} {ratio_text(cell, path)}{mark}"


def legend(table, verb):
    """The words under a bandwidth table's title: what its intervals are."""
    cells = [c for cs in table.cells[verb].values() for c in cs.values()]
    fam = getattr(table, "family", None)
    words = []
    if any(c.iv is not None for c in cells) and fam is not None:
        looks = max(c.k for c in cells if c.iv is not None)
        if any(c.method == "rounds" for c in cells):
            words.append("ratio: geometric mean of the rounds' ratios to host (each round's "
                         "paths side by side);")
        if any(c.method == "range" for c in cells):
            words.append("no rounds in the file: each ratio from its rows' means, its "
                         "interval from their range of repeats (unpaired, approximate);")
        words.append(f"interval: t on the logs, one of {fam.m} intervals that all hold at "
                     f"once with probability >= {100 * (1 - fam.alpha):g} %"
                     + (f" ({looks} looks of the rounds rule)" if looks > 1 else "")
                     + "; ≈ host: it holds 1.0; host: (its lowest..highest repeat, Gb/s);")
    if any(c.iv is None and c.rlo is not None for c in cells):
        words.append("[a-b]: the range of the repeats' ratios, no claim;")
    if any(c.n_rep == 1 for c in cells):
        words.append("n=1: one repeat, no interval;")
    words.append("* best beyond the intervals; ! anomaly, below")
    return textwrap.wrap(" ".join(words), 76)


def print_verb_table(out, table, verb):
    sizes = table.cells[verb]
    kind = table.kind
    paths = ordered({p for cells in sizes.values() for p in cells}, PATH_ORDER)
    width = 19
    if kind is BW:
        width = 27
        print(f"{verb}: Gb/s = median over rows of {BW_COLUMN}; ratio to host at the same "
              f"size and role", file=out)
        lines = legend(table, verb)
        print("  (" + "\n   ".join(lines) + ")", file=out)
    else:
        print(f"{verb} latency: us = median over rows of {kind.column}; ratio to host at the "
              f"same size and role; * = lowest", file=out)
    # Four paths to a block (host first in each), so that a run of each side's
    # own memory (up to 16 paths) stays readable; each name over its cells'
    # text, not over their two mark characters.
    rest = [p for p in paths if p != "host"]
    blocks = [rest[i:i + BLOCK - ("host" in paths)] for i in range(0, len(rest), BLOCK - ("host" in paths))] or [[]]
    for b, block in enumerate(blocks):
        cols = (["host"] if "host" in paths else []) + block
        if b:
            print(file=out)
        print(f"{'size':>9}  " + "".join(f"{p + '  ':>{width}}" for p in cols).rstrip(),
              file=out)
        for size in sorted(sizes):
            cells = sizes[size]
            print(f"{fmt_size(size):>9}  "
                  + "".join(f"{cell_text(cells.get(p), p, kind):>{width}}" for p in cols).rstrip(),
                  file=out)
    if kind is BW:
        line = ceiling_line(sizes, paths)
        if line:
            print(f"  {line}", file=out)
    for p in paths:
        for line in reason_lines(p, sizes):
            print(f"  {line}", file=out)


def path_ceilings(sizes, paths):
    """{path: its median ceiling_gbps over the sizes}, for the paths that carry one."""
    out = {}
    for p in paths:
        got = [sizes[s][p].ceiling for s in sizes
               if p in sizes[s] and sizes[s][p].ceiling is not None]
        if got:
            out[p] = statistics.median(got)
    return out


def varying_ceilings(sizes, paths):
    """{path: (lowest, highest)} for the paths whose ceiling_gbps changes with the size
    (bounce: min(NIC, the copy rate at each size's chunk)): no one line is their ceiling."""
    out = {}
    for p in paths:
        got = [sizes[s][p].ceiling for s in sizes
               if p in sizes[s] and sizes[s][p].ceiling is not None]
        if got and max(got) > min(got) * 1.001:
            out[p] = (min(got), max(got))
    return out


def ceiling_line(sizes, paths):
    ceil = path_ceilings(sizes, paths)
    if not ceil:
        return ""
    vary = varying_ceilings(sizes, paths)
    if vary:
        return ("ceiling Gb/s (median of ceiling_gbps; by size where it varies): "
                + ", ".join(f"{p} {vary[p][0]:.3f}..{vary[p][1]:.3f} by size" if p in vary
                            else f"{p} {v:.3f}" for p, v in ceil.items()))
    if len(set(ceil.values())) == 1:
        who = "every path" if len(ceil) == len(paths) else ", ".join(ceil)
        return f"ceiling {next(iter(ceil.values())):.3f} Gb/s ({who}; median of ceiling_gbps)"
    return ("ceiling Gb/s (median of ceiling_gbps): "
            + ", ".join(f"{p} {v:.3f}" for p, v in ceil.items()))


def reason_lines(path, sizes):
    """'peermem skipped at every size: why' or per size, and partial failures."""
    by_reason = OrderedDict()
    total = 0
    for size in sorted(sizes):
        cell = sizes[size].get(path)
        if cell is None:
            continue
        total += 1
        if cell.value is None:
            by_reason.setdefault((cell.status, cell.reason), []).append(size)
        elif cell.n_bad:
            key = (f"{cell.n_bad} of {cell.n_bad + cell.n_ok} rows not ok", cell.reason)
            by_reason.setdefault(key, []).append(size)
    lines = []
    for (status, reason), at in by_reason.items():
        where = ("at every size" if len(at) == total and len(at) > 1
                 else "at " + ", ".join(fmt_size(s) for s in at))
        # The program's notes already start with the path ("peermem: ..."): say it once.
        if reason.startswith(path + ": "):
            reason = reason[len(path) + 2:]
        lines.append(f"{path} {status} {where}: {reason or '(no reason given)'}")
    return lines


def window(all_sizes, kind):
    """(sizes, name): where a verdict is judged, the summary and the gate
    alike. Bandwidth: the sizes >= 1 MiB, or the largest third of the sizes
    (at least two) when fewer reach 1 MiB, never one size when there are
    more; latency: the sizes <= 4 KiB, else the smallest."""
    all_sizes = sorted(all_sizes)
    if not all_sizes:
        return [], ""
    if kind is BW:
        n = len(all_sizes)
        third = max(min(2, n), -(-n // 3))
        big = [s for s in all_sizes if s >= BIG]
        if len(big) >= third:
            return big, f">= {fmt_size(BIG)}"
        win = all_sizes[-third:]
        if len(win) == 1:
            return win, f"{fmt_size(win[0])}, the only size"
        return win, (f"{fmt_size(win[0])}..{fmt_size(win[-1])}, the largest {len(win)} "
                     f"of {n} sizes")
    win = [s for s in all_sizes if s <= SMALL] or all_sizes[:1]
    return win, (f"<= {fmt_size(SMALL)}" if win[-1] <= SMALL and len(win) > 1
                 else fmt_size(win[0]))


def summary_window(sizes, kind):
    """The window over the sizes where host has a value; its name says so
    when other sizes have rows but no host number (never "the only size" of
    a table with more)."""
    hosted = [s for s in sizes if "host" in sizes[s] and sizes[s]["host"].value]
    win, where = window(hosted, kind)
    if win and len(hosted) < len(sizes) and (where.endswith(" sizes") or where.endswith(" size")):
        where += " with a host number"
    return win, where


def summary_claim(table, verb, path):
    """The verdict's summary of PATH (verdict.Claim), or None."""
    return getattr(table, "summaries", {}).get((verb, path))


def summary_ratio(path, sizes, window, claim=None):
    if claim is not None and claim.iv is not None:
        return claim.iv.est
    ratios = [sizes[s][path].ratio for s in window
              if path in sizes[s] and sizes[s][path].ratio is not None]
    return statistics.median(ratios) if ratios else None


def summary_interval(path, sizes, window, claim=None):
    """(lo, hi, claimed): the verdict's pooled interval; else, without
    rounds, the medians of the per-size ranges' ends (no claim), or (None,
    None, False) when a size in the window has no range."""
    if claim is not None and claim.iv is not None:
        return claim.iv.lo, claim.iv.hi, True
    cells = [sizes[s][path] for s in window
             if path in sizes[s] and sizes[s][path].ratio is not None]
    if not cells or any(c.rlo is None for c in cells):
        return None, None, False
    return (statistics.median(c.rlo for c in cells), statistics.median(c.rhi for c in cells),
            False)


def ratio_phrase(ratio, lo, hi, n_rep=None, claimed=True, word=None):
    """'0.90x host (0.88-0.92)', '≈ host (0.97-1.05)' (claims at the error
    rate), '0.93x host [0.91-0.95]' (a range, no claim) or '1.29x host (n=1,
    no interval)'."""
    if lo is None:
        return f"{ratio:.2f}x host ({'n=1, ' if n_rep == 1 else ''}no interval)"
    if not claimed:
        return f"{ratio:.2f}x host [{down(lo)}-{up(hi)}]"
    word = word or ("equal" if holds(lo, hi, 1.0) else "below" if hi < 1.0 else "above")
    head = "≈ host" if word == "equal" else f"{fmt_ratio(ratio, word)}x host"
    return f"{head} ({fmt_interval(lo, hi, word)})"


def summary(table, verb):
    """One line: each path's ratio to host over the summary window, which it
    names; with rounds the verdict's pooled interval, and the sizes of the
    window whose own interval says otherwise."""
    sizes = table.cells[verb]
    kind = table.kind
    name = title(verb, kind)
    win, where = summary_window(sizes, kind)
    paths = [p for p in ordered({p for c in sizes.values() for p in c}, PATH_ORDER) if p != "host"]
    if not win:
        parts = []
        for p in paths:
            vals = [sizes[s][p].value for s in sizes
                    if p in sizes[s] and sizes[s][p].value is not None]
            if vals and kind is BW:
                parts.append(f"{p} {max(vals):.3f} Gb/s peak")
            elif vals:
                parts.append(f"{p} {min(vals):.3f} us lowest p50")
            else:
                parts.append(f"{p} {first_status(p, sizes)}")
        return f"{name}: no host baseline, no ratios" + (": " + ", ".join(parts) if parts else "")
    host = statistics.median(sizes[s]["host"].value for s in win)
    parts = []
    for p in paths:
        claim = summary_claim(table, verb, p) if kind is BW else None
        ratio = summary_ratio(p, sizes, win, claim)
        if ratio is not None:
            if kind is BW:
                lo, hi, claimed = summary_interval(p, sizes, win, claim)
                reps = {sizes[s][p].n_rep for s in win if p in sizes[s]}
                text = f"{p} {ratio_phrase(ratio, lo, hi, 1 if reps == {1} else None, claimed, claim.word if claim else None)}"
                if claim is not None:
                    text += "".join(f"; {fmt_ratio(c.ratio, c.word)}x at {fmt_size(s)} "
                                    f"({fmt_interval(c.rlo, c.rhi, c.word)})"
                                    for s, c in claim.apart)
            else:
                text = f"{p} {ratio:.2f}x host"
            failed = [s for s in win if p in sizes[s] and sizes[s][p].value is None]
            if failed:
                at = ", ".join(fmt_size(s) for s in failed)
                text += f" ({sizes[failed[0]][p].status} at {at})"
            tags = sorted({t for s in sizes if p in sizes[s] for t in sizes[s][p].flags})
            if tags:
                text += " ! " + ", ".join(tags)
            parts.append(text)
        elif any(p in sizes[s] and sizes[s][p].value is not None for s in sizes):
            parts.append(f"{p} no data")
        else:
            parts.append(f"{p} {first_status(p, sizes)}")
    if not paths:
        parts.append("only host")
    if kind is BW:
        return f"{name} at {where}: {', '.join(parts)}; host {host:.3f} Gb/s"
    return f"{name} at {where}: {', '.join(parts)}; host {host:.3f} us (p50)"


def combo_matrix(table, verb):
    """Lines of the combination matrix (issue 48) of a bandwidth verb with paths
    of each side its own memory: the client's path (rows) x the server's
    (columns), each cell the summary's ratio to host:host with its interval
    (or the repeats' range, no claim; a status where it did not run); [] when
    every path is symmetric."""
    sizes = table.cells[verb]
    names = {p for c in sizes.values() for p in c}
    if not any(":" in p for p in names):
        return []
    win, where = summary_window(sizes, table.kind)
    sides = ordered({p.partition(":")[0] for p in names} | {p.partition(":")[2] or p for p in names},
                    PATH_ORDER)
    width = max(17, max(len(s) for s in sides) + 2)
    lines = [f"{verb}, each side its own memory: ratio to host:host at {where}",
             "  (rows: the client's path, columns: the server's)",
             f"{'':>9}" + "".join(f"{s:>{width}}" for s in sides)]
    for local in sides:
        row = f"{local:>9}"
        for remote in sides:
            p = local if local == remote else f"{local}:{remote}"
            row += f"{matrix_cell(table, verb, p, sizes, win):>{width}}"
        lines.append(row)
    return lines


def matrix_cell(table, verb, path, sizes, win):
    if path == "host":
        return "1"
    if not any(path in sizes[s] for s in sizes):
        return "-"
    claim = summary_claim(table, verb, path)
    ratio = summary_ratio(path, sizes, win, claim)
    if ratio is None:
        return first_status(path, sizes)
    lo, hi, claimed = summary_interval(path, sizes, win, claim)
    if lo is None:
        return f"{ratio:.2f}x"
    if not claimed:
        return f"{ratio:.2f}x [{down(lo)}-{up(hi)}]"
    word = claim.word
    head = "≈" if word == "equal" else f"{fmt_ratio(ratio, word)}x"
    return f"{head} {fmt_interval(lo, hi, word)}"


def first_status(path, sizes):
    for s in sorted(sizes):
        cell = sizes[s].get(path)
        if cell is not None:
            return cell.status
    return "absent"


VERDICT_COLUMNS = ["verb", "size_bytes", "path", "role", "bw_gbps", "ratio_to_host", "best",
                   "rows", "status", "note", "kind", "ceiling_gbps", "lat_p50_us",
                   "repeats", "bw_lo_gbps", "bw_hi_gbps", "ratio_lo", "ratio_hi", "anomalies",
                   # appended (issue 51): what the ratio's interval claims, how it was
                   # taken (rounds, range), and the family it is one of
                   "claim", "method", "rounds", "alpha", "intervals"]


def verdict_csv(tables):
    """The verdict in long form, one line per kind/verb/size/path, as bytes."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(VERDICT_COLUMNS)
    for table in tables:
        lat = table.kind is LAT
        fam = getattr(table, "family", None)
        for verb in table.verbs():
            sizes = table.cells[verb]
            for size in sorted(sizes):
                for p in ordered(sizes[size], PATH_ORDER):
                    c = sizes[size][p]
                    val = f"{c.value:.3f}" if c.value is not None else ""
                    w.writerow([verb, size, p, c.role, "" if lat else val,
                                f"{c.ratio:.3f}" if c.ratio is not None else "",
                                1 if c.best else 0, len(c.rows), c.status, c.reason,
                                table.kind.name,
                                f"{c.ceiling:.3f}" if c.ceiling is not None else "",
                                val if lat else "",
                                c.n_rep if not lat and c.value is not None else "",
                                f"{c.lo:.3f}" if c.lo is not None else "",
                                f"{c.hi:.3f}" if c.hi is not None else "",
                                f"{c.rlo:.3f}" if c.rlo is not None else "",
                                f"{c.rhi:.3f}" if c.rhi is not None else "",
                                ";".join(c.flags), c.word or "", c.method or "",
                                len(c.pairs[0]) if c.method == "rounds" else "",
                                f"{fam.alpha:g}" if c.iv is not None else "",
                                fam.m if c.iv is not None else ""])
    return buf.getvalue().encode("utf-8")
