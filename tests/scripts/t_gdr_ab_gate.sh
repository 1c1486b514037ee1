#!/bin/sh
# gdr-ab --expect (issue 13): each rule form passes and fails, missing data
# fails with its reason (never a silent pass), a malformed rule is a usage
# error before anything is read; each decided on its interval at the
# verdict's error rate, UNDECIDED where the interval holds the threshold
# (issue 51; the fixtures have no rounds: intervals from each row's range).
# TAP output.
. "$(dirname "$0")/ab_lib.sh"
plan 47
C="$fx/ab-ceiling.csv"
L="$fx/ab-latency.csv"
B="$fx/ab-basic.csv"

# expect NAME RC PATTERN CSV RULE...: gdr-ab --no-plot with the rules exits
# RC and prints a line matching PATTERN (grep -E) on stdout.
expect() {
	name=$1 want=$2 pat=$3 csv=$4
	shift 4
	set -- --no-plot "$@" "$csv"
	args=""
	"$PYTHON" "$ab" "$@" >"$tmp/g.out" 2>"$tmp/g.err"
	got=$?
	if [ "$got" = "$want" ] && grep -Eq -- "$pat" "$tmp/g.out"; then
		ok "$name"
	else
		not_ok "$name"
		echo "# exit $got (want $want), no line matching: $pat"
		sed 's/^/#   /' "$tmp/g.out" "$tmp/g.err" | grep -v '^#   *[0-9]' | tail -n 8
	fi
}

# ratio to another path
expect "ratio to host: pass, on the ratio's interval" 0 '^expect: PASS write: dmabuf>=0.9\*host: at 1 MiB, 8 MiB; closest at 1 MiB: dmabuf 0.93x host \(0.92-0.93\) >= 0.9$' \
	"$C" --expect 'dmabuf>=0.9*host'
expect "ratio to host: fail, one line per verb, each size's interval and the summary's" 1 '^expect: FAIL read: dmabuf>=0.95\*host: at 1 MiB: dmabuf 0.91x host \(0.91-0.92\) < 0.95; at 8 MiB: dmabuf 0.92x host \(0.92-0.93\) < 0.95; the summary: dmabuf 0.92x host \(0.91-0.92\) < 0.95$' \
	"$C" --expect 'dmabuf>=0.95*host'
expect "ratio: the failure count line" 1 '^expect: 2 of 2 checks FAILED$' "$C" --expect 'dmabuf>=0.95*host'
expect "ratio to a path of another verb: pass (rounds apart: Welch)" 0 '^expect: PASS read: read.dmabuf>=0.9\*write.dmabuf: .*: dmabuf 0.98x write dmabuf \(0.97-0.98\) >= 0.9$' \
	"$C" --expect 'read.dmabuf>=0.9*write.dmabuf'
# the ceiling
expect "ceiling: pass (host of each verb against its own ceiling_gbps)" 0 '^expect: PASS read: host>=0.9\*ceiling: .* = 0.9 x ceiling 100.000$' \
	"$C" --expect 'host>=0.9*ceiling'
expect "ceiling: fail at a GPU path's own (lower) ceiling" 1 '^expect: FAIL read: dmabuf>=0.98\*ceiling: at 1 MiB: dmabuf 88.100 Gb/s \(88.094-88.106\) < 90.160 Gb/s = 0.98 x ceiling 92.000' \
	"$C" --expect 'dmabuf>=0.98*ceiling'
expect "ceiling absent from the rows (today's 34 columns): fail with the reason" 1 '^expect: FAIL write: host>=0.9\*ceiling: at 1 MiB, 8 MiB: the host rows carry no ceiling_gbps$' \
	"$B" --expect 'host>=0.9*ceiling'
# absolute thresholds and units
expect "absolute Gb/s: pass, on the path's own interval" 0 '^expect: PASS write: bounce>=20Gbps: at 1 MiB, 8 MiB; closest at 1 MiB: bounce 70.100 Gb/s \(70.095-70.105\) >= 20.000 Gb/s$' \
	"$C" --expect 'bounce>=20Gbps'
