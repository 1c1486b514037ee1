# The one TAP layer of every shell test: the host-side tests of make check
# source it first,
#	. "$(dirname "$0")/../tap.sh"
# and the integration tests get it through tests/integration/lib.sh, which
# adds the RDMA helpers on top. POSIX sh (make check runs the host tests
# with /bin/sh, dash on Debian).
# plan N          print the plan now (else done_testing prints it at the end)
# skip_all WHY    the whole test cannot run here: say so and exit 0
# ok NAME / skip NAME WHY / diag TEXT...
# not_ok NAME [FILE...]  a failure; each FILE that exists is shown as TAP
#                    comments (a log that says why)
# check NAME CMD...  CMD's status decides (and is check's own status); its
#                    output goes into the log only when it fails, with the
#                    files named in $LOGS (space-separated), so that a
#                    failure shows why
# same EXPECTED GOT  golden compare (a status, for check); GDRPERF_REGEN=1
#                    rewrites EXPECTED from GOT instead (review the diff;
#                    docs/testing.md)
# golden_file NAME EXPECTED GOT  check NAME same EXPECTED GOT (NAME says
#                    "(regenerated)" under GDRPERF_REGEN=1)
# $tmp            a scratch directory, removed at exit (kept with
#                 GDRPERF_KEEP_TMP=1, its path printed)
# at_exit CMD     run CMD (a shell string) at exit, the last registered first,
#                 before $tmp goes: a test's own teardown (never `trap ... EXIT`
#                 of its own, which would replace the helper's)
# done_testing    the plan (if not given) and the exit status: 1 if any failed
# The results are counted in TAP_N (all) and TAP_FAILED; the summary
# ("N passed, N failed") is made from the ok / not ok lines by automake's
# tap-driver (make check) or tests/integration/run-suite.

# Sourced twice (an old test sourcing two helpers): once is enough.
[ -z "${TAP_SH_LOADED:-}" ] || return 0
TAP_SH_LOADED=1
TAP_N=0
TAP_FAILED=0
TAP_PLAN=
TAP_AT_EXIT=
# The helper's own files live next to $tmp, not in it: a test may count what $tmp holds.
TAP_DIR=$(mktemp -d "${TMPDIR:-/tmp}/gdrperf-test.XXXXXX") || {
	echo "Bail out! mktemp -d failed"
	exit 1
}
tap_cleanup() {
	eval "$TAP_AT_EXIT"
	if [ -n "${GDRPERF_KEEP_TMP:-}" ]; then
		echo "# kept $TAP_DIR/tmp (GDRPERF_KEEP_TMP)"
	else
		rm -rf "$TAP_DIR"
	fi
}
trap tap_cleanup EXIT
tmp=$TAP_DIR/tmp
mkdir "$tmp" || exit 1
trap 'exit 1' INT TERM

at_exit() {
	TAP_AT_EXIT="$1
$TAP_AT_EXIT"
}
skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}
plan() {
	TAP_PLAN=$1
	echo "1..$1"
}
ok() {
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N - $1"
}
not_ok() {
	TAP_N=$((TAP_N + 1))
	TAP_FAILED=$((TAP_FAILED + 1))
	echo "not ok $TAP_N - $1"
	shift
	for tap_f in "$@"; do
		[ -f "$tap_f" ] && diag_file "$tap_f"
	done
	return 0
}
skip() {
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N - $1 # SKIP $2"
}
diag() { printf '%s\n' "$*" | sed 's/^/# /'; }
# diag_file FILE: FILE's lines as TAP comments, under its name.
diag_file() {
	echo "# --- $1:"
	sed 's/^/#   /' "$1"
}
check() {
	tap_name=$1
	shift
	if "$@" >"$TAP_DIR/out" 2>&1; then
		ok "$tap_name"
		# what GDRPERF_REGEN=1 rewrote
		[ "${GDRPERF_REGEN:-0}" != 1 ] || sed 's/^/# /' "$TAP_DIR/out"
		return 0
	else
		tap_rc=$?
		not_ok "$tap_name"
		diag "status $tap_rc: $*"
		sed 's/^/# /' "$TAP_DIR/out"
		for tap_f in ${LOGS:-}; do
			[ -f "$tap_f" ] && diag_file "$tap_f"
		done
		return $tap_rc
	fi
}
same() {
	if [ "${GDRPERF_REGEN:-0}" = 1 ]; then
		cp "$2" "$1" && echo "regenerated $1"
		return
	fi
	diff -u "$1" "$2"
}
golden_file() {
	if [ "${GDRPERF_REGEN:-0}" = 1 ]; then
		check "$1 (regenerated)" same "$2" "$3"
	else
		check "$1" same "$2" "$3"
	fi
}
done_testing() {
	[ -n "$TAP_PLAN" ] || echo "1..$TAP_N"
	if [ -n "$TAP_PLAN" ] && [ "$TAP_PLAN" != "$TAP_N" ]; then
		diag "planned $TAP_PLAN tests, ran $TAP_N"
		exit 1
	fi
	[ "$TAP_FAILED" -eq 0 ] && exit 0
	diag "$TAP_FAILED of $TAP_N failed"
	exit 1
}
