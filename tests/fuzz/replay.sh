#!/bin/sh
# Replays each fuzz target's corpus (seeds and past crashers) through the
# target built without libFuzzer; one TAP line per target. Under the
# sanitizer build a bad input fails here as it would in the fuzzer.
: "${top_srcdir:=.}" "${top_builddir:=.}"
. "$(dirname "$0")/../tap.sh"
targets="proto options nccl_log"
plan 3
for t in $targets; do
	# The NCCL log reader's seeds are the doctor's NCCL logs, stored once
	# (tests/doctor/nccl-logs); its own corpus folder holds past crashers only.
	set --
	for f in "$top_srcdir/tests/fuzz/corpus/fuzz_$t"/*; do
		[ -f "$f" ] && set -- "$@" "$f"
	done
	if [ "$t" = nccl_log ]; then
		set -- "$@" "$top_srcdir"/tests/doctor/nccl-logs/*.log
	fi
	if [ $# -eq 0 ]; then
		not_ok "fuzz_$t corpus: no inputs found"
	elif "$top_builddir/tests/fuzz/replay_$t" "$@" 2>"$top_builddir/tests/fuzz/replay_$t.err"; then
		ok "fuzz_$t corpus ($# inputs)"
	else
		not_ok "fuzz_$t corpus: exit $? (see tests/fuzz/replay_$t.err)"
		tail -20 "$top_builddir/tests/fuzz/replay_$t.err" | sed 's/^/# /'
	fi
done
done_testing