expect "absolute Gb/s: fail (and no summary of ratios for a number)" 1 '^expect: FAIL write: bounce>=80Gb/s: at 1 MiB: bounce 70.100 Gb/s \(70.095-70.105\) < 80.000 Gb/s; at 8 MiB: bounce 72.300 Gb/s \(72.295-72.305\) < 80.000 Gb/s$' \
	"$C" --expect 'bounce>=80Gb/s'
expect "Mbps converted: pass" 0 '^expect: PASS write: host>=90000Mbps: .*>= 90.000 Gb/s$' "$C" --expect 'host>=90000Mbps'
expect "strict < fails on equality (latency: the number as it is)" 1 '^expect: FAIL write: write.host.p50_us@2<2.1: at 2 B: host p50_us 2.100 us >= 2.100 us \(latency' "$L" --expect 'write.host.p50_us@2<2.1'
expect "a threshold inside the interval: UNDECIDED, never a guess" 3 '^expect: UNDECIDED write: write.host@8M>97.5: at 8 MiB: host 97.500 Gb/s \(97.49[0-9]-97.50[0-9]\) vs 97.500 Gb/s$' "$C" --expect 'write.host@8M>97.5'
expect "upper bound < : pass" 0 '^expect: PASS write: write.bounce<100: at 1 MiB, 8 MiB; closest at 8 MiB' "$C" --expect 'write.bounce<100'
# latency columns
expect "latency p50: pass (default: the smallest size), said to be no interval" 0 '^expect: PASS write: write.dmabuf.p50_us<=5: at 2 B; closest at 2 B: dmabuf p50_us 2.300 us <= 5.000 us \(latency: no interval, not at the error rate\)$' \
	"$L" --expect 'write.dmabuf.p50_us<=5'
expect "latency p50: fail" 1 '^expect: FAIL write: write.bounce.p50_us<=5: at 2 B: bounce p50_us 9.800 us > 5.000 us \(latency' \
	"$L" --expect 'write.bounce.p50_us<=5'
expect "latency p99 ratio over every size: pass" 0 '^expect: PASS read: dmabuf.p99_us@all<=2\*host: at 5 sizes 2 B..1 MiB' \
	"$L" --expect 'dmabuf.p99_us@all<=2*host'
expect "latency in ns: fail" 1 '^expect: FAIL write: write.host.p50_us<=2000ns: at 2 B: host p50_us 2.100 us > 2.000 us \(latency' \
	"$L" --expect 'write.host.p50_us<=2000ns'
expect "lat_ prefix accepted for the metric" 0 '^expect: PASS write: write.host.lat_max_us<=9: ' "$L" --expect 'write.host.lat_max_us<=9'
expect "latency client rows count, not the server's (50 us)" 0 '^expect: PASS write: write.host.p50_us@2<=3: ' "$L" --expect 'write.host.p50_us@2<=3'
# size qualifiers
expect "@SIZE..SIZE: fail at the small end" 1 '^expect: FAIL write: dmabuf@4K..64K>=0.95\*host: at 4 KiB: dmabuf 0.95x host \(0.947-0.948\) < 0.95$' \
	"$C" --expect 'dmabuf@4K..64K>=0.95*host'
expect "@..SIZE: pass" 0 '^expect: PASS write: write.dmabuf@..64KiB>=0.9\*host: at 4 KiB, 64 KiB;' "$C" --expect 'write.dmabuf@..64KiB>=0.9*host'
expect "@SIZE..: the sizes from there up" 0 '^expect: PASS write: write.bounce@64k..>=40: at 64 KiB, 1 MiB, 8 MiB;' "$C" --expect 'write.bounce@64k..>=40'
expect "@SIZE absent from the data: fail, no rows there" 1 '^expect: FAIL write: write.host@3K>=1: no rows at 3 KiB$' "$C" --expect 'write.host@3K>=1'
# verbs
expect "bidirectional verb: pass" 0 '^expect: PASS write bidir: write-bidir.dmabuf>=50: at 1 MiB' "$B" --expect 'write-bidir.dmabuf>=50'
expect "3 repeats: an interval too wide to decide 100 Gb/s at 1 %" 3 '^expect: UNDECIDED write bidir: write-bidir.dmabuf>=100: at 1 MiB: dmabuf 190.000 Gb/s \(98.708-365.723\) vs 100.000 Gb/s$' "$B" --expect 'write-bidir.dmabuf>=100'
expect "bidirectional: no host rows is a failure" 1 '^expect: FAIL write bidir: write-bidir.dmabuf>=0.9\*host: at 1 MiB: no host rows \(client role\) to compare with$' \
	"$B" --expect 'write-bidir.dmabuf>=0.9*host'
