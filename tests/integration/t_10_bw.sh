#!/bin/bash
# gdr_write_bw / gdr_read_bw on real Soft-RoCE: measurements, options, CSV.
. "$(dirname "$0")/bw_lib.sh"

# WRITE, several sizes, 2 QPs, validated, CSV on both sides.
server gdr_write_bw --timeout 20 --csv "$TMP/srv.csv"
client gdr_write_bw --timeout 20 -n 200 --sizes 4K:64K -q 2 --validate --csv "$TMP/w.csv" --label t10
wait_server
check "write: client and server exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "write: 5 CSV rows on the client" [ "$(csv_rows "$TMP/w.csv")" = 5 ]
check "write: 5 CSV rows on the server" [ "$(csv_rows "$TMP/srv.csv")" = 5 ]
check "write: every row ok, validated, labelled, bw > 0" awk -F, 'NR>1 &&
	($31 != "ok" || $16 <= 0 || $32 != "validated" || $33 != "t10") { bad = 1 } END { exit bad }' "$TMP/w.csv"
check "write: sizes, qps, role, path as asked" bash -c "
	[ \"\$(awk -F, 'NR>1{print \$8}' '$TMP/w.csv' | tr '\n' ' ')\" = '4096 8192 16384 32768 65536 ' ] &&
	awk -F, 'NR>1 && (\$10 != 2 || \$4 != \"client\" || \$6 != \"host\" || \$5 != \"write\" || \$25 != \"rxe0\") { bad = 1 } END { exit bad }' '$TMP/w.csv' &&
	awk -F, 'NR>1 && \$4 != \"server\" { bad = 1 } END { exit bad }' '$TMP/srv.csv'"
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
check "read -b --validate: both exit 0, one ok row" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	[ \"\$(awk -F, 'NR>1{print \$31 \",\" \$5 \",\" \$13}' '$TMP/r.csv')\" = 'ok,read,1' ]"

# Post lists, CQ moderation, tx depth, repeats: median/min/max consistent.
server gdr_write_bw --timeout 20
client gdr_write_bw --timeout 20 -n 300 -s 8K -t 32 -l 4 -Q 8 --repeat 3 --warmup 8 --csv "$TMP/p.csv"
wait_server
check "write -t 32 -l 4 -Q 8 --repeat 3: ok" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "repeat 3: min <= median <= max <= peak, 300 iterations" awk -F, 'NR>1 {
	if (!($18 <= $17 && $17 <= $19 && $19 <= $15 && $14 == 3 && $9 == 300 && $12 == 4)) bad = 1 }
	END { exit bad }' "$TMP/p.csv"

# Duration mode.
server gdr_read_bw --timeout 20
client gdr_read_bw --timeout 20 -D 1 -s 4K --csv "$TMP/d.csv"
wait_server
check "read -D 1: ok with iterations counted" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	awk -F, 'NR>1 && (\$9 < 1 || \$31 != \"ok\") { bad = 1 } END { exit bad }' '$TMP/d.csv'"

# The client may start first: it retries until the server is up.
PORT=$((PORT + 1))
( timeout 60 "$B/gdr_write_bw" -p "$PORT" --timeout 20 -n 50 "$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err"; echo $? >"$TMP/cli.rc" ) &
CPID=$!
sleep 2
"$B/gdr_write_bw" -p "$PORT" --timeout 20 >"$TMP/srv.out" 2>"$TMP/srv.err"
SRC=$?
wait $CPID
check "client started 2 s before the server: both exit 0" [ "$SRC" = 0 -a "$(cat "$TMP/cli.rc")" = 0 ]

# Bigger than the host's usual defaults: -a runs 2 B .. 8 MiB.
server gdr_write_bw --timeout 30
client gdr_write_bw --timeout 30 -n 4 --warmup 0 -a --csv "$TMP/a.csv"
wait_server
check "write -a: 23 sizes from 2 B to 8 MiB" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	[ \"\$(awk -F, 'NR==2{print \$8} END{print \$8}' '$TMP/a.csv' | tr '\n' ' ')\" = '2 8388608 ' ] &&
	[ \"\$(tail -n +2 '$TMP/a.csv' | wc -l)\" = 23 ]"

# JSON output parses and holds the same rows.
server gdr_read_bw --timeout 20
client gdr_read_bw --timeout 20 -n 50 --sizes 4K:8K --json "$TMP/r.json"
wait_server
check "read --json: a JSON array of 2 results" python3 -c "
import json, sys
d = json.load(open('$TMP/r.json'))
sys.exit(0 if len(d) == 2 and d[1]['size_bytes'] == 8192 and d[0]['status'] == 'ok' else 1)"

finish
