#!/bin/sh
# gdr-ab --prom FILE (issue 42): the verdict and the gate as a Prometheus
# textfile-collector file: golden output for the real Soft-RoCE run, label
# values escaped, the gate's 0/1/3 per rule and size, one set per node pair
# under --matrix, promtool's check (SKIP without promtool), and the file
# replaced atomically or not at all. TAP output.
. "$(dirname "$0")/ab_lib.sh"
plan 29
R="$fx/ab-softroce-2026-12-04.csv"
C="$fx/ab-ceiling.csv"
have_promtool() { command -v promtool >/dev/null 2>&1; }
# promtool_ok NAME FILE: promtool check metrics accepts FILE (lint included).
promtool_ok() {
	if have_promtool; then
		check "$1" sh -c "promtool check metrics <'$2'"
	else
		skip "$1" "promtool not installed (apt-get install prometheus)"
	fi
}

# The real run, with a rule that is undecided at some sizes and passes at one.
run real --no-plot --prom "$tmp/real.prom" --expect 'peermem>=0.9*host' "$R"
check "real run: exit 3 (undecided), as without --prom" rc_is real 3
golden_file "real run: the file matches the golden one" "$exp/ab-softroce.prom" "$tmp/real.prom"
promtool_ok "real run: promtool check metrics" "$tmp/real.prom"
check "docs/gdr-ab.md's sample lines are the real file's" sh -c "
	grep '^gdrperf_ab_' '$srcdir/docs/gdr-ab.md' >'$tmp/doc.lines' && [ -s '$tmp/doc.lines' ] &&
	! grep -vxF -f '$tmp/real.prom' '$tmp/doc.lines'"