expect "a verb with no rows of that kind fails" 1 '^expect: FAIL host>=1: no bandwidth rows for any verb$' "$L" --expect 'host>=1'
head -n 1 "$B" >"$tmp/bidir.csv"
awk -F, 'NR > 1 && $13 == 1' "$B" >>"$tmp/bidir.csv"
expect "only bidirectional rows, rule without a verb: fail, saying how to name them" 1 \
	'^expect: FAIL dmabuf>=1: no bandwidth rows for any verb \(only write bidir: name it, e.g. write-bidir.dmabuf\)$' \
	"$tmp/bidir.csv" --expect 'dmabuf>=1'
# missing data is a failure with the reason
expect "skipped path: fail with its note" 1 '^expect: FAIL read: peermem>=1: at 1 MiB, 8 MiB: peermem skipped: nvidia_peermem not loaded \(/sys/module/nvidia_peermem absent\)$' \
	"$C" --expect 'peermem>=1'
expect "failed size: fail with its note" 1 '^expect: FAIL read: read.bounce@8M>=1: at 8 MiB: bounce failed: cuMemcpyDtoHAsync' "$B" --expect 'read.bounce@8M>=1'
expect "a path absent from the data: fail, naming the paths there are" 1 'no bounce rows \(the write paths: host, dmabuf\)$' "$fx/ab-one-repeat.csv" --expect 'bounce>=1'
# several rules: all must pass
expect "two rules in one --expect, comma-separated, both pass: exit 0" 0 '^expect: all 4 checks passed$' \
	"$C" --expect 'dmabuf>=0.9*host,host>=0.9*ceiling'
expect "one of three rules fails: exit 1" 1 '^expect: 1 of 5 checks FAILED$' \
	"$C" --expect 'dmabuf>=0.9*host' --expect 'write.bounce>=80' --expect 'host>=0.9*ceiling'
run golden --no-plot --expect 'dmabuf>=0.9*host' --expect 'bounce>=80Gbps' --expect 'peermem>=1' --expect 'host>=0.9*ceiling' "$C"
check "a gate's whole output (tables, then one line per rule and verb, then the count)" golden golden "$exp/ab-gate.txt"

# malformed rules: exit 2 at once, naming the rule, nothing else printed (a
# threshold beyond any real run, 1e999 = inf included, used to be judged)
for r in 'dmabuf' 'dmabuf>=' 'dmabuf=>0.9*host' 'dmabuf.p50>=1' 'dmabuf>=5us' 'ceiling>=1' \
	'dmabuf@3X>=1' 'dmabuf>=host.p50_us' 'gpu>=0.9*host' 'dmabuff>=1' \
	'dmabuf>=1e999Gbps' 'write.dmabuf.p50_us<=2e12'; do
	"$PYTHON" "$ab" --no-plot --expect "$r" "$C" >"$tmp/bad.out" 2>"$tmp/bad.err"
	rc=$?
	if [ $rc = 2 ] && grep -qF -- "--expect '$r'" "$tmp/bad.err" && [ ! -s "$tmp/bad.out" ]; then
		ok "malformed rule '$r': usage error naming it"
	else
		not_ok "malformed rule '$r': usage error naming it (exit $rc)"
		sed 's/^/# /' "$tmp/bad.err"
	fi
done
# the gate's status wins over a plot that worked
if have_mpl; then
	run plotgate --out "$tmp/p" --expect 'write.bounce>=80' "$C"
	check "with a PNG: the rule's failure still exits 1, PNG written, plot line last" \
		sh -c "[ \$(cat '$tmp/plotgate.rc') = 1 ] && [ -s '$tmp/p/ab-ceiling.png' ] && tail -n 1 '$tmp/plotgate.out' | grep -q '^plot: '"
else
	skip "gate with a PNG" "no matplotlib for $PYTHON"
fi

done_testing
