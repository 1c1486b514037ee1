#!/bin/sh
# Every long option a program's --help lists must be in its man page and in
# its docs/ usage page, every installed program must have a man page, and
# every option README.md mentions must exist in --help. TAP output.
#
# The lists come from the build (mk/man.am): GDR_MANS, the man pages that
# `make install` installs, and GDR_PROGRAMS, the installed programs. A man
# page names its docs page in a comment line `.\" gdrperf-docs: docs/X.md`;
# a page made by the build (gdr_read_bw.1, from gdr_write_bw.1) is read from
# the build tree.
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$srcdir}
. "$(dirname "$0")/../tap.sh"
LC_ALL=C
export LC_ALL
if [ -z "${PYTHON:-}" ]; then
	if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi

[ -n "${GDR_MANS:-}" ] || GDR_MANS=$(cd "$srcdir" && ls man/*.1)
[ -n "$GDR_MANS" ] || { not_ok "no man pages listed (GDR_MANS)"; done_testing; }
[ -n "${GDR_PROGRAMS:-}" ] || GDR_PROGRAMS=

# help PROG OUT: PROG's --help into OUT; fails when it cannot run.
help() {
	if [ -x "$builddir/bench/$1" ]; then
		"$builddir/bench/$1" --help >"$2" 2>&1
	elif [ "$1" = configure ]; then
		"$srcdir/configure" --help >"$2" 2>&1
	elif [ -f "$srcdir/scripts/$1" ] && head -n 1 "$srcdir/scripts/$1" | grep -q python; then
		"$PYTHON" "$srcdir/scripts/$1" --help >"$2" 2>&1
	elif [ -x "$srcdir/scripts/$1" ]; then
		"$srcdir/scripts/$1" --help >"$2" 2>&1
	else
		echo "$1: not built" >"$2"
		return 1
	fi
}
# defined HELP: the long options HELP defines (option lines, not prose), one a line.
defined() {
	sed -n 's/^  *\(-[A-Za-z0-9], \)\{0,1\}--\([A-Za-z0-9][A-Za-z0-9_-]*\).*/--\2/p' "$1" | sort -u
}
# mentioned FILE: every --option FILE mentions, one a line.
mentioned() {
	grep -o -- '--[A-Za-z0-9][A-Za-z0-9_-]*' "$1" | sort -u
}
# deroff PAGE OUT: the man page as text (escapes removed, .so followed once).
deroff() {
	so=$(sed -n 's/^\.so  *man1\///p' "$1")
	if [ -n "$so" ]; then set -- "$srcdir/man/$so" "$2"; fi
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\&//g' "$1" >"$2"
}
# missing LIST TEXT: the options of LIST not found in TEXT as whole options.
missing() {
	while read -r o; do
		grep -q -e "$o\$" -e "${o}[^A-Za-z0-9_-]" "$2" || printf ' %s' "$o"
	done <"$1"
}

# Every installed program has a man page that make install installs.
for p in $GDR_PROGRAMS; do
	p=$(basename "$p")
	case " $GDR_MANS " in
	*" man/$p.1 "*) ok "$p: man/$p.1 is installed" ;;
	*) not_ok "$p: no man page (write man/$p.1 and add it to GDR_MANS in mk/man.am)" ;;
	esac
done

for m in $GDR_MANS; do
	prog=$(basename "$m" .1)
	page=$srcdir/$m
	[ -f "$builddir/$m" ] && page=$builddir/$m
	if [ ! -f "$page" ]; then
		not_ok "$prog: $m missing"
		continue
	fi
	if ! help "$prog" "$tmp/$prog.help" || [ -z "$(defined "$tmp/$prog.help")" ]; then
		sed 's/^/# /' "$tmp/$prog.help"
		not_ok "$prog --help runs and lists its options"
		continue
	fi
	defined "$tmp/$prog.help" >"$tmp/$prog.opts"
	deroff "$page" "$tmp/$prog.man"
	miss=$(missing "$tmp/$prog.opts" "$tmp/$prog.man")
	if [ -z "$miss" ]; then
		ok "$m has every option of $prog --help ($(wc -l <"$tmp/$prog.opts"))"
	else
		not_ok "$m misses options of $prog --help:$miss"
	fi
	docs=$(sed -n 's/^\.\\" gdrperf-docs: *//p' "$tmp/$prog.man" | head -n 1)
	if [ -z "$docs" ]; then
		not_ok "$m names no docs page (.\\\" gdrperf-docs: docs/X.md)"
	elif [ ! -f "$srcdir/$docs" ]; then
		# A page another branch brings; the check runs once it is in the tree.
		skip "$docs has every option of $prog --help" "$docs is not in this tree yet"
	else
		miss=$(missing "$tmp/$prog.opts" "$srcdir/$docs")
		if [ -z "$miss" ]; then
			ok "$docs has every option of $prog --help"
		else
			not_ok "$docs misses options of $prog --help:$miss"
		fi
	fi
done

# README: an option on a line that names a program must be in that program's
# --help; any other option must be in some program's --help.
readme=$srcdir/README.md
readme_progs="gdr_write_bw gdr_read_bw gdr_topo gdr_doctor gdr-ab ab-softroce test-all softroce-vm
install-deps configure"
: >"$tmp/all.help"
for prog in $readme_progs; do
	help "$prog" "$tmp/r-$prog.help" && cat "$tmp/r-$prog.help" >>"$tmp/all.help"
done
mentioned "$tmp/all.help" >"$tmp/all.opts"
bad=
lineno=0
while IFS= read -r line; do
	lineno=$((lineno + 1))
	printf '%s\n' "$line" >"$tmp/line"
	mentioned "$tmp/line" >"$tmp/line.opts"
	[ -s "$tmp/line.opts" ] || continue
	: >"$tmp/line.help"
	for prog in $readme_progs; do
		if grep -q -e "$prog\$" -e "${prog}[^A-Za-z0-9_-]" "$tmp/line"; then
			cat "$tmp/r-$prog.help" >>"$tmp/line.help"
		fi
	done
	if [ -s "$tmp/line.help" ]; then
		mentioned "$tmp/line.help" >"$tmp/line.known"
	else
		cp "$tmp/all.opts" "$tmp/line.known"
	fi
	while read -r o; do
		grep -qx -- "$o" "$tmp/line.known" || bad="$bad README.md:$lineno:$o"
	done <"$tmp/line.opts"
done <"$readme"
if [ -z "$bad" ]; then
	ok "every option README.md mentions exists in --help"
else
	not_ok "README.md mentions options that --help does not list:$bad"
fi

done_testing
