#!/bin/sh
# gdr-ab on bad input and hostile outputs (issue 17): NaN/inf/negative/
# overflowing numbers skipped with FILE:LINE, "$" and control bytes drawn and
# printed literally, --out that is a file, --csv-out onto an input, atomic
# replace of regular files only, a full disk or a size limit leaving the old
# file intact and no temp file, FIFOs and devices written in place without a
# hang. Never a traceback. TAP output.
. "$(dirname "$0")/ab_lib.sh"
plan 54

# --- numbers ---------------------------------------------------------------
run bad --no-plot "$fx/ab-bad-numbers.csv"
check "bad numbers: exit 0" rc_is bad 0
check "bad numbers: no traceback" no_traceback bad
check "bad numbers: table from the good rows only, ignored numbers as the reason" \
	golden bad "$exp/ab-bad-numbers.txt"
check "bad numbers: one FILE:LINE warning per bad value or row" \
	golden bad "$exp/ab-bad-numbers.err" err
check "bad numbers: no nan, inf or negative ratio printed" \
	sh -c "! grep -Eiq '(nan|inf)x|-[0-9.]+x' '$tmp/bad.out'"
# latency columns get the same checks
sed -e '3s/,2\.300,2\.530,/,nan,2.530,/' -e '4s/,9\.800,10\.780,/,-1,10.780,/' \
	"$fx/ab-latency.csv" >"$tmp/lat-bad.csv"
run latbad --no-plot "$tmp/lat-bad.csv"
check "latency: NaN p50 ignored with FILE:LINE" has latbad "lat-bad.csv:3: lat_p50_us 'nan' is not a finite number: value ignored" err
check "latency: negative p50 ignored with FILE:LINE" has latbad "lat-bad.csv:4: lat_p50_us '-1' is negative: value ignored" err
check "latency: the cell without its p50 says why" has latbad "dmabuf no latency at 2 B: line 3: lat_p50_us 'nan'" out
# --expect on a value that was ignored fails with the reason, never passes
run badgate --no-plot --expect 'peermem@1M>=1' "$fx/ab-bad-numbers.csv"
check "an ignored number fails a rule (exit 1) with its line" \
	sh -c "[ \$(cat '$tmp/badgate.rc') = 1 ] && grep -q 'FAIL write: peermem@1M>=1: at 1 MiB: peermem no bandwidth: line 14' '$tmp/badgate.out'"
# A ceiling_gbps of 0 (the tools write an unknown one as empty) is no ceiling:
# it used to end in a ZeroDivisionError traceback in the above-ceiling check.
printf 'verb,path,size_bytes,status,bw_avg_gbps,ceiling_gbps\nwrite,host,1048576,ok,10,0\nwrite,dmabuf,1048576,ok,9,0\n' >"$tmp/ceil0.csv"
run ceil0 --no-plot --expect 'host>=0.9*ceiling' "$tmp/ceil0.csv"
check "ceiling_gbps 0: no traceback, ignored with FILE:LINE, the ceiling rule fails (exit 1)" \
	sh -c "! grep -q Traceback '$tmp/ceil0.err' && [ \$(cat '$tmp/ceil0.rc') = 1 ] && grep -q \"ceil0.csv:2: ceiling_gbps '0' is zero, not a ceiling: value ignored\" '$tmp/ceil0.err' && grep -q 'FAIL write: host>=0.9\\*ceiling: at 1 MiB: the host rows carry no ceiling_gbps' '$tmp/ceil0.out'"
