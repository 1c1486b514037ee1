# Shared by the gdr_doctor golden tests: TAP counters, a clean environment, golden diffs.
# GDRPERF_REGEN=1 rewrites the expected files instead of comparing (review the diff!;
# docs/testing.md).
: "${top_srcdir:?run through make check}" "${top_builddir:?run through make check}"
DOCTOR="$top_builddir/bench/gdr_doctor"
EXPECTED="$top_srcdir/tests/doctor/expected"
TAPN=0
FAILED=0
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gdr-doctor-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# A PATH with only what gdr_doctor may run: gzip (for /proc/config.gz); ofed_info only when a test adds it.
mkdir -p "$WORK/bin" "$WORK/bin-ofed"
ln -s "$(command -v gzip)" "$WORK/bin/gzip"
ln -s "$(command -v gzip)" "$WORK/bin-ofed/gzip"
ln -s "$top_srcdir/tests/doctor/bin/ofed_info" "$WORK/bin-ofed/ofed_info"

ok() { TAPN=$((TAPN + 1)); echo "ok $TAPN - $1"; }
not_ok() { TAPN=$((TAPN + 1)); FAILED=1; echo "not ok $TAPN - $1"; }

# doctor_env [VAR=value...] -- args: gdr_doctor with nothing from the caller's environment
# (no NCCL_*, no real libcuda) so that outputs are the same on every machine.
doctor_env() {
	env -i PATH="$WORK/bin" GDRPERF_LIBCUDA=/nonexistent/libcuda.so.1 "$@"
}

# golden NAME FILE: compare FILE with expected/NAME.
golden() {
	if [ "${GDRPERF_REGEN:-0}" = 1 ]; then
		cp "$2" "$EXPECTED/$1"
		ok "$1 (updated)"
	elif diff -u "$EXPECTED/$1" "$2" >"$WORK/diff" 2>&1; then
		ok "$1"
	else
		sed 's/^/# /' "$WORK/diff"
		not_ok "$1"
	fi
}

# status NAME WANT GOT
status_is() {
	if [ "$2" = "$3" ]; then ok "$1: exit $3"; else not_ok "$1: exit $3, wanted $2"; fi
}
