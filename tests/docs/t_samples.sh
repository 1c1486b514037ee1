#!/bin/sh
# The samples in docs/*.md and README.md against what the tools write
# (issue 42): every sample CSV header (a code block's first line) has the
# real columns (a full one, from timestamp on, all 61 in order; a cut-down one
# only real names), each sample row its header's field count, every sample
# JSON row the real keys in order, and every sample table header (a line
# with #bytes and #iterations) is one the tools print, %ceiling included.
# A full CSV row or JSON row must be a line of real output kept in
# tests/docs/fixtures (a run the page names), never made up.
# The real list comes from common/output/report.c through
# tests/docs/doc_columns. One test per page, TAP output.
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$srcdir}
. "$(dirname "$0")/../tap.sh"
if [ -z "${PYTHON:-}" ]; then
	if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
helper=$builddir/tests/docs/doc_columns
[ -x "$helper" ] || {
	echo "Bail out! $helper not built (make check builds it)"
	exit 1
}
"$helper" csv >"$tmp/columns" && "$helper" table >"$tmp/tables" || {
	echo "Bail out! $helper failed"
	exit 1
}
check "the real CSV header has $(tr , '\n' <"$tmp/columns" | wc -l) columns, as GDR_CSV_COLUMNS says" \
	sh -c "[ \$(tr , '\n' <'$tmp/columns' | wc -l) = \$(sed -n 's/^#define GDR_CSV_COLUMNS //p' '$srcdir/common/output/report.h') ]"

# samples PAGE: the page's stale samples, one a line (FILE:LINE: what), on
# stdout; the count of samples checked on stderr.
cat >"$tmp/samples.py" <<'PY'
import csv, json, re, sys

columns = open(sys.argv[1]).read().strip().split(",")
# A table header's cells: "BW peak[MB/sec]" is one, every other word another.
CELLS = re.compile(r"BW \w+\[[^\]]*\]|\S+")
tables = [CELLS.findall(l) for l in open(sys.argv[2]) if l.strip()]
page, name = sys.argv[3], sys.argv[4]
# Real output kept from the runs the pages quote: a full sample row must be
# one of its lines, never made up.
kept = set()
for f in sys.argv[5:]:
    for l in open(f, encoding="utf-8"):
        kept |= {l.strip(), l.strip().rstrip(",")}  # a JSON row ends in ","
real = set(columns)
HEADER = re.compile(r"[a-z][a-z0-9_]*(,[a-z][a-z0-9_]*){2,}")
bad, n = [], 0
lines = open(page, encoding="utf-8").read().split("\n")
block, first, header = False, False, None
for i, line in enumerate(lines, 1):
    where = f"{name}:{i}"
    if line.lstrip().startswith("```"):
        block, first, header = not block, True, None
        continue
    s = line.strip()
    # Table headers and JSON rows are found in indented blocks too.
    if "#bytes" in s and "#iterations" in s:
        n += 1
        cells = CELLS.findall(s)
        if cells not in tables:
            near = min(tables, key=lambda t: len(set(t) ^ set(cells)))
            what = ", ".join([f"missing {c}" for c in near if c not in cells]
                             + [f"not printed: {c}" for c in cells if c not in near])
            bad.append(f"{where}: table header is not one the tools print ({what or 'order'})")
        continue
    if not block and not s.startswith("timestamp,") and not s.startswith('{"'):
        continue
    is_first, first = first, False
    if (is_first or s.startswith("timestamp,")) and HEADER.fullmatch(s):
        names = s.split(",")
        if s.startswith("timestamp,") or sum(x in real for x in names) * 2 >= len(names):
            n += 1
            header = names
            if s.startswith("timestamp,") and names != columns:
                missing = [c for c in columns if c not in names]
                extra = [c for c in names if c not in real]
                bad.append(f"{where}: CSV header has {len(names)} columns, the tools write "
                           f"{len(columns)}" + (f"; missing {','.join(missing)}" if missing else "")
                           + (f"; not columns: {','.join(extra)}" if extra else "")
                           + ("; out of order" if not missing and not extra else ""))
            elif not s.startswith("timestamp,") and not set(names) <= real:
                bad.append(f"{where}: CSV header names no such column: "
                           f"{','.join(x for x in names if x not in real)}")
        continue
    if header is not None and s and block:
        n += 1
        got = len(next(csv.reader([s])))
        if got != len(header):
            bad.append(f"{where}: CSV row has {got} fields, its header {len(header)}")
        elif header == columns and s not in kept:
            bad.append(f"{where}: CSV row is in no kept real output (tests/docs/fixtures)")
        continue
    if s.startswith('{"'):
        try:
            obj = json.loads(s.rstrip(","))
        except ValueError as e:
            bad.append(f"{where}: JSON row does not parse: {e}")
            continue
        if isinstance(obj, dict) and "timestamp" in obj:
            n += 1
            keys = list(obj)
            if keys != columns:
                missing = [c for c in columns if c not in keys]
                bad.append(f"{where}: JSON row has {len(keys)} keys, the tools write "
                           f"{len(columns)}" + (f"; missing {','.join(missing)}" if missing
                                               else "; other keys or order"))
            elif s.rstrip(",") not in kept:
                bad.append(f"{where}: JSON row is in no kept real output (tests/docs/fixtures)")
        continue
for b in bad:
    print(b)
print(n, file=sys.stderr)
PY

checked=0
for page in "$srcdir"/README.md "$srcdir"/docs/*.md; do
	name=${page#"$srcdir"/}
	"$PYTHON" "$tmp/samples.py" "$tmp/columns" "$tmp/tables" "$page" "$name" \
		"$srcdir"/tests/docs/fixtures/* >"$tmp/stale" 2>"$tmp/count" || {
		not_ok "$name: samples read" "$tmp/count"
		continue
	}
	n=$(cat "$tmp/count")
	checked=$((checked + n))
	if [ -s "$tmp/stale" ]; then
		not_ok "$name: $n samples in step with the tools" "$tmp/stale"
	else
		ok "$name: $n samples in step with the tools"
	fi
done
# The pages the issue named must hold samples, so that a scanner that finds
# nothing cannot pass.
for want in README.md:2 docs/csv-json.md:3 docs/usage-bw.md:1; do
	page=${want%%:*}
	"$PYTHON" "$tmp/samples.py" "$tmp/columns" "$tmp/tables" "$srcdir/$page" "$page" \
		>/dev/null 2>"$tmp/count"
	check "$page holds at least ${want#*:} samples (CSV, JSON, table headers)" \
		test "$(cat "$tmp/count")" -ge "${want#*:}"
done
diag "$checked samples checked"
done_testing
