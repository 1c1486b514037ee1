"""Per launched pair (label "pair K") and the node-to-node total."""

import re
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
        print(f"{'path':>8} {'size':>9}" + "".join(f"{n:>10}" for n in names) + f"  {'total':>9}",
              file=out)
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
                      + "".join(f"{b:10.3f}" if b is not None else f"{'-':>10}" for b in bws)
                      + f"  {total:>9}", file=out)
        print(file=out)
