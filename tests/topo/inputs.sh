#!/bin/sh
# gdr_topo (and the benchmarks' --topology-xml) on bad inputs: files that are
# not regular, not readable or not XML; an explicit option against garbage in
# the environment; values outside --help's range; options without values;
# control bytes in names; and thousands of GPUs and NICs. Each case is a
# clear error or a right answer, in time: every run is under timeout, so a
# read that blocks fails the test instead of hanging it.
set -u

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$srcdir}
topo=$builddir/bench/gdr_topo
bw=$builddir/bench/gdr_write_bw
. "$(dirname "$0")/../tap.sh"
unset NCCL_NET_GDR_LEVEL NCCL_NET_GDR_READ HWLOC_XMLFILE HWLOC_XML_VERBOSE HWLOC_THISSYSTEM
LC_ALL=C
export LC_ALL
LIMIT=120 # seconds: generous for a loaded machine; a blocked read never ends
sw=$srcdir/tests/topo/switches.xml

# expect NAME STATUS WANT-SUBSTRING PROGRAM ARGS...: the status and WANT in stderr.
expect() {
	name=$1 want_rc=$2 want=$3
	shift 3
	timeout $LIMIT "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc = "$want_rc" ] && { [ -z "$want" ] || grep -F -- "$want" "$tmp/err" >/dev/null; }; then
		ok "$name"
	else
		sed 's/^/# /' "$tmp/err" | cut -c1-300
		not_ok "$name (exit $rc, wanted $want_rc and: $want)"
	fi
}

# Inputs that are not a readable hwloc XML file, for every tool that takes one.
mkfifo "$tmp/fifo"
: >"$tmp/empty.xml"
printf 'not xml\n' >"$tmp/junk.xml"
printf '<?xml version="1.0"?>\n<topology version="2.0"><object type="Machine"' >"$tmp/cut.xml"
for what in "fifo|is a FIFO, not a regular file" "dir|is a directory, not a regular file" \
	"dev|is a character device, not a regular file" "missing|No such file or directory" \
	"empty|empty file, not an XML topology" "junk|not an hwloc XML export (no <topology> element" \
	"cut|hwloc could not load this XML topology"; do
	kind=${what%%|*} cause=${what#*|}
	case $kind in
	fifo) f=$tmp/fifo ;;
	dir) f=$tmp ;;
	dev) f=/dev/zero ;;
	missing) f=$tmp/no.xml ;;
	*) f=$tmp/$kind.xml ;;
	esac
	# An input file is a usage/input error (2) in every tool (docs/exit-status.md).
	expect "gdr_topo --topology-xml $kind" 2 "$f: $cause" "$topo" --topology-xml "$f"
	expect "HWLOC_XMLFILE $kind" 2 "$f: $cause" env HWLOC_XMLFILE="$f" "$topo"
	# The benchmark checks it before it listens or connects: no network needed.
	expect "gdr_write_bw --topology-xml $kind" 2 "--topology-xml $f: $cause" \
		"$bw" --topology-xml "$f" 127.0.0.1
done

# An explicit option beats its environment variable, garbage or not.
expect "--nccl-gdr-level over a garbage NCCL_NET_GDR_LEVEL" 0 "" \
	env NCCL_NET_GDR_LEVEL=near "$topo" --topology-xml "$sw" --nccl-gdr-level PHB
grep "^  NCCL_NET_GDR_LEVEL=PHB " "$tmp/out" >/dev/null && ok "the option's level is used" ||
	not_ok "the option's level is used"
expect "--nccl-gdr-read over a garbage NCCL_NET_GDR_READ" 0 "" \
	env NCCL_NET_GDR_READ=yes "$topo" --topology-xml "$sw" --nccl-gdr-read 0
grep -F "NCCL_NET_GDR_READ=0)" "$tmp/out" >/dev/null && ok "the option's read is used" ||
	not_ok "the option's read is used"
expect "both options over both garbage variables" 0 "" \
	env NCCL_NET_GDR_LEVEL=near NCCL_NET_GDR_READ=yes "$topo" --topology-xml "$sw" \
	--nccl-gdr-level SYS --nccl-gdr-read 1
