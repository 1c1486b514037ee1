#!/bin/sh
# gdr-ab on hand-written gdrperf CSV fixtures: verdict tables against golden
# files, exit codes, and a real PNG. TAP output.
. "$(dirname "$0")/ab_lib.sh"
out="$tmp/results"
golden() { # NAME EXPECTED: stdout equals the golden file, with the output dir as OUT
	sed "s|$out|OUT|g" "$tmp/$1.out" >"$tmp/$1.norm"
	same "$2" "$tmp/$1.norm"
}

plan 27

run basic --no-plot --csv-out "$tmp/verdict.csv" "$fx/ab-basic.csv"
check "basic: exit 0" rc_is basic 0
check "basic: verdict table (client rows only, bidir apart, ratios, best, reasons)" \
	golden basic "$exp/ab-basic.txt"
check "basic: --csv-out verdict" same "$exp/ab-basic-verdict.csv" "$tmp/verdict.csv"

run write --verb write --no-plot "$fx/ab-basic.csv"
check "--verb write: only write tables" golden write "$exp/ab-basic-write.txt"

run skipped --out "$out" "$fx/ab-skipped-only.csv"
check "only skipped rows: exit 0" rc_is skipped 0
check "only skipped rows: table with reasons, no data to plot" \
	golden skipped "$exp/ab-skipped-only.txt"
check "only skipped rows: no PNG written" test ! -e "$out/ab-skipped-only.png"

run extra --no-plot "$fx/ab-extra-column.csv"
check "reordered and unknown columns, server-only rows" golden extra "$exp/ab-extra-column.txt"
check "torn row skipped with a warning naming file and line" \
	grep -q "ab-extra-column.csv:9: skipped a malformed row" "$tmp/extra.err"

# A torn row that opens a quote: the csv module took every later line into its
# note without a word (bounce's rows gone). And a 200 KB note used to refuse
# the whole file ('field larger than field limit', exit 2, no line).
printf 'verb,path,size_bytes,status,bw_avg_gbps,note\nwrite,host,4096,ok,1,\nwrite,dmabuf,4096,ok,2,"torn\nwrite,bounce,4096,ok,3,\nwrite,bounce,8192,ok,3,\n' >"$tmp/openq.csv"
run openq --no-plot "$tmp/openq.csv"
check "a quote left open: that line skipped with FILE:LINE, the rows after it read" \
	sh -c "[ \$(cat '$tmp/openq.rc') = 0 ] && grep -q 'openq.csv:3: skipped a malformed row: a quoted field opened there does not close where it should (a torn write?); read on from line 4' '$tmp/openq.err' && grep -Eq '^    8 KiB +- +3\.000 n=1' '$tmp/openq.out' && ! grep -q dmabuf '$tmp/openq.out'"
"$PYTHON" -c "print('verb,path,size_bytes,status,bw_avg_gbps,note'); print('write,host,4096,ok,1,'); print('write,dmabuf,4096,skipped,,\"' + 'n' * 200000 + '\"')" >"$tmp/bignote.csv"
run bignote --no-plot "$tmp/bignote.csv"
check "a 200 KB note: the file is read (exit 0)" \
	sh -c "[ \$(cat '$tmp/bignote.rc') = 0 ] && grep -Eq '^    4 KiB +1\.000 n=1 +skipped' '$tmp/bignote.out'"
# Files of two layouts joined with cat (34 columns, then 54): the second
# header used to be a 'malformed row' and every row under it skipped as torn.
cat "$fx/ab-basic.csv" "$fx/ab-ceiling.csv" >"$tmp/catmix.csv"
run catmix --no-plot "$tmp/catmix.csv"
check "cat of two layouts: the second header read, its rows counted, no warning" \
	sh -c "[ \$(cat '$tmp/catmix.rc') = 0 ] && [ ! -s '$tmp/catmix.err' ] && grep -q 'pooled from different labels: ab, run 1 (34 rows), fixture (32 rows)' '$tmp/catmix.out'"
run foreign "$fx/ab-not-gdrperf.csv"
check "not a gdrperf CSV: exit 2 (input error)" rc_is foreign 2
check "not a gdrperf CSV: says which file and why" \
	grep -q "ab-not-gdrperf.csv: not a gdrperf CSV file (no column verb" "$tmp/foreign.err"
