#!/bin/sh
# gdr_doctor --nfd and --prom (docs/cluster-outputs.md) on fixture roots: golden
# files, promtool's verdict on the metrics, and that a failed run leaves the
# earlier files as they were.
. "$top_srcdir/tests/doctor/lib.sh"
cd "$top_srcdir/tests/doctor/roots" || exit 1
plan 36

# Relative, as in test_roots.sh: nothing in a golden depends on the checkout's path.
xml=../../topo/hostbridges.xml

cluster() { # name [VAR=value...] -- gdr_doctor args: NAME.nfd and NAME.prom against the goldens
	name=$1
	shift
	vars=
	while [ "$1" != -- ]; do vars="$vars $1"; shift; done
	shift
	# shellcheck disable=SC2086 # vars is a list of words
	doctor_env $vars "$DOCTOR" "$@" --quiet --nfd "$WORK/$name.nfd" --prom "$WORK/$name.prom" \
		>"$WORK/$name.log" 2>&1
	status_is "$name" 0 "$?"
	golden "cluster-$name.nfd" "$WORK/$name.nfd"
	golden "cluster-$name.prom" "$WORK/$name.prom"
}
cluster dmabuf-node -- --root dmabuf-node
cluster peermem-node -- --root peermem-node
cluster no-driver -- --root no-driver
# Distances measured: the NCCL labels are there (GPU0 PHB ... GPU3 NODE: PXB refuses all).
cluster both-measured -- --root both --topology-xml "$xml"
cluster both-measured-phb NCCL_NET_GDR_LEVEL=PHB -- --root both --topology-xml "$xml"
# A level NCCL does not name: no level label, never a guess; failed checks counted.
cluster pitfalls NCCL_NET_GDR_LEVEL=FAR NCCL_IB_DISABLE=1 -- --root dmabuf-node

# Every metrics file the tests write passes promtool (Debian's prometheus package),
# the unit test's too (its escaping and its bench rows: tests/unit/test_prom.c).
unit=$top_builddir/tests/unit/test_prom
if [ -x "$unit" ]; then
	GDRPERF_PROM_KEEP=$WORK "$unit" >"$WORK/unit.log" 2>&1 && [ -s "$WORK/unit-bench-rows.prom" ] &&
		ok "test_prom left its metrics" || not_ok "test_prom left its metrics" "$WORK/unit.log"
else
	skip "test_prom left its metrics" "tests/unit/test_prom not built (no cmocka)"
fi
if command -v promtool >/dev/null 2>&1; then
	for f in "$WORK"/*.prom; do
		check "promtool check metrics $(basename "$f")" sh -c 'promtool check metrics <"$1"' sh "$f"
	done
else
	skip "promtool check metrics" "promtool not installed (apt-get install prometheus)"
fi

# A run that fails leaves the earlier files as they were (no temporary file left behind).
mkdir "$WORK/keep"
echo old-nfd >"$WORK/keep/nfd"
echo old-prom >"$WORK/keep/prom.prom"
doctor_env "$DOCTOR" --root both --topology-xml "$WORK/no-such.xml" --nfd "$WORK/keep/nfd" \
	--prom "$WORK/keep/prom.prom" >"$WORK/fail.log" 2>&1
status_is "bad --topology-xml" 2 "$?"
if [ "$(cat "$WORK/keep/nfd" "$WORK/keep/prom.prom")" = "old-nfd
old-prom" ] && [ "$(ls -A "$WORK/keep" | wc -l)" -eq 2 ]; then
	ok "a failed run leaves the earlier --nfd and --prom files"
else
	not_ok "a failed run leaves the earlier --nfd and --prom files" "$WORK/fail.log"
fi
# A target that cannot be written is an error before the checks, naming the file.
mkdir "$WORK/adir"
doctor_env "$DOCTOR" --root both --nfd "$WORK/keep/nfd" --prom "$WORK/adir" >"$WORK/dir.log" 2>&1
status_is "--prom DIR" 2 "$?"
grep -q "cannot write the Prometheus metrics: .*adir: Is a directory" "$WORK/dir.log" &&
	[ "$(cat "$WORK/keep/nfd")" = old-nfd ] &&
	ok "--prom DIR: said, and --nfd's earlier file kept" ||
	not_ok "--prom DIR: said, and --nfd's earlier file kept" "$WORK/dir.log"
# A write that fails (full device): exit 2, the cause named.
if [ -w /dev/full ]; then
	doctor_env "$DOCTOR" --root both --nfd /dev/full >"$WORK/full.log" 2>&1
	rc=$?
	[ $rc = 2 ] && grep -q "NFD feature file: /dev/full: write: No space left" "$WORK/full.log" &&
		ok "--nfd /dev/full: exit 2, no space said" ||
		not_ok "--nfd /dev/full: exit 2, no space said (exit $rc)" "$WORK/full.log"
else
	skip "--nfd /dev/full" "no writable /dev/full"
fi
# --nfd - is all that goes to stdout; two files on stdout are a usage error.
doctor_env "$DOCTOR" --root dmabuf-node --nfd - >"$WORK/stdout.nfd" 2>"$WORK/stdout.err"
rc=$?
[ $rc = 0 ] && cmp -s "$WORK/stdout.nfd" "$EXPECTED/cluster-dmabuf-node.nfd" &&
	ok "--nfd -: the feature lines alone on stdout" ||
	not_ok "--nfd -: the feature lines alone on stdout (exit $rc)" "$WORK/stdout.nfd" "$WORK/stdout.err"
doctor_env "$DOCTOR" --root dmabuf-node --json - --prom /dev/stdout >"$WORK/two.out" 2>&1
status_is "--json - --prom /dev/stdout" 2 "$?"
# Not without a node verdict.
doctor_env "$DOCTOR" --measure --prom "$WORK/m.prom" >"$WORK/m.log" 2>&1
status_is "--prom with --measure" 2 "$?"
done_testing
