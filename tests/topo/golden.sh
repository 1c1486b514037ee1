#!/bin/sh
# gdr_topo run on hwloc XML topologies, its output (stdout and stderr, then the
# exit status) diffed against the checked-in files in tests/topo/expected/, as
# hwloc's own tests do. GDRPERF_REGEN=1 rewrites the expected files instead
# (docs/testing.md); check the diff in git before committing them.
set -u

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$srcdir}
bin=$builddir/bench/gdr_topo
exp=$srcdir/tests/topo/expected
. "$(dirname "$0")/../tap.sh"

# The output must not depend on the caller's environment.
unset NCCL_NET_GDR_LEVEL NCCL_NET_GDR_READ HWLOC_XMLFILE HWLOC_XML_VERBOSE HWLOC_THISSYSTEM
LC_ALL=C
export LC_ALL
# Relative XML paths keep the "Topology:" line the same in every build tree.
cd "$srcdir" || exit 1

# compare NAME FILE: FILE against expected/NAME (GDRPERF_REGEN=1: see tap.sh).
compare() { golden_file "$1" "$exp/$1" "$2"; }

# golden NAME [env VAR=...] ARGS...: run gdr_topo, keep both streams and the status.
golden() {
	name=$1
	shift
	if [ "$1" = env ]; then
		shift
		while [ $# -gt 0 ] && [ "${1#*=}" != "$1" ]; do
			export "$1"
			shift
		done
	fi
	"$bin" "$@" >"$tmp/$name" 2>&1
	echo "exit $?" >>"$tmp/$name"
	unset NCCL_NET_GDR_LEVEL NCCL_NET_GDR_READ HWLOC_XMLFILE
	compare "$name" "$tmp/$name"
}

# hwloc's own XML parser (used when hwloc lacks libxml2, or with
# HWLOC_LIBXML_IMPORT=0) rejects CRLF line ends, which the DGX-2H export keeps.
# libxml2 reaches hwloc either linked in or as its plugin hwloc_xml_libxml.so
# (Debian's hwloc: next to libhwloc.so, in hwloc/), which ldd does not list.
crlf_ok=0
hwloc_lib=$(ldd "$bin" 2>/dev/null | awk '/libhwloc\.so/ { print $3; exit }')
if ldd "$bin" 2>/dev/null | grep -q libxml2 ||
	{ [ -n "$hwloc_lib" ] && [ -f "$(dirname "$hwloc_lib")/hwloc/hwloc_xml_libxml.so" ]; }; then
	crlf_ok=1
fi
[ "${HWLOC_LIBXML_IMPORT:-1}" = 0 ] && crlf_ok=0

# Every fixture and every real server export, with the per-pair details.
for f in tests/topo/*.xml tests/topo/xml/*.xml; do
	base=$(basename "$f" .xml)
	[ "$base" = truncated ] && continue
	if [ $crlf_ok = 0 ] && grep -q "$(printf '\r')" "$f"; then
		skip "$base.out" "CRLF file and hwloc without libxml2"
		continue
	fi
	golden "$base.out" --topology-xml "$f" --pairs
done

# The same exports under NCCL_NET_GDR_LEVEL=PHB: the verdicts and the "to enable:" lines
# follow the variable (NODE is PHB to NCCL; SYS still needs SYS).
for f in tests/topo/xml/*.xml; do
	base=$(basename "$f" .xml)
	if [ $crlf_ok = 0 ] && grep -q "$(printf '\r')" "$f"; then
		skip "$base-phb.out" "CRLF file and hwloc without libxml2"
		continue
	fi
	golden "$base-phb.out" env NCCL_NET_GDR_LEVEL=PHB --topology-xml "$f"
done

# JSON of real exports: nearest NICs, warnings (virtual PCI tree, assumed SYS), links as numbers.
for base in azure-ndv2-v100-vm juropa3-gpu-snb-hwloc1; do
	"$bin" --topology-xml tests/topo/xml/$base.xml --json "$tmp/$base.json" >/dev/null 2>&1
	compare "$base.json" "$tmp/$base.json"
done

# Legacy numbers above 5 are SYS, as in NCCL (levelsOldToNew[] clamps them).
golden nccl-opt-legacy-7.out --topology-xml tests/topo/xml/llnl-lassen-power9-v100.xml \
	--nccl-gdr-level 7

# Width: the text fits 80 columns (the matrix 120) on every real export, and on a
# 16-GPU x 8-NIC machine the matrix and --pairs fit 120 (they fit 80 here).
wide=
for f in "$exp"/*.out; do
	case $(basename "$f") in doctor-* | opt-* | nccl-env-* | nccl-read-* | csv-* | \
		missing-* | truncated.out) continue ;; esac
	w=$(awk '/^(GPU[0-9]+ |NUMA |        [a-z])/ { next } length > m { m = length } END { print m + 0 }' "$f")
	m=$(awk '/^(GPU[0-9]+ |NUMA |        [a-z])/ && length > m { m = length } END { print m + 0 }' "$f")
	[ "$w" -le 80 ] && [ "$m" -le 120 ] || wide="$wide $(basename "$f"):$w/$m"
done
[ -z "$wide" ] && ok "text within 80 columns, matrix within 120" ||
	not_ok "text within 80 columns, matrix within 120:$wide"
awk -v gpus=16 -v nics=8 -f tests/topo/gen-large.awk >"$tmp/16x8.xml"
"$bin" --topology-xml "$tmp/16x8.xml" --pairs >"$tmp/16x8.out" 2>&1
w=$(awk 'length > m { m = length } END { print m + 0 }' "$tmp/16x8.out")
[ "$w" -le 80 ] && ok "16 GPUs x 8 NICs with --pairs: $w columns" ||
	not_ok "16 GPUs x 8 NICs with --pairs: $w columns, wanted <= 80"

# Failures to load.
golden truncated.out --topology-xml tests/topo/truncated.xml
golden missing-file.out --topology-xml tests/topo/no-such-file.xml

# HWLOC_XMLFILE stands in for --topology-xml.
golden hwloc-xmlfile.out env HWLOC_XMLFILE=tests/topo/snc2.xml

# NCCL's settings change the verdicts, from the environment or the options.
golden nccl-env-phb-read0.out env NCCL_NET_GDR_LEVEL=PHB NCCL_NET_GDR_READ=0 \
	--topology-xml tests/topo/hostbridges.xml
golden nccl-legacy-4-read1.out env NCCL_NET_GDR_LEVEL=4 NCCL_NET_GDR_READ=1 \
	--topology-xml tests/topo/snc2.xml
golden nccl-opt-loc.out --topology-xml tests/topo/switches.xml --nccl-gdr-level LOC
golden nccl-env-garbage.out env NCCL_NET_GDR_LEVEL=near --topology-xml tests/topo/switches.xml
golden nccl-env-lowercase.out env NCCL_NET_GDR_LEVEL=pxb --topology-xml tests/topo/switches.xml
golden nccl-read-garbage.out env NCCL_NET_GDR_READ=yes --topology-xml tests/topo/switches.xml

# PCIe health and the ceiling per pair from a fixture root (tests/doctor/gen-pcie-roots.py
# lays out GPU0 and mlx5_0 of switches.xml); the other pairs are not in the tree.
golden pcie-root-acs.out --topology-xml tests/topo/switches.xml --root tests/doctor/roots/pcie-acs
golden pcie-root-link-narrow.out --topology-xml tests/topo/switches.xml \
	--root tests/doctor/roots/pcie-link-narrow
golden pcie-root-healthy.out --topology-xml tests/topo/switches.xml \
	--root tests/doctor/roots/pcie-healthy --json "$tmp/pcie.json"
compare pcie-root-healthy.json "$tmp/pcie.json"
golden opt-empty-root.out --topology-xml tests/topo/switches.xml --root=

# Bad command lines: exit 2, naming the option and the value.
golden opt-unknown.out --topology-xml tests/topo/switches.xml --bogus
golden opt-missing-value.out --csv
golden opt-bad-level.out --nccl-gdr-level nearby
golden opt-bad-read.out --nccl-gdr-read maybe
golden opt-extra-arg.out tests/topo/switches.xml
golden opt-empty-csv.out --csv= --topology-xml tests/topo/switches.xml

# CSV and JSON: one record per pair, written whole.
"$bin" --topology-xml tests/topo/switches.xml --csv "$tmp/pairs.csv" --json "$tmp/pairs.json" \
	>/dev/null 2>&1
rc=$?
if [ $rc -eq 0 ] && [ -f "$tmp/pairs.csv" ] && [ -f "$tmp/pairs.json" ]; then
	ok "--csv and --json write their files (exit $rc)"
else
	not_ok "--csv and --json write their files (exit $rc)"
fi
compare switches.csv "$tmp/pairs.csv"
compare switches.json "$tmp/pairs.json"
if ls "$tmp"/*.tmp >/dev/null 2>&1; then
	not_ok "no temporary file left behind"
else
	ok "no temporary file left behind"
fi
if command -v python3 >/dev/null 2>&1; then
	if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["pairs"]) == 12' \
		"$tmp/pairs.json" 2>"$tmp/py"; then
		ok "JSON parses and holds 4 GPUs x 3 NICs"
	else
		sed 's/^/# /' "$tmp/py"
		not_ok "JSON parses and holds 4 GPUs x 3 NICs"
	fi
else
	skip "JSON parses and holds 4 GPUs x 3 NICs" "python3 not found"
fi
golden csv-unwritable.out --topology-xml tests/topo/switches.xml --csv /nonexistent-dir/x.csv

# --help names every option and exits 0.
"$bin" --help >"$tmp/help" 2>&1
rc=$?
missing=
for o in --topology-xml --root --pairs --csv --json --nccl-gdr-level --nccl-gdr-read --help; do
	grep -q -- "$o" "$tmp/help" || missing="$missing $o"
done
if [ $rc -eq 0 ] && [ -z "$missing" ]; then
	ok "--help is complete"
else
	not_ok "--help is complete (exit $rc, missing:$missing)"
fi

done_testing
