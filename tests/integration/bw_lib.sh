# Helpers for the gdr_write_bw / gdr_read_bw integration tests (sourced).
# Needs: GDRPERF_RDMA_ADDR (the rxe address softroce-vm prints into the env),
# top_builddir. Tests print TAP.

B=${top_builddir:-.}/bench
ADDR=${GDRPERF_RDMA_ADDR:-169.254.77.1}
TMP=$(mktemp -d /tmp/gdrbw.XXXXXX)
PORT=${GDRPERF_TEST_PORT:-19515}
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/#   /' "$f"; done
}
check() { # NAME CONDITION-COMMAND... ; logs to show on failure in $LOGS
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name" $LOGS; fi
}

# server PROG ARGS...: start a server in the background; its pid in $SPID.
server() {
	local prog=$1
	shift
	PORT=$((PORT + 1))
	"$B/$prog" -p "$PORT" "$@" >"$TMP/srv.out" 2>"$TMP/srv.err" &
	SPID=$!
}
# client PROG ARGS...: run a client in the foreground (bounded); status in $CRC.
client() {
	local prog=$1
	shift
	timeout 120 "$B/$prog" -p "$PORT" "$@" "$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err"
	CRC=$?
}
# wait_listen PORT [SECONDS]: until an rdma_cm id listens on PORT (a slow
# server, e.g. under valgrind, may take many seconds to get there).
wait_listen() {
	local i
	for ((i = 0; i < ${2:-40} * 5; i++)); do
		rdma resource show cm_id 2>/dev/null | grep -E "LISTEN" | grep -q ":$1\b" && return 0
		sleep 0.2
	done
	return 1
}
# wait_running OUT [SECONDS]: until a bench whose stdout is OUT has printed its
# table header (connected, measuring), then 2 s more: a fault injected then
# hits the measurement, however slow the start (ASan, a loaded VM).
wait_running() {
	local i
	for ((i = 0; i < ${2:-60} * 5; i++)); do
		grep -q "BW peak" "$1" 2>/dev/null && break
		sleep 0.2
	done
	sleep 2
}
# wait_server [SECONDS]: wait for the server (bounded); status in $SRC.
wait_server() {
	local limit=${1:-60} i=0
	while kill -0 "$SPID" 2>/dev/null && [ $i -lt $((limit * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$SPID" 2>/dev/null; then
		kill -9 "$SPID" 2>/dev/null
		wait "$SPID" 2>/dev/null
		SRC=124
	else
		wait "$SPID"
		SRC=$?
	fi
}
LOGS="$TMP/srv.out $TMP/srv.err $TMP/cli.out $TMP/cli.err"

# csv_rows FILE: data rows (header excluded).
csv_rows() { tail -n +2 "$1" | wc -l; }
# csv_col FILE NAME: the values of one column (no quoted commas in the columns we read).
csv_col() {
	awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
		{ print $c }' "$1"
}
# Every row has as many fields as the header, and the file ends with a newline.
csv_whole() {
	local f=$1
	[ -s "$f" ] || return 1
	[ -z "$(tail -c1 "$f")" ] || return 1 # ends in a newline
	python3 - "$f" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline='')))
sys.exit(0 if rows and all(len(r) == len(rows[0]) for r in rows) else 1)
PY
}
finish() {
	echo "1..$n"
	rm -rf "$TMP"
	[ "$failed" -eq 0 ]
}
