#!/bin/bash
# Faults on real Soft-RoCE: each ends with a one-line cause and a non-zero exit
# within --timeout, never a hang or a core dump; a CSV stays whole.
. "$(dirname "$0")/lib.sh"

# elapsed CMD...: run CMD, set RC and SECS.
elapsed() {
	local t0=$(date +%s.%N)
	"$@"
	RC=$?
	SECS=$(echo "$(date +%s.%N) - $t0" | bc)
}
quick() { [ "$(echo "$SECS < $1" | bc)" = 1 ]; }
said() { grep -q -- "$1" "$2"; }

# No server on the port: the client retries, then gives up within --timeout.
PORT=$((PORT + 1))
elapsed timeout 60 "$B/gdr_write_bw" -p "$PORT" --timeout 3 "$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err"
# Within --timeout 3 plus this build's start-up cost, measured (lib.sh slack).
SLACK=$(slack)
check "no server: exit 1 within --timeout 3 (+$SLACK s: $SECS s)" \
	bash -c "[ $RC = 1 ] && [ \"\$(echo '$SECS < 3 + $SLACK' | bc)\" = 1 ]"
check "no server: says so in one line" bash -c "said() { grep -q -- \"\$1\" \"\$2\"; };
	said 'no gdrperf server on $ADDR port $PORT' '$TMP/cli.err' && [ \$(wc -l <'$TMP/cli.err') = 1 ]"

# A device name that does not exist.
elapsed "$B/gdr_write_bw" -d mlx5_9 --timeout 3 "$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err"
check "-d mlx5_9: exit 1, names the device and the ones present" bash -c "[ $RC = 1 ] &&
	grep -q 'mlx5_9: no such RDMA device (available: rxe0' '$TMP/cli.err'"

# A server alone times out waiting for a client.
PORT=$((PORT + 1))
elapsed timeout 60 "$B/gdr_read_bw" -p "$PORT" --timeout 2 >"$TMP/srv.out" 2>"$TMP/srv.err"
check "server without client: exit 1 after --timeout" bash -c "[ $RC = 1 ] &&
	grep -q 'no client connected within 2 s' '$TMP/srv.err'"

# Port already in use.
server gdr_write_bw --timeout 30
wait_listen "$PORT" 40
elapsed timeout 30 "$B/gdr_write_bw" -p "$PORT" --timeout 5 >"$TMP/srv2.out" 2>"$TMP/srv2.err"
LOGS="$LOGS $TMP/srv2.err" check "second server on the same port: exit 1, 'already in use'" bash -c "[ $RC = 1 ] &&
	grep -q 'port $PORT is already in use' '$TMP/srv2.err'"
kill "$SPID" 2>/dev/null
wait_server 10

# Plan contradiction: both sides end with the field named.
server gdr_write_bw --timeout 10 -n 10
client gdr_write_bw --timeout 10 -n 20
wait_server 15
check "plan mismatch: both exit 1 naming -n/--iters" bash -c "[ $CRC = 1 -a $SRC = 1 ] &&
	grep -q 'plan mismatch: -n/--iters: server has 10, client asks 20' '$TMP/srv.err' &&
	grep -q 'plan mismatch: -n/--iters' '$TMP/cli.err'"

# Verb contradiction: a read client against a write server.
server gdr_write_bw --timeout 10
client gdr_read_bw --timeout 10 -n 20
wait_server 15
check "read client vs write server: both exit 1 naming the verb" bash -c "[ $CRC = 1 -a $SRC = 1 ] &&
	grep -q 'verb: server runs write, client runs read' '$TMP/srv.err' && grep -q verb '$TMP/cli.err'"

