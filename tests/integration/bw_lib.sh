# Helpers for the gdr_write_bw / gdr_read_bw integration tests (sourced).
# Needs: GDRPERF_RDMA_ADDR (the rxe address softroce-vm prints into the env),
# top_builddir. Tests print TAP.

B=${top_builddir:-.}/bench
ADDR=${GDRPERF_RDMA_ADDR:-169.254.77.1}
TMP=$(mktemp -d /tmp/gdrbw.XXXXXX)
PORT=${GDRPERF_TEST_PORT:-19515}
n=0
failed=0
BENCH_ENV=

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
	# BENCH_ENV: a prefix for the bench alone (env LD_PRELOAD=..., no spaces in it).
	$BENCH_ENV "$B/$prog" -p "$PORT" "$@" >"$TMP/srv.out" 2>"$TMP/srv.err" &
	SPID=$!
}
# client PROG ARGS...: run a client in the foreground (bounded); status in $CRC.
client() {
	local prog=$1
	shift
	timeout 120 $BENCH_ENV "$B/$prog" -p "$PORT" "$@" "$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err"
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
# wait_for FILE REGEX [SECONDS]: until FILE has a line matching REGEX (a
# server's "accepted", a client's debug "retrying"); 1 after SECONDS (30).
wait_for() {
	local i
	for ((i = 0; i < ${3:-30} * 10; i++)); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# rxe_sent: RDMA packets sent so far by every rxe device of this kernel.
rxe_sent() {
	local f t=0 v
	for f in /sys/class/infiniband/*/ports/*/hw_counters/sent_pkts; do
		[ -r "$f" ] && read -r v <"$f" && t=$((t + v))
	done
	echo "$t"
}
# wait_traffic [PACKETS] [SECONDS]: until the rxe devices have sent PACKETS
# (default 100) more packets than when called: data is moving.
wait_traffic() {
	local i start
	start=$(rxe_sent)
	for ((i = 0; i < ${2:-60} * 10; i++)); do
		[ $(($(rxe_sent) - start)) -ge "${1:-100}" ] && return 0
		sleep 0.1
	done
	return 1
}
# wait_running OUT [SECONDS]: until a bench whose stdout is OUT has printed
# its table header (connected, measuring) and data moves on the wire: a
# fault injected then hits the measurement, however slow the start (ASan,
# a loaded VM).
wait_running() {
	wait_for "$1" "BW peak" "${2:-60}" && wait_traffic 100 "${2:-60}"
}
# wait_cm_id PID [SECONDS]: until process PID owns an rdma_cm id that is not
# a listener (a client's connect attempt is under way).
wait_cm_id() {
	local i
	for ((i = 0; i < ${2:-30} * 10; i++)); do
		rdma resource show cm_id 2>/dev/null | grep -v LISTEN | grep -Eq "pid $1 " && return 0
		sleep 0.1
	done
	return 1
}
# wait_idle PID [SECONDS]: until process PID holds no QP, CQ or MR (a
# persistent server between clients).
wait_idle() {
	local i
	for ((i = 0; i < ${2:-30} * 10; i++)); do
		{ rdma resource show qp; rdma resource show cq; rdma resource show mr; } 2>/dev/null |
			grep -Eq "pid $1 " || return 0
		sleep 0.1
	done
	return 1
}
# wait_rxe DEV [SECONDS]: until DEV is back, ACTIVE, with an IPv4 GID.
wait_rxe() {
	local i
	for ((i = 0; i < ${2:-30} * 10; i++)); do
		rdma link show "$1/1" 2>/dev/null | grep -q "state ACTIVE" &&
			grep -qs ':ffff:' /sys/class/infiniband/"$1"/ports/1/gids/* && return 0
		sleep 0.1
	done
	return 1
}
# csv_all FILE PYEXPR: every data row r (a dict by column name) satisfies
# PYEXPR, and there is at least one row; the offending rows are printed.
csv_all() {
	python3 - "$1" "$2" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline='')))
expr = compile("(" + sys.argv[2] + ")", "csv_all", "eval")
bad = [r for r in rows if not eval(expr, {}, {"r": r, "f": float})]
for r in bad:
    print("# row fails %s: %s" % (sys.argv[2], dict(r)))
sys.exit(0 if rows and not bad else 1)
PY
}
# csv_vals FILE COLUMN: one column's values, space-separated, in row order.
csv_vals() {
	python3 - "$1" "$2" <<'PY'
import csv, sys
print(" ".join(r[sys.argv[2]] for r in csv.DictReader(open(sys.argv[1], newline=''))))
PY
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