# A positive number finer than any column is written (1e-300): the ratio to
# it used to overflow ('infx', 'inf' in --csv-out and --prom) and the PNG's
# axis limits to end in a ValueError traceback.
printf 'verb,path,size_bytes,status,bw_avg_gbps\nwrite,host,4096,ok,1e-300\nwrite,dmabuf,4096,ok,1e9\n' >"$tmp/tiny.csv"
run tiny --no-plot --csv-out - --prom - "$tmp/tiny.csv"
check "1e-300: ignored with FILE:LINE, no inf ratio anywhere" \
	sh -c "[ \$(cat '$tmp/tiny.rc') = 0 ] && grep -q \"tiny.csv:2: bw_avg_gbps '1e-300' is out of range (below 1e-06, and not 0): value ignored\" '$tmp/tiny.err' && ! grep -qi 'inf' '$tmp/tiny.out'"
if have_mpl; then
	run tinyplot --out "$tmp/tinypng" "$tmp/tiny.csv"
	check "1e-300: the PNG is drawn (exit 0, no traceback)" \
		sh -c "[ \$(cat '$tmp/tinyplot.rc') = 0 ] && ! grep -q Traceback '$tmp/tinyplot.err' && [ -s '$tmp/tinypng/tiny.png' ]"
else
	skip "1e-300 in a PNG" "no matplotlib for $PYTHON"
fi

# --- text drawn and printed literally --------------------------------------
if have_mpl; then
	run dollar --out "$tmp/d" --title 'gain $x^$ and $\frac{' "$fx/ab-dollar.csv"
	check "\$ in CSV fields and --title: exit 0" rc_is dollar 0
	check "\$ in CSV fields and --title: no traceback" no_traceback dollar
	check "\$ in CSV fields and --title: a valid PNG" is_png "$tmp/d/ab-dollar.png"
	"$PYTHON" - "$srcdir/scripts" "$fx/ab-dollar.csv" >"$tmp/texts" 2>&1 <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
sys.dont_write_bytecode = True
from gdr_ab import plots, rows, table
rs = rows.read_rows([sys.argv[2]])
fig = plots.figure(table.Table(rs, table.BW), rs, "gain $x^$")
fig.canvas.draw()
for t in fig.findobj(lambda o: hasattr(o, "get_text") and hasattr(o, "_get_layout")):
    print(t.get_text() if not t._preprocess_math(t.get_text())[1] else "MATH " + t.get_text())
PY
	check "every text is drawn as plain text (no mathtext)" sh -c "! grep -q '^MATH' '$tmp/texts'"
	check "the title is drawn as given" grep -q '^gain \\\$x^\\\$$' "$tmp/texts"
else
	for t in 1 2 3 4 5; do skip "\$ in text ($t)" "no matplotlib for $PYTHON"; done
fi
run dollarnp --no-plot "$fx/ab-dollar.csv"
check "control bytes from a CSV are printed escaped, never raw" \
	sh -c "grep -q 'costs \$5 \\\\x1b\\[31mred' '$tmp/dollarnp.out' && ! grep -q \"\$(printf '\\033')\" '$tmp/dollarnp.out'"

# --- --out and --csv-out checked before anything is read or written --------
echo x >"$tmp/afile"
run outfile --out "$tmp/afile" "$fx/ab-basic.csv"
check "--out FILE: exit 2" rc_is outfile 2
check "--out FILE: says not a directory" has outfile "--out $tmp/afile: not a directory" err
check "--out FILE: the file is untouched" sh -c "[ \"\$(cat '$tmp/afile')\" = x ]"
cp "$fx/ab-basic.csv" "$tmp/in.csv"
run overin --csv-out "$tmp/in.csv" --no-plot "$tmp/in.csv"
check "--csv-out onto its input: exit 2" rc_is overin 2
check "--csv-out onto its input: refused, naming it" has overin "is the input $tmp/in.csv: refusing to write over an input" err
check "--csv-out onto its input: the input is unchanged" cmp -s "$fx/ab-basic.csv" "$tmp/in.csv"
ln -s in.csv "$tmp/in-link.csv"
run overlink --csv-out "$tmp/in-link.csv" --no-plot "$tmp/in.csv"
check "--csv-out onto its input through a symlink: refused" rc_is overlink 2
# The --baseline is a saved run: --csv-out or --prom onto it used to replace
# it with the verdict (exit 0). And --csv-out and --prom naming one file used
# to leave only the metrics there.
cp "$fx/ab-basic.csv" "$tmp/base.csv"
run overbase --no-plot --baseline "$tmp/base.csv" --csv-out "$tmp/base.csv" "$fx/ab-basic.csv"
run overbase2 --no-plot --baseline "$tmp/base.csv" --prom "$tmp/./base.csv" "$fx/ab-basic.csv"
check "--csv-out or --prom onto the --baseline: exit 2, refused, the baseline unchanged" \
	sh -c "[ \$(cat '$tmp/overbase.rc') = 2 ] && [ \$(cat '$tmp/overbase2.rc') = 2 ] && grep -q 'refusing to write over an input' '$tmp/overbase.err' && cmp -s '$fx/ab-basic.csv' '$tmp/base.csv'"
