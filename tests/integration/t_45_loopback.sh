#!/bin/bash
# --loopback, the one-node pre-job check, on Soft-RoCE (rxe loops back): host
# and bounce (the fake libcuda.so.1) for WRITE and READ, one verdict line per
# pair and exit 0; a requested path that cannot run (dmabuf on rxe) is exit 1
# and named; a server child that cannot listen is named; the child dies with
# the check (PR_SET_PDEATHSIG); --loopback with an address is exit 2. The
# latency tools' check (p50 in the verdict), and --nfd's labels.
. "$(dirname "$0")/lib.sh"
require_rdma
use_fake_cuda
DEV=$GDRPERF_RDMA_DEV
LOGS="$TMP/lb.out $TMP/lb.err"

# lb PROG ARGS...: the check on the next port, bounded; status in $RC.
lb() {
	local prog=$1
	shift
	PORT=$((PORT + 2)) # a pair's port is -p + its index
	timeout 100 "$B/$prog" --loopback -p "$PORT" --timeout 15 "$@" >"$TMP/lb.out" 2>"$TMP/lb.err"
	RC=$?
}
verdicts() { grep -c "^loopback .*$DEV: " "$TMP/lb.out"; }
# one_ok: exactly one verdict line, and the count line.
one_ok() { [ "$(verdicts)" = 1 ] && grep -q "^loopback: 1 of 1 pair(s) ok$" "$TMP/lb.out"; }
two_ok() {
	[ "$RC" = 0 ] && [ "$(grep -c "^loopback .*$DEV: ok (host " "$TMP/lb.out")" = 2 ] &&
		grep -q "^loopback: 2 of 2 pair(s) ok$" "$TMP/lb.out"
}
# failed_with REGEX: exit 1 and a verdict line matching REGEX.
failed_with() { [ "$RC" = 1 ] && grep -Eq -- "$1" "$TMP/lb.out"; }
# usage_with REGEX: exit 2 and REGEX on stderr.
usage_with() { [ "$RC" = 2 ] && grep -Eq -- "$1" "$TMP/lb.err"; }

for verb in write read; do
	lb gdr_${verb}_bw -d "$DEV" --mem host,bounce --repeat 1 --sizes 4K:16K -n 20 --warmup 2 \
		--csv "$TMP/lb.csv" --json "$TMP/lb.json"
	check "$verb --loopback --mem host,bounce: exit 0" [ "$RC" = 0 ]
	check "$verb: one verdict line for the pair, ok with both paths" \
		grep -Eq "^loopback GPU 0 <-> $DEV: ok \(host [0-9.]+, bounce [0-9.]+ Gb/s\)$" "$TMP/lb.out"
	check "$verb: exactly one verdict line, then '1 of 1 pair(s) ok'" one_ok
	check "$verb: --csv has the 6 client rows, ok, note 'loopback', peer the NIC's address" \
		pyq - "$TMP/lb.csv" "$GDRPERF_RDMA_ADDR" "$verb" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
bad = [r for r in rows if r["status"] != "ok" or r["role"] != "client"
       or not r["note"].startswith("loopback") or r["peer"] != sys.argv[2]
       or r["verb"] != sys.argv[3] or not float(r["bw_avg_gbps"]) > 0]
paths = sorted({r["path"] for r in rows})
sys.exit(1 if bad or len(rows) != 6 or paths != ["bounce", "host"] else 0)
PY
	check "$verb: --json holds the same 6 rows" pyq -c '
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["results"] if isinstance(d, dict) else d
sys.exit(0 if len(rows) == 6 else 1)' "$TMP/lb.json"
	rm -f "$TMP/lb.csv" "$TMP/lb.json"
done

# Two pairs (the same NIC twice, the second with an explicit GPU): two verdicts.
lb gdr_write_bw -d "$DEV,$DEV" --gpu 0 --mem host -s 4K -n 10 --warmup 2
check "two pairs: exit 0, two ok verdicts" two_ok

# A requested path that cannot run here: rxe has no DMA-BUF registration.
# --nfd: the outcome as labels, the failed path named.
printf 'gdrperf.loopback-write-bw=pass\n' >"$TMP/nfd"
lb gdr_write_bw -d "$DEV" --mem host,dmabuf --repeat 1 -s 4K -n 10 --warmup 2 --nfd "$TMP/nfd"
check "--mem host,dmabuf on rxe: exit 1" [ "$RC" = 1 ]
check "the verdict leads with FAIL, names dmabuf and keeps host's figure" \
	grep -Eq "^loopback GPU 0 <-> $DEV: FAIL: dmabuf: skipped: .*\(ok: host [0-9.]+ Gb/s\)$" \
	"$TMP/lb.out"
printf '%s\n' gdrperf.loopback-write-bw=fail gdrperf.loopback-write-bw.host=pass \
	gdrperf.loopback-write-bw.dmabuf=fail gdrperf.loopback-write-bw.pairs=1 \
	gdrperf.loopback-write-bw.pairs-ok=0 >"$TMP/nfd.want"
LOGS="$TMP/nfd $TMP/lb.out $TMP/lb.err" \
	check "--nfd: the earlier file replaced by fail, host pass, dmabuf fail, 0 of 1 pair" \
	cmp "$TMP/nfd.want" "$TMP/nfd"

# The latency tools: the same check with the ping-pong; the verdict's figure is p50.
lb gdr_read_lat -d "$DEV" --mem host,bounce -s 8 -n 50 --warmup 5 --nfd "$TMP/nfd" \
	--csv "$TMP/lat.csv"
check "gdr_read_lat --loopback --mem host,bounce: exit 0, p50 per path in the verdict" \
	bash -c "[ $RC = 0 ] && grep -Eq '^loopback GPU 0 <-> $DEV: ok \(host [0-9.]+, bounce [0-9.]+ us p50\)$' '$TMP/lb.out'"
check "gdr_read_lat --loopback: 2 client rows with lat_p50_us, note 'loopback'" \
	pyq - "$TMP/lat.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
ok = [r for r in rows if r["status"] == "ok" and r["note"].startswith("loopback")
      and float(r["lat_p50_us"]) > 0]
sys.exit(0 if len(rows) == 2 and len(ok) == 2 else 1)
PY
printf '%s\n' gdrperf.loopback-read-lat=pass gdrperf.loopback-read-lat.host=pass \
	gdrperf.loopback-read-lat.bounce=pass gdrperf.loopback-read-lat.pairs=1 \
	gdrperf.loopback-read-lat.pairs-ok=1 >"$TMP/nfd.want"
LOGS="$TMP/nfd $TMP/lb.out $TMP/lb.err" \
	check "gdr_read_lat --nfd: pass for the run and both paths" cmp "$TMP/nfd.want" "$TMP/nfd"

# The port taken by another server on the NIC's address: the check's own
# server cannot listen; the pair fails naming it (even though a client ran).
server gdr_write_bw -d "$DEV" --timeout 20
wait_listen "$PORT"
timeout 100 "$B/gdr_write_bw" --loopback -p "$PORT" --timeout 15 -d "$DEV" -s 4K -n 10 \
	>"$TMP/lb.out" 2>"$TMP/lb.err"
RC=$?
wait_server
check "port taken: exit 1, 'server: ... already in use' in the verdict" \
	failed_with "^loopback $DEV: FAIL: .*server: .*port $PORT"

# The server child never outlives the check: kill -9 the check mid-run.
PORT=$((PORT + 1))
run_bg lbkill "$B/gdr_write_bw" --loopback -p "$PORT" --timeout 15 -d "$DEV" -s 64K -D 30
wait_listen "$PORT"
lb_pid=$(pgrep -P "${_bg_pid[lbkill]}" | head -n 1) # under run_bg's timeout
kids=$(pgrep -P "$lb_pid" | tr '\n' ' ') # its server and its client
check "the check runs its server and client as children" [ -n "$lb_pid" -a "$(echo $kids | wc -w)" = 2 ]
kill -9 "$lb_pid"
_kids_gone() { ! kill -0 $kids 2>/dev/null; }
check "kill -9 of the check: its children end too (PR_SET_PDEATHSIG)" wait_until 20 _kids_gone

# Usage: with an address; --nfd without --loopback (the earlier file kept).
"$B/gdr_write_bw" --loopback "$GDRPERF_RDMA_ADDR" >"$TMP/lb.out" 2>"$TMP/lb.err"
RC=$?
check "--loopback ADDR: exit 2 naming both" \
	usage_with "--loopback and SERVER $GDRPERF_RDMA_ADDR exclude each other"
"$B/gdr_write_lat" --nfd "$TMP/nfd" "$GDRPERF_RDMA_ADDR" >"$TMP/lb.out" 2>"$TMP/lb.err"
RC=$?
check "--nfd without --loopback: exit 2, the earlier file kept" \
	bash -c "[ $RC = 2 ] && grep -q 'only with --loopback' '$TMP/lb.err' && cmp -s '$TMP/nfd.want' '$TMP/nfd'"
done_testing
