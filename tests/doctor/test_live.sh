#!/bin/sh
# gdr_doctor --live on the fixture roots of gen-live-roots.py: golden text,
# JSON, NFD labels and Prometheus gauges per case, the gate's exit statuses,
# usage errors, and that a failed run leaves the earlier files as they were.
. "$top_srcdir/tests/doctor/lib.sh"
cd "$top_srcdir/tests/doctor/roots" || exit 1

MR=../live-mr

# live NAME ROOT MR [args...]: text (with the exit status), JSON, NFD and metrics golden.
live() {
	name=$1 root=$2 mr=$3
	shift 3
	set -- --live --root "$root" ${mr:+--rdma-mr "$MR/$mr.json"} "$@"
	doctor_env "$DOCTOR" "$@" >"$WORK/$name.out" 2>&1
	echo "exit $?" >>"$WORK/$name.out"
	golden "live-$name.out" "$WORK/$name.out"
	doctor_env "$DOCTOR" "$@" --quiet --json "$WORK/$name.json" --nfd "$WORK/$name.nfd" \
		--prom "$WORK/$name.prom" >/dev/null 2>&1
	golden "live-$name.json" "$WORK/$name.json"
	golden "live-$name.nfd" "$WORK/$name.nfd"
	golden "live-$name.prom" "$WORK/$name.prom"
}

live both live-both live-both
live dmabuf live-dmabuf live-dmabuf
live peermem live-peermem live-peermem
live neither live-neither live-neither
# Each source missing: no debugfs (the MRs still give the estimate), no memory_peers
# (refcnt instead), neither (peer memory not known), no MR list (a tree without
# --rdma-mr), and a pod without hostPID.
live no-debugfs live-no-debugfs live-both
live no-memory-peers live-no-memory-peers ""
live no-refcnt live-no-refcnt ""
live no-rdma-mr live-both ""
live no-hostpid live-no-hostpid live-no-hostpid

# --quiet: the answer alone.
doctor_env "$DOCTOR" --live --root live-both --rdma-mr "$MR/live-both.json" --quiet \
	>"$WORK/quiet.out" 2>&1
golden live-both-quiet.out "$WORK/quiet.out"

# The gate (docs/exit-status.md): --expect dmabuf fails when anything uses peer memory,
# peermem when anything uses DMA-BUF, 3 when the deciding source was not read.
expect() { # root mr path want
	doctor_env "$DOCTOR" --live --root "$1" ${2:+--rdma-mr "$MR/$2.json"} --expect "$3" \
		--quiet >/dev/null 2>"$WORK/expect.err"
	status_is "$1 --expect $3" "$4" "$?"
}
expect live-both live-both dmabuf 1
expect live-both live-both peermem 1
expect live-dmabuf live-dmabuf dmabuf 0
expect live-dmabuf live-dmabuf peermem 1
expect live-peermem live-peermem dmabuf 1
expect live-peermem live-peermem peermem 0
expect live-neither live-neither dmabuf 0
expect live-no-debugfs live-both dmabuf 1
expect live-no-debugfs live-both peermem 3
expect live-no-refcnt "" dmabuf 3
grep -q 'cannot decide: peer-memory use not known' "$WORK/expect.err" &&
	ok "an undecided gate says why on stderr" || not_ok "an undecided gate says why on stderr" "$WORK/expect.err"

# Usage and input errors: exit 2, nothing judged.
usage() { # name args...
	n=$1
	shift
	doctor_env "$DOCTOR" "$@" >"$WORK/usage.err" 2>&1
	status_is "$n" 2 "$?"
}
usage "--live with --nccl-log" --live --nccl-log "$top_srcdir/tests/doctor/nccl-logs/case01.log"
usage "--rdma-mr without --live" --rdma-mr "$MR/live-both.json"
usage "--live --expect any" --live --expect any
usage "--rdma-mr that does not exist" --live --root live-both --rdma-mr "$WORK/nope.json"
usage "--rdma-mr a directory" --live --root live-both --rdma-mr "$WORK"
grep -q "is a directory, not a regular file (give a regular file, a pipe or -)" "$WORK/usage.err" &&
	ok "--rdma-mr a directory: says what it is" || not_ok "--rdma-mr a directory: says what it is" "$WORK/usage.err"
echo '{"not": "an MR list"}' >"$WORK/bad.json"
usage "--rdma-mr that is not rdma's list" --live --root live-both --rdma-mr "$WORK/bad.json"
grep -q "not rdma's MR list" "$WORK/usage.err" && ok "a bad --rdma-mr says so" ||
	not_ok "a bad --rdma-mr says so" "$WORK/usage.err"
# ...and leaves the earlier files as they were.
mkdir "$WORK/keep"
echo old-nfd >"$WORK/keep/nfd"
echo old-prom >"$WORK/keep/prom.prom"
doctor_env "$DOCTOR" --live --root live-both --rdma-mr "$WORK/bad.json" --nfd "$WORK/keep/nfd" \
	--prom "$WORK/keep/prom.prom" >/dev/null 2>&1
if [ "$(cat "$WORK/keep/nfd" "$WORK/keep/prom.prom")" = "old-nfd
old-prom" ] && [ "$(ls -A "$WORK/keep" | wc -l)" -eq 2 ]; then
	ok "a failed --live run leaves the earlier --nfd and --prom files"
else
	not_ok "a failed --live run leaves the earlier --nfd and --prom files"
fi
# --rdma-mr - reads stdin.
doctor_env "$DOCTOR" --live --root live-both --rdma-mr - --quiet --json - <"$MR/live-both.json" \
	>"$WORK/stdin.json" 2>&1
grep -q '"detail": "(stdin): 9 MRs"' "$WORK/stdin.json" &&
	[ "$(sed 's/"rdma_mr", "state": "read", "path": "[^"]*", "detail": "[^"]*"//' "$WORK/stdin.json")" = \
		"$(sed 's/"rdma_mr", "state": "read", "path": "[^"]*", "detail": "[^"]*"//' "$WORK/both.json")" ] &&
	ok "--rdma-mr - reads stdin" || not_ok "--rdma-mr - reads stdin" "$WORK/stdin.json"

# Every JSON parses; every metrics file passes promtool; text fits 80 columns.
if command -v python3 >/dev/null 2>&1; then
	check "every --live JSON parses" python3 -c \
		'import json,sys; [json.load(open(f)) for f in sys.argv[1:]]' "$WORK"/*.json
else
	skip "every --live JSON parses" "no python3"
fi
if command -v promtool >/dev/null 2>&1; then
	check "promtool check metrics (every case)" sh -c \
		'for f; do promtool check metrics <"$f" || exit 1; done' sh "$WORK"/*.prom
else
	skip "promtool check metrics (every case)" "promtool not installed (apt-get install prometheus)"
fi
wide=$(cat "$WORK"/*.out | awk 'length($0) > 80' | head -3)
[ -z "$wide" ] && ok "--live text fits 80 columns" || not_ok "--live text fits 80 columns: $wide"
done_testing
