#!/bin/sh
# gdr_doctor on bad inputs: wrong --root, unreadable or invalid --topology-xml,
# FIFOs and directories where a file is read, options without values, empty
# paths, long values, control bytes in /proc. Each case: a clear error (exit
# 2 naming the object and the cause) or a report, never a hang (every run is
# under timeout) and never a wrong verdict.
. "$top_srcdir/tests/doctor/lib.sh"
ROOTS="$top_srcdir/tests/doctor/roots"
XML="$top_srcdir/tests/topo"
LIMIT=60 # seconds; a blocked read would hang for ever, so anything finite shows it
TIMEOUT=$(command -v timeout)

# fails NAME WANT-SUBSTRING ARGS...: exit 2 and WANT on stderr, in time.
fails() {
	name=$1 want=$2
	shift 2
	doctor_env "$TIMEOUT" $LIMIT "$DOCTOR" "$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	if [ $rc = 2 ] && grep -F -- "$want" "$WORK/err" >/dev/null; then
		ok "$name"
	else
		sed 's/^/# /' "$WORK/err"
		not_ok "$name (exit $rc, wanted 2 and: $want)"
	fi
}

# --root that is not a directory: a usage error naming DIR, not "no NVIDIA driver loaded".
fails "--root missing" "--root $WORK/nope: No such file or directory" --root "$WORK/nope"
: >"$WORK/plain"
fails "--root a file" "--root $WORK/plain: not a directory" --root "$WORK/plain"
mkfifo "$WORK/fifo"
fails "--root a FIFO" "--root $WORK/fifo: not a directory" --root "$WORK/fifo"
fails "--root /dev/null" "--root /dev/null: not a directory" --root /dev/null
fails "--root under a file" "Not a directory" --root "$WORK/plain/sub"
fails "--root with --expect" "No such file or directory" --root "$WORK/nope" --expect any

# --topology-xml: unreadable, not a regular file, or not an hwloc topology.
both="$ROOTS/both"
fails "--topology-xml missing" "--topology-xml $WORK/no.xml: No such file or directory" \
	--root "$both" --topology-xml "$WORK/no.xml"
fails "--topology-xml a FIFO" "is a FIFO, not a regular file" --root "$both" \
	--topology-xml "$WORK/fifo"
fails "--topology-xml a directory" "is a directory, not a regular file" --root "$both" \
	--topology-xml "$WORK"
fails "--topology-xml a device" "is a character device, not a regular file" --root "$both" \
	--topology-xml /dev/zero
fails "--topology-xml empty file" "empty file, not an XML topology" --root "$both" \
	--topology-xml "$WORK/plain"
fails "--topology-xml truncated" "hwloc could not load this XML topology" --root "$both" \
	--topology-xml "$XML/truncated.xml"
sed 's/pci_busid="0000:07:00.0"/pci_busid="0000:03:00.0"/' "$XML/switches.xml" >"$WORK/dup.xml"
fails "--topology-xml with two GPUs at one address" \
	"$WORK/dup.xml: two PCI devices at 0000:03:00.0" --root "$both" --topology-xml "$WORK/dup.xml"
printf 'not xml at all\n' >"$WORK/junk.xml"
fails "--topology-xml junk" "$WORK/junk.xml: not an hwloc XML export" --root "$both" \
	--topology-xml "$WORK/junk.xml"
fails "--topology-xml with --json" "is a FIFO" --root "$both" --topology-xml "$WORK/fifo" \
	--json "$WORK/never.json"
if [ ! -e "$WORK/never.json" ]; then ok "no JSON report after a bad --topology-xml"; else
	not_ok "no JSON report after a bad --topology-xml"; fi

# Every value option given last without its value: "needs a value", short and long.
# -l and -t are the bench tools' letters: gdr_doctor has only the long names (t_cli.sh).
for o in -r --root -e --expect -j --json --nccl-log --topology-xml; do
	fails "$o without a value" "option '$o' needs a value" "$o"
done
# Empty paths are refused before anything is read or written.
for o in --root --json --nccl-log --topology-xml; do
	fails "$o ''" "$o: empty file name" "$o" ""