# The end of a finished plan with one packet lost (nft in the VM): the
# server takes the client's BYE and closes, and the acknowledgement of that
# BYE never reaches the client. rxe resends an unacknowledged message
# forever, so the client's BYE never completes; the run is complete (every
# RESULT is in) and the peer's clean disconnect ends the client's wait, with
# exit 0 and not after --timeout 20. Seen under load: t_10_bw, 2026-12-03.
# Between the --pair "hosts": rxe loops a packet to its own address back
# inside the driver, where netfilter never sees it. The BYE is told apart by
# its bytes: RC SEND-only (BTH opcode 0x04), the payload's magic "GDRP" and
# message type 8 (common/rdma/proto.c); an acknowledgement is opcode 0x11.
BYE_MATCH='udp dport 4791 @th,64,8 0x04 @th,160,32 0x47445250 @th,208,16 0x0800'
# nft_run RULES...: a table gdrperf_t20 whose output chain holds RULES.
nft_run() {
	local r rules=
	for r in "$@"; do rules+="		$r"$'\n'; done
	nft delete table ip gdrperf_t20 2>/dev/null
	nft -f - <<EON
table ip gdrperf_t20 {
	set bye { type ipv4_addr; flags dynamic, timeout; timeout 20s; }
	chain out {
		type filter hook output priority 0; policy accept;
		udp dport 4791 counter
$rules	}
}
EON
}
# nft_done: the table's listing in $TMP/nft.list, its drop rule's packet
# count in $dropped; the table removed.
nft_done() {
	nft list table ip gdrperf_t20 >"$TMP/nft.list" 2>&1
	dropped=$(awk '/drop/ { for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }' "$TMP/nft.list")
	nft delete table ip gdrperf_t20
}
# pair_server ARGS... / pair_client ARGS...: gdr_write_bw bound to "host" A,
# and its client from B.
pair_server() {
	PORT=$((PORT + 1))
	$BENCH_ENV "$B/gdr_write_bw" -p "$PORT" --bind "$GDRPERF_ADDR_A" "$@" >"$TMP/srv.out" 2>"$TMP/srv.err" &
	SPID=$!
}
pair_client() {
	timeout 120 $BENCH_ENV "$B/gdr_write_bw" -p "$PORT" "$@" "$GDRPERF_ADDR_A" >"$TMP/cli.out" 2>"$TMP/cli.err"
	CRC=$?
}
# bye_run SERVER_TIMEOUT CLIENT_TIMEOUT RULE...: one 4 KiB write between the
# pair with RULES in force; nft's status in $NFT_RC, the rest as nft_done,
# wait_server and elapsed leave it.
bye_run() {
	local st=$1 ct=$2
	shift 2
	nft_run "$@" >"$TMP/nft.err" 2>&1
	NFT_RC=$?
	pair_server --timeout "$st"
	wait_listen "$PORT" 40
	elapsed pair_client --timeout "$ct" -s 4K -n 200
	wait_server 20
	nft_done
}
bye_cases=("nft: a table with the BYE rules loads (nf_tables in the VM)"
	"BYE's acknowledgement lost: nft dropped it" "BYE's acknowledgement lost: both exit 0"
	"BYE lost: nft dropped it" "BYE lost: both exit 1 with the server's reason")
if [ -z "${GDRPERF_ADDR_A:-}" ] || [ ! -e /sys/class/net/vA ]; then
	for c in "${bye_cases[@]}"; do skip "$c" "needs softroce-vm --pair"; done
elif ! command -v nft >/dev/null; then
	for c in "${bye_cases[@]}"; do skip "$c" "needs nft (scripts/install-deps installs nftables)"; done
else
	bye_run 20 20 "$BYE_MATCH add @bye { ip saddr }" \
		"udp dport 4791 @th,64,8 0x11 ip daddr @bye counter drop"
	LOGS="$TMP/nft.err" check "${bye_cases[0]}" [ "$NFT_RC" = 0 ]
	LOGS="$TMP/nft.list" check "${bye_cases[1]} ($dropped packet(s))" [ "${dropped:-0}" -ge 1 ]
	LOGS="$TMP/srv.err" check "${bye_cases[2]}, the client in < 15 s ($SECS s)" \
		bash -c "[ $CRC/$SRC = 0/0 ] && [ \"\$(echo '$SECS < 15' | bc)\" = 1 ] &&
		grep -Eq '^ *host +write +4096 ' '$TMP/cli.out'"
	# The BYE itself lost: the server gives up after its --timeout 5 and says
	# why; the client hears that reason then, not after its own --timeout 30.
	# The server's --timeout also bounds its wait for the client to connect:
	# the client's start-up (slack) comes on top of both limits.
	bye_run "$(echo "5 + $SLACK" | bc)" "$(echo "30 + $SLACK" | bc)" "$BYE_MATCH counter drop"
	LOGS="$TMP/nft.list" check "${bye_cases[3]} ($dropped packet(s))" [ "${dropped:-0}" -ge 1 ]
	LOGS="$TMP/srv.err" check "${bye_cases[4]}, the client in < 20 + $SLACK s ($SECS s)" \
		bash -c "[ $CRC/$SRC = 1/1 ] && [ \"\$(echo '$SECS < 20 + $SLACK' | bc)\" = 1 ] &&
		grep -q 'no message from' '$TMP/cli.err'"
