#!/bin/bash
# More faults on real Soft-RoCE: SIGTERM/SIGINT at each phase, an unwritable
# or full results disk (refused before the run), the RDMA device removed
# mid-run. Each: the surviving side exits non-zero within --timeout with one
# line, and a CSV that existed stays whole (parsed after every fault).
. "$(dirname "$0")/lib.sh"
PORT=${GDRPERF_TEST_PORT:-26000}
CSV=$TMP/keep.csv

# elapsed CMD...: run CMD, set RC and SECS.
elapsed() {
	local t0=$(date +%s.%N)
	"$@"
	RC=$?
	SECS=$(echo "$(date +%s.%N) - $t0" | bc)
}
within() { [ "$(echo "$SECS < $1" | bc)" = 1 ]; }
rows0() { csv_rows "$CSV"; }

# A CSV with real rows to protect.
server gdr_write_bw --timeout 10 -n 200 -s 4K --csv "$CSV"
client gdr_write_bw --timeout 10 -n 200 -s 4K --csv "$CSV"
wait_server 20
check "setup: a good run writes whole CSV rows" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	[ $(rows0) -ge 2 ]"
R0=$(rows0)

# SIGTERM to a client still retrying its connect (no server).
PORT=$((PORT + 1))
"$B/gdr_write_bw" -v -p "$PORT" --timeout 30 --csv "$CSV" "$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err" &
CPID=$!
wait_for "$TMP/cli.err" 'retrying in' 30
t0=$(date +%s.%N)
kill -TERM "$CPID"
wait "$CPID"
RC=$?
SECS=$(echo "$(date +%s.%N) - $t0" | bc)
check "SIGTERM during connect retries: exit 130 within 8 s (the client's timeout is 30), CSV whole" bash -c "[ $RC = 130 ] &&
	[ \"\$(echo '$SECS < 8' | bc)\" = 1 ] && [ $(rows0) = $R0 ]"

# SIGINT to a server waiting for its client.
server gdr_write_bw --timeout 30 --csv "$CSV"
wait_listen "$PORT" 40
kill -INT "$SPID"
wait_server 5
check "SIGINT to a waiting server: exit 130 within 5 s" [ "$SRC" = 130 ]

# SIGTERM to the client mid-measurement: it stops at once; the server gives up within its
# timeout.
server gdr_write_bw --timeout 10 -D 8 -s 64K
"$B/gdr_write_bw" -p "$PORT" --timeout 10 -D 8 -s 64K --csv "$CSV" "$ADDR" \
	>"$TMP/cli.out" 2>"$TMP/cli.err" &
CPID=$!
wait_running "$TMP/cli.out"
kill -TERM "$CPID"
elapsed wait "$CPID"
c=$RC cs=$SECS
elapsed wait_server 15
check "SIGTERM to the client mid-run: client 130 before its timeout, server 1 with one line, CSV whole" \
	bash -c "[ $c = 130 ] && [ \"\$(echo '$cs < 8' | bc)\" = 1 ] && [ $SRC = 1 ] &&
	[ \$(wc -l <'$TMP/srv.err') = 1 ] && [ $(rows0) = $R0 ]"
check "CSV whole after the client was killed" csv_whole "$CSV"

# SIGTERM to the server mid-measurement: the client ends within its timeout, CSV whole.
server gdr_write_bw --timeout 10 -D 8 -s 64K
"$B/gdr_write_bw" -p "$PORT" --timeout 10 -D 8 -s 64K --csv "$CSV" "$ADDR" \
	>"$TMP/cli.out" 2>"$TMP/cli.err" &
CPID=$!
wait_running "$TMP/cli.out"
kill -TERM "$SPID"
elapsed wait "$CPID"
c=$RC cs=$SECS
wait_server 5
check "SIGTERM to the server mid-run: server 130, client 1 within --timeout with one line ($c, ${cs}s)" \
	bash -c "[ $SRC = 130 ] && [ $c = 1 ] && [ \"\$(echo '$cs < 13' | bc)\" = 1 ] &&
	[ \$(wc -l <'$TMP/cli.err') = 1 ]"
check "CSV whole after the server was killed" csv_whole "$CSV"

# Results that cannot be written are refused before anything runs (no server needed).
elapsed timeout 20 "$B/gdr_write_bw" -p "$PORT" --timeout 10 --csv /proc/version/x.csv "$ADDR" \
	>"$TMP/cli.out" 2>"$TMP/cli.err"
check "unwritable --csv: exit 1 before any connection (< 8 s, --timeout 10), one line naming the file" bash -c "[ $RC = 1 ] &&
	[ \"\$(echo '$SECS < 8' | bc)\" = 1 ] && [ \$(wc -l <'$TMP/cli.err') = 1 ] &&
	grep -q /proc/version/x.csv '$TMP/cli.err'"
mkdir -p "$TMP/full"
if mount -t tmpfs -o size=64k tmpfs "$TMP/full" 2>/dev/null; then
	cp "$CSV" "$TMP/full/keep.csv"
	dd if=/dev/zero of="$TMP/full/fill" bs=4k 2>/dev/null
	elapsed timeout 20 "$B/gdr_write_bw" -p "$PORT" --timeout 10 --csv "$TMP/full/keep.csv" \
		"$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err"
	check "--csv on a full disk: exit 1 before any connection, says so, file unchanged" bash -c "[ $RC = 1 ] &&
		[ \"\$(echo '$SECS < 8' | bc)\" = 1 ] && grep -q 'No space left' '$TMP/cli.err' &&
		cmp -s '$CSV' '$TMP/full/keep.csv'"
	elapsed timeout 20 "$B/gdr_write_bw" -p "$PORT" --timeout 10 --csv "$TMP/full/new.csv" \
		"$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err"
	check "new --csv on a full disk: exit 1 before any connection" bash -c "[ $RC = 1 ] &&
		[ \"\$(echo '$SECS < 8' | bc)\" = 1 ] && grep -q 'No space left' '$TMP/cli.err'"
	umount "$TMP/full"
else
	skip "--csv on a full disk: exit 1 before any connection" "cannot mount a tmpfs here"
	skip "new --csv on a full disk: exit 1 before any connection" "cannot mount a tmpfs here"
fi

# The RDMA device removed mid-run: both sides end within --timeout; the device comes back.
server gdr_write_bw --timeout 10 -D 8 -s 64K
"$B/gdr_write_bw" -p "$PORT" --timeout 10 -D 8 -s 64K --csv "$CSV" "$ADDR" \
	>"$TMP/cli.out" 2>"$TMP/cli.err" &
CPID=$!
wait_running "$TMP/cli.out"
netdev=$(rdma link show rxe0 2>/dev/null | sed -n 's/.*netdev \([^ ]*\).*/\1/p')
rdma link delete rxe0
elapsed wait "$CPID"
c=$RC cs=$SECS
wait_server 15
rdma link add rxe0 type rxe netdev "${netdev:-d0}"
wait_rxe rxe0 30
check "rxe0 deleted mid-run: both exit 1 within --timeout ($c/$SRC, ${cs}s)" \
	bash -c "[ $c = 1 ] && [ $SRC = 1 ] && [ \"\$(echo '$cs < 15' | bc)\" = 1 ]"
check "CSV whole after the device went away" csv_whole "$CSV"
server gdr_write_bw --timeout 10 -n 100 -s 4K
client gdr_write_bw --timeout 10 -n 100 -s 4K
wait_server 20
check "rxe0 re-added: a new run works" [ "$CRC/$SRC" = "0/0" ]
finish
