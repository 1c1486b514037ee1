#!/bin/sh
# gdr_doctor --nccl-log on every real and synthetic NCCL log: golden reports and conclusions.
. "$top_srcdir/tests/doctor/lib.sh"
cd "$top_srcdir/tests/doctor/nccl-logs" || exit 1
set -- *.log
plan $((2 * $# + 8))
for f in "$@"; do
	doctor_env "$DOCTOR" --nccl-log "$f" >"$WORK/out" 2>&1
	echo "exit $?" >>"$WORK/out"
	golden "nccl-${f%.log}.out" "$WORK/out"
	# The explanation agrees with the JSON fields it sits next to.
	doctor_env "$DOCTOR" --nccl-log "$f" --json "$WORK/out.json" >"$WORK/text" 2>&1
	if python3 "$top_srcdir/tests/doctor/nccl_text_json.py" "$WORK/text" "$WORK/out.json" >"$WORK/mismatch" 2>&1; then
		ok "$f: text and JSON agree"
	else
		sed 's/^/# /' "$WORK/mismatch"
		not_ok "$f: text and JSON agree"
	fi
done
doctor_env "$DOCTOR" --nccl-log case01.log --json - >"$WORK/case01.json" 2>&1
golden nccl-case01.json "$WORK/case01.json"
doctor_env "$DOCTOR" --nccl-log - --expect dmabuf --quiet <case01.log >/dev/null 2>&1
status_is "stdin, --expect dmabuf on a DMA-BUF log" 0 $?
doctor_env "$DOCTOR" --nccl-log case08.log --expect dmabuf --quiet >/dev/null 2>&1
status_is "--expect dmabuf on a peermem log" 1 $?
doctor_env "$DOCTOR" --nccl-log case08.log --expect any --quiet >/dev/null 2>&1
status_is "--expect any on a peermem log" 0 $?
doctor_env "$DOCTOR" --nccl-log synth-two-runs.log --expect any --quiet >"$WORK/q" 2>&1
status_is "--expect any on a file whose processes disagree" 1 $?
# Order of the runs in the file does not change the answer.
a=$(doctor_env "$DOCTOR" --nccl-log synth-two-runs.log --quiet | cut -d' ' -f2)
b=$(doctor_env "$DOCTOR" --nccl-log synth-two-runs-reversed.log --quiet | cut -d' ' -f2)
if [ "$a" = mixed ] && [ "$b" = mixed ]; then ok "two runs, either order: mixed"; else not_ok "two runs: $a, reversed: $b"; fi
c=$(doctor_env "$DOCTOR" --nccl-log synth-two-runs-bare.log --quiet | cut -d' ' -f2)
d=$(doctor_env "$DOCTOR" --nccl-log synth-two-runs-bare-reversed.log --quiet | cut -d' ' -f2)
if [ "$c" = unknown ] && [ "$d" = unknown ]; then ok "two runs without process prefixes, either order: unknown"; else
	not_ok "two runs without prefixes: $c, reversed: $d"; fi
# A guide's line alone is not evidence either way.
g=$(doctor_env "$DOCTOR" --nccl-log synth-guide-peermem.log --quiet | cut -d' ' -f2)
[ "$g" = unknown ] && ok "guide lines alone: unknown" || not_ok "guide lines alone: $g"
done_testing