check "each family: HELP and TYPE gauge once, before its samples" sh -c "
	awk '/^# HELP /{h[\$3]++; next} /^# TYPE /{if (!h[\$3] || \$4 != \"gauge\") exit 1; t[\$3]++; next}
		{n=\$0; sub(/[{ ].*/, \"\", n); if (!t[n]) exit 1}
		END{for (k in h) if (h[k] != 1 || t[k] != 1) exit 1}' '$tmp/real.prom'"
check "the verdict state set: one 1 per cell (30 GPU-path cells)" sh -c "
	[ \$(grep -c '^gdrperf_ab_verdict{.*} 1\$' '$tmp/real.prom') = 30 ] &&
	[ \$(grep -c '^gdrperf_ab_verdict{' '$tmp/real.prom') = 180 ]"
check "ratio and interval as the table says (peermem 1.73x, ≈ host 0.57-5.19 at 64 KiB write: 5 repeats at 1 %)" sh -c "
	grep -qx 'gdrperf_ab_ratio{host=\"gdrperf-vm\",peer=\"169.254.77.1\",gpu=\"0\",nic=\"rxe0\",path=\"peermem\",verb=\"write\",size_bytes=\"65536\"} 1.72973' '$tmp/real.prom' &&
	grep -qx 'gdrperf_ab_ratio_lower{.*path=\"peermem\",verb=\"write\",size_bytes=\"65536\"} 0.5772' '$tmp/real.prom' &&
	grep -qx 'gdrperf_ab_ratio_upper{.*path=\"peermem\",verb=\"write\",size_bytes=\"65536\"} 5.18358' '$tmp/real.prom'"

# The gate's outcome per rule, verb and size: 0 pass, 1 fail, 3 undecided.
run gate --no-plot --prom "$tmp/gate.prom" --expect 'dmabuf>=0.9*host' \
	--expect 'dmabuf>=0.95*host' --expect 'peermem>=1' --expect 'write-bidir.host>=1' "$C"
check "gate: exit 1 (a rule failed)" rc_is gate 1
check "gate: a passing size is 0" grep -qx \
	'gdrperf_ab_gate{host="node-b",peer="node-a",gpu="0",nic="mlx5_0",path="dmabuf",verb="read",size_bytes="8388608",rule="dmabuf>=0.9\*host"} 0' "$tmp/gate.prom"
check "gate: a failing size is 1" grep -qx \
	'gdrperf_ab_gate{host="node-b",peer="node-a",gpu="0",nic="mlx5_0",path="dmabuf",verb="read",size_bytes="8388608",rule="dmabuf>=0.95\*host"} 1' "$tmp/gate.prom"
check "gate: a skipped path fails (1), never a silent pass" grep -q \
	'^gdrperf_ab_gate{.*path="peermem",verb="write",size_bytes="1048576",rule="peermem>=1"} 1$' "$tmp/gate.prom"
check "gate: a rule with no rows at all: size_bytes empty, 1" grep -q \
	'^gdrperf_ab_gate{.*path="host",verb="write-bidir",size_bytes="",rule="write-bidir.host>=1"} 1$' "$tmp/gate.prom"
check "gate: the pair's status is the exit status (1)" grep -qx \
	'gdrperf_ab_gate_status{host="node-b",peer="node-a"} 1' "$tmp/gate.prom"
check "real run: undecided sizes are 3, the pair's status 3" sh -c "
	grep -q '^gdrperf_ab_gate{.*verb=\"write\",size_bytes=\"524288\",rule=\"peermem>=0.9\*host\"} 3\$' '$tmp/real.prom' &&
	grep -qx 'gdrperf_ab_gate_status{host=\"gdrperf-vm\",peer=\"169.254.77.1\"} 3' '$tmp/real.prom'"
check "no --expect: no gate metrics" sh -c "
	'$PYTHON' '$ab' --no-plot --prom '$tmp/nogate.prom' '$C' >/dev/null &&
	grep -q '^gdrperf_ab_ratio{' '$tmp/nogate.prom' && ! grep -q '^gdrperf_ab_gate' '$tmp/nogate.prom'"

# --matrix: every node pair its own cells and gate.
run matrix --no-plot --matrix --prom "$tmp/matrix.prom" --expect 'host>=0.9*ceiling' "$fx/ab-sweep.csv"
check "matrix: one gate status per node pair (6)" sh -c "
	[ \$(grep -c '^gdrperf_ab_gate_status{' '$tmp/matrix.prom') = 6 ] &&
	grep -q '^gdrperf_ab_bw_gbps{host=\"node-c\",peer=\"node-b\",' '$tmp/matrix.prom'"

# Odd label values: a quote, a backslash and a newline in the host, a
# backslash in the NIC name, escaped as the exposition format says (the row
# reader has already made the newline visible as the text \x0a).
"$PYTHON" - "$R" "$tmp/odd.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
h = rows[0]
for r in rows[1:]:
    r[h.index("host")] = 'node "a"\\b\nc'
    r[h.index("nic")] = 'mlx5_0\\'
csv.writer(open(sys.argv[2], "w", newline=""), lineterminator="\n").writerows(rows)
PY
run odd --no-plot --prom "$tmp/odd.prom" "$tmp/odd.csv"
check "odd labels: backslash and double quote escaped" grep -q \
	'^gdrperf_ab_bw_gbps{host="node \\"a\\"\\\\b\\\\x0ac",peer="169.254.77.1",gpu="",nic="mlx5_0\\\\",path="host",verb="write",size_bytes="65536"} 0.074$' "$tmp/odd.prom"
check "odd labels: every sample on one line" sh -c "! grep -v -e '^gdrperf_ab_' -e '^# HELP gdrperf_ab_' -e '^# TYPE gdrperf_ab_' '$tmp/odd.prom'"
promtool_ok "odd labels: promtool check metrics" "$tmp/odd.prom"
check "escape(): a newline escaped too (the reader would not let one through)" \
	"$PYTHON" -c "import sys; sys.path.insert(0, '$srcdir/scripts'); from gdr_ab import prom
assert prom.escape('a\\nb\\\\c\"') == 'a\\\\nb\\\\\\\\c\\\\\"', repr(prom.escape('a\\nb\\\\c\"'))"

# Atomic replacement: a new inode (a hard link to the old file keeps the old
# text), no temp file left, the mode kept.
d="$tmp/tf"
mkdir "$d"
echo "old" >"$d/ab.prom"
chmod 640 "$d/ab.prom"
ln "$d/ab.prom" "$d/old-link"
run atomic --no-plot --prom "$d/ab.prom" "$C"
check "atomic: exit 0" rc_is atomic 0
check "atomic: replaced by rename (the old inode still says old), mode kept" sh -c "
	[ \"\$(cat '$d/old-link')\" = old ] && grep -q '^gdrperf_ab_ratio{' '$d/ab.prom' &&
	[ \"\$(stat -c %a '$d/ab.prom')\" = 640 ]"
check "atomic: no temp file left" sh -c "[ \$(ls -A '$d' | wc -l) = 2 ]"

# A failed run leaves the earlier file as it was.
cp "$d/ab.prom" "$tmp/before.prom"
run badin --no-plot --prom "$d/ab.prom" "$fx/ab-not-gdrperf.csv"
check "bad input: exit 2, the earlier file intact" sh -c "
	[ \$(cat '$tmp/badin.rc') = 2 ] && cmp -s '$tmp/before.prom' '$d/ab.prom'"
# The write itself fails (EFBIG: a file size limit, SIGXFSZ ignored) half way.
(trap '' XFSZ; ulimit -f 8; "$PYTHON" "$ab" --no-plot --prom "$d/ab.prom" "$R" >/dev/null 2>"$tmp/efbig.err"; echo $? >"$tmp/efbig.rc")
check "write fails: exit 1, says so, the earlier file intact, no temp file" sh -c "
	[ \$(cat '$tmp/efbig.rc') = 1 ] && grep -q 'gdr-ab: $d/ab.prom: cannot write: File too large' '$tmp/efbig.err' &&
	cmp -s '$tmp/before.prom' '$d/ab.prom' && [ \$(ls -A '$d' | wc -l) = 2 ]"
run isdir --no-plot --prom "$d" "$C"
check "a directory: usage error (exit 2)" sh -c "[ \$(cat '$tmp/isdir.rc') = 2 ] && grep -q -- '--prom $d: is a directory' '$tmp/isdir.err'"
run isin --no-plot --prom "$C" "$C"
check "an input: refused (exit 2)" sh -c "[ \$(cat '$tmp/isin.rc') = 2 ] && grep -q 'refusing to write over an input' '$tmp/isin.err'"
# Not a regular file: written in place, never renamed over.
ln -s /dev/null "$d/null.prom"
run tonull --no-plot --prom "$d/null.prom" "$C"
check "a link to /dev/null: written through, the link and /dev/null stay" sh -c "
	[ \$(cat '$tmp/tonull.rc') = 0 ] && [ -L '$d/null.prom' ] && [ -c /dev/null ]"
mkfifo "$d/fifo.prom"
run fifo --no-plot --prom "$d/fifo.prom" "$C"
check "a FIFO without a reader: exit 1 with the cause, still a FIFO" sh -c "
	[ \$(cat '$tmp/fifo.rc') = 1 ] && grep -q 'no reader' '$tmp/fifo.err' && [ -p '$d/fifo.prom' ]"
done_testing
