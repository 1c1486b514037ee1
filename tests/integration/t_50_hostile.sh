#!/bin/bash
# Hostile peers against one `gdr_write_bw --persistent` server: for each way
# tests/tools/evil_peer misbehaves, the server logs exactly one line about it,
# keeps serving (a good client afterwards gets exit 0), and holds no more fds,
# QPs, MRs or cm_ids than before (/proc/PID/fd, `rdma resource show`).
. "$(dirname "$0")/lib.sh"
PORT=${GDRPERF_TEST_PORT:-25000}
EVIL=${top_builddir:-.}/tests/tools/evil_peer
MODES="no-hello garbage-hello short-hello old-version new-version hello-qps
	garbage-plan bad-plan-fields truncated-header truncated-plan oversized-plan wrong-type
	oversized-buf short-buf big-buf bad-start
	quit-connect quit-plan quit-ack quit-buf quit-start silent"

# Counted in the shell: each process start costs 0.3-0.5 s under TCG, and these
# run a few hundred times.
nfds() {
	local f=("/proc/$SPID/fd/"*)
	[ -e "${f[0]}" ] && echo "${#f[@]}" || echo 0
}
# One line per device: pd/cq/qp/cm_id/mr/ctx counts (only the server is left running).
res() {
	local r
	r=$(rdma resource show 2>/dev/null)
	echo "${r//$'\n'/ } "
}
lines() {
	local l=()
	mapfile -t l <"$TMP/srv.err"
	echo "${#l[@]}"
}
settled() { [ "$(nfds)" = "$FD0" ] && [ "$(res)" = "$RES0" ]; }
# settle: wait (up to 10 s) until the server is back to its idle fds and resources.
settle() { WAIT_STEP=0.2 wait_until 10 settled; }
said_more() { [ "$(lines)" -gt "$1" ]; }
good_client() { client gdr_write_bw --timeout 10 -s 64K -n 50; }

[ -x "$EVIL" ] || skip_all "$EVIL not built (make check builds it)"
server gdr_write_bw --persistent --timeout 5
wait_listen "$PORT" 40
good_client
wait_idle "$SPID" 30
FD0=$(nfds) RES0=$(res)
check "first good client: exit 0, server up (fds $FD0; $RES0)" \
	bash -c "[ $CRC = 0 ] && kill -0 $SPID && [ -n '$FD0' ] && [ '$FD0' -gt 0 ]"

for mode in $MODES; do
	before=$(lines)
	timeout 60 "$EVIL" -p "$PORT" --timeout 5 "$mode" "$ADDR" >"$TMP/evil.out" 2>"$TMP/evil.err"
	erc=$?
	# The server's one line may follow the peer's exit (it notices the disconnect).
	WAIT_STEP=0.2 wait_until 10 said_more "$before"
	settle
	fd=$(nfds) r=$(res)
	good_client
	# Whatever the server says about that client is out once it let go of it.
	wait_idle "$SPID" 30
	new=$(($(lines) - before))
	said=$(tail -n +"$((before + 1))" "$TMP/srv.err" | head -3 | tr '\n' '|')
	LOGS="$TMP/evil.out $TMP/evil.err $TMP/srv.err $TMP/cli.err" \
		check "$mode: one server line [$said], fds $fd/$FD0, resources back, next client ok ($erc/$CRC)" \
		bash -c "[ $erc = 0 ] && [ $new = 1 ] && [ '$fd' = '$FD0' ] && [ '$r' = '$RES0' ] &&
			[ $CRC = 0 ] && kill -0 $SPID"
	[ "$r" = "$RES0" ] || diag "resources after $mode: $r (baseline $RES0)"
done

kill -TERM "$SPID"
wait_server 10
check "server exits 0 on SIGTERM after $(echo $MODES | wc -w) hostile peers" [ "$SRC" = 0 ]
finish