done

# A FIFO, a directory or a device where a file below --root is read: read as
# unusable, in time, and said so.
for f in proc/driver/nvidia/version proc/sys/kernel/osrelease proc/self/limits \
	sys/class/infiniband/mlx5_0/ports/1/state; do
	for kind in fifo dir dev; do
		rm -rf "$WORK/r"
		cp -R "$ROOTS/dmabuf-node" "$WORK/r"
		rm -f "$WORK/r/$f"
		case $kind in
		fifo) mkfifo "$WORK/r/$f" ;;
		dir) mkdir "$WORK/r/$f" ;;
		dev) ln -s /dev/zero "$WORK/r/$f" ;;
		esac
		doctor_env "$TIMEOUT" $LIMIT "$DOCTOR" --root "$WORK/r" >"$WORK/out" 2>&1
		rc=$?
		if { [ $rc = 0 ] || [ $rc = 1 ]; } && grep '^verdict (' "$WORK/out" >/dev/null; then
			ok "$f as a $kind: a report in time (exit $rc)"
		else
			sed 's/^/# /' "$WORK/out"
			not_ok "$f as a $kind: a report in time (exit $rc)"
		fi
	done
done
# report_says NAME TEXT: the report on $WORK/r holds TEXT (unwrapped).
report_says() {
	doctor_env "$TIMEOUT" $LIMIT "$DOCTOR" --root "$WORK/r" >"$WORK/out" 2>&1
	if unwrap "$WORK/out" | grep -F "$2" >/dev/null; then
		ok "$1"
	else
		sed 's/^/# /' "$WORK/out"
		not_ok "$1"
	fi
}
# ...and the report names the cause where the read file decides a check.
rm -rf "$WORK/r"
cp -R "$ROOTS/dmabuf-node" "$WORK/r"
rm "$WORK/r/proc/driver/nvidia/version"
mkfifo "$WORK/r/proc/driver/nvidia/version"
report_says "a FIFO as the driver version is named as one" \
	"/proc/driver/nvidia/version: is a FIFO, not a regular file"
# A memlock limit the root's /proc/self/limits does not give is unknown, and why:
# a FIFO is named as one, a number past 2^64 is malformed, never "unlimited".
rm "$WORK/r/proc/driver/nvidia/version"
cp "$ROOTS/dmabuf-node/proc/driver/nvidia/version" "$WORK/r/proc/driver/nvidia/version"
rm "$WORK/r/proc/self/limits"
mkfifo "$WORK/r/proc/self/limits"
report_says "a FIFO as the limits file is named as one" \
	"n-a   memlock                memlock limit unknown (/proc/self/limits: is a FIFO, not a regular file)"
rm "$WORK/r/proc/self/limits"
sed 's/^Max locked memory .*/Max locked memory 99999999999999999999999 99999999999999999999999 bytes/' \
	"$ROOTS/dmabuf-node/proc/self/limits" >"$WORK/r/proc/self/limits"
report_says "a memlock limit past 2^64 is malformed, not unlimited" \
	"n-a   memlock                memlock limit unknown (/proc/self/limits: no \"Max locked memory\" line"
# Version numbers that are no version (letters, or past what an int holds) are
# not understood, never read as another number: 4294967297 was rdma-core 1 (and
# blocked DMA-BUF), 4294967811 driver 515 (and passed the open module check).
rm -rf "$WORK/r"
cp -R "$ROOTS/dmabuf-node" "$WORK/r"
lib=$WORK/r/usr/lib/x86_64-linux-gnu
for v in 14.abc.0 14.4294967297.0; do
	rm -f "$lib"/libibverbs.so.1*
	: >"$lib/libibverbs.so.1.$v"
	ln -s "libibverbs.so.1.$v" "$lib/libibverbs.so.1"
	report_says "libibverbs.so.1.$v: version not understood" \
		"n-a   rdma-core              /usr/lib/x86_64-linux-gnu/libibverbs.so.1 -> libibverbs.so.1.$v (version not understood)"
