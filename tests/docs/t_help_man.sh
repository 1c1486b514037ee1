#!/bin/sh
# Golden check of every C tool's --help against its man page, the other way
# round from t_options.sh: every option a page gives an entry (.TP) is in the
# tool's --help (so gdr_write_lat.1 lists no option the latency tools refuse),
# the page's title is the tool's, and its SYNOPSIS names the tool. TAP output.
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$srcdir}
. "$(dirname "$0")/../tap.sh"
LC_ALL=C
export LC_ALL

for prog in gdr_write_bw gdr_read_bw gdr_write_lat gdr_read_lat gdr_topo gdr_doctor; do
	page=$builddir/man/$prog.1
	[ -f "$page" ] || page=$srcdir/man/$prog.1
	if [ ! -f "$page" ] || [ ! -x "$builddir/bench/$prog" ]; then
		not_ok "$prog: man/$prog.1 and bench/$prog built"
		continue
	fi
	so=$(sed -n 's/^\.so  *man1\///p' "$page")
	[ -n "$so" ] && page=$srcdir/man/$so
	"$builddir/bench/$prog" --help >"$tmp/$prog.help" 2>&1
	sed -n 's/^  *\(-[A-Za-z0-9], \)\{0,1\}--\([A-Za-z0-9][A-Za-z0-9_-]*\).*/--\2/p' \
		"$tmp/$prog.help" | sort -u >"$tmp/$prog.opts"
	# The first long option of each entry's tag line (the line after .TP).
	awk '/^\.TP/ { tag = 1; next }
	     tag { tag = 0; if (match($0, /\\-\\-[A-Za-z0-9_\\-]*[A-Za-z0-9_]/)) {
			o = substr($0, RSTART, RLENGTH); gsub(/\\-/, "-", o); print o } }' \
		"$page" | sort -u >"$tmp/$prog.man"
	extra=$(comm -23 "$tmp/$prog.man" "$tmp/$prog.opts" | tr '\n' ' ')
	if [ -z "$extra" ] && [ -s "$tmp/$prog.man" ]; then
		ok "$prog: every option of $(basename "$page") is in --help ($(wc -l <"$tmp/$prog.man"))"
	else
		not_ok "$prog: $(basename "$page") has entries --help does not list: $extra"
	fi
	want=$(echo "$prog" | tr 'a-z' 'A-Z')
	if [ "$(basename "$page" .1)" = "$prog" ]; then
		grep -q "^\.TH $want " "$page" && ok "$prog: the page's title is $want" ||
			not_ok "$prog: the page's title is $want ($(grep '^\.TH' "$page"))"
	fi
	grep -q "^\.SY $prog\$" "$page" && ok "$prog: SYNOPSIS names $prog" ||
		not_ok "$prog: SYNOPSIS names $prog ($(grep '^\.SY' "$page" | tr '\n' ' '))"
done
done_testing
