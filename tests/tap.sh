# The one TAP helper of the host-side shell tests (make check). Source it first:
#	. "$(dirname "$0")/../tap.sh"
# plan N          print the plan now (else done_testing prints it at the end)
# skip_all WHY    the whole test cannot run here: say so and exit 0
# ok NAME / not_ok NAME / skip NAME WHY / diag TEXT...
# check NAME CMD...  CMD's status decides; its output goes into the log only
#                    when it fails, so a failure shows why
# same EXPECTED GOT  golden compare (a status, for check); GDRPERF_REGEN=1
#                    rewrites EXPECTED from GOT instead (review the diff;
#                    docs/testing.md)
# golden_file NAME EXPECTED GOT  check NAME same EXPECTED GOT (NAME says
#                    "(regenerated)" under GDRPERF_REGEN=1)
# $tmp            a scratch directory, removed at exit
# done_testing    the plan (if not given) and the exit status: 1 if any failed
TAP_N=0
TAP_FAILED=0
TAP_PLAN=
# The helper's own files live next to $tmp, not in it: a test may count what $tmp holds.
TAP_DIR=$(mktemp -d "${TMPDIR:-/tmp}/gdrperf-test.XXXXXX") || {
	echo "Bail out! mktemp -d failed"
	exit 1
}
trap 'rm -rf "$TAP_DIR"' EXIT
tmp=$TAP_DIR/tmp
mkdir "$tmp" || exit 1
trap 'exit 1' INT TERM

skip_all() { echo "1..0 # SKIP $1"; exit 0; }
plan() { TAP_PLAN=$1; echo "1..$1"; }
ok() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $1"; }
not_ok() { TAP_N=$((TAP_N + 1)); TAP_FAILED=$((TAP_FAILED + 1)); echo "not ok $TAP_N - $1"; }
skip() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $1 # SKIP $2"; }
diag() { printf '%s\n' "$*" | sed 's/^/# /'; }
check() {
	tap_name=$1
	shift
	if "$@" >"$TAP_DIR/out" 2>&1; then
		ok "$tap_name"
		# what GDRPERF_REGEN=1 rewrote
		[ "${GDRPERF_REGEN:-0}" != 1 ] || sed 's/^/# /' "$TAP_DIR/out"
	else
		tap_rc=$?
		not_ok "$tap_name"
		diag "status $tap_rc: $*"
		sed 's/^/# /' "$TAP_DIR/out"
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
