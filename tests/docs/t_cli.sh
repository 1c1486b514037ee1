#!/bin/sh
# What every C tool's command line shares (common/core/cli.c, exit_status.h):
# one --version format, "did you mean" for a mistyped long option, a missing
# input file is exit 2 everywhere, a short letter means one thing in every
# tool, and docs/exit-status.md has every status of exit_status.h. TAP output.
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$srcdir}
. "$(dirname "$0")/../tap.sh"
LC_ALL=C
export LC_ALL
B=$builddir/bench
TOOLS="gdr_write_bw gdr_read_bw gdr_write_lat gdr_read_lat gdr_topo gdr_doctor"

# status NAME WANT-RC WANT-TEXT CMD...: CMD's exit status and a line of its output.
status() {
	name=$1 want_rc=$2 want=$3
	shift 3
	"$@" >"$tmp/out" 2>&1 </dev/null
	rc=$?
	if [ "$rc" = "$want_rc" ] && grep -F -- "$want" "$tmp/out" >/dev/null; then
		ok "$name"
	else
		sed 's/^/# /' "$tmp/out"
		not_ok "$name (exit $rc, wanted $want_rc and: $want)"
	fi
}

versions=
for t in $TOOLS; do
	for v in -V --version; do
		"$B/$t" $v >"$tmp/v" 2>&1
		rc=$?
		if [ $rc = 0 ] && [ "$(wc -l <"$tmp/v")" = 1 ] &&
			grep -Eq "^$t \\(gdrperf\\) [0-9]+(\\.[0-9]+)*\$" "$tmp/v"; then
			ok "$t $v: '$t (gdrperf) VERSION', exit 0"
		else
			sed 's/^/# /' "$tmp/v"
			not_ok "$t $v: '$t (gdrperf) VERSION', exit 0 (exit $rc)"
		fi
		versions="$versions $(sed 's/.* //' "$tmp/v")"
	done
done
[ "$(echo $versions | tr ' ' '\n' | sort -u | wc -l)" = 1 ] &&
	ok "every tool prints the same version" || not_ok "every tool prints the same version:$versions"

for t in $TOOLS; do
	status "$t --hepl: did you mean --help" 2 "unknown option '--hepl' (did you mean --help?" \
		"$B/$t" --hepl
	status "$t --no-such-thing: no guess" 2 "unknown option '--no-such-thing' (see --help" \
		"$B/$t" --no-such-thing
done
for t in gdr_write_bw gdr_read_bw gdr_write_lat gdr_read_lat; do
	status "$t --report-gbits: did you mean --report_gbits" 2 "did you mean --report_gbits?" \
		"$B/$t" --report-gbits
done
status "gdr_topo --topology_xml=F: did you mean --topology-xml" 2 \
	"did you mean --topology-xml?" "$B/gdr_topo" --topology_xml=x.xml

# A missing input file: 2 (usage or input error) in every tool.
none=$tmp/does-not-exist.xml
for t in gdr_write_bw gdr_read_bw gdr_write_lat gdr_read_lat; do
	status "$t: missing --topology-xml is exit 2" 2 "$none: No such file or directory" \
		"$B/$t" --topology-xml "$none" 127.0.0.1
done
status "gdr_topo: missing --topology-xml is exit 2" 2 "$none: No such file or directory" \
	"$B/gdr_topo" --topology-xml "$none"
status "gdr_topo: missing HWLOC_XMLFILE is exit 2" 2 "$none: No such file or directory" \
	env HWLOC_XMLFILE="$none" "$B/gdr_topo"
status "gdr_doctor: missing --topology-xml is exit 2" 2 "$none" \
	"$B/gdr_doctor" --topology-xml "$none"
status "gdr_doctor: missing --nccl-log is exit 2" 2 "$none" \
	"$B/gdr_doctor" --nccl-log "$none"

# One meaning per short letter: "  -X, --name" lines of every tool's --help.
: >"$tmp/letters"
for t in $TOOLS; do
	"$B/$t" --help 2>&1 | sed -n "s/^  *-\\([A-Za-z0-9]\\), --\\([A-Za-z0-9_-]*\\).*/\\1 --\\2 $t/p" \
		>>"$tmp/letters"
done
[ "$(wc -l <"$tmp/letters")" -gt 20 ] && ok "short letters found in --help ($(wc -l <"$tmp/letters"))" ||
	not_ok "short letters found in --help" "$tmp/letters"
bad=$(awk '{ if (($1) in name && name[$1] != $2) print "-" $1 ": " name[$1] " (" tool[$1] ") and " $2 " (" $3 ")"; name[$1] = $2; tool[$1] = $3 }' "$tmp/letters" | sort -u)
[ -z "$bad" ] && ok "a short letter means one option in every tool" ||
	not_ok "a short letter means one option in every tool: $bad"

# docs/exit-status.md: a row for every status of exit_status.h.
vals=$(sed -n 's/^[[:space:]]*GDR_EXIT_[A-Z_]* = \([0-9]*\),.*/\1/p' "$srcdir/common/core/exit_status.h")
[ -n "$vals" ] || not_ok "exit_status.h has statuses"
for v in $vals; do
	grep -q "^| $v |" "$srcdir/docs/exit-status.md" && ok "docs/exit-status.md: status $v" ||
		not_ok "docs/exit-status.md has no row '| $v |'"
done
done_testing
