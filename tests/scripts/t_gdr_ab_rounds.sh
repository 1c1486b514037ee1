#!/bin/sh
# gdr-ab on rounds (issue 51): each path paired with host round by round
# (rep_bw_gbps, one run_id), every claim from intervals that hold all at once
# at --alpha, anomalies that void a rule (a path above host, paths one after
# another), printed ends that never contradict the words, two runs' rounds
# pooled by run_id, --alpha, a torn list of rounds. The fixtures are runs of
# tests/tools/ab_sim written by the bench's own CSV writer: ab-rounds.csv
# (dmabuf 0.90x host, CV 3 %, rounds until decided), ab-rounds-above.csv
# (bounce 1.30x host, impossible), ab-rounds-major.csv (paths one after
# another), ab-rounds-5.csv (equal paths, 5 fixed rounds), ab-rounds-migration.csv
# (each side its own memory: dmabuf:peermem 0.90x host). TAP output.
. "$(dirname "$0")/ab_lib.sh"
plan 26
R="$fx/ab-rounds.csv"
line() { grep -Eq -- "$2" "$tmp/$1.${3:-out}"; }
no_line() { ! grep -Eq -- "$2" "$tmp/$1.${3:-out}"; }

run gap --no-plot --csv-out "$tmp/gap.csv" --expect 'dmabuf>=0.95*host' --expect 'peermem>=0.95*host' "$R"
check "a 0.90x gap: the whole verdict and gate (golden)" golden gap "$exp/ab-rounds.txt"
check "a 0.90x gap: the rule FAILs (exit 1), the equal path's PASSes" \
	sh -c "[ \$(cat '$tmp/gap.rc') = 1 ] && grep -q '^expect: FAIL write: dmabuf>=0.95\*host' '$tmp/gap.out' && grep -q '^expect: PASS write: peermem>=0.95\*host' '$tmp/gap.out'"
check "the legend names the family and the looks" \
	line gap 'one of [0-9]+ intervals that all hold at once$|one of [0-9]+ intervals that all hold at once with' 
check "the summary claims the gap, the others ≈ host" \
	line gap '^write at >= 1 MiB: dmabuf 0\.[89][0-9]x host \(0\.[0-9]+-0\.9[0-9]\), peermem ≈ host'
check "no star: host is not beyond every path" no_line gap '^ +[0-9]+ [KM]iB .*\*'
check "--csv-out: the claim, the method, the rounds paired, the error rate and family" \
	sh -c "grep -Eq '^write,1048576,dmabuf,client,[0-9.]+,0\.[0-9]+,0,1,ok,,bw,,,[0-9]+,[0-9.]+,[0-9.]+,0\.[0-9]+,0\.9[0-9]+,,below,rounds,[0-9]+,0\.01,12$' '$tmp/gap.csv'"
run gap20 --no-plot --alpha 20 "$R"
check "--alpha 20: said in the legend" line gap20 'probability >= 80 %'
# dmabuf's interval at 1 MiB (the 7th field of the row): inside the one at 1 %.
check "--alpha 20: narrower intervals than at 1 %" sh -c "
	a=\$(grep '^    1 MiB' '$tmp/gap.out' | awk '{ print \$7 }')
	b=\$(grep '^    1 MiB' '$tmp/gap20.out' | awk '{ print \$7 }')
	awk -v a=\"\$a\" -v b=\"\$b\" 'BEGIN { split(a, x, \"-\"); split(b, y, \"-\"); exit !(y[1] + 0 > x[1] + 0 && y[2] + 0 < x[2] + 0) }'"
for o in '--alpha 0' '--alpha 60' '--margin x'; do
	run badopt --no-plot $o "$R"
	check "$o: usage error (exit 2) naming it" sh -c "[ \$(cat '$tmp/badopt.rc') = 2 ] && grep -q -- '${o% *}' '$tmp/badopt.err'"
done

run above --no-plot --expect 'dmabuf>=0.95*host' --expect 'bounce>=1.0*host' "$fx/ab-rounds-above.csv"
check "bounce 1.30x host: named above host at the error rate" \
	line above '^  ! bounce 1\.30x host at [0-9]+ [KM]iB \(1\.[0-9]+-1\.[0-9]+, above 1\.0 at the error rate'
check "bounce 1.30x host: no star anywhere" no_line above '^ +[0-9]+ [KM]iB .*\*'
check "bounce 1.30x host: every rule UNDECIDED (exit 3), void, the anomaly named" \
	sh -c "[ \$(cat '$tmp/above.rc') = 3 ] && [ \$(grep -c '^expect: UNDECIDED write: .*void: bounce above host' '$tmp/above.out') = 2 ]"

run major --no-plot --expect 'dmabuf>=0.95*host' "$fx/ab-rounds-major.csv"
check "paths one after another: no paired claim, the ranges in brackets" \
	sh -c "grep -Eq '^    8 MiB .* 0\.[0-9]+x \[0\.[0-9]+-[01]\.[0-9]+\]!' '$tmp/major.out' && ! grep -q '≈ host' '$tmp/major.out'"
check "paths one after another: the rule UNDECIDED, void, saying why" \
	line major '^expect: UNDECIDED write: dmabuf>=0\.95\*host: at 1 MiB, 8 MiB: void: paths measured one after another$'
# The same rows without their times: the bench's note still says path-major.
awk -F, 'BEGIN { OFS = "," } NR > 1 { $56 = ""; $57 = "" } { print }' "$fx/ab-rounds-major.csv" >"$tmp/major-notimes.csv"
run majornote --no-plot --expect 'dmabuf>=0.95*host' "$tmp/major-notimes.csv"
check "path-major read from the rows' note when there are no times" \
	sh -c "grep -q 'one after another at .*their rows. note says path-major' '$tmp/majornote.out' && grep -q '^expect: UNDECIDED .*void: paths measured one after another' '$tmp/majornote.out'"

