#!/bin/sh
# Every tool's output files (docs/output-files.md): a failed run leaves earlier
# results byte for byte and creates no file; JSON is valid UTF-8 whatever the
# system or the input holds; "--json -" puts only JSON on stdout; a FIFO is
# written in place; write errors name the file and the errno text. Runs on the
# host: gdr_topo and gdr_doctor need no RDMA, and a bandwidth client that
# cannot run (no RDMA device, or no server) fails all the same_inode. Every target
# is in a temporary directory, never the real /dev/null or stdout. TAP output.
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$srcdir}
topo=$builddir/bench/gdr_topo
doctor=$builddir/bench/gdr_doctor
if [ -z "$PYTHON" ]; then
	if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
. "$(dirname "$0")/../tap.sh"
unset NCCL_NET_GDR_LEVEL NCCL_NET_GDR_READ HWLOC_XMLFILE
LC_ALL=C
export LC_ALL

# show FILE...: put files into the TAP log as comments (for a failure).
show() { for f in "$@"; do [ -f "$f" ] && sed "s|^|# $(basename "$f"): |" "$f"; done; }
# valid_json FILE: the whole file is one JSON document, read as strict UTF-8.
valid_json() {
	"$PYTHON" -c 'import json,sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' "$1" 2>"$tmp/json.err" ||
		{ show "$tmp/json.err"; return 1; }
}
# same_inode A B INODE: byte-identical, and the same_inode inode (not replaced by an equal copy).
same_inode() { cmp -s "$1" "$2" && [ "$(stat -c %i "$1")" = "$3" ]; }
doctor_env() { env -i PATH=/usr/bin:/bin GDRPERF_LIBCUDA=/nonexistent/libcuda.so.1 "$@"; }

# Bandwidth tools: a client that fails before it measures (no RDMA device here,
# or no server within --timeout 1 where there is one).
header=$(strings "$builddir/bench/gdr_write_bw" | grep -m1 '^timestamp,host,')
for tool in gdr_write_bw gdr_read_bw; do
	bin=$builddir/bench/$tool
	d=$tmp/$tool
	mkdir -p "$d"
	"$bin" --timeout 1 -p 1 --json "$d/new.json" --csv "$d/new.csv" 127.0.0.1 >"$d/out" 2>&1
	rc=$?
	if [ $rc != 0 ] && [ ! -e "$d/new.json" ] && [ ! -e "$d/new.csv" ]; then
		ok "$tool: a failed run creates no --json and no --csv file (exit $rc)"
	else
		show "$d/out"
		ls -la "$d" | sed 's/^/# /'
		not_ok "$tool: a failed run creates no --json and no --csv file (exit $rc)"
	fi
	printf '[{"earlier": "report"}]\n' >"$d/old.json"
	printf '%s\n%s\n' "$header" "$(echo "$header" | sed 's/[^,]*/x/g')" >"$d/old.csv"
	cp "$d/old.json" "$d/old.json.orig"
	cp "$d/old.csv" "$d/old.csv.orig"
	ij=$(stat -c %i "$d/old.json")
	ic=$(stat -c %i "$d/old.csv")
	"$bin" --timeout 1 -p 1 --json "$d/old.json" --csv "$d/old.csv" 127.0.0.1 >"$d/out" 2>&1
	rc=$?
	if [ $rc != 0 ] && same_inode "$d/old.json" "$d/old.json.orig" "$ij" &&
		same_inode "$d/old.csv" "$d/old.csv.orig" "$ic" && [ "$(ls -A "$d" | wc -l)" = 5 ]; then
		ok "$tool: a failed run leaves an existing --json and --csv byte-identical"
	else
		show "$d/out" "$d/old.json" "$d/old.csv"
		not_ok "$tool: a failed run leaves an existing --json and --csv byte-identical"
	fi
	"$bin" --json "$d/no/such/dir/x.json" 127.0.0.1 >"$d/out" 2>&1
	rc=$?
	check "$tool: an unwritable --json names the file and the errno text" \
		grep -q "no/such/dir/x.json.*No such file or directory" "$d/out"
done