echo old >"$tmp/both.txt"
ln -s both.txt "$tmp/both-link.txt"
run both --no-plot --csv-out "$tmp/both.txt" --prom "$tmp/both-link.txt" "$fx/ab-basic.csv"
run bothnew --no-plot --csv-out "$tmp/new.txt" --prom "$tmp/./new.txt" "$fx/ab-basic.csv"
run bothnull --no-plot --csv-out /dev/null --prom /dev/null "$fx/ab-basic.csv"
check "--csv-out and --prom naming one file (a link, a new name): exit 2, the file untouched; /dev/null shared" \
	sh -c "[ \$(cat '$tmp/both.rc') = 2 ] && grep -q 'is also --csv-out' '$tmp/both.err' && [ \"\$(cat '$tmp/both.txt')\" = old ] && [ \$(cat '$tmp/bothnew.rc') = 2 ] && [ ! -e '$tmp/new.txt' ] && [ \$(cat '$tmp/bothnull.rc') = 0 ]"
# A PNG whose name is the --csv-out file: the plot used to replace the verdict
# just written (exit 0).
if have_mpl; then
	mkdir "$tmp/pngcsv"
	run pngcsv --out "$tmp/pngcsv" --csv-out "$tmp/pngcsv/ab-basic.png" "$fx/ab-basic.csv"
	check "a PNG named as the --csv-out file: not written (exit 1, naming both), the verdict kept" \
		sh -c "[ \$(cat '$tmp/pngcsv.rc') = 1 ] && grep -q 'ab-basic.png: is also --csv-out' '$tmp/pngcsv.err' && cmp -s '$exp/ab-basic-verdict.csv' '$tmp/pngcsv/ab-basic.png'"
else
	skip "a PNG named as the --csv-out file" "no matplotlib for $PYTHON"
fi
mkdir "$tmp/adir"
run csvdir --csv-out "$tmp/adir" --no-plot "$fx/ab-basic.csv"
check "--csv-out DIR: exit 2, is a directory" sh -c "[ \$(cat '$tmp/csvdir.rc') = 2 ] && grep -q 'is a directory' '$tmp/csvdir.err'"

run emptycsv --no-plot --csv-out '' "$fx/ab-basic.csv"
check "--csv-out '': exit 2, needs a file name" sh -c "[ \$(cat '$tmp/emptycsv.rc') = 2 ] && grep -q 'needs a file name' '$tmp/emptycsv.err'"
run emptyout --out '' "$fx/ab-basic.csv"
check "--out '': exit 2, needs a directory name" sh -c "[ \$(cat '$tmp/emptyout.rc') = 2 ] && grep -q 'needs a directory name' '$tmp/emptyout.err'"

