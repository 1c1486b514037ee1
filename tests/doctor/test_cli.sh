#!/bin/sh
# gdr_doctor's command line: usage errors exit 2 and say why; --help names every option.
. "$top_srcdir/tests/doctor/lib.sh"
plan 13
usage() { # name want-substring args...
	name=$1 want=$2
	shift 2
	doctor_env "$DOCTOR" "$@" >"$WORK/u.out" 2>&1
	rc=$?
	if [ $rc = 2 ] && grep -F -- "$want" "$WORK/u.out" >/dev/null; then ok "$name"; else
		sed 's/^/# /' "$WORK/u.out"; not_ok "$name (exit $rc)"; fi
}
usage "bad --expect" "not one of dmabuf, peermem, any" --expect gpu
usage "unknown option" "unknown option '--frobnicate' (see --help)" --frobnicate
usage "a typo gets the nearest option" "did you mean --buffer-size?" --buffer_size 8M
# -q, -t, -b, -l are the bench tools' QPs, tx depth, bidirectional, post list.
for l in -q -t -b -l; do usage "$l is not gdr_doctor's" "unknown option '$l'" $l x; done
usage "stray argument" "unexpected argument 'extra'" extra
usage "missing log" "cannot read the NCCL log" --nccl-log /nonexistent/nccl.log
usage "missing log with --root" "cannot read the NCCL log" --root / --nccl-log /nonexistent/nccl.log
usage "unwritable --json" "cannot write the JSON report" --root "$top_srcdir/tests/doctor/roots/both" --json /nonexistent/dir/x.json
doctor_env "$DOCTOR" --help >"$WORK/help" 2>&1
rc=$?
missing=
for o in --root --expect --json --nccl-log --quiet --help; do
	grep -F -- "$o" "$WORK/help" >/dev/null || missing="$missing $o"
done
[ $rc = 0 ] && [ -z "$missing" ] && ok "--help lists every option" || not_ok "--help lists every option (missing:$missing)"
# The live system: whatever it has, the report has a verdict about this machine and the status is 0 or 1.
doctor_env "$DOCTOR" --expect any >"$WORK/live" 2>&1
rc=$?
if { [ $rc = 0 ] || [ $rc = 1 ]; } && grep '^verdict (this machine): ' "$WORK/live" >/dev/null; then
	ok "live run has a verdict about this machine (exit $rc)"
else
	sed 's/^/# /' "$WORK/live"; not_ok "live run has a verdict about this machine (exit $rc)"
fi
done_testing