expect "--nccl-gdr-level over a valid variable" 0 "" \
	env NCCL_NET_GDR_LEVEL=SYS "$topo" --topology-xml "$sw" --nccl-gdr-level LOC
grep "^  NCCL_NET_GDR_LEVEL=LOC " "$tmp/out" >/dev/null && ok "the option wins over a valid variable" ||
	not_ok "the option wins over a valid variable"
expect "--topology-xml over a FIFO in HWLOC_XMLFILE" 0 "" \
	env HWLOC_XMLFILE="$tmp/fifo" "$topo" --topology-xml "$sw"
grep -F "Topology: $sw" "$tmp/out" >/dev/null && ok "the option's file is read" ||
	not_ok "the option's file is read"
# ...but the other variable is still read, and garbage there is still an error.
expect "--nccl-gdr-level leaves NCCL_NET_GDR_READ checked" 2 "NCCL_NET_GDR_READ=yes" \
	env NCCL_NET_GDR_READ=yes "$topo" --topology-xml "$sw" --nccl-gdr-level PHB

# Values outside --help's range are refused.
for v in -1 2 10 01x "" " 1"; do
	expect "--nccl-gdr-read '$v'" 2 "--nccl-gdr-read" "$topo" --topology-xml "$sw" \
		--nccl-gdr-read "$v"
done
for v in -1 pxb 7x ""; do
	expect "--nccl-gdr-level '$v'" 2 "--nccl-gdr-level" "$topo" --topology-xml "$sw" \
		--nccl-gdr-level "$v"
done
for v in 0 5 LOC SYS NVL; do
	expect "--nccl-gdr-level $v accepted" 0 "" "$topo" --topology-xml "$sw" --nccl-gdr-level "$v"
done
# Legacy numbers above 5 are SYS, as NCCL's levelsOldToNew[] clamps them.
for v in 6 7 99; do
	timeout $LIMIT "$topo" --topology-xml "$sw" --nccl-gdr-level "$v" >"$tmp/out" 2>"$tmp/err"
	if [ $? = 0 ] && grep -q '^  NCCL_NET_GDR_LEVEL=SYS ' "$tmp/out"; then
		ok "--nccl-gdr-level $v is SYS"
	else
		not_ok "--nccl-gdr-level $v is SYS"
	fi
done

# Every value option given last: "needs a value"; empty paths refused at parse time.
for o in --topology-xml --csv --json --nccl-gdr-level --nccl-gdr-read; do
	expect "gdr_topo $o without a value" 2 "option '$o' needs a value" "$topo" "$o"
done
for o in --topology-xml --csv --json; do
	expect "gdr_topo $o ''" 2 "$o: empty file name" "$topo" --topology-xml "$sw" "$o" ""
done

# Control bytes in names from the XML (allowed in XML 1.0: DEL, C1 controls)
# are printed as \xHH.
# Raw bytes, not character references: hwloc's own parser (no libxml2) does not decode those.
csi=$(printf '\302\233') nel=$(printf '\302\205') del=$(printf '\177')
sed "s/NVIDIA H100 80GB HBM3/H100${csi}31m${del}/; s/name=\"mlx5_1\"/name=\"mlx5_${nel}1\"/" \
	"$sw" >"$tmp/evil.xml"
expect "names with control bytes" 0 "" "$topo" --topology-xml "$tmp/evil.xml" --pairs
if grep -F 'H100\xc2\x9b31m\x7f' "$tmp/out" >/dev/null && grep -F 'mlx5_\xc2\x851' "$tmp/out" >/dev/null &&
	! grep "$(printf '\177')" "$tmp/out" >/dev/null && ! grep "$(printf '\302[\200-\237]')" "$tmp/out" >/dev/null; then
	ok "control bytes in names are shown as \\xHH"
else
	sed 's/^/# /' "$tmp/out" | head -20
	not_ok "control bytes in names are shown as \\xHH"
fi

