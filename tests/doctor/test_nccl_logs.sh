#!/bin/sh
# gdr_doctor --nccl-log on every real and synthetic NCCL log: golden reports (text with
# --quiet, and JSON), conclusions, and the cause -> fix each known line maps to.
. "$top_srcdir/tests/doctor/lib.sh"
cd "$top_srcdir/tests/doctor/nccl-logs" || exit 1
set -- *.log
plan $((3 * $# + 47))
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
# json_true FILE EXPR: the Python expression EXPR holds for the JSON report d.
json_true() {
	doctor_env "$DOCTOR" --nccl-log "$1" --json - | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(0 if eval(sys.argv[1]) else 1)' "$2"
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
# The four defects seen on real logs (issue 50), each on a log in NCCL's formats.
check "2.26 WARN timestamp '[%F %T] ' is no part of the process: 2 processes" \
	json_true synth-2.26-warn-timestamp.log 'sorted(p["id"] for p in d["processes"]) == ["nodea:4101", "nodeb:5202"]'
check "an application's line after the bare banner: the banner's own version" \
	json_true synth-2.4.7-tf-banner.log 'd["version"] == "2.4.7+cudaCUDA_MAJOR.CUDA_MINOR" and d["joined_lines"] == 0'
check "a script's print after the bare banner (2.5.7): not part of the version" \
	json_true synth-2.5.7-banner-print.log 'd["version"] == "2.5.7+cuda10.2" and d["joined_lines"] == 0'
check "vLLM's and a launcher's lines are not joined onto NCCL records" \
	json_true synth-2.21-vllm-app-lines.log 'd["joined_lines"] == 0'
check "NCCL 2.4, NIC distance PHB: the number that enables it, 3" \
	json_has synth-2.4.7-nic-distance-phb.log fix "NCCL_NET_GDR_LEVEL=3 (NCCL 2.4.7+cuda10.1 reads a number"
check "NCCL 2.4, NIC distance PHB: the cause is the distance, not 'no line says why'" \
	json_has synth-2.4.7-nic-distance-phb.log cause "distance PHB (2) is not below NCCL_NET_GDR_LEVEL"
check "NET/Socket's GDR line: the Socket transport, not a NIC without GPUDirect" \
	json_true synth-2.21-socket-hca-cut.log 'd["conclusion"] == "none" and d["cause"].startswith("Socket transport") and "nvidia-peermem" not in d["fix"]'
check "Socket, and the log says why IB was not used: no libibverbs" \
	json_has synth-2.21-socket-no-verbs.log cause "no libibverbs"
check "case11 (NCCL_IB_DISABLE=1): its NET/Socket line is no HCA" \
	json_true case11.log 'd["counts"]["hca_gdr_disabled"] == 0 and d["counts"]["socket_hca_lines"] == 1'
# NCCL 2.26 to 2.30.7's new lines.
check "/GDRDMA(PCI) (2.26): a PCIe-mapped DMA-BUF on a C2C system" \
	json_has synth-2.26-c2c-pci.log reason "PCIe-mapped DMA-BUF"
check "Data Direct (2.27.3 on): DMA-BUF through the NIC's Data Direct interface" \
	json_has synth-2.28-data-direct.log reason "Data Direct DMA interface was detected: NCCL registers DMA-BUF"
check "MLOPart (2.30.7): NCCL_NET_GDR_MLOPART=1" json_has synth-2.30.7-mlopart.log fix "NCCL_NET_GDR_MLOPART=1"
check "HINT lines (2.30.7) after IBV_WC_LOC_PROT_ERR: one event, 7 lines" \
	json_true synth-2.30.7-loc-prot-err-hints.log 'len(d["network_errors"]) == 1 and d["network_errors"][0]["hint_lines"] == 7 and d["hint_lines_alone"] == 0'
check "HINT lines: NCCL's own hint for it (ACS), the other 5 not further causes" \
	json_has synth-2.30.7-loc-prot-err-hints.log network_errors "the other 5 are NCCL's hints for IBV_WC_WR_FLUSH_ERR and IBV_WC_RETRY_EXC_ERR"
check "HINT lines: the conclusion stays the channels' (dmabuf)" \
	json_true synth-2.30.7-loc-prot-err-hints.log 'd["conclusion"] == "dmabuf"'
done_testing
