# Shared by the t_gdr_ab*.sh tests: running gdr-ab with its stdout/stderr/status
# kept, golden comparisons. Source it; it sources ../tap.sh (TAP, $tmp) and sets
# $ab, $fx, $exp and $PYTHON.
. "$(dirname "$0")/../tap.sh"
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
ab="$srcdir/scripts/gdr-ab"
fx="$srcdir/tests/scripts/fixtures"
exp="$srcdir/tests/scripts/expected"
# The script's interpreter is Debian's python3 (where python3-matplotlib lives).
if [ -z "$PYTHON" ]; then
	if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
# run NAME ARGS...: runs gdr-ab, keeps stdout/stderr/status in $tmp/NAME.*
run() {
	name=$1
	shift
	"$PYTHON" "$ab" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}
rc_is() { [ "$(cat "$tmp/$1.rc")" = "$2" ]; }
# No Python traceback, whatever the input.
no_traceback() { ! grep -q 'Traceback' "$tmp/$1.err"; }
has() { grep -q -- "$2" "$tmp/$1.$3"; } # NAME PATTERN out|err
# golden NAME EXPECTED [out|err]: the output equals the golden file, with the
# temp dir as TMP and the fixture dir as FX (GDRPERF_REGEN=1: see tap.sh).
golden() {
	sed -e "s|$tmp|TMP|g" -e "s|$fx|FX|g" "$tmp/$1.${3:-out}" >"$tmp/$1.norm"
	same "$2" "$tmp/$1.norm"
}
is_png() { # 8-byte PNG signature, an IHDR chunk, and more than a header's worth of data
	[ -s "$1" ] || return 1
	[ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = "89504e470d0a1a0a" ] || return 1
	[ "$(dd if="$1" bs=1 skip=12 count=4 2>/dev/null)" = "IHDR" ] || return 1
	[ "$(wc -c <"$1")" -gt 1000 ]
}
have_mpl() { "$PYTHON" -c 'import matplotlib' 2>/dev/null; }