fi

# Server killed mid-measurement: the client ends within its timeout; its CSV stays whole.
server gdr_write_bw --timeout 8
PORT_SAVED=$PORT
( timeout 90 "$B/gdr_write_bw" -p "$PORT" --timeout 8 -D 30 --sizes 4K:64K \
	--csv "$TMP/k.csv" "$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err"; echo "$? $(date +%s.%N)" >"$TMP/cli.rc" ) &
CPID=$!
wait_running "$TMP/cli.out"
t_kill=$(date +%s.%N)
kill -9 "$SPID"
wait "$SPID" 2>/dev/null
wait "$CPID"
read -r RC t_end <"$TMP/cli.rc"
SECS=$(echo "$t_end - $t_kill" | bc)
check "server killed: client exits 1 within timeout (< 20 s after the kill: $SECS s)" bash -c "[ $RC = 1 ] && [ \"\$(echo '$SECS < 20' | bc)\" = 1 ]"
check "server killed: one line says why" bash -c "[ \$(wc -l <'$TMP/cli.err') -le 2 ] && grep -qiE 'peer|disconnect|gone|no completion' '$TMP/cli.err'"
absent_or_whole() { [ ! -s "$1" ] || csv_whole "$1"; }
check "server killed: client CSV has only whole rows" absent_or_whole "$TMP/k.csv"

# Client killed mid-measurement: the server ends within its timeout.
server gdr_read_bw --timeout 8
wait_listen "$PORT" 40
# (the program itself: killing a `timeout` wrapper would leave it running)
"$B/gdr_read_bw" -p "$PORT" --timeout 8 -D 30 -s 16K "$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err" &
CPID=$!
wait_running "$TMP/cli.out"
kill -9 "$CPID"
elapsed wait_server 20
check "client killed: server exits 1 within timeout" bash -c "[ $SRC = 1 ] && [ \"\$(echo '$SECS < 20' | bc)\" = 1 ]"

# Client killed while the server has a long wait ahead (--timeout 60, -D 30):
# the kernel disconnects the dead process's QPs, the server sees it at once.
server gdr_write_bw --timeout 60
wait_listen "$PORT" 40
"$B/gdr_write_bw" -p "$PORT" --timeout 60 -D 30 -s 16K "$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err" &
CPID=$!
wait_running "$TMP/cli.out"
kill -9 "$CPID"
elapsed wait_server 100
LOGS="$TMP/srv.err" check "client killed, server --timeout 60: server exits 1 in < 15 s ($SECS s)" \
	bash -c "[ $SRC = 1 ] && [ \"\$(echo '$SECS < 15' | bc)\" = 1 ]"

# The path to the client cut (its host died: no disconnect ever comes): the
# server's liveness probe goes unanswered and ends the wait in seconds, not
# after --timeout 60 + -D 30. Cut = the server's ARP entry for the client
# points nowhere (softroce-vm --pair "hosts").
if [ -n "${GDRPERF_ADDR_A:-}" ] && [ -e /sys/class/net/vA ]; then
	macb=$(cat /sys/class/net/vB/address)
	"$B/gdr_write_bw" -p $((PORT + 1)) --bind "$GDRPERF_ADDR_A" --timeout 60 >"$TMP/srv.out" 2>"$TMP/srv.err" &
	SPID=$!
	PORT=$((PORT + 1))
	wait_listen "$PORT" 40
	"$B/gdr_write_bw" -p "$PORT" --timeout 60 -D 30 -s 16K "$GDRPERF_ADDR_A" >"$TMP/cli.out" 2>"$TMP/cli.err" &
	CPID=$!
	wait_running "$TMP/cli.out"
	ip neigh replace "$GDRPERF_ADDR_B" lladdr 02:de:ad:00:00:01 dev vA nud permanent
	elapsed wait_server 100
	kill -9 "$CPID" 2>/dev/null
	wait "$CPID" 2>/dev/null
	ip neigh replace "$GDRPERF_ADDR_B" lladdr "$macb" dev vA nud permanent
	LOGS="$TMP/srv.err" check "path to the client cut: server exits 1 in < 30 s ($SECS s)" \
		bash -c "[ $SRC = 1 ] && [ \"\$(echo '$SECS < 30' | bc)\" = 1 ]"
	LOGS="$TMP/srv.err" check "path cut: the server says the peer stopped responding" \
		said "stopped responding" "$TMP/srv.err"
