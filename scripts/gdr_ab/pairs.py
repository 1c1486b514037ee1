"""Per launched pair (label "pair K") and the node-to-node total."""

import re
import statistics
from collections import OrderedDict

from .common import PATH_ORDER, fmt_size, ordered, verb_sort
from .rows import BW_COLUMN
from .table import BW, Cell

PAIR_RE = re.compile(r"\bpair (\d+)\b")


def pair_table(rows):
    """{verb: {path: {size: {pair: Gb/s}}}}: each launched pair's median (client rows first)."""
    groups = OrderedDict()
    for r in rows:
        m = PAIR_RE.search(r.get("label", ""))
        key = (r["verb_key"], r["path"], r["size_bytes"], int(m.group(1)) if m else -1)
        groups.setdefault(key, []).append(r)
    out = {}
    for (verb, path, size, pair), grp in groups.items():
        cell = Cell(grp, BW)
        out.setdefault(verb, {}).setdefault(path, {}).setdefault(size, {})[pair] = cell.value
    return out


def print_pairs(out, rows):
    """Per-pair bandwidth and the node-to-node total (sum over pairs run at once)."""
    table = pair_table(rows)
    for verb in sorted(table, key=verb_sort):
        paths = table[verb]
        pairs = sorted({p for sizes in paths.values() for cells in sizes.values() for p in cells})
        names = [f"pair {p}" if p >= 0 else "no pair" for p in pairs]
        print(f"{verb}: node to node, {len(pairs)} pair(s) at once; Gb/s per pair (median over "
              f"its rows of {BW_COLUMN}) and total = sum over pairs", file=out)
        # A column is as wide as its name (a label 'pair 123456789012'), at least 10.
        widths = [max(10, len(n) + 1) for n in names]
        print(f"{'path':>8} {'size':>9}" + "".join(f"{n:>{w}}" for n, w in zip(names, widths))
              + f"  {'total':>9}", file=out)
        for path in ordered(paths, PATH_ORDER):
            for size in sorted(paths[path]):
                cells = paths[path][size]
                bws = [cells.get(p) for p in pairs]
                got = [b for b in bws if b is not None]
                if not got:
                    total = "-"
                elif len(got) < len(pairs):
                    total = f"{sum(got):.3f} ({len(got)} of {len(pairs)})"
                else:
                    total = f"{sum(got):.3f}"
                print(f"{path:>8} {fmt_size(size):>9}"
                      + "".join(f"{b:{w}.3f}" if b is not None else f"{'-':>{w}}"
                                for b, w in zip(bws, widths))
                      + f"  {total:>9}", file=out)
        print(file=out)


def node_pairs(rows):
    """{(host, peer): rows} of the rows that count: client rows when there are
    any (a gathered file has both sides of each transfer), else all."""
    clients = [r for r in rows if r["role"] == "client"]
    out = OrderedDict()
    for r in clients or rows:
        host, peer = r.get("host", "").strip(), r.get("peer", "").strip()
        if host and peer:
            out.setdefault((host, peer), []).append(r)
    return out


def nodes_of(pairs):
    names = []
    for h, p in pairs:
        for n in (h, p):
            if n not in names:
                names.append(n)
    return sorted(names)


def matrix(rows):
    """({verb: {path: {(host, peer): Gb/s}}}, {verb: window name}): each node
    pair's median of its cells over the sizes the summary and the gate judge
    on (table.window, over the sizes of every pair of that verb)."""
    from .table import Table, window

    tables = {hp: Table(grp, BW) for hp, grp in node_pairs(rows).items()}
    all_sizes = {}
    for t in tables.values():
        for verb in t.verbs():
            all_sizes.setdefault(verb, set()).update(t.cells[verb])
    wins = {verb: window(sz, BW) for verb, sz in all_sizes.items()}
    out = {}
    for (host, peer), t in tables.items():
        for verb in t.verbs():
            sizes = t.cells[verb]
            big = [s for s in wins[verb][0] if s in sizes]
            for path in {p for c in sizes.values() for p in c}:
                vals = [sizes[s][path].value for s in big
                        if path in sizes[s] and sizes[s][path].value is not None]
                cell = out.setdefault(verb, {}).setdefault(path, {})
                cell[(host, peer)] = statistics.median(vals) if vals else None
    return out, {verb: w[1] for verb, w in wins.items()}


def print_matrix(out, rows):
    """Per verb and path, a node x node table (rows: the measuring node, columns: its peer)."""
    m, where = matrix(rows)
    pairs = node_pairs(rows)
    if not rows:
        # ROWS are the bandwidth rows: a latency file's have host and peer.
        print("matrix: no bandwidth rows (the matrix is of Gb/s)", file=out)
        return m
    if not pairs:
        print("matrix: no rows with both host and peer", file=out)
        return m
    names = nodes_of(pairs)
    width = max(9, max(len(n) for n in names) + 1)
    for verb in sorted(m, key=verb_sort):
        for path in ordered(m[verb], PATH_ORDER):
            cells = m[verb][path]
            print(f"{verb} {path}: node x node, Gb/s (median of {BW_COLUMN} over the sizes "
                  f"{where[verb]}, as the summary); row = host, column = peer", file=out)
            print(f"{'':>{width}}" + "".join(f"{n:>{width}}" for n in names), file=out)
            for h in names:
                line = ""
                for p in names:
                    v = cells.get((h, p))
                    line += (f"{v:>{width}.3f}" if v is not None
                             else f"{('no data' if (h, p) in cells else '-'):>{width}}")
                print(f"{h:>{width}}{line}", file=out)
            print(file=out)
    return m
