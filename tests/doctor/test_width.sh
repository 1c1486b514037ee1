#!/bin/sh
# Text output fits 80 columns: every golden text report of gdr_doctor and gdr_topo
# (tests/doctor/expected/*.out, tests/topo/expected/*.out). The documented exceptions
# (docs/testing.md, "Width of text output"), and only these, may be wider:
#  - JSON that a test appends after the text (from a line "{" to the end);
#  - an NCCL log line quoted as it is ("    N: <line>", "  deciding line:  N: <line>");
#  - an error message, one line on stderr ("gdr_topo: ...", "gdr_doctor: ...");
#  - gdr_topo's GPU x NIC matrix, one row per GPU ("GPUn ..." and its header row);
#  - a line ending in one word of more than 40 columns (a path: never cut).
. "$top_srcdir/tests/doctor/lib.sh"
set -- "$top_srcdir"/tests/doctor/expected/*.out "$top_srcdir"/tests/topo/expected/*.out
plan $#
for f in "$@"; do
	name=${f#"$top_srcdir"/tests/}
	LC_ALL=C awk '
		/^\{/ { json = 1 }
		json { next }
		/^    [0-9]+: / || /^  deciding line: +[0-9]+: / { next }
		/^gdr_(topo|doctor): / { next }
		/^GPU[0-9]+ / { next }
		/^ +[^ ]+( +[^ ]+)+ +NUMA$/ { next }
		{
			# Columns, not bytes: a UTF-8 continuation byte takes none.
			n = 0
			for (i = 1; i <= length($0); i++)
				if (substr($0, i, 1) !~ /[\200-\277]/)
					n++
			# A word longer than half a line ends the line whole (a path).
			w = $NF
			gsub(/[\200-\277]/, "", w)
			if (n > 80 && !(length(w) > 40 && $0 ~ /[^ ]$/))
				printf "# %s:%d: %d columns: %.60s...\n", FILENAME, NR, n, $0
		}' "$f" >"$WORK/wide"
	if [ -s "$WORK/wide" ]; then
		cat "$WORK/wide"
		not_ok "$name fits 80 columns"
	else
		ok "$name fits 80 columns"
	fi
done
done_testing