# --prom (docs/cluster-outputs.md) as --json: a failed run creates none and keeps an earlier one.
for tool in gdr_write_bw gdr_write_lat; do
	bin=$builddir/bench/$tool
	d=$tmp/prom-$tool
	mkdir -p "$d"
	printf 'gdrperf_bw_gbps 1\n' >"$d/old.prom"
	cp "$d/old.prom" "$d/old.prom.orig"
	ip=$(stat -c %i "$d/old.prom")
	"$bin" --timeout 1 -p 1 --prom "$d/old.prom" --json "$d/new.json" 127.0.0.1 >"$d/out" 2>&1
	rc=$?
	if [ $rc != 0 ] && same_inode "$d/old.prom" "$d/old.prom.orig" "$ip" &&
		[ "$(ls -A "$d" | wc -l)" = 3 ]; then
		ok "$tool: a failed run leaves an existing --prom byte-identical, creates nothing"
	else
		show "$d/out"
		ls -la "$d" | sed 's/^/# /'
		not_ok "$tool: a failed run leaves an existing --prom byte-identical, creates nothing"
	fi
	"$bin" --prom "$d/no/such/dir/x.prom" 127.0.0.1 >"$d/out" 2>&1
	rc=$?
	check "$tool: an unwritable --prom names the file and the errno text (exit $rc)" \
		grep -q "^.*--prom .*no/such/dir/x.prom.*No such file or directory" "$d/out"
done

# gdr_doctor on a root whose /proc files hold control bytes and invalid UTF-8.
root=$tmp/root
cp -r "$srcdir/tests/doctor/roots/both" "$root"
printf '6.8.0-45-generic\001\033[31m\377\300\200\355\240\200x' >"$root/proc/sys/kernel/osrelease"
printf 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15 \377\001\tRelease Build\n' \
	>"$root/proc/driver/nvidia/version"
doctor_env "$doctor" --root "$root" --json - >"$tmp/doc.json" 2>"$tmp/doc.err"
check "gdr_doctor --json -: stdout is one valid JSON document (control bytes, bad UTF-8)" \
	valid_json "$tmp/doc.json"
check "gdr_doctor --json -: the odd bytes are escaped, not dropped" \
	grep -q 'u0001\\u001b\[31m\\ufffd' "$tmp/doc.json"
doctor_env "$doctor" --root "$root" --json - --quiet >"$tmp/docq.json" 2>"$tmp/doc.err"
check "gdr_doctor --json - --quiet: stdout is still only JSON" valid_json "$tmp/docq.json"

# The NCCL log reader: the same_inode bytes in every line of a log.
sed "s/\$/ $(printf '\377\001\300')/" "$srcdir/tests/doctor/nccl-logs/case01.log" >"$tmp/bad.log"
doctor_env "$doctor" --nccl-log - --json - <"$tmp/bad.log" >"$tmp/log.json" 2>"$tmp/log.err"
check "gdr_doctor --nccl-log --json -: valid JSON from a log with control bytes and bad UTF-8" \
	valid_json "$tmp/log.json"
doctor_env "$doctor" --nccl-log - --json - --quiet <"$tmp/bad.log" >"$tmp/logq.json" 2>"$tmp/log.err"
check "gdr_doctor --nccl-log --json - --quiet: stdout is still only JSON" valid_json "$tmp/logq.json"

# A failed doctor run never truncates an existing report.
printf '{"earlier": "report"}\n' >"$tmp/rep.json"
cp "$tmp/rep.json" "$tmp/rep.orig"
ir=$(stat -c %i "$tmp/rep.json")
doctor_env "$doctor" --nccl-log "$tmp/no-such.log" --json "$tmp/rep.json" >"$tmp/out" 2>&1
rc=$?
if [ $rc = 2 ] && same_inode "$tmp/rep.json" "$tmp/rep.orig" "$ir"; then
	ok "gdr_doctor: a run that fails (missing log) leaves the report as it was"
else
	show "$tmp/out"
	not_ok "gdr_doctor: a run that fails (missing log) leaves the report as it was (exit $rc)"
fi
# A write that fails (file size limit, as on a full disk): the old report stays whole.
# (The messages go through a pipe: the limit must not cut them short.)
(
	trap '' XFSZ
	ulimit -f 1
	doctor_env "$doctor" --root "$srcdir/tests/doctor/roots/both" --json "$tmp/rep.json" 2>&1
	echo $? >"$tmp/rc"
) | cat >"$tmp/out"
rc=$(cat "$tmp/rc")
if [ $rc = 2 ] && same_inode "$tmp/rep.json" "$tmp/rep.orig" "$ir" &&
	grep -q "rep.json.*File too large" "$tmp/out" && [ -z "$(ls -A "$tmp" | grep '^\.rep')" ]; then
	ok "gdr_doctor: a failed write keeps the old report and names the file and the errno text"
