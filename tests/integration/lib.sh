# Helpers for the integration tests (tests/integration/t_*.sh), sourced with
#   . "$(dirname "$0")/lib.sh"
# Each test is a bash script that prints TAP: `ok N - name`, `not ok N - name`,
# `# diagnostics`, and a plan (`1..N`, printed by tap_done unless tap_plan
# printed it first).  run-suite runs them one by one inside the Soft-RoCE VM
# (scripts/softroce-vm) and counts every ok / not ok line.
#
# Environment (set by softroce-vm; run-suite fills in defaults):
#   GDRPERF_RDMA_DEV, GDRPERF_RDMA_ADDR   the rxe device and its IPv4 address
#   GDRPERF_ADDR_A/B, GDRPERF_RDMA_DEV_A/B  the --pair "hosts", when present
#   top_srcdir, top_builddir               the source and build trees
#   GDRPERF_BG_TIMEOUT                     default limit for run_bg (120 s)
#
# Never point a server or client at anything but these addresses or loopback.

set -u

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir
BENCH=$top_builddir/bench

_tap_n=0
_tap_failed=0
_tap_planned=

# A scratch directory per test, removed at exit with every background job.
T=$(mktemp -d "${TMPDIR:-/tmp}/gdrperf-it.XXXXXX") || exit 1
declare -A _bg_pid=()
_lib_cleanup() {
	local n
	for n in "${!_bg_pid[@]}"; do
		kill "${_bg_pid[$n]}" 2>/dev/null
	done
	wait 2>/dev/null
	[ -n "${GDRPERF_KEEP_TMP:-}" ] || rm -rf "$T"
}
trap _lib_cleanup EXIT

tap_plan() {
	_tap_planned=$1
	echo "1..$1"
}

# tap_skip_all REASON: nothing in this file can run here.
tap_skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

# tap_diag TEXT...: each line of each argument as a TAP comment.
tap_diag() {
	local arg line
	for arg; do
		while IFS= read -r line; do
			echo "# $line"
		done <<<"$arg"
	done
}

tap_ok() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $*"
}

# tap_fail NAME [DIAGNOSTIC...]
tap_fail() {
	_tap_n=$((_tap_n + 1))
	_tap_failed=$((_tap_failed + 1))
	echo "not ok $_tap_n - $1"
	shift
	local d
	for d; do
		tap_diag "$d"
	done
}

# tap_skip NAME REASON: counts as skipped, neither passed nor failed.
tap_skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1 # SKIP $2"
}

# tap_check NAME CMD...: ok if CMD exits 0; its output becomes diagnostics
# when it fails.
tap_check() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		tap_ok "$name"
	else
		tap_fail "$name" "command: $*" "exit status: $rc" "$(tail -n 20 <<<"$out")"
	fi
	return $rc
}

# tap_done: prints the trailing plan if none was given; the exit status says
# whether everything passed (run-suite also checks the count).
tap_done() {
	[ -n "$_tap_planned" ] || echo "1..$_tap_n"
	[ "$_tap_failed" -eq 0 ]
	exit $?
}

# run_bg NAME CMD...: start CMD in the background under `timeout`
# (GDRPERF_BG_TIMEOUT seconds, default 120) with stdout+stderr in $T/NAME.log.
run_bg() {
	local name=$1
	shift
	timeout -k 5 "${GDRPERF_BG_TIMEOUT:-120}" "$@" >"$T/$name.log" 2>&1 &
	_bg_pid[$name]=$!
}

# wait_bg NAME [SEC]: wait for a run_bg job, at most SEC seconds (default:
# the job's own timeout).  Returns its exit status, 124 if it timed out.
wait_bg() {
	local name=$1 limit=${2:-} pid i rc
	pid=${_bg_pid[$name]:-}
	[ -n "$pid" ] || { echo "wait_bg: no job named $name" >&2; return 127; }
	if [ -n "$limit" ]; then
		for ((i = 0; i < limit * 10; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			kill "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			unset "_bg_pid[$name]"
			return 124
		fi
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

# wait_for_log NAME REGEX [SEC]: wait until a run_bg job's output matches
# (a server printing that it listens).  Fails after SEC s (default 30) or
# as soon as the job has exited without matching.
wait_for_log() {
	local name=$1 re=$2 limit=${3:-30} i pid=${_bg_pid[$1]:-}
	for ((i = 0; i < limit * 10; i++)); do
		grep -Eq -- "$re" "$T/$name.log" 2>/dev/null && return 0
		[ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null && break
		sleep 0.1
	done
	grep -Eq -- "$re" "$T/$name.log" 2>/dev/null
}

# retry TRIES DELAY CMD...: run CMD until it succeeds.  Under TCG a server
# may take seconds to listen; a client started too early is rejected.
retry() {
	local tries=$1 delay=$2 i rc=1
	shift 2
	for ((i = 1; i <= tries; i++)); do
		"$@" && return 0
		rc=$?
		[ $i -lt $tries ] && sleep "$delay"
	done
	return $rc
}

# require_rdma: skip the whole file when no RDMA device was provided.
require_rdma() {
	[ -n "${GDRPERF_RDMA_DEV:-}" ] && [ -n "${GDRPERF_RDMA_ADDR:-}" ] ||
		tap_skip_all "no RDMA device (run under scripts/softroce-vm)"
}

# require_prog PROG...: skip the whole file when a program is missing.
require_prog() {
	local p
	for p; do
		[ -x "$p" ] || command -v "$p" >/dev/null 2>&1 ||
			tap_skip_all "$p not found"
	done
}

# CSV helpers: RFC 4180 fields (quotes, doubled quotes, commas in quotes),
# one record per line.  Plain awk, so they run without python in the guest.
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

# csv_rows FILE: number of data rows (records after the header).
csv_rows() {
	[ -f "$1" ] || { echo 0; return 1; }
	awk 'NR > 1 && length($0) > 0 { n++ } END { print n + 0 }' "$1"
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