run five --no-plot --expect 'dmabuf>=0.95*host' "$fx/ab-rounds-5.csv"
check "5 fixed rounds at CV 3 %: ≈ host, too wide to decide: UNDECIDED (exit 3), never FAIL" \
	sh -c "[ \$(cat '$tmp/five.rc') = 3 ] && grep -q '^expect: UNDECIDED write: dmabuf>=0.95\*host: .* vs 0.95' '$tmp/five.out'"
check "5 fixed rounds: the noise that leaves it undecided is an anomaly (--max-spread)" \
	line five '^  ! dmabuf interval spans [0-9]+ % at '

# Two runs in one file: each paired within its run (run_id), their rounds pooled.
cat "$R" >"$tmp/two.csv"
sed 1d "$fx/ab-rounds-5.csv" | sed 's/,[0-9a-f]\{16\},\([0-9]*\),fixed,/,00000000000000aa,\1,fixed,/' >>"$tmp/two.csv"
run two --no-plot --csv-out "$tmp/two-v.csv" "$tmp/two.csv"
check "two runs: the rounds of both paired, each within its run" sh -c "
	one=\$(grep '^write,8388608,dmabuf,' '$tmp/gap.csv' | cut -d, -f22)
	both=\$(grep '^write,8388608,dmabuf,' '$tmp/two-v.csv' | cut -d, -f22)
	[ -n \"\$one\" ] && [ \"\$both\" = \$((one + 5)) ]"

# Printed ends never contradict the words: a ratio of 0.9985 (+-0.01 %).
{
	head -n 1 "$R"
	grep ',host,host,1048576,' "$R" | head -n 1 | awk -F, 'BEGIN { OFS = "," } { $14 = 5; $16 = "100.000"; $17 = "100.000"; $18 = "99.990"; $19 = "100.010"; $63 = 1; $64 = "fixed"; $65 = "100;100.01;99.99;100;100.005"; $66 = "0;1;2;3;4"; $67 = "1;2;3;4;5"; print }'
	grep ',dmabuf,dmabuf,1048576,' "$R" | head -n 1 | awk -F, 'BEGIN { OFS = "," } { $14 = 5; $16 = "99.850"; $17 = "99.850"; $18 = "99.840"; $19 = "99.860"; $63 = 1; $64 = "fixed"; $65 = "99.85;99.86;99.84;99.85;99.855"; $66 = "0;1;2;3;4"; $67 = "1;2;3;4;5"; print }'
} >"$tmp/close.csv"
run close --no-plot --alpha 50 "$tmp/close.csv"
check "0.9985x: claimed below host with ends that print below 1.00" \
	sh -c "grep -Eq '^    1 MiB .* 0\.99[0-9]+x 0\.99[0-9]+-0\.99[0-9]+( |$)' '$tmp/close.out' && ! grep -q '1\.00x\|-1\.00 ' '$tmp/close.out'"

# Each side its own memory (issue 48): a half-migrated pair, dmabuf on the
# client, peermem on the server (ab_sim's migration: dmabuf:peermem 0.90x host).
M="$fx/ab-rounds-migration.csv"
run mig --no-plot --expect 'dmabuf:peermem>=0.95*dmabuf' --expect 'dmabuf:peermem>=0.85*host' "$M"
check "a half-migrated pair: the combination matrix and the combination gates (golden)" \
	golden mig "$exp/ab-rounds-migration.txt"
check "the combination gate against dmabuf:dmabuf: paired, FAIL (exit 1)" \
	sh -c "[ \$(cat '$tmp/mig.rc') = 1 ] && grep -q '^expect: FAIL write: dmabuf:peermem>=0.95\*dmabuf: at 1 MiB: dmabuf:peermem 0\.[0-9]*x dmabuf' '$tmp/mig.out'"
run migtypo --no-plot --expect 'dmabuf:gpu>=0.9*host' "$M"
check "a combination with a typo: usage error naming the side" \
	sh -c "[ \$(cat '$tmp/migtypo.rc') = 2 ] && grep -q \"unknown path 'gpu'\" '$tmp/migtypo.err'"
if have_mpl; then
	"$PYTHON" - "$srcdir/scripts" "$M" >"$tmp/migfig" 2>&1 <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
sys.dont_write_bytecode = True
from gdr_ab import plots, rows, verdict
rs = rows.read_rows([sys.argv[2]])
v = verdict.judge(rs)
fig = plots.figure(v.tables[0], rs, None)
for ax in fig.axes:
    lg = ax.get_legend()
    for t in (lg.get_texts() if lg else []):
        print("legend", t.get_text())
PY
	check "the PNG has a line for the combination, with its summary" \
		grep -q '^legend dmabuf:peermem: 0\.[0-9]*x host' "$tmp/migfig"
else
	skip "the PNG has a line for the combination" "no matplotlib for $PYTHON"
fi

# A list of rounds that does not match its repeats: warned, the row's rounds ignored.
sed '3s/,\([0-9.]*\);\([0-9.]*\);/,\1;/' "$R" >"$tmp/torn.csv"
run torn --no-plot "$tmp/torn.csv"
check "rounds that do not match repeats: FILE:LINE, the rounds ignored, no traceback" \
	sh -c "grep -q 'torn.csv:3: rep_bw_gbps .* holds [0-9]* rounds, the row.s repeats say [0-9]*: the row.s rounds ignored' '$tmp/torn.err' && [ \$(cat '$tmp/torn.rc') = 0 ] && ! grep -q Traceback '$tmp/torn.err'"
done_testing