# --- atomic replace of a regular file; links followed, never replaced ------
echo old >"$tmp/v.csv"
chmod 640 "$tmp/v.csv"
run replace --no-plot --csv-out "$tmp/v.csv" "$fx/ab-basic.csv"
check "regular --csv-out replaced: whole verdict, mode kept, no temp file left" \
	sh -c "[ \$(cat '$tmp/replace.rc') = 0 ] && cmp -s '$exp/ab-basic-verdict.csv' '$tmp/v.csv' && [ \$(stat -c %a '$tmp/v.csv') = 640 ] && [ -z \"\$(ls -A '$tmp' | grep '\\.tmp\$')\" ]"
echo old >"$tmp/t.csv"
ln -s t.csv "$tmp/t-link.csv"
run vialink --no-plot --csv-out "$tmp/t-link.csv" "$fx/ab-basic.csv"
check "a symlink stays a link, its target gets the verdict" \
	sh -c "[ -L '$tmp/t-link.csv' ] && cmp -s '$exp/ab-basic-verdict.csv' '$tmp/t.csv'"

# --- a failed write leaves the old file and no temp file --------------------
# RLIMIT_FSIZE: python ignores SIGXFSZ, so a write past the limit fails with
# EFBIG like a full disk would, without root.
echo old >"$tmp/lim.csv"
(
	ulimit -f 1
	"$PYTHON" "$ab" --no-plot --csv-out "$tmp/lim.csv" "$fx/ab-ceiling.csv" >/dev/null 2>"$tmp/lim.err"
	echo $? >"$tmp/lim.rc"
)
check "size limit hit writing the CSV: exit 1" rc_is lim 1
check "size limit: the error names the file and the errno text" has lim "$tmp/lim.csv: cannot write: File too large" err
check "size limit: the old CSV is intact, no temp file left" \
	sh -c "[ \"\$(cat '$tmp/lim.csv')\" = old ] && [ -z \"\$(ls -A '$tmp' | grep '\\.tmp\$')\" ]"
if have_mpl; then
	mkdir "$tmp/png"
	echo oldpng >"$tmp/png/ab-basic.png"
	(
		ulimit -f 16
		"$PYTHON" "$ab" --out "$tmp/png" "$fx/ab-basic.csv" >/dev/null 2>"$tmp/plim.err"
		echo $? >"$tmp/plim.rc"
	)
	check "size limit hit writing the PNG: exit 1, the old PNG intact, nothing else there" \
		sh -c "[ \$(cat '$tmp/plim.rc') = 1 ] && [ \"\$(cat '$tmp/png/ab-basic.png')\" = oldpng ] && [ \"\$(ls -A '$tmp/png')\" = ab-basic.png ]"
	check "size limit on the PNG: error names it" has plim "$tmp/png/ab-basic.png: cannot write: File too large" err
	# A real full disk: a 64 KiB tmpfs (root only), with room for the old
	# PNG but not for the new one.
	mnt="$tmp/full"
	mkdir "$mnt"
	if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64k tmpfs "$mnt" 2>/dev/null; then
		echo oldpng >"$mnt/ab-basic.png"
		run fulldisk --out "$mnt" "$fx/ab-basic.csv"
		check "full disk: exit 1, No space left on device, naming the PNG" \
			sh -c "[ \$(cat '$tmp/fulldisk.rc') = 1 ] && grep -q '$mnt/ab-basic.png: cannot write: No space left on device' '$tmp/fulldisk.err'"
		check "full disk: old PNG intact, no 0-byte or half file, no temp file" \
			sh -c "[ \"\$(cat '$mnt/ab-basic.png')\" = oldpng ] && [ \"\$(ls -A '$mnt')\" = ab-basic.png ]"
		umount "$mnt"
	else
		skip "full disk on a tmpfs" "needs root and mount(2)"
		skip "full disk: old PNG intact" "needs root and mount(2)"
	fi
else
	for t in 1 2 3 4; do skip "PNG write failure ($t)" "no matplotlib for $PYTHON"; done
fi