# A link speed that is no number (pci_link_speed="inf", or 1e300, inf as hwloc's
# float): unknown, never "inf GB/s" in the text or a bare inf that breaks the JSON.
sed 's/pci_link_speed="63.015385"/pci_link_speed="1e300"/' "$sw" >"$tmp/inf.xml"
expect "pci_link_speed 1e300: --json" 0 "" "$topo" --topology-xml "$tmp/inf.xml" --json "$tmp/inf.json"
if grep -q '"gpu_bus_id": "0000:03:00.0".*"gpu_link_gbytes_s": null' "$tmp/inf.json" &&
	! grep -qi 'inf[,}]' "$tmp/inf.json"; then
	ok "an infinite link speed is null in the JSON"
else
	grep -o '"gpu_link_gbytes_s": [^,]*' "$tmp/inf.json" | sed 's/^/# /' | head -3
	not_ok "an infinite link speed is null in the JSON"
fi
expect "pci_link_speed 1e300: text" 0 "" "$topo" --topology-xml "$tmp/inf.xml"
grep -q '^  GPU0   0000:03:00.0  NUMA 0   -  ' "$tmp/out" && ok "an infinite link speed is - in the text" ||
	{ sed 's/^/# /' "$tmp/out" | head -6; not_ok "an infinite link speed is - in the text"; }

# Another program's XML: NCCL's topology dump (NCCL_TOPO_DUMP_FILE) is named
# as not hwloc's, not left to hwloc's "Invalid argument".
printf '<system version="1">\n  <cpu numaid="0">\n    <pci busid="0000:1a:00.0" class="0x030200">\n      <gpu dev="0"/>\n    </pci>\n  </cpu>\n</system>\n' >"$tmp/nccl-topo.xml"
expect "NCCL's topology XML" 2 "$tmp/nccl-topo.xml: not an hwloc XML export (no <topology> element; lstopo FILE.xml writes one)" \
	"$topo" --topology-xml "$tmp/nccl-topo.xml"

# Two PCI devices at one address (two GPUs; a GPU and a NIC): a damaged file,
# refused, never a matrix where a lookup by bus id takes either device.
sed 's/pci_busid="0000:07:00.0"/pci_busid="0000:03:00.0"/' "$sw" >"$tmp/dup-gpu.xml"
expect "two GPUs at one PCI address" 2 "$tmp/dup-gpu.xml: two PCI devices at 0000:03:00.0 (a damaged" \
	"$topo" --topology-xml "$tmp/dup-gpu.xml"
sed 's/pci_busid="0000:03:00.0"/pci_busid="0000:04:00.0"/' "$sw" >"$tmp/dup-nic.xml"
expect "a GPU and a NIC at one PCI address" 2 "two PCI devices at 0000:04:00.0" \
	"$topo" --topology-xml "$tmp/dup-nic.xml"
expect "gdr_write_bw: two PCI devices at one address" 2 "two PCI devices at 0000:03:00.0" \
	"$bw" --topology-xml "$tmp/dup-gpu.xml" 127.0.0.1

# A write past the file size limit (ulimit -f, SIGXFSZ not ignored by the
# caller): exit 1 naming the cause, the old file kept, no temporary file left.
echo old >"$tmp/lim.json"
awk -v gpus=64 -v nics=64 -f "$srcdir/tests/topo/gen-large.awk" >"$tmp/lim.xml"
(ulimit -f 8 && exec "$topo" --topology-xml "$tmp/lim.xml" --json "$tmp/lim.json") >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc = 1 ] && grep -q "^gdr_topo: --json $tmp/lim.json: write (to .*): File too large$" "$tmp/err" &&
	[ "$(cat "$tmp/lim.json")" = old ] && [ -z "$(ls -A "$tmp" | grep '^\.lim\.json\.')" ]; then
	ok "--json past ulimit -f: an error, the old file kept, no temporary file"
else
	sed 's/^/# /' "$tmp/err" | head -5
	ls -A "$tmp" | sed 's/^/# /'
	not_ok "--json past ulimit -f: an error, the old file kept, no temporary file (exit $rc)"
fi

# A NIC below --root that is not a PCI device: its reason, which names a path,
# wraps under its column; only a word longer than the line may pass 80 columns
# (the NIC list's lines: the "Topology: FILE" line above it is as long as the
# checkout's path), and the cause after the path is whole at any checkout depth.
expect "a NIC without a device link" 0 "" "$topo" --topology-xml "$srcdir/tests/topo/snc2.xml" \
	--root "$srcdir/tests/doctor/roots/both"
