#!/bin/sh
# gdr-ab --matrix (issue 16): rows of several node pairs (host/peer columns,
# a 3-node sweep with node-c slow on dmabuf) as a node x node matrix per verb
# and path, the heatmap PNG, and --expect checked per node pair. TAP output.
. "$(dirname "$0")/ab_lib.sh"
plan 9
S="$fx/ab-sweep.csv"

run m --no-plot --matrix "$S"
check "matrix: exit 0" rc_is m 0
check "matrix: per verb and path, client rows only (the servers' 1.000 never shows), a pair without a number says so" \
	sh -c "sed -n '/node x node/,\$p' '$tmp/m.out' | diff -u '$exp/ab-sweep-matrix.txt' - >/dev/null"
run g --no-plot --matrix --expect 'dmabuf>=0.9*host' "$S"
check "per pair gate: exit 1 (node-c's pairs fail)" rc_is g 1
check "per pair gate: the good pair passes, named host->peer" has g '^expect: PASS node-a->node-b write: dmabuf>=0.9\*host: at 1 MiB, 8 MiB;' out
check "per pair gate: each pair with node-c fails with its numbers" \
	sh -c "[ \$(grep -c '^expect: FAIL node-[abc]->node-[abc] write: dmabuf>=0.9\\*host: at 1 MiB, 8 MiB: dmabuf 60' '$tmp/g.out') = 4 ] && ! grep -q '^expect: FAIL node-a->node-b\|^expect: FAIL node-b->node-a' '$tmp/g.out'"
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

done_testing
