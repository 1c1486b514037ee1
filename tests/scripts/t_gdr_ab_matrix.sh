#!/bin/sh
# gdr-ab --matrix (issue 16): rows of several node pairs (host/peer columns,
# a 3-node sweep with node-c slow on dmabuf) as a node x node matrix per verb
# and path, the heatmap PNG, and --expect checked per node pair, each pair's
# rule on its intervals (the rows' range of 3 repeats, +-0.4 %). TAP output.
. "$(dirname "$0")/ab_lib.sh"
plan 12
S="$fx/ab-sweep.csv"

run m --no-plot --matrix "$S"
check "matrix: exit 0" rc_is m 0
check "matrix: per verb and path, client rows only (the servers' 1.000 never shows), a pair without a number says so" \
	sh -c "sed -n '/node x node/,\$p' '$tmp/m.out' | diff -u '$exp/ab-sweep-matrix.txt' - >/dev/null"
run g --no-plot --matrix --expect 'dmabuf>=0.9*host' "$S"
check "per pair gate: exit 1 (node-c's pairs fail)" rc_is g 1
check "per pair gate: the good pair passes, named host->peer" has g '^expect: PASS node-a->node-b write: dmabuf>=0.9\*host: at 1 MiB, 8 MiB;' out
check "per pair gate: each pair with node-c fails with its numbers" \
	sh -c "[ \$(grep -c '^expect: FAIL node-[abc]->node-[abc] write: dmabuf>=0.9\\*host: at 1 MiB, 8 MiB: dmabuf 0.62x host' '$tmp/g.out') = 4 ] && ! grep -q '^expect: FAIL node-a->node-b\|^expect: FAIL node-b->node-a' '$tmp/g.out'"
check "per pair gate: the count" has g '^expect: 4 of 6 checks FAILED$' out
run nopeer --no-plot --matrix --expect 'host>=1' "$fx/ab-extra-column.csv"
check "no host/peer columns: the matrix and the gate say so, exit 1" \
	sh -c "[ \$(cat '$tmp/nopeer.rc') = 1 ] && grep -q '^matrix: no rows with both host and peer' '$tmp/nopeer.out' && grep -q '^expect: FAIL --matrix: no rows with both host and peer' '$tmp/nopeer.out'"
if have_mpl; then
	run hp --matrix --out "$tmp/png" "$S"
	check "heatmap: a PNG per verb, named -matrix-VERB" \
		sh -c "[ \$(cat '$tmp/hp.rc') = 0 ] && grep -qx 'plot: $tmp/png/ab-sweep-matrix-write.png' '$tmp/hp.out'"
	check "heatmap: a valid PNG" is_png "$tmp/png/ab-sweep-matrix-write.png"
else
	skip "heatmap PNG" "no matplotlib for $PYTHON"
	skip "heatmap valid PNG" "no matplotlib for $PYTHON"
fi

# Under 1 MiB the matrix judges on the summary's window (the largest third of
# the sizes, at least two), not the largest size alone: the 1 MiB rows
# relabelled 512 KiB and the 8 MiB ones 32 KiB give a window of 64 KiB..512 KiB,
# each cell the median of both (node-a -> node-b: 87.25 and 96.95; the largest
# size alone would say 96.950).
sed 's/,1048576,/,524288,/; s/,8388608,/,32768,/' "$S" >"$tmp/small.csv"
run small --no-plot --matrix "$tmp/small.csv"
check "matrix under 1 MiB: the header names the summary's window" \
	grep -q '^write host: node x node, .* over the sizes 64 KiB\.\.512 KiB, the largest 2 of 3 sizes, as the summary' "$tmp/small.out"
want=$($PYTHON -c '
import csv, statistics, sys
v = [float(r["bw_avg_gbps"]) for r in csv.DictReader(open(sys.argv[1]))
     if r["size_bytes"] in ("65536", "524288") and r["role"] == "client" and r["verb"] == "write" and r["path"] == "host"
     and r["host"] == "node-a" and r["peer"] == "node-b"]
print("%.3f" % statistics.median(v))' "$tmp/small.csv")
check "matrix under 1 MiB: node-a -> node-b is the median over both sizes ($want)" \
	sh -c "sed -n '/^write host: node x node/,/^\$/p' '$tmp/small.out' | grep -Eq '^ +node-a +- +$want '"

# A latency file has host and peer: the matrix (of Gb/s) used to say 'no rows
# with both host and peer', which was not so.
run latmatrix --no-plot --matrix "$fx/ab-latency.csv"
check "--matrix on latency rows only: says there are no bandwidth rows" \
	sh -c "grep -q '^matrix: no bandwidth rows (the matrix is of Gb/s)' '$tmp/latmatrix.out' && ! grep -q 'no rows with both host and peer' '$tmp/latmatrix.out'"

done_testing