sed -n '/^RDMA NICs/,/^$/p' "$tmp/out" >"$tmp/nics"
if grep -qx '  mlx5_1 -             mlx5_1: not a PCI device' "$tmp/nics" &&
	grep -q 'No such file or directory)$' "$tmp/nics" &&
	! awk 'length($0) > 80 && $0 !~ /^ *[^ ]+$/' "$tmp/nics" | grep -q .; then
	ok "the NIC's reason wraps at 80 columns"
else
	sed 's/^/# /' "$tmp/nics"
	not_ok "the NIC's reason wraps at 80 columns"
fi

# A long path: the message is shortened in the middle, the cause and the newline stay.
long=$tmp$(printf '/ddddddddd%.0s' $(seq 300))
expect "a 3000-byte path" 2 ": No such file or directory" "$topo" --topology-xml "$long"
[ "$(wc -l <"$tmp/err")" = 1 ] && [ "$(wc -c <"$tmp/err")" -le 1024 ] &&
	grep -q '^gdr_topo: /.*\.\.\.[d/]*: No such file or directory$' "$tmp/err" &&
	ok "the long message is one line under 1 KiB" || not_ok "the long message is one line under 1 KiB"

# Scale: 1024 GPUs and 1024 NICs (GPU i and mlx5_i below one bridge, PIX; all
# else NODE) gives the right matrix, nearest NICs and no warning. The time is
# not asserted; a lookup per pair made this take minutes.
awk -v gpus=1024 -v nics=1024 -f "$srcdir/tests/topo/gen-large.awk" >"$tmp/big.xml"
expect "1024 GPUs x 1024 NICs" 0 "" "$topo" --topology-xml "$tmp/big.xml"
if [ -s "$tmp/err" ]; then
	sed 's/^/# /' "$tmp/err" | head -5
	not_ok "no warning for 1024 GPUs with a NIC each"
else
	ok "no warning for 1024 GPUs with a NIC each"
fi
# Row GPUi: PIX in column i only; 1024 rows of 1025 cells plus NUMA.
awk '/^GPU[0-9]+ / && NF == 1026 {
	i = substr($1, 4) + 0; bad = 0
	for (c = 2; c <= 1025; c++) if (($c == "PIX") != (c - 2 == i) || ($c != "PIX" && $c != "NODE")) bad = 1
	if (!bad) good++
} END { exit good == 1024 ? 0 : 1 }' "$tmp/out" && ok "the matrix: PIX on the diagonal, NODE elsewhere" ||
	not_ok "the matrix: PIX on the diagonal, NODE elsewhere"
grep -Fx "  GPU1023: mlx5_1023 (PIX); NCCL: GPUDirect RDMA, PIX <= PXB" "$tmp/out" >/dev/null &&
	[ "$(grep -c '^  GPU[0-9]*: mlx5_[0-9]* (PIX)' "$tmp/out")" = 1024 ] &&
	ok "each GPU's nearest NIC is its own" || not_ok "each GPU's nearest NIC is its own"
# Many GPUs sharing few NICs: the matching still finishes and names the sharers.
awk -v gpus=1024 -v nics=2 -f "$srcdir/tests/topo/gen-large.awk" >"$tmp/share.xml"
expect "1024 GPUs x 2 NICs" 0 "GPU0, GPU2-1023 share mlx5_0" "$topo" --topology-xml "$tmp/share.xml"
# The cap: more than any real machine is refused with the numbers and the limits.
awk -v gpus=1025 -v nics=1 -f "$srcdir/tests/topo/gen-large.awk" >"$tmp/over.xml"
expect "1025 GPUs: refused" 2 "1025 GPUs and 1 RDMA NICs: more than any real machine has (at most 1024 GPUs and 2048 NICs" \
	"$topo" --topology-xml "$tmp/over.xml"
awk -v gpus=1 -v nics=2049 -f "$srcdir/tests/topo/gen-large.awk" >"$tmp/over.xml"
expect "2049 NICs: refused" 2 "1 GPUs and 2049 RDMA NICs: more than any real machine has" \
	"$topo" --topology-xml "$tmp/over.xml"

done_testing
