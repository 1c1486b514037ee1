# The integration tests' helpers (tests/integration/t_*.sh and
# two-hosts/t_*.sh): the one TAP layer (../tap.sh) with the RDMA helpers on
# top.  A test is a bash script that starts with
#   . "$(dirname "$0")/lib.sh"            (two-hosts/: "$(dirname "$0")/../lib.sh")
# and ends with done_testing (or its old name finish).  run-suite runs the
# files one by one inside the Soft-RoCE VM (scripts/softroce-vm) and counts
# every `ok` / `not ok` line of column 0 ("N passed, N failed").
#
# TAP (../tap.sh): plan, skip_all, ok, not_ok NAME [FILE...], skip NAME WHY,
#   diag, check NAME CMD... (the files in $LOGS are shown when it fails),
#   at_exit CMD, done_testing; $tmp (= $TMP = $T) the scratch directory.
# Old names, kept for files written against the two earlier helpers:
#   finish = done_testing; tap_plan, tap_skip_all, tap_ok, tap_skip, tap_check,
#   tap_done; tap_fail NAME TEXT... and tap_diag TEXT... (one comment block per
#   argument).  bw_lib.sh is this file under its old name.
#
# Environment (set by softroce-vm; defaults here):
#   GDRPERF_RDMA_DEV, GDRPERF_RDMA_ADDR   the rxe device and its IPv4 address
#   GDRPERF_ADDR_A/B, GDRPERF_RDMA_DEV_A/B  the --pair "hosts", when present
#   top_srcdir, top_builddir               the source and build trees
#   GDRPERF_TEST_PORT                      the first port - 1 (a test may set PORT)
#   GDRPERF_BG_TIMEOUT                     default limit for run_bg (120 s)
#   GDRPERF_KEEP_TMP=1                     keep the scratch directory
#
# Never point a server or client at anything but these addresses or loopback.
# Waits are on conditions (wait_until and the wait_* below), never a fixed sleep.

[ -z "${GDRPERF_IT_LIB_LOADED:-}" ] || return 0
GDRPERF_IT_LIB_LOADED=1

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir
# This file's own directory: the checkers next to it, the TAP layer above it.
IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$IT_DIR/../tap.sh"

BENCH=$top_builddir/bench
B=$BENCH
ADDR=${GDRPERF_RDMA_ADDR:-169.254.77.1}
PORT=${GDRPERF_TEST_PORT:-19515}
T=$tmp
TMP=$tmp
# BENCH_ENV: a prefix for the bench alone (env LD_PRELOAD=..., no spaces in it).
BENCH_ENV=
# The logs check and not_ok show when a case fails.
LOGS="$TMP/srv.out $TMP/srv.err $TMP/cli.out $TMP/cli.err"

# --- old names --------------------------------------------------------------
finish() { done_testing; }
tap_plan() { plan "$1"; }
tap_skip_all() { skip_all "$*"; }
tap_ok() { ok "$*"; }
tap_skip() { skip "$1" "$2"; }
tap_check() { check "$@"; }
tap_done() { done_testing; }
tap_diag() {
	local arg
	for arg; do
		diag "$arg"
	done
}
# tap_fail NAME [TEXT...]: a failure with each TEXT as comments.
tap_fail() {
	not_ok "$1"
	shift
	tap_diag "$@"
}

# --- waiting on a condition -------------------------------------------------
# wait_until SECS CMD...: until CMD succeeds, trying every WAIT_STEP seconds
# (default 0.1), about SECS tries' worth (the probes' own time comes on top:
# a loaded machine gets more, never less), and for at least 4 x SECS of wall
# clock: the limits were set when each pause was a sleep process, 0.4-0.5 s
# under TCG for a step of 0.1 s; a pause is now a nap, so a condition is seen
# as soon as it holds while a slow one gets the margin it had.  1 if it never did.
wait_until() {
	local limit=$1 step=${WAIT_STEP:-0.1} i tries l_ms s_ms end
	shift
	_ms l_ms "$limit"
	_ms s_ms "$step"
	tries=$((l_ms / (s_ms > 0 ? s_ms : 1)))
	end=$((SECONDS + 4 * l_ms / 1000))
	for ((i = 0; i < tries || SECONDS < end; i++)); do
		"$@" && return 0
		nap "$step"
	done
	return 1
}

