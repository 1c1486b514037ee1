#!/bin/bash
# gdr_write_bw / gdr_read_bw on real Soft-RoCE: measurements, options, CSV.
. "$(dirname "$0")/lib.sh"

# WRITE, several sizes, 2 QPs, validated, CSV on both sides.
server gdr_write_bw --timeout 20 --csv "$TMP/srv.csv"
client gdr_write_bw --timeout 20 -n 200 --sizes 4K:64K -q 2 --validate --csv "$TMP/w.csv" --label t10
wait_server
check "write: client and server exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "write: 5 CSV rows on the client" [ "$(csv_rows "$TMP/w.csv")" = 5 ]
check "write: 5 CSV rows on the server" [ "$(csv_rows "$TMP/srv.csv")" = 5 ]
check "write: every row ok, validated, labelled, bw > 0" csv_all "$TMP/w.csv" \
	'r["status"] == "ok" and f(r["bw_avg_gbps"]) > 0 and r["note"] == "validated" and r["label"] == "t10"'
check "write: sizes as asked" [ "$(csv_vals "$TMP/w.csv" size_bytes)" = "4096 8192 16384 32768 65536" ]
check "write: qps, role, path, verb, nic as asked" csv_all "$TMP/w.csv" \
	'r["qps"] == "2" and r["role"] == "client" and r["path"] == "host" and r["verb"] == "write" and r["nic"] == "rxe0"'
check "write: the server's rows say server" csv_all "$TMP/srv.csv" 'r["role"] == "server"'
check "write: CSV files are whole" csv_whole "$TMP/w.csv"

# -d steers rdma_cm through the device's own address (client source, server bind).
server gdr_write_bw --timeout 20 -d rxe0
client gdr_write_bw --timeout 20 -d rxe0 -n 50 -s 4K
wait_server
check "-d rxe0 on both sides: ok over rxe0" bash -c "[ $CRC = 0 -a $SRC = 0 ] && grep -q 'over rxe0' '$TMP/cli.out'"

# READ, bidirectional, validated.
server gdr_read_bw --timeout 20
client gdr_read_bw --timeout 20 -n 100 -s 32K -b --validate --csv "$TMP/r.csv"
wait_server
check "read -b --validate: both exit 0, one row" [ "$CRC/$SRC/$(csv_rows "$TMP/r.csv")" = 0/0/1 ]
check "read -b --validate: the row is an ok bidirectional read" csv_all "$TMP/r.csv" \
	'r["status"] == "ok" and r["verb"] == "read" and r["bidir"] == "1"'

# With --pin each bandwidth repeat runs pinned to one CPU on both sides (-b:
# both run it); gdr_read_bw pins by default, gdr_write_bw does not; with
# --no-pin the thread stays where the scheduler puts it (pin.h). On one CPU
# there is nothing to pin.
npin=2
[ "$(nproc)" -gt 1 ] || npin=0
server gdr_read_bw --timeout 20 -v --pin
client gdr_read_bw --timeout 20 -v -n 100 -s 8K -b --repeat 2 --pin
wait_server
check "read -b --pin: every repeat pinned on both sides ($npin each)" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	[ \$(grep -c 'repeat pinned to CPU [0-9]' '$TMP/cli.err') = $npin ] &&
	[ \$(grep -c 'repeat pinned to CPU [0-9]' '$TMP/srv.err') = $npin ]"
server gdr_read_bw --timeout 20 -v
client gdr_read_bw --timeout 20 -v -n 100 -s 8K -b
wait_server
check "read -b (default): every repeat pinned on both sides ($((npin / 2)) each)" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	[ \$(grep -c 'repeat pinned to CPU [0-9]' '$TMP/cli.err') = $((npin / 2)) ] &&
	[ \$(grep -c 'repeat pinned to CPU [0-9]' '$TMP/srv.err') = $((npin / 2)) ]"
# ... up to 1 MiB: a 2 MiB repeat is not pinned (pinned, long transfers ran at
# one CPU's rate on rxe: pin.h).
server gdr_read_bw --timeout 20 -v
client gdr_read_bw --timeout 20 -v -n 8 --sizes 1M:2M -b
wait_server
check "read -b (default) 1M:2M: 1 MiB pinned, 2 MiB not, on both sides" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	[ \$(grep -c 'repeat pinned to CPU [0-9]' '$TMP/cli.err') = $((npin / 2)) ] &&
	[ \$(grep -c 'repeat pinned to CPU [0-9]' '$TMP/srv.err') = $((npin / 2)) ] &&
	[ \$(grep -c 'repeat not pinned: messages over 1 MiB' '$TMP/cli.err') = 1 ] &&
	[ \$(grep -c 'repeat not pinned: messages over 1 MiB' '$TMP/srv.err') = 1 ]"
