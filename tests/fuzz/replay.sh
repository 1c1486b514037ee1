#!/bin/sh
# Replays each fuzz target's corpus (seeds and past crashers) through the
# target built without libFuzzer; one TAP line per target. Under the
# sanitizer build a bad input fails here as it would in the fuzzer.
: "${top_srcdir:=.}" "${top_builddir:=.}"
set -- proto options nccl_log
echo "1..$#"
n=0
for t in "$@"; do
	n=$((n + 1))
	dir=$top_srcdir/tests/fuzz/corpus/fuzz_$t
	if "$top_builddir/tests/fuzz/replay_$t" "$dir"/* 2>"$top_builddir/tests/fuzz/replay_$t.err"; then
		echo "ok $n - fuzz_$t corpus ($(ls "$dir" | wc -l) inputs)"
	else
		echo "not ok $n - fuzz_$t corpus: exit $? (see tests/fuzz/replay_$t.err)"
		tail -20 "$top_builddir/tests/fuzz/replay_$t.err" | sed 's/^/# /'
	fi
done