# nap SECS: wait SECS (decimals allowed) in the shell itself: a read that
# times out on a pipe nobody writes. No sleep process: under TCG a process
# start costs 0.3-0.5 s, more than the waits the helpers poll with.
nap() { read -rt "$1" <> <(:) || :; }
# _ms VAR SECS: VAR = SECS (e.g. 10, 0.2, 1.25) in milliseconds, no process.
_ms() {
	local v=$2 i f
	i=${v%%.*}
	f=${v#"$i"}
	f=${f#.}000
	printf -v "$1" '%d' $((10#${i:-0} * 1000 + 10#${f:0:3}))
}

# wait_deadline SECS CMD...: until CMD succeeds, by the wall clock: for a
# probe that may itself take seconds (scontrol ping), where wait_until's count
# of tries would stretch far past SECS.  1 if it never did.
wait_deadline() {
	local end=$((SECONDS + $1))
	shift
	while [ "$SECONDS" -lt "$end" ]; do
		"$@" && return 0
		nap 0.2
	done
	"$@"
}

# retry TRIES DELAY CMD...: run CMD until it succeeds, DELAY s between tries.
# Under TCG a server may take seconds to listen; a client started too early
# is rejected.
retry() {
	local tries=$1 delay=$2 i rc=1
	shift 2
	for ((i = 1; i <= tries; i++)); do
		"$@" && return 0
		rc=$?
		[ $i -lt $tries ] && nap "$delay"
	done
	return $rc
}

# listening PORT: an rdma_cm id listens on PORT now.
listening() {
	rdma resource show cm_id 2>/dev/null | grep -E "LISTEN" | grep -q ":$1\b"
}
# wait_listen PORT [SECONDS]: until an rdma_cm id listens on PORT (a slow
# server, e.g. under valgrind, may take many seconds to get there; 40).
wait_listen() { WAIT_STEP=0.2 wait_until "${2:-40}" listening "$1"; }

# use_fake_cuda: the test-only fake libcuda.so.1 as every bench process's
# CUDA driver (GDRPERF_LIBCUDA; its path in FAKE); without it built, the file
# ends here with one failure.
use_fake_cuda() {
	FAKE=${top_builddir:-.}/tests/fake_cuda/libcuda.so.1
	if [ ! -f "$FAKE" ]; then
		not_ok "fake libcuda.so.1 built ($FAKE missing: run make check)"
		finish
		exit 1
	fi
	export GDRPERF_LIBCUDA=$FAKE
}

# start_cost: seconds this build takes to start, find no server and exit
# (a client with --timeout 0.1 on a port nobody serves), measured now, on
# this machine, under its present load: a time limit on a whole process adds
# this on top of the program's own --timeout (an ASan build under TCG beside
# other VMs takes seconds to start; a plain one about one).  Set START_COST.
start_cost() {
	local t0
	t0=$(date +%s.%N)
	$BENCH_ENV "$B/gdr_write_bw" -p 1 --timeout 0.1 "$ADDR" >/dev/null 2>&1
	START_COST=$(echo "$(date +%s.%N) - $t0" | bc)
}
# slack: 2 s plus twice START_COST (measured once per file), the allowance a
# test adds to a --timeout it checks a whole process against.
slack() {
	[ -n "${START_COST:-}" ] || start_cost
	echo "2 + 2 * $START_COST" | bc
}

# wait_for FILE REGEX [SECONDS]: until FILE has a line matching REGEX (a
# server's "accepted", a client's debug "retrying"); 1 after SECONDS (30).
wait_for() { wait_until "${3:-30}" grep -Eq -- "$2" "$1" 2>/dev/null; }

# rxe_sent: RDMA packets sent so far by every rxe device of this kernel.
rxe_sent() {
	local f t=0 v
	for f in /sys/class/infiniband/*/ports/*/hw_counters/sent_pkts; do
		[ -r "$f" ] && read -r v <"$f" && t=$((t + v))
	done
	echo "$t"
}
_sent_since() { [ $(($(rxe_sent) - $1)) -ge "$2" ]; }
# wait_traffic [PACKETS] [SECONDS]: until the rxe devices have sent PACKETS
# (default 100) more packets than when called: data is moving.
wait_traffic() { wait_until "${2:-60}" _sent_since "$(rxe_sent)" "${1:-100}"; }

# wait_running OUT [SECONDS]: until a bench whose stdout is OUT has printed
# its table header (connected, measuring) and data moves on the wire: a
# fault injected then hits the measurement, however slow the start (ASan,
# a loaded VM).
wait_running() {
	wait_for "$1" "BW peak" "${2:-60}" && wait_traffic 100 "${2:-60}"
}

_has_cm_id() { rdma resource show cm_id 2>/dev/null | grep -v LISTEN | grep -Eq "pid $1 "; }
# wait_cm_id PID [SECONDS]: until process PID owns an rdma_cm id that is not
# a listener (a client's connect attempt is under way).
wait_cm_id() { wait_until "${2:-30}" _has_cm_id "$1"; }

_idle() {
	! { rdma resource show qp; rdma resource show cq; rdma resource show mr; } 2>/dev/null |
		grep -Eq "pid $1 "
}
# wait_idle PID [SECONDS]: until process PID holds no QP, CQ or MR (a
# persistent server between clients).
wait_idle() { wait_until "${2:-30}" _idle "$1"; }

_rxe_up() {
	rdma link show "$1/1" 2>/dev/null | grep -q "state ACTIVE" &&
		grep -qs ':ffff:' /sys/class/infiniband/"$1"/ports/1/gids/*
}
# wait_rxe DEV [SECONDS]: until DEV is back, ACTIVE, with an IPv4 GID.
wait_rxe() { wait_until "${2:-30}" _rxe_up "$1"; }

# --- one server and one client of the bench ---------------------------------
# server PROG ARGS...: start a server on the next port in the background; its
# pid in $SPID, its output in $TMP/srv.out and srv.err.
server() {
	local prog=$1
	shift
	PORT=$((PORT + 1))
	$BENCH_ENV "$B/$prog" -p "$PORT" "$@" >"$TMP/srv.out" 2>"$TMP/srv.err" &
	SPID=$!
}
# client PROG ARGS...: run a client of that port in the foreground (bounded,
# 120 s); status in $CRC, output in $TMP/cli.out and cli.err.
client() {
	local prog=$1
	shift
	timeout 120 $BENCH_ENV "$B/$prog" -p "$PORT" "$@" "$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err"
	CRC=$?
}
_spid_gone() { ! kill -0 "$SPID" 2>/dev/null; }
# wait_server [SECONDS]: wait for the server (60 s at most, then it is
# killed); status in $SRC, 124 if it had to be killed.
wait_server() {
	if wait_until "${1:-60}" _spid_gone; then
		wait "$SPID"
		SRC=$?
	else
		kill -9 "$SPID" 2>/dev/null
		wait "$SPID" 2>/dev/null
		SRC=124
	fi
}

# --- named background jobs --------------------------------------------------
declare -A _bg_pid=()
_bg_cleanup() {
	local n
	for n in "${!_bg_pid[@]}"; do
		kill "${_bg_pid[$n]}" 2>/dev/null
		wait "${_bg_pid[$n]}" 2>/dev/null
	done
}
at_exit _bg_cleanup

# run_bg NAME CMD...: start CMD in the background under `timeout`
# (GDRPERF_BG_TIMEOUT seconds, default 120) with stdout+stderr in $T/NAME.log.
run_bg() {
	local name=$1
	shift
	timeout -k 5 "${GDRPERF_BG_TIMEOUT:-120}" "$@" >"$T/$name.log" 2>&1 &
	_bg_pid[$name]=$!
}

_pid_gone() { ! kill -0 "$1" 2>/dev/null; }
# wait_bg NAME [SEC]: wait for a run_bg job, at most SEC seconds (default:
# the job's own timeout).  Returns its exit status, 124 if it timed out.
wait_bg() {
	local name=$1 limit=${2:-} pid rc
	pid=${_bg_pid[$name]:-}
	[ -n "$pid" ] || { echo "wait_bg: no job named $name" >&2; return 127; }
	if [ -n "$limit" ] && ! wait_until "$limit" _pid_gone "$pid"; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		unset "_bg_pid[$name]"
		return 124
	fi
	wait "$pid"
	rc=$?
	unset "_bg_pid[$name]"
	return $rc
}

# kill_bg NAME [SIGNAL]: signal a run_bg job (the `timeout` wrapper passes
# the signal on) and reap it.
kill_bg() {
	local pid=${_bg_pid[$1]:-}
	[ -n "$pid" ] || return 0
	kill -"${2:-TERM}" "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	unset "_bg_pid[$1]"
}

# bg_log NAME: the output of a run_bg job so far.
bg_log() {
	cat "$T/$1.log" 2>/dev/null
}

# _log_or_gone NAME REGEX: the job's log matches, or the job has exited (2).
_log_or_gone() {
	grep -Eq -- "$2" "$T/$1.log" 2>/dev/null && return 0
	[ -n "${_bg_pid[$1]:-}" ] && ! kill -0 "${_bg_pid[$1]}" 2>/dev/null && return 0
	return 1
}
# wait_for_log NAME REGEX [SEC]: wait until a run_bg job's output matches
# (a server printing that it listens).  Fails after SEC s (default 30) or
# as soon as the job has exited without matching.
wait_for_log() {
	wait_until "${3:-30}" _log_or_gone "$1" "$2"
	grep -Eq -- "$2" "$T/$1.log" 2>/dev/null
}

# --- what a file needs ------------------------------------------------------
# require_rdma: skip the whole file when no RDMA device was provided.
require_rdma() {
	[ -n "${GDRPERF_RDMA_DEV:-}" ] && [ -n "${GDRPERF_RDMA_ADDR:-}" ] ||
		skip_all "no RDMA device (run under scripts/softroce-vm)"
}

# require_prog PROG...: skip the whole file when a program is missing.
require_prog() {
	local p
	for p; do
		[ -x "$p" ] || command -v "$p" >/dev/null 2>&1 ||
			skip_all "$p not found"
	done
}

# pyq ARGS...: python3 -S, for the checkers (csv, json, re: the standard
# library only). Without the site step the interpreter starts in about 1 s
# under TCG instead of 2.5-4 s (pyenv's site-packages import certifi through
# a .pth file), and the suites start it hundreds of times: csv_all, gpu_rows.py,
# the checks' heredocs. Exported: `check NAME bash -c "... $ROWS ..."` sees it.
# gdr-ab (matplotlib) keeps the plain python3.
#
# Each file starts one server (pyq_server.py, double-forked: no `wait` of a
# test waits on it) that runs every script in a forked child: a check costs a
# fork instead of an interpreter start. The script's stdout and stderr (files
# of the server's) are printed here when it is done; where the server is not up
# (another host, a failed start), pyq is python3 -S itself. One script at a
# time: a lock file, made here (noclobber) and removed by the server.
pyq() {
	local d=${_PYQ_DIR:-} mode src rc out err holder
	if [ -z "$d" ] || [ ! -e "$d/pid" ] || [ ! -p "$d/req" ]; then
		python3 -S "$@"
		return
	fi
	case ${1:-} in
	-) mode=- && IFS= read -r -d '' src ;;
	-c) mode=-c src=$2 && shift ;;
	-* | "") python3 -S "$@"; return ;;
	*) mode=file src=$1 ;;
	esac
	shift
	local -
	set -C
	until { echo "$BASHPID" >"$d/lock"; } 2>/dev/null; do
		# The lock of a client that was killed is freed. The server may remove
		# the lock between the two lines: the braces keep the redirection's
		# error off this script's stderr, and holder is read afresh each time.
		holder=
		{ IFS= read -r holder <"$d/lock"; } 2>/dev/null
		if [ -n "$holder" ] && ! kill -0 "$holder" 2>/dev/null; then
			rm -f "$d/lock"
			continue
		fi
		read -rt 0.05 <> <(:) # nap's body: pyq is exported, nap is not
	done
	set +C
	printf '%s\0' "$BASHPID" "$PWD" "$mode" "$src" "$@" >"$d/req"
	# The server frees the lock once it has sent the status.
	IFS= read -r rc <"$d/resp"
	IFS= read -r -d '' out <"$d/out.$BASHPID"
	IFS= read -r -d '' err <"$d/err.$BASHPID"
	printf '%s' "$out"
	printf '%s' "$err" >&2
	return "${rc:-1}"
}
export -f pyq
# _pyq_start: the server for this file, in TAP_DIR; stopped at exit (and it
# ends by itself when this shell does).
_pyq_start() {
	local d=$TAP_DIR/pyq
	mkdir -p "$d" && mkfifo "$d/req" "$d/resp" || return 0
	(python3 -S "$IT_DIR/pyq_server.py" "$d" "$$" </dev/null >/dev/null 2>"$d/server.err" &)
	_PYQ_DIR=$d
	export _PYQ_DIR
	at_exit '[ -s "$_PYQ_DIR/pid" ] && kill "$(cat "$_PYQ_DIR/pid")" 2>/dev/null'
}
_pyq_start

# --- CSV, columns by name ---------------------------------------------------
# RFC 4180 fields (quotes, doubled quotes, commas in quotes), one record per
# line: the awk helpers need no python; the python ones use csv.DictReader.
_CSV_AWK='
function csv_split(line, f,    n, i, c, q, cur) {
	n = 0; cur = ""; q = 0
	for (i = 1; i <= length(line); i++) {
		c = substr(line, i, 1)
		if (q) {
			if (c == "\"") {
				if (substr(line, i + 1, 1) == "\"") { cur = cur "\""; i++ }
				else q = 0
			} else cur = cur c
		} else if (c == "\"") q = 1
		else if (c == ",") { f[++n] = cur; cur = "" }
		else cur = cur c
	}
	f[++n] = cur
	return n
}
'

# csv_rows FILE: number of data rows (records after the header); 0 and
# status 1 for a missing file.
csv_rows() {
	[ -f "$1" ] || { echo 0; return 1; }
	awk 'NR > 1 && length($0) > 0 { n++ } END { print n + 0 }' "$1"
}

# csv_whole FILE: a header and rows of as many fields, ending with a newline.
csv_whole() {
	local f=$1
	[ -s "$f" ] || return 1
	[ -z "$(tail -c1 "$f")" ] || return 1 # ends in a newline
	pyq - "$f" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline='')))
sys.exit(0 if rows and all(len(r) == len(rows[0]) for r in rows) else 1)
PY
}

# assert_csv_rows FILE N: the file has a header and exactly N data rows, and
# every row has as many fields as the header.  Prints why not on stdout.
assert_csv_rows() {
	local file=$1 want=$2
	[ -s "$file" ] || { echo "$file: missing or empty"; return 1; }
	awk "$_CSV_AWK"'
	NR == 1 { nh = csv_split($0, h); next }
	length($0) == 0 { next }
	{ rows++; n = csv_split($0, f)
	  if (n != nh) { printf "%s:%d: %d fields, header has %d\n", FILENAME, NR, n, nh; bad = 1 } }
	END {
		if (rows != want) { printf "%s: %d data rows, expected %d\n", FILENAME, rows, want; bad = 1 }
		exit bad
	}' want="$want" "$file"
}

# csv_get FILE ROW COLUMN: the value of COLUMN (header name) in data row ROW
# (1-based).
csv_get() {
	awk "$_CSV_AWK"'
	NR == 1 { nh = csv_split($0, h); for (i = 1; i <= nh; i++) col[h[i]] = i
		  if (!(name in col)) { printf "no column %s\n", name > "/dev/stderr"; exit 2 } next }
	NR == row + 1 { csv_split($0, f); print f[col[name]]; found = 1; exit }
	END { if (!found) exit 1 }' row="$2" name="$3" "$1"
}

# csv_col FILE COLUMN: the values of one column, one per line, in row order
# (status 2 when there is no such column).
csv_col() {
	awk "$_CSV_AWK"'
	NR == 1 { nh = csv_split($0, h); for (i = 1; i <= nh; i++) col[h[i]] = i
		  if (!(name in col)) { printf "no column %s\n", name > "/dev/stderr"; exit 2 } next }
	length($0) == 0 { next }
	{ csv_split($0, f); print f[col[name]] }' name="$2" "$1"
}

# csv_vals FILE COLUMN: one column's values, space-separated, in row order.
csv_vals() {
	pyq - "$1" "$2" <<'PY'
import csv, sys
print(" ".join(r[sys.argv[2]] for r in csv.DictReader(open(sys.argv[1], newline=''))))
PY
}

# csv_all FILE PYEXPR: every data row r (a dict by column name) satisfies
# PYEXPR, and there is at least one row; the offending rows are printed.
csv_all() {
	pyq - "$1" "$2" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline='')))
expr = compile("(" + sys.argv[2] + ")", "csv_all", "eval")
bad = [r for r in rows if not eval(expr, {}, {"r": r, "f": float})]
for r in bad:
    print("row fails %s: %s" % (sys.argv[2], dict(r)))
sys.exit(0 if rows and not bad else 1)
PY
}

# csv_check FILE CHECK...: gpu_rows.py's checks on the rows by column name:
#   all:EXPR  any:EXPR  count:N  count:N:EXPR   (r a row as a dict, num(v))
csv_check() { pyq "$IT_DIR/gpu_rows.py" "$@"; }

# assert_csv_col FILE COLUMN AWK-CONDITION: every data row satisfies the
# condition, in which v is the column's text and n its numeric value, e.g.
#   assert_csv_col out.csv bw_avg_gbps 'n > 0'
#   assert_csv_col out.csv verb 'v == "write" || v == "read"'
# Prints the offending rows on stdout.
assert_csv_col() {
	awk "$_CSV_AWK"'
	NR == 1 { nh = csv_split($0, h); for (i = 1; i <= nh; i++) col[h[i]] = i
		  if (!(name in col)) { printf "%s: no column %s\n", FILENAME, name; bad = 1; exit } next }
	length($0) == 0 { next }
	{ csv_split($0, f); v = f[col[name]]; n = v + 0
	  if (!('"$3"')) { printf "%s:%d: %s=%s fails %s\n", FILENAME, NR, name, v, cond; bad = 1 } }
	END { exit bad }' name="$2" cond="$3" "$1"
}