else
	skip "path to the client cut: server exits 1 in < 30 s" "needs softroce-vm --pair"
	skip "path cut: the server says the peer stopped responding" "needs softroce-vm --pair"
fi

# A server too slow to answer (stopped here) while a client gives up: that
# client's stale connect request must not end the server, which serves the
# next client.
server gdr_write_bw --timeout 60 -n 50
wait_listen "$PORT" 40
kill -STOP "$SPID"
client gdr_write_bw --timeout 3 -n 50
CRC1=$CRC
"$B/gdr_write_bw" -p "$PORT" --timeout 40 -n 50 "$ADDR" >"$TMP/cli2.out" 2>"$TMP/cli2.err" &
C2=$!
# Client 2's connect request must be pending at the stopped server.
wait_cm_id "$C2" 30
kill -CONT "$SPID"
wait "$C2"
echo $? >"$TMP/cli2.rc"
wait_server 60
LOGS="$TMP/srv.err $TMP/cli.err $TMP/cli2.err" check "stale connect from a client that gave up: first client 1, next client 0, server 0 ($CRC1/$(cat "$TMP/cli2.rc")/$SRC)" \
	[ "$CRC1/$(cat "$TMP/cli2.rc")/$SRC" = "1/0/0" ]

# SIGINT: the client tears down and exits 130; the server sees the peer go.
server gdr_write_bw --timeout 8
wait_listen "$PORT" 40
timeout 60 "$B/gdr_write_bw" -p "$PORT" --timeout 8 -D 30 -s 16K "$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err" &
CPID=$!
wait_running "$TMP/cli.out"
kill -INT "$CPID"
t0=$(date +%s)
wait "$CPID"
CRC=$?
wait_server 20
check "SIGINT: client exits 130 promptly, server exits 1" bash -c "[ $CRC = 130 -a $SRC = 1 ] && [ $(( $(date +%s) - t0 )) -lt 15 ]"

# RLIMIT_MEMLOCK too small (without CAP_IPC_LOCK, which root would otherwise bypass it with).
server gdr_write_bw --timeout 10
setpriv --bounding-set -ipc_lock --inh-caps -ipc_lock bash -c \
	"ulimit -l 64; exec timeout 60 '$B/gdr_write_bw' -p $PORT --timeout 10 -s 4M -n 5 '$ADDR'" \
	>"$TMP/cli.out" 2>"$TMP/cli.err"
CRC=$?
wait_server 20
check "memlock 64 KiB: client exits 1 naming RLIMIT_MEMLOCK" bash -c "[ $CRC = 1 ] &&
	grep -q 'RLIMIT_MEMLOCK is 64 KiB' '$TMP/cli.err'"
check "memlock: the server does not hang (exits within its timeout)" [ "$SRC" != 124 ]

# --persistent: one client after another; a bad client is logged, not fatal; SIGTERM ends it with 0.
server gdr_write_bw --persistent --timeout 10 -n 30
client gdr_write_bw --timeout 10 -n 30 -s 4K
c1=$CRC
client gdr_write_bw --timeout 10 -n 31
c2=$CRC
client gdr_write_bw --timeout 10 -n 30 -s 8K --csv "$TMP/pers.csv"
c3=$CRC
alive=0
kill -0 "$SPID" 2>/dev/null && alive=1
kill -TERM "$SPID"
wait_server 15
check "--persistent: good, bad, good clients get 0, 1, 0; server alive, exits 0 on SIGTERM" \
	[ "$c1/$c2/$c3/$alive/$SRC" = "0/1/0/1/0" ]
check "--persistent: the bad client is one line in the server's log" bash -c "
	[ \$(grep -c 'plan mismatch: -n/--iters: server has 30, client asks 31' '$TMP/srv.err') = 1 ]"

finish