# --- non-regular targets: written in place, never replaced, never a hang ----
run devfull --no-plot --csv-out /dev/full "$fx/ab-basic.csv"
check "/dev/full: exit 1 with ENOSPC naming it" \
	sh -c "[ \$(cat '$tmp/devfull.rc') = 1 ] && grep -q '/dev/full: cannot write: No space left on device' '$tmp/devfull.err'"
check "/dev/full is still a character device" test -c /dev/full
if [ "$(id -u)" = 0 ] && mknod "$tmp/null" c 1 3 2>/dev/null; then
	run null --no-plot --csv-out "$tmp/null" "$fx/ab-basic.csv"
	check "a character device (a private /dev/null node) is written, not replaced" \
		sh -c "[ \$(cat '$tmp/null.rc') = 0 ] && [ -c '$tmp/null' ]"
else
	skip "character device written in place" "needs root for mknod"
fi
"$PYTHON" "$ab" --no-plot --csv-out /dev/stdout "$fx/ab-basic.csv" >"$tmp/so.out" 2>"$tmp/so.err"
check "--csv-out /dev/stdout: the verdict follows the table on stdout (nothing swallowed)" \
	sh -c "grep -q '^write at >= 1 MiB: dmabuf ≈ host' '$tmp/so.out' && grep -qx 'write,4096,host,client,40.100,1.000,0,1,ok,,bw,,,3,39.298,40.501,,,,,,,,' '$tmp/so.out' && [ -f '$tmp/so.out' ]"
run dash --no-plot --csv-out - "$fx/ab-basic.csv"
check "--csv-out -: the verdict on stdout" grep -q '^verb,size_bytes,path,role,bw_gbps' "$tmp/dash.out"
mkfifo "$tmp/fifo"
timeout 60 "$PYTHON" "$ab" --no-plot --csv-out "$tmp/fifo" "$fx/ab-basic.csv" >/dev/null 2>"$tmp/nofifo.err"
echo $? >"$tmp/nofifo.rc"
check "FIFO with no reader: exit 1 at once (no hang), says so" \
	sh -c "[ \$(cat '$tmp/nofifo.rc') = 1 ] && grep -q 'fifo: cannot write: No such device or address (a FIFO with no reader' '$tmp/nofifo.err'"
# The reader opens the FIFO (without blocking) before gdr-ab starts, says so
# in a file, and reads until the writer has come and gone; every wait has a
# deadline, so a broken writer fails the check instead of hanging the test.
"$PYTHON" - "$tmp/fifo" "$tmp/reader.up" "$tmp/fromfifo" <<'PY' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
open(sys.argv[2], "w").close()
got, deadline = b"", time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        chunk = os.read(fd, 65536)
    except BlockingIOError:
        chunk = None
    if chunk:
        got += chunk
    elif chunk == b"" and got:
        break  # the writer came and closed: EOF
    else:
        time.sleep(0.02)
