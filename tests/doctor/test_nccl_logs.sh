#!/bin/sh
# gdr_doctor --nccl-log on every real and synthetic NCCL log: golden reports (text with
# --quiet, and JSON), conclusions, and the cause -> fix each known line maps to.
. "$top_srcdir/tests/doctor/lib.sh"
cd "$top_srcdir/tests/doctor/nccl-logs" || exit 1
set -- *.log
plan $((3 * $# + 32))
for f in "$@"; do
	{
		doctor_env "$DOCTOR" --nccl-log "$f"
		echo "exit $?"
		echo "--quiet:"
		doctor_env "$DOCTOR" --nccl-log "$f" --quiet
		echo "exit $?"
	} >"$WORK/out" 2>&1
	golden "nccl-${f%.log}.out" "$WORK/out"
	doctor_env "$DOCTOR" --nccl-log "$f" --json - >"$WORK/out.json" 2>&1
	golden "nccl-${f%.log}.json" "$WORK/out.json"
	# The explanation agrees with the JSON fields it sits next to.
	doctor_env "$DOCTOR" --nccl-log "$f" >"$WORK/text" 2>&1
	if python3 "$top_srcdir/tests/doctor/nccl_text_json.py" "$WORK/text" "$WORK/out.json" >"$WORK/mismatch" 2>&1; then
		ok "$f: text and JSON agree"
	else
		sed 's/^/# /' "$WORK/mismatch"
		not_ok "$f: text and JSON agree"
	fi
done
doctor_env "$DOCTOR" --nccl-log - --expect dmabuf --quiet <case01.log >/dev/null 2>&1
status_is "stdin, --expect dmabuf on a DMA-BUF log" 0 $?
doctor_env "$DOCTOR" --nccl-log case08.log --expect dmabuf --quiet >/dev/null 2>&1
status_is "--expect dmabuf on a peermem log" 1 $?
doctor_env "$DOCTOR" --nccl-log case08.log --expect any --quiet >/dev/null 2>&1
status_is "--expect any on a peermem log" 0 $?
doctor_env "$DOCTOR" --nccl-log synth-two-runs.log --expect any --quiet >"$WORK/q" 2>&1
status_is "--expect any on a file whose processes disagree" 1 $?

# conclusion FILE: the conclusion --quiet prints.
conclusion() { doctor_env "$DOCTOR" --nccl-log "$1" --quiet | cut -d' ' -f2; }
# json_has FILE KEY TEXT: the JSON report's top-level KEY contains TEXT.
json_has() {
	doctor_env "$DOCTOR" --nccl-log "$1" --json - | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(0 if sys.argv[2] in str(d[sys.argv[1]]) else 1)' "$2" "$3"
}
check() { # NAME command...
	name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

# Order of the runs in the file does not change the answer.
a=$(conclusion synth-two-runs.log) b=$(conclusion synth-two-runs-reversed.log)
if [ "$a" = mixed ] && [ "$b" = mixed ]; then ok "two runs, either order: mixed"; else not_ok "two runs: $a, reversed: $b"; fi
c=$(conclusion synth-two-runs-bare.log) d=$(conclusion synth-two-runs-bare-reversed.log)
if [ "$c" = unknown ] && [ "$d" = unknown ]; then ok "two runs without process prefixes, either order: unknown"; else
	not_ok "two runs without prefixes: $c, reversed: $d"; fi
# A guide's line alone is not evidence either way.
g=$(conclusion synth-guide-peermem.log)
[ "$g" = unknown ] && ok "guide lines alone: unknown" || not_ok "guide lines alone: $g"

# The answer leads: conclusion, cause and fix right under the file name.
doctor_env "$DOCTOR" --nccl-log case09.log >"$WORK/lead"
check "case09: the report leads with conclusion, cause, fix" \
	test "$(sed -n '2,3p' "$WORK/lead" | cut -c1-16 | tr -d ' \n')" = "conclusion:cause:"
# Each known "disabled" line maps to its fix.
check "case09 (no module): load nvidia-peermem or move to DMA-BUF" \
	json_has case09.log fix "or move to DMA-BUF (NCCL >= 2.13.4, NCCL_DMABUF_ENABLE=1, open kernel module, kernel >= 5.12"
check "case09: the deciding line is the (no module) line" json_has case09.log cause_line "(no module)"
check "case16 (distance 3 >= 2, NCCL 2.4): the level needed, PHB (4 in 2.4's numbers)" \
	json_has case16.log fix "NCCL_NET_GDR_LEVEL=4 (NCCL 2.4.7"
check "case16: PHB named for later releases" json_has case16.log fix "NCCL_NET_GDR_LEVEL=PHB"
check "case14 (distance 6 > 4, no version): PHB in 2.12 to 2.25" json_has case14.log fix "PHB in NCCL 2.12 to 2.25"
check "case10 (Disabled for HCA): peer memory or DMA-BUF" json_has case10.log fix "load nvidia-peermem, or enable DMA-BUF"
check "case12 (No device found): make the NIC visible" json_has case12.log fix "/dev/infiniband"
check "case11 (NCCL_IB_DISABLE=1): unset it" json_has case11.log fix "unset NCCL_IB_DISABLE"
check "case04 (OFI disabling GDR): the provider's CUDA API option" json_has case04.log fix "FI_OPT_CUDA_API_PERMITTED"
# An undecided log says which NCCL_DEBUG_SUBSYS and level settle it.
for f in case03.log case22.log; do
	doctor_env "$DOCTOR" --nccl-log "$f" --json - >"$WORK/undecided.json"
	check "$f: fix points to NCCL_DEBUG_SUBSYS=INIT,NET and the level" \
		grep -q '"fix": "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET.*NCCL_NET_GDR_LEVEL=PHB' "$WORK/undecided.json"
done
# --quiet: the conclusion and the cause.
q=$(doctor_env "$DOCTOR" --nccl-log case03.log --quiet)
check "--quiet case03: conclusion and cause" test "$q" = "case03.log: none (no /GDRDMA, and no line of the log says why)"
# docs/nccl-logs.md quotes both as the program prints them.
check "docs/nccl-logs.md quotes --quiet case03 as printed" grep -qF "\`$q\`" "$top_srcdir/docs/nccl-logs.md"
sed -n '2,/^  deciding line:/p' "$WORK/lead" | sed '$d' >"$WORK/lead-head"
# every_line_in LINES FILE: each line of LINES is a whole line of FILE.
every_line_in() {
	while IFS= read -r l; do grep -qxF -- "$l" "$2" || return 1; done <"$1"
}
check "docs/nccl-logs.md quotes case09's conclusion, cause and fix as printed" \
	every_line_in "$WORK/lead-head" "$top_srcdir/docs/nccl-logs.md"
# Every NCCL WARN line is listed.
doctor_env "$DOCTOR" --nccl-log case23.log >"$WORK/warn"
check "case23: its NCCL WARN line listed" grep -q "^    4: .*NCCL WARN Attribute busid of node nic not found" "$WORK/warn"
check "case23: NCCL WARN in the JSON" json_has case23.log nccl_warn_lines "Attribute busid of node nic not found"
# Held-out classes.
check "one node, GDR 1 only, the plugin disabling GDR: none" test "$(conclusion synth-2.27-one-node-ring-gdr1-ofi-nogdr.log)" = none
check "one node, GDR 1 only, SHM channels: unknown, not dmabuf" test "$(conclusion synth-2.24-one-node-ring-gdr1.log)" = unknown
check "one node, GPU/HCA pair Enabled line only: unknown, not dmabuf" test "$(conclusion synth-2.21-one-node-pair-enabled.log)" = unknown
check "No device found then NET/Socket, no channel lines: none" test "$(conclusion synth-2.18-no-ib-socket-no-channels.log)" = none
check "DMA-BUF dated to NCCL 2.13.4" json_has synth-2.12-peermem.log reason "predates DMA-BUF support (2.13.4)"
# A UTF-8 byte order mark before the first line (a Windows editor's save) is
# not part of the first process's id: both runs are still seen.
{ printf '\357\273\277'; cat synth-two-runs-reversed.log; } >"$WORK/bom.log"
check "a byte order mark before the first line: still mixed" test "$(conclusion "$WORK/bom.log")" = mixed
# An empty log is said to be empty, not "none of 0 lines".
: >"$WORK/empty.log"
check "an empty log: not an NCCL log, empty" json_has "$WORK/empty.log" reason "not an NCCL log: empty (no line to read)"
# Trailing blanks (a collector's padding) are not part of a value: NET/IB's
# "Disabled for HCA" is still about IB, the network in use.
sed 's/$/   /' case10.log >"$WORK/blanks.log"
check "trailing blanks on every line: case10 still none" test "$(conclusion "$WORK/blanks.log")" = none
done_testing