else
	show "$tmp/out"
	not_ok "gdr_doctor: a failed write keeps the old report and names the file and the errno text (exit $rc)"
fi
doctor_env "$doctor" --root "$srcdir/tests/doctor/roots/both" --json "$tmp/rep.json" >/dev/null 2>&1
check "gdr_doctor: a run that works replaces the report" valid_json "$tmp/rep.json"

# A FIFO is written in place (its reader gets the report) and stays a FIFO.
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fifo.out" &
reader=$!
doctor_env "$doctor" --root "$srcdir/tests/doctor/roots/both" --json "$tmp/fifo" >/dev/null 2>"$tmp/fifo.err"
rc=$?
# Should the writer never have opened the FIFO, this releases the reader.
[ $rc = 0 ] || : >"$tmp/fifo"
wait $reader
if [ $rc = 0 ] && [ -p "$tmp/fifo" ] && valid_json "$tmp/fifo.out"; then
	ok "gdr_doctor --json FIFO: written in place, still a FIFO"
else
	show "$tmp/fifo.err"
	not_ok "gdr_doctor --json FIFO: written in place, still a FIFO (exit $rc)"
fi

# gdr_topo: GPU names with control bytes and bad UTF-8 (hwloc's own XML parser
# takes them; libxml2 refuses them as XML).
"$PYTHON" - "$srcdir/tests/topo/switches.xml" "$tmp/bad.xml" <<'EOF'
import sys
s = open(sys.argv[1], "rb").read()
s = s.replace(b'value="NVIDIA H100 80GB HBM3"', b'value="NVIDIA \xff\xc0\x80 H100 \x01\x1b"')
open(sys.argv[2], "wb").write(s)
EOF
if HWLOC_LIBXML_IMPORT=0 "$topo" --topology-xml "$tmp/bad.xml" >/dev/null 2>&1; then
	HWLOC_LIBXML_IMPORT=0 "$topo" --topology-xml "$tmp/bad.xml" --json - >"$tmp/topo.json" 2>/dev/null
	check "gdr_topo --json -: stdout is one valid JSON document (control bytes, bad UTF-8)" \
		valid_json "$tmp/topo.json"
else
	skip "gdr_topo --json -: stdout is one valid JSON document" "this hwloc refuses the XML"
fi
"$topo" --topology-xml "$srcdir/tests/topo/switches.xml" --json - >"$tmp/topo2.json" 2>/dev/null
check "gdr_topo --json -: only JSON on stdout" valid_json "$tmp/topo2.json"
"$topo" --topology-xml "$srcdir/tests/topo/switches.xml" --csv - >"$tmp/topo.csv" 2>/dev/null
check "gdr_topo --csv -: only CSV on stdout" \
	"$PYTHON" -c 'import csv,sys; r = list(csv.DictReader(open(sys.argv[1]))); assert len(r) == 12 and r[0]["gpu"] == "0", r' "$tmp/topo.csv"
printf '{"earlier": "topo"}\n' >"$tmp/topo-old.json"
cp "$tmp/topo-old.json" "$tmp/topo-old.orig"
it=$(stat -c %i "$tmp/topo-old.json")
"$topo" --topology-xml "$tmp/no-such.xml" --json "$tmp/topo-old.json" >"$tmp/out" 2>&1
check "gdr_topo: a run that fails (missing XML) leaves the --json report as it was" \
	same_inode "$tmp/topo-old.json" "$tmp/topo-old.orig" "$it"
"$topo" --topology-xml "$srcdir/tests/topo/switches.xml" --json "$tmp/no/dir/t.json" >"$tmp/out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "no/dir/t.json.*No such file or directory" "$tmp/out" && ! grep -q '^GPUs' "$tmp/out"; then
	ok "gdr_topo: an unwritable --json fails before the topology is read, naming file and errno"
else
	show "$tmp/out"
	not_ok "gdr_topo: an unwritable --json fails before the topology is read (exit $rc)"
fi

done_testing