open(sys.argv[3], "wb").write(got)
PY
reader=$!
i=0
while [ ! -e "$tmp/reader.up" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
timeout 60 "$PYTHON" "$ab" --no-plot --csv-out "$tmp/fifo" "$fx/ab-basic.csv" >/dev/null 2>"$tmp/fifo.err"
echo $? >"$tmp/fifo.rc"
wait "$reader"
check "FIFO with a reader: the verdict goes through it, the FIFO stays a FIFO" \
	sh -c "[ \$(cat '$tmp/fifo.rc') = 0 ] && cmp -s '$exp/ab-basic-verdict.csv' '$tmp/fromfifo' && [ -p '$tmp/fifo' ]"

# --- bad inputs ------------------------------------------------------------
timeout 60 "$PYTHON" "$ab" --no-plot "$tmp/fifo" >/dev/null 2>"$tmp/infifo.err"
echo $? >"$tmp/infifo.rc"
check "input FIFO with no writer: exit 2 (no hang), empty file" \
	sh -c "[ \$(cat '$tmp/infifo.rc') = 2 ] && grep -q 'empty file' '$tmp/infifo.err'"
run indir --no-plot "$tmp/adir"
check "input directory: exit 2, Is a directory" \
	sh -c "[ \$(cat '$tmp/indir.rc') = 2 ] && grep -q 'adir: cannot read: Is a directory' '$tmp/indir.err'"
# A device is refused before it is read: /dev/zero would never end.
timeout 60 "$PYTHON" "$ab" --no-plot /dev/zero >/dev/null 2>"$tmp/indev.err"
echo $? >"$tmp/indev.rc"
check "input /dev/zero: exit 2 at once (no hang), a character device" \
	sh -c "[ \$(cat '$tmp/indev.rc') = 2 ] && grep -q '/dev/zero: cannot read: a character device' '$tmp/indev.err'"
printf 'verb,path,size_bytes,bw_avg_gbps,status\nwrite,host,4096,1,ok\0\n' >"$tmp/nul.csv"
run nul --no-plot "$tmp/nul.csv"
# (Python < 3.11's csv refuses a NUL, newer ones read it: either way no crash
# and no raw NUL in the report.)
check "a NUL byte: no traceback, never printed raw" \
	sh -c "! grep -q Traceback '$tmp/nul.err' && [ \$(tr -cd '\\000' <'$tmp/nul.out' | wc -c) = 0 ]"
# A UTF-8 byte order mark (a spreadsheet's "CSV UTF-8" export) before a header
# that starts with verb: it used to make the first column '\ufeffverb' and the
# file "not a gdrperf CSV" (exit 2).
printf '\357\273\277verb,path,size_bytes,status,bw_avg_gbps\nwrite,host,4096,ok,1\n' >"$tmp/bom.csv"
run bom --no-plot "$tmp/bom.csv"
check "a UTF-8 BOM before the header: read (exit 0), the row counted" \
	sh -c "[ \$(cat '$tmp/bom.rc') = 0 ] && grep -q '^write at 4 KiB, the only size: only host; host 1.000 Gb/s' '$tmp/bom.out'"
# A stdout that cannot encode what gdr-ab prints: '≈' under ASCII (or Latin-1),
# a file name that is not UTF-8 under a strict UTF-8 locale. Both used to end
# in a UnicodeEncodeError traceback; now written as \u2248, \udcff.
PYTHONIOENCODING=ascii "$PYTHON" "$ab" --no-plot "$fx/ab-basic.csv" >"$tmp/ascii.out" 2>"$tmp/ascii.err"
echo $? >"$tmp/ascii.rc"
cp "$fx/ab-basic.csv" "$tmp/$(printf 'name\377.csv')"
PYTHONIOENCODING=utf-8:strict "$PYTHON" "$ab" --no-plot --expect 'dmabuf>=0.5*host' --csv-out "$tmp/$(printf 'v\377.csv')" "$tmp/$(printf 'name\377.csv')" "$tmp/$(printf 'name\377.csv')" >"$tmp/u8.out" 2>"$tmp/u8.err"
echo $? >"$tmp/u8.rc"
check "an ASCII stdout or a non-UTF-8 file name: no traceback, the text written escaped" \
	sh -c "[ \$(cat '$tmp/ascii.rc') = 0 ] && ! grep -q Traceback '$tmp/ascii.err' && grep -q '\\\\u2248 host' '$tmp/ascii.out' && [ \$(cat '$tmp/u8.rc') = 0 ] && ! grep -q Traceback '$tmp/u8.err' && grep -q 'name\\\\udcff.csv given twice' '$tmp/u8.out' && grep -q '^expect: all 2 checks passed' '$tmp/u8.out'"
for f in bad latbad dollarnp outfile overin csvdir replace devfull nofifo indir indev; do
	[ -f "$tmp/$f.err" ] && ! grep -q Traceback "$tmp/$f.err" || { not_ok "no traceback anywhere ($f)"; continue 2; }
done
ok "no traceback in any of the runs above"

done_testing
