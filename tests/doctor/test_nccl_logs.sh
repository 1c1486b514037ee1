#!/bin/sh
# gdr_doctor --nccl-log on every real and synthetic NCCL log: golden reports and conclusions.
. "$top_srcdir/tests/doctor/lib.sh"
cd "$top_srcdir/tests/doctor/nccl-logs" || exit 1
set -- *.log
echo "1..$(($# + 4))"
for f in "$@"; do
	doctor_env "$DOCTOR" --nccl-log "$f" >"$WORK/out" 2>&1
	echo "exit $?" >>"$WORK/out"
	golden "nccl-${f%.log}.out" "$WORK/out"
done
doctor_env "$DOCTOR" --nccl-log case01.log --json - >"$WORK/case01.json" 2>&1
golden nccl-case01.json "$WORK/case01.json"
doctor_env "$DOCTOR" --nccl-log - --expect dmabuf --quiet <case01.log >/dev/null 2>&1
status_is "stdin, --expect dmabuf on a DMA-BUF log" 0 $?
doctor_env "$DOCTOR" --nccl-log case08.log --expect dmabuf --quiet >/dev/null 2>&1
status_is "--expect dmabuf on a peermem log" 1 $?
doctor_env "$DOCTOR" --nccl-log case08.log --expect any --quiet >/dev/null 2>&1
status_is "--expect any on a peermem log" 0 $?
exit $FAILED