done
sed 's/  550\.54\.15  /  4294967811.54.15  /' "$ROOTS/dmabuf-node/proc/driver/nvidia/version" \
	>"$WORK/r/proc/driver/nvidia/version"
doctor_env "$TIMEOUT" $LIMIT "$DOCTOR" --root "$WORK/r" >"$WORK/out" 2>&1
grep -q "^warn  nvidia-driver          /proc/driver/nvidia/version not understood" "$WORK/out" &&
	grep -q "^n-a   open-kernel-module     driver flavour unknown" "$WORK/out" &&
	ok "driver 4294967811.54.15: not understood, not 515" ||
	{ sed 's/^/# /' "$WORK/out"; not_ok "driver 4294967811.54.15: not understood, not 515"; }

# /etc/hostname as hostname(5) allows it: comment and blank lines, blanks
# around the name. The host is the name, not the file's first bytes.
rm -rf "$WORK/r"
cp -R "$ROOTS/dmabuf-node" "$WORK/r"
mkdir -p "$WORK/r/etc"
printf '# set by cloud-init\n\n  node17 \r\n' >"$WORK/r/etc/hostname"
doctor_env "$TIMEOUT" $LIMIT "$DOCTOR" --root "$WORK/r" >"$WORK/out" 2>&1
unwrap "$WORK/out" | grep -qF "gdr_doctor: the tree below $WORK/r (host node17): " &&
	ok "/etc/hostname: a comment line is skipped, blanks dropped" ||
	{ sed 's/^/# /' "$WORK/out" | head -3; not_ok "/etc/hostname: a comment line is skipped, blanks dropped"; }
printf '  \n' >"$WORK/r/etc/hostname"
doctor_env "$TIMEOUT" $LIMIT "$DOCTOR" --root "$WORK/r" >"$WORK/out" 2>&1
unwrap "$WORK/out" | grep -qF "gdr_doctor: the tree below $WORK/r: " &&
	ok "/etc/hostname of blanks: no host name" ||
	{ sed 's/^/# /' "$WORK/out" | head -3; not_ok "/etc/hostname of blanks: no host name"; }

# More RDMA devices than the report lists (SR-IOV functions): the first 32 by
# name are checked, and the ones not checked rule nothing out. The one ACTIVE
# port here is mlx5_99's, last by name of 200: never "no ACTIVE RDMA port".
rm -rf "$WORK/r"
cp -R "$ROOTS/dmabuf-node" "$WORK/r"
ib=$WORK/r/sys/class/infiniband
echo "1: DOWN" >"$ib/mlx5_0/ports/1/state"
for i in $(seq 1 199); do cp -R "$ib/mlx5_0" "$ib/mlx5_$i"; done
echo "4: ACTIVE" >"$ib/mlx5_99/ports/1/state"
doctor_env "$TIMEOUT" $LIMIT "$DOCTOR" --root "$WORK/r" --expect any >"$WORK/out" 2>&1
rc=$?
unwrap "$WORK/out" >"$WORK/out.joined"
if [ $rc = 0 ] && ! grep -q "no ACTIVE RDMA port" "$WORK/out.joined" &&
	grep -qF "info  rdma-devices           200 RDMA devices: the first 32 are checked, the others not" "$WORK/out.joined" &&
	grep -qF "n-a   rdma-ports             no ACTIVE port on the first 32 of 200 RDMA devices (the others not checked)" "$WORK/out.joined"; then
	ok "200 RDMA devices, the ACTIVE one not checked: nothing ruled out"
else
	sed 's/^/# /' "$WORK/out" | head -20
	not_ok "200 RDMA devices, the ACTIVE one not checked: nothing ruled out (exit $rc)"
fi

# --json past the file size limit (ulimit -f, SIGXFSZ not ignored by the
# caller): exit 2 naming the cause, the old report kept, no temporary file left.
mkdir -p "$WORK/lim"
echo old >"$WORK/lim/r.json"
(ulimit -f 1 && exec env -i PATH="$WORK/bin" GDRPERF_LIBCUDA=/nonexistent/libcuda.so.1 \
	GDRPERF_LIBNVML=/nonexistent/libnvidia-ml.so.1 "$DOCTOR" --root "$ROOTS/both" \
	--json "$WORK/lim/r.json") >/dev/null 2>"$WORK/err"
