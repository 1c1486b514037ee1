#!/bin/sh
# gdr-ab on latency rows (issue 14) and the ceiling (issue 13): the p50 table
# with ratios to host, its PNG (latency against size, a line per path, log
# axis), the ceiling under the bandwidth table and as a line in the PNG;
# columns are read by name, today's 34-column files and the new layout alike.
# TAP output.
. "$(dirname "$0")/ab_lib.sh"
plan 24
C="$fx/ab-ceiling.csv"
L="$fx/ab-latency.csv"

run lat --no-plot --csv-out "$tmp/lat-verdict.csv" "$L"
check "latency: exit 0" rc_is lat 0
check "latency: p50 table per verb, ratio to host, * = lowest, client rows only, reasons" \
	golden lat "$exp/ab-latency.txt"
check "latency: --csv-out rows of kind lat with lat_p50_us" \
	diff -u "$exp/ab-latency-verdict.csv" "$tmp/lat-verdict.csv"
check "latency rows never appear as bandwidth ('no bandwidth' cells)" sh -c "! grep -q 'bandwidth' '$tmp/lat.out'"

run ceil --no-plot "$C"
check "ceiling: exit 0" rc_is ceil 0
check "ceiling: one line under the table (per path where they differ)" golden ceil "$exp/ab-ceiling.txt"

# Both kinds and both layouts at once: today's 34 columns plus the full new
# layout; each table as when read alone.
run both --no-plot "$fx/ab-basic.csv" "$L"
check "34-column bandwidth file + latency file: exit 0" rc_is both 0
# (The anomaly count closes the whole output, after the latency tables.)
grep -v '^anomalies: ' "$exp/ab-basic.txt" >"$tmp/basic-tables.txt"
check "both: the bandwidth tables as from the 34-column file alone" \
	sh -c "sed -n '1,/^read at >= 1 MiB: /p' '$tmp/both.out' | diff -u '$tmp/basic-tables.txt' - >/dev/null"
check "both: the latency tables as from the latency file alone" \
	sh -c "sed -n '/^write latency: us/,\$p' '$tmp/both.out' | grep -v '^anomalies: ' | diff -u '$exp/ab-latency.txt' - >/dev/null"
# Columns by name: the latency file with its columns in reverse order.
"$PYTHON" - "$L" "$tmp/reversed.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
csv.writer(open(sys.argv[2], "w", newline=""), lineterminator="\n").writerows(r[::-1] for r in rows)
PY
run rev --no-plot "$tmp/reversed.csv"
check "columns read by name: reversed column order, same tables" golden rev "$exp/ab-latency.txt"

if have_mpl; then
	run latplot --out "$tmp/png" "$L"
	check "latency PNG: exit 0, named -lat.png, printed last" \
		sh -c "[ \$(cat '$tmp/latplot.rc') = 0 ] && [ \"\$(tail -n 1 '$tmp/latplot.out')\" = 'plot: $tmp/png/ab-latency-lat.png' ]"
	check "latency PNG: a valid PNG" is_png "$tmp/png/ab-latency-lat.png"
	check "latency only: no bandwidth PNG" test ! -e "$tmp/png/ab-latency.png"
	"$PYTHON" - "$srcdir/scripts" "$L" "$C" >"$tmp/fig" 2>&1 <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
sys.dont_write_bytecode = True
from gdr_ab import plots, rows, table
for path, kind in ((sys.argv[2], table.LAT), (sys.argv[3], table.BW)):
    rs = [r for r in rows.read_rows([path]) if r["kind"] == kind.name]
    fig = plots.figure(table.Table(rs, kind), rs, None)
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        print(f"{kind.name} panel {ax.get_title()} yscale {ax.get_yscale()} ylim_top {ax.get_ylim()[1]:.1f}")
        for line in ax.get_lines():
            ys = sorted(set(line.get_ydata()))
            print(f"{kind.name} line {line.get_label()} | {' '.join(f'{y:g}' for y in ys)}")
PY
	check "latency PNG: log y axis, one panel per verb" \
		sh -c "grep -q '^lat panel RDMA WRITE latency yscale log' '$tmp/fig' && grep -q '^lat panel RDMA READ latency yscale log' '$tmp/fig'"
	check "latency PNG: one line per measured path at its p50 values" \
		sh -c "grep -qx 'lat line host (NIC baseline) | 2.1 2.15 2.9 8.4 88' '$tmp/fig' && grep -qx 'lat line dmabuf: 1.10x host at <= 4 KiB | 2.3 2.35 3.2 8.9 90.5' '$tmp/fig' && grep -q '^lat line bounce: 4.60x host' '$tmp/fig'"
	check "latency PNG: a skipped path stays in the legend" grep -qx 'lat line peermem: skipped | ' "$tmp/fig"
	check "ceiling PNG: one dotted line where every path shares the ceiling" \
		sh -c "grep -A20 '^bw panel RDMA WRITE ' '$tmp/fig' | grep -qx 'bw line ceiling 100 Gb/s | 100'"
	check "ceiling PNG: a line per ceiling where paths differ, naming them" \
		sh -c "grep -A20 '^bw panel RDMA READ ' '$tmp/fig' | grep -qx 'bw line ceiling 92 Gb/s (dmabuf, peermem, bounce) | 92' && grep -A20 '^bw panel RDMA READ ' '$tmp/fig' | grep -qx 'bw line ceiling 100 Gb/s (host) | 100'"
	check "ceiling PNG: the axis reaches above the ceiling" grep -q '^bw panel RDMA WRITE yscale linear ylim_top 108.0' "$tmp/fig"
	run bothplot --out "$tmp/png2" "$fx/ab-basic.csv" "$L"
	check "both kinds: a bandwidth PNG and a latency PNG" \
		sh -c "is_png() { [ -s \"\$1\" ]; }; [ \$(cat '$tmp/bothplot.rc') = 0 ] && grep -qx 'plot: $tmp/png2/ab-basic+1.png' '$tmp/bothplot.out' && grep -qx 'plot: $tmp/png2/ab-basic+1-lat.png' '$tmp/bothplot.out'"
else
	for t in 1 2 3 4 5 6 7 8 9 10; do skip "plot check $t" "no matplotlib for $PYTHON"; done
fi

# A GPU path's median under host's fastest sample at the same size: named
# (below host), marked in the table, counted by --strict; a median merely
# below host's median is not (the fixture's own rows, above, have none).
"$PYTHON" - "$L" "$tmp/below.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
for r in rows:
    if r["path"] == "dmabuf" and r["size_bytes"] == "4096" and r["verb"] == "write":
        r["lat_p50_us"] = "2.500"  # host's min there is 2.610
w = csv.DictWriter(open(sys.argv[2], "w", newline=""), fieldnames=list(rows[0]), lineterminator="\n")
w.writeheader()
w.writerows(rows)
PY
run below --no-plot "$tmp/below.csv"
check "latency below host: one line names the path, size, p50 and host's min" \
	grep -q "^  ! dmabuf p50 2.50 us at 4 KiB, under host's fastest sample (2.61 us): GPU memory cannot beat host memory" "$tmp/below.out"
check "latency below host: counted with the anomalies, exit 0 without --strict" \
	sh -c "[ \$(cat '$tmp/below.rc') = 0 ] && grep -q '^anomalies: 1 (marked !)' '$tmp/below.out'"
run belows --no-plot --strict "$tmp/below.csv"
check "latency below host: --strict exits 1" rc_is belows 1
check "latency: the fixture's own medians (none under host's min) raise no anomaly" \
	sh -c "! grep -q 'anomal' '$tmp/lat.out'"

done_testing