# A column named twice: it used to read the last one silently (a write row
# counted as read); now refused, naming both columns.
printf 'verb,path,size_bytes,status,bw_avg_gbps,verb\nwrite,host,4096,ok,1,read\n' >"$tmp/dupcol.csv"
run dupcol --no-plot "$tmp/dupcol.csv"
check "a column twice in the header: exit 2, names it and both columns" \
	sh -c "[ \$(cat '$tmp/dupcol.rc') = 2 ] && grep -q 'dupcol.csv: not a gdrperf CSV file (column verb twice in the first line: columns 1 and 6)' '$tmp/dupcol.err' && [ ! -s '$tmp/dupcol.out' ]"
# A status other than ok/skipped/failed: 'OK' (hand-edited) used to make an
# ok row 'OK' with no number, and 'weird' passed without a word.
printf 'verb,path,size_bytes,status,bw_avg_gbps\nwrite,host,4096,weird,1\nwrite,dmabuf,4096,OK,2\n' >"$tmp/status.csv"
run status --no-plot "$tmp/status.csv"
check "status 'OK' is ok; an unknown status is warned with FILE:LINE and counts as not ok" \
	sh -c "[ \$(cat '$tmp/status.rc') = 0 ] && grep -Eq '^    4 KiB +weird +2\.000 n=1\$' '$tmp/status.out' && grep -q \"status.csv:2: status 'weird' is not ok, skipped or failed: the row counts as not ok\" '$tmp/status.err' && [ \$(wc -l <'$tmp/status.err') = 1 ]"
# A verb or path the tools never write ('send', a typo 'dmabf'): it used to get
# its own table or column without a word; now a warning, once per value.
printf 'verb,path,size_bytes,status,bw_avg_gbps\nwrite,host,4096,ok,1\nsend,host,4096,ok,2\nsend,host,8192,ok,2\nwrite,dmabf,4096,ok,1\n' >"$tmp/oddverb.csv"
run oddverb --no-plot "$tmp/oddverb.csv"
check "an unknown verb or path: one FILE:LINE warning per value, its rows counted apart" \
	sh -c "[ \$(cat '$tmp/oddverb.rc') = 0 ] && grep -q \"oddverb.csv:3: verb 'send' is not write or read: counted apart\" '$tmp/oddverb.err' && grep -q \"oddverb.csv:5: path 'dmabf' is not host, dmabuf, peermem or bounce\" '$tmp/oddverb.err' && [ \$(wc -l <'$tmp/oddverb.err') = 2 ] && grep -q '^send: Gb/s' '$tmp/oddverb.out'"
run missing "$tmp/does-not-exist.csv"
check "missing file: exit 2 (input error) naming it" \
	sh -c "[ \$(cat '$tmp/missing.rc') = 2 ] && grep -q 'does-not-exist.csv: cannot read' '$tmp/missing.err'"
run dash -
check "'-' as an input: exit 2, says standard input is /dev/stdin" \
	sh -c "[ \$(cat '$tmp/dash.rc') = 2 ] && grep -q '^gdr-ab: -: cannot read: No such file or directory (standard input is /dev/stdin)' '$tmp/dash.err'"
run noargs
check "no CSV argument: exit 2" rc_is noargs 2
run badverb --verb send "$fx/ab-basic.csv"
check "--verb send: exit 2" rc_is badverb 2
run help --help
check "--help: exit 0, names the bandwidth column" \
	sh -c "[ \$(cat '$tmp/help.rc') = 0 ] && grep -q bw_avg_gbps '$tmp/help.out'"

if have_mpl; then
	run plot --out "$out" --title "A/B test" "$fx/ab-basic.csv"
	check "plot: exit 0, PNG path printed last" \
		sh -c "[ \$(cat '$tmp/plot.rc') = 0 ] && [ \"\$(tail -n 1 '$tmp/plot.out')\" = 'plot: $out/ab-basic.png' ]"
	check "plot: a valid PNG" is_png "$out/ab-basic.png"
	run two --out "$out" "$fx/ab-basic.csv" "$fx/ab-extra-column.csv"
	check "two CSVs: one PNG named after both" \
		sh -c "[ \$(cat '$tmp/two.rc') = 0 ] && grep -qx 'plot: $out/ab-basic+1.png' '$tmp/two.out'"
	check "two CSVs: a valid PNG" is_png "$out/ab-basic+1.png"
	run unwritable --out "$fx/ab-basic.csv/sub" "$fx/ab-basic.csv"
	check "--out under a file: exit 2, not a directory" \
		sh -c "[ \$(cat '$tmp/unwritable.rc') = 2 ] && grep -q 'not a directory' '$tmp/unwritable.err'"
else
	for t in "plot: exit 0" "plot: a valid PNG" "two CSVs: PNG" "two CSVs: valid PNG" \
		"unwritable --out"; do
		skip "$t" "no matplotlib for $PYTHON"
	done
fi

done_testing