rc=$?
if [ $rc = 2 ] && grep -q "cannot write the JSON report: .*File too large$" "$WORK/err" &&
	[ "$(cat "$WORK/lim/r.json")" = old ] && [ "$(ls -A "$WORK/lim")" = r.json ]; then
	ok "--json past ulimit -f: an error, the old report kept, no temporary file"
else
	sed 's/^/# /' "$WORK/err"
	ls -A "$WORK/lim" | sed 's/^/# /'
	not_ok "--json past ulimit -f: an error, the old report kept, no temporary file (exit $rc)"
fi

# More NVIDIA GPU functions than are read (SR-IOV virtual functions): the
# first 64 in bus order, the same on every file system, not readdir's 64.
rm -rf "$WORK/r"
cp -R "$ROOTS/dmabuf-node" "$WORK/r"
pci=$WORK/r/sys/bus/pci/devices
for i in $(seq 65 134); do cp -R "$pci/0000:3b:00.0" "$pci/0000:$(printf %02x "$i"):00.0"; done
doctor_env "$TIMEOUT" $LIMIT "$DOCTOR" --root "$WORK/r" >"$WORK/out" 2>&1
if grep -q "^pass  gpu0.bar1              0000:3b:00.0: " "$WORK/out" &&
	grep -q "^pass  gpu63.bar1             0000:7f:00.0: " "$WORK/out" &&
	! grep -q "0000:8[0-6]:00.0" "$WORK/out"; then
	ok "71 NVIDIA GPU functions: the first 64 in bus order"
else
	grep 'bar1' "$WORK/out" | sed 's/^/# /' | head -5
	not_ok "71 NVIDIA GPU functions: the first 64 in bus order"
fi

# /proc/config.gz is read through gzip: a FIFO there must not block gzip either.
rm -rf "$WORK/r"
cp -R "$ROOTS/dmabuf-node" "$WORK/r"
rm -f "$WORK/r/boot/"config-*
mkfifo "$WORK/r/proc/config.gz"
doctor_env "$TIMEOUT" $LIMIT "$DOCTOR" --root "$WORK/r" >"$WORK/out" 2>&1
rc=$?
if [ $rc = 0 ] && grep '^verdict (' "$WORK/out" >/dev/null; then
	ok "/proc/config.gz as a FIFO: a report in time"
else
	sed 's/^/# /' "$WORK/out"
	not_ok "/proc/config.gz as a FIFO: a report in time (exit $rc)"
fi

# Control bytes read from the system are shown as \xHH in the text report.
rm -rf "$WORK/r"
cp -R "$ROOTS/dmabuf-node" "$WORK/r"
printf '6.5.0\033[2J\r\177-evil\n' >"$WORK/r/proc/sys/kernel/osrelease"
printf 'NVRM version: \033]0;owned\007\n' >"$WORK/r/proc/driver/nvidia/version"
doctor_env "$TIMEOUT" $LIMIT "$DOCTOR" --root "$WORK/r" >"$WORK/out" 2>&1
if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$WORK/out"; then
	sed 's/^/# /' "$WORK/out"
	not_ok "no raw control byte in the text report"
else
	ok "no raw control byte in the text report"
fi
unwrap "$WORK/out" >"$WORK/out.joined"
grep -F '6.5.0\x1b[2J\x0d\x7f-evil' "$WORK/out.joined" >/dev/null &&
	grep -F 'NVRM version: \x1b]0;owned\x07' "$WORK/out.joined" >/dev/null &&
	ok "control bytes are shown as \\xHH" ||
	{ sed 's/^/# /' "$WORK/out"; not_ok "control bytes are shown as \\xHH"; }

# A long value is shortened in the middle: the cause and the newline stay.
long=$WORK$(printf '/ddddddddd%.0s' $(seq 300))
doctor_env "$DOCTOR" --root "$long" >/dev/null 2>"$WORK/err"
rc=$?
lines=$(wc -l <"$WORK/err")
if [ $rc = 2 ] && [ "$lines" = 1 ] && grep -q '\.\.\.[d/]*: No such file or directory$' "$WORK/err" &&
	[ "$(wc -c <"$WORK/err")" -le 1024 ]; then
	ok "a 3000-byte --root: one line, shortened, cause kept"
