#!/bin/sh
# The verdict's simulation (issue 51): 1,000 synthetic runs per scenario with a
# known truth, made by tests/tools/ab_sim through the bench's own rounds rule
# and CSV writer, each judged alone by gdr-ab's verdict; the false claims
# counted, the gaps found, the gates undecided where an anomaly voids them.
# tests/scripts/ab_sim_check.py says what is checked. TAP output; the table
# of rates and rounds follows as comments (docs/gdr-ab.md quotes it).
. "$(dirname "$0")/ab_lib.sh"
sim="${top_builddir:-$srcdir}/tests/tools/ab_sim"
[ -x "$sim" ] || skip_all "no $sim (make check builds it)"
"$PYTHON" "$srcdir/tests/scripts/ab_sim_check.py" "$sim" "$srcdir/scripts" \
	--runs "${GDRPERF_SIM_RUNS:-1000}" --figures "$tmp/figures.md"
rc=$?
sed 's/^/# /' "$tmp/figures.md" 2>/dev/null
exit $rc