server gdr_read_bw --timeout 20 -v --no-pin
client gdr_read_bw --timeout 20 -v -n 100 -s 8K -b --no-pin
wait_server
check "read -b --no-pin: ok, pinned nowhere" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	! grep -q 'pinned to CPU' '$TMP/cli.err' '$TMP/srv.err'"
server gdr_write_bw --timeout 20 -v
client gdr_write_bw --timeout 20 -v -n 100 -s 8K -b
wait_server
check "write -b (default): ok, pinned nowhere" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	! grep -q 'pinned to CPU' '$TMP/cli.err' '$TMP/srv.err'"

# Post lists, CQ moderation, tx depth, repeats: median/min/max consistent.
server gdr_write_bw --timeout 20
client gdr_write_bw --timeout 20 -n 300 -s 8K -t 32 -l 4 -Q 8 --repeat 3 --warmup 8 --csv "$TMP/p.csv"
wait_server
check "write -t 32 -l 4 -Q 8 --repeat 3: ok" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "repeat 3: min <= median <= max <= peak, 300 iterations" csv_all "$TMP/p.csv" \
	'f(r["bw_min_gbps"]) <= f(r["bw_median_gbps"]) <= f(r["bw_max_gbps"]) <= f(r["bw_peak_gbps"]) and
	 r["repeats"] == "3" and r["iters"] == "300" and r["post_list"] == "4"'

# Duration mode.
server gdr_read_bw --timeout 20
client gdr_read_bw --timeout 20 -D 1 -s 4K --csv "$TMP/d.csv"
wait_server
check "read -D 1: both exit 0" [ "$CRC/$SRC" = 0/0 ]
check "read -D 1: ok with iterations counted" csv_all "$TMP/d.csv" 'int(r["iters"]) >= 1 and r["status"] == "ok"'

# The client may start first: it retries until the server is up.
PORT=$((PORT + 1))
( timeout 60 "$B/gdr_write_bw" -v -p "$PORT" --timeout 20 -n 50 "$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err"; echo $? >"$TMP/cli.rc" ) &
CPID=$!
# The client has been refused at least once before the server starts.
wait_for "$TMP/cli.err" 'retrying in' 30
"$B/gdr_write_bw" -p "$PORT" --timeout 20 >"$TMP/srv.out" 2>"$TMP/srv.err"
SRC=$?
wait $CPID
check "client started before the server (refused at least once): both exit 0" [ "$SRC" = 0 -a "$(cat "$TMP/cli.rc")" = 0 ]

# Bigger than the host's usual defaults: -a runs 2 B .. 8 MiB.
server gdr_write_bw --timeout 30
client gdr_write_bw --timeout 30 -n 4 --warmup 0 -a --csv "$TMP/a.csv"
wait_server
ends=$(csv_vals "$TMP/a.csv" size_bytes | awk '{ print NF, $1, $NF }')
check "write -a: 23 sizes from 2 B to 8 MiB ($ends)" [ "$CRC/$SRC/$ends" = "0/0/23 2 8388608" ]

# JSON output parses and holds the same rows.
server gdr_read_bw --timeout 20
client gdr_read_bw --timeout 20 -n 50 --sizes 4K:8K --json "$TMP/r.json" --prom "$TMP/r.prom"
wait_server
check "read --json: a JSON array of 2 results" pyq -c "
import json, sys
d = json.load(open('$TMP/r.json'))
sys.exit(0 if len(d) == 2 and d[1]['size_bytes'] == 8192 and d[0]['status'] == 'ok' else 1)"
# --prom (docs/cluster-outputs.md): the same rows as gauges, labelled as the rows are.
check "read --prom: gdrperf_bw_gbps per size equals the JSON's bw_avg_gbps" pyq -c "
import json, re, sys
d = json.load(open('$TMP/r.json'))
got = {}
for line in open('$TMP/r.prom'):
    m = re.match(r'gdrperf_bw_gbps\{(.*)\} (\S+)$', line)
    if m:
        labels = dict(re.findall(r'(\w+)=\"([^\"]*)\"', m.group(1)))
        if labels['path'] != 'host' or labels['verb'] != 'read' or labels['role'] != 'client':
            sys.exit('labels ' + m.group(1))
        got[int(labels['size_bytes'])] = float(m.group(2))
want = {r['size_bytes']: round(r['bw_avg_gbps'], 3) for r in d}
sys.exit(0 if got == want and len(got) == 2 else 'prom %s json %s' % (got, want))"
if command -v promtool >/dev/null; then
	check "read --prom: promtool check metrics passes" sh -c "promtool check metrics <'$TMP/r.prom'"
else
	skip "read --prom: promtool check metrics" "promtool not installed"
fi

finish