else
	sed 's/^/# /' "$WORK/err" | cut -c1-200
	not_ok "a 3000-byte --root: one line, shortened, cause kept (exit $rc, $lines lines)"
fi

# --nccl-log: a regular file, a pipe or -; a device (/dev/zero never ends), a
# directory or a socket is refused before it is read, naming what it is.
fails "--nccl-log /dev/zero" "/dev/zero: cannot read the NCCL log: is a character device" \
	--nccl-log /dev/zero
fails "--nccl-log a directory" "cannot read the NCCL log: is a directory" --nccl-log "$WORK"
fails "--nccl-log missing" "$WORK/no.log: cannot read the NCCL log: No such file or directory" \
	--nccl-log "$WORK/no.log"
# A pipe is a log like any other (zcat log.gz | ..., or a FIFO with a writer).
# Both paths are longer than a line: --quiet wraps after the name and never
# cuts it (a cut path cannot be pasted; the unwrapped reports would differ).
deep=$WORK/logs-in-a-directory-whose-name-alone-takes-more-than-half-of-an-80-column-line
mkdir -p "$deep"
log=$deep/$(basename "$(ls "$top_srcdir"/tests/doctor/nccl-logs/*.log | head -1)")
cp "$top_srcdir/tests/doctor/nccl-logs/${log##*/}" "$log"
rm -f "$deep/logfifo"
mkfifo "$deep/logfifo"
cat "$log" >"$deep/logfifo" &
doctor_env "$TIMEOUT" $LIMIT "$DOCTOR" --nccl-log "$deep/logfifo" --quiet >"$WORK/fifo.out" 2>&1
rc=$?
wait
doctor_env "$TIMEOUT" $LIMIT "$DOCTOR" --nccl-log "$log" --quiet >"$WORK/file.out" 2>&1
frc=$?
# --quiet wraps at 80 columns, after the name: compared unwrapped.
unwrap "$WORK/fifo.out" | sed "s|$deep/logfifo|LOG|" >"$WORK/fifo.cmp"
unwrap "$WORK/file.out" | sed "s|$log|LOG|" >"$WORK/file.cmp"
if [ $rc = $frc ] && cmp -s "$WORK/fifo.cmp" "$WORK/file.cmp" && grep -q '^LOG: ' "$WORK/file.cmp"; then
	ok "--nccl-log a FIFO with a writer: read as the file is"
else
	sed 's/^/# /' "$WORK/fifo.out" "$WORK/file.out"
	not_ok "--nccl-log a FIFO with a writer: read as the file is (exit $rc vs $frc)"
fi
# A line without end costs no memory: only its first 4 KiB are kept, and the
# log after it is read as if the line were short. 300 MB of zero bytes, then
# the log, under a 150 MB address-space limit (not under ASan: it reserves more).
if ldd "$DOCTOR" 2>/dev/null | grep -q libasan; then
	skip "--nccl-log: a 300 MB line, then the log, in 150 MB" "ASan build"
else
	{ head -c 300000000 /dev/zero; echo; cat "$log"; } |
		doctor_env "$TIMEOUT" $LIMIT /bin/sh -c 'ulimit -v 150000 && exec "$@"' sh \
			"$DOCTOR" --nccl-log - --quiet >"$WORK/out" 2>&1
	rc=$?
	unwrap "$WORK/out" | sed "s|(stdin)|LOG|" >"$WORK/big.cmp"
	if [ $rc = $frc ] && cmp -s "$WORK/big.cmp" "$WORK/file.cmp"; then
		ok "--nccl-log: a 300 MB line, then the log, in 150 MB"
	else
		sed 's/^/# /' "$WORK/out" | cut -c1-200
		not_ok "--nccl-log: a 300 MB line, then the log, in 150 MB (exit $rc, want $frc)"
	fi
fi

done_testing
