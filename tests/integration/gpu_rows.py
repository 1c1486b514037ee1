#!/usr/bin/env python3
"""Check a gdr_*_bw CSV by column name (t_30): each argument after the file
is one check on the rows, r being a row as a dict (csv.DictReader):

  all:EXPR        every row satisfies EXPR
  any:EXPR        at least one row does
  count:N         there are N rows
  count:N:EXPR    exactly N rows satisfy EXPR

e.g.  gpu_rows.py out.csv 'count:4:r["path"] == "peermem"' \\
          'all:r["relaxed_ordering"] in ("0", "1")'
Helpers usable in EXPR: num(v) (float, or None when empty/not a number).
Prints the failing check and up to 5 offending rows (`check` in
tests/tap.sh shows them as TAP comments when the case fails);
exit status 1 if any check fails, 2 on a bad check or a missing column.
"""
import csv
import sys


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], newline="") as f:
        rows = list(csv.DictReader(f))
    bad = 0
    for check in argv[2:]:
        kind, _, rest = check.partition(":")
        try:
            if kind == "count":
                want, _, expr = rest.partition(":")
                sel = [r for r in rows if not expr or eval(expr, {"num": num, "r": r})]
                ok = len(sel) == int(want)
                offenders = [] if ok else [f"{len(sel)} rows match, want {want}"]
            elif kind in ("all", "any"):
                res = [(r, bool(eval(rest, {"num": num, "r": r}))) for r in rows]
                if kind == "all":
                    ok = bool(rows) and all(v for _, v in res)
                    offenders = [dict(r) for r, v in res if not v][:5]
                else:
                    ok = any(v for _, v in res)
                    offenders = [] if ok else ["no row matches"]
            else:
                print(f"bad check {check!r}")
                return 2
        except KeyError as e:
            print(f"{check}: no column {e}")
            return 2
        if not ok:
            bad = 1
            print(f"failed: {check}")
            for o in offenders:
                print(f"  {o}")
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
