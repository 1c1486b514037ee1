#!/bin/sh
# gdr_doctor's NCCL checks judged on the nine real hwloc exports in tests/topo/xml/:
# NCCL_NET_GDR_LEVEL unset (NCCL's default), set to that default (PXB: the same NCCL
# behaviour, so the same answer), and PHB; the fix must be a setting that enables
# GPUDirect RDMA, and --topology-xml must change the answer. Only the NCCL lines of
# the report are kept, so that the node checks around them do not matter here.
set -u

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$srcdir}
doctor=$builddir/bench/gdr_doctor
exp=$srcdir/tests/topo/expected
. "$(dirname "$0")/../tap.sh"
LC_ALL=C
export LC_ALL
cd "$srcdir" || exit 1
root=tests/doctor/roots/both

# nccl_lines [VAR=value...] -- ARGS: the NCCL_* and nccl-env checks with their fix lines.
nccl_lines() {
	env -i PATH=/usr/bin:/bin GDRPERF_LIBCUDA=/nonexistent/libcuda.so.1 "$@" 2>&1 |
		awk '/^[a-z-]+ +(NCCL_|nccl-env)/ { keep = 1; print; next }
		     /^ +/ { if (keep) print; next } { keep = 0 }'
}
# joined FILE: FILE's lines as one line, runs of blanks as one (the report
# wraps long values under their column at 80 columns).
joined() {
	tr '\n' ' ' <"$1" | tr -s ' '
}

for f in tests/topo/xml/*.xml; do
	base=$(basename "$f" .xml)
	out=$tmp/doctor-$base.out
	: >"$out"
	for lv in "" PXB PHB; do
		echo "# NCCL_NET_GDR_LEVEL=${lv:-(unset)}" >>"$out"
		if [ -n "$lv" ]; then
			nccl_lines NCCL_NET_GDR_LEVEL=$lv "$doctor" --root $root --topology-xml "$f" >>"$out"
		else
			nccl_lines "$doctor" --root $root --topology-xml "$f" >>"$out"
		fi
	done
	golden_file "doctor-$base.out" "$exp/doctor-$base.out" "$out"
done

# Without a topology the fixture root's distances are unknown: nothing is claimed.
nccl_lines "$doctor" --root $root >"$tmp/none"
if grep -q '^pass  nccl-env ' "$tmp/none" && ! grep -q NCCL_NET_GDR_LEVEL "$tmp/none"; then
	ok "no --topology-xml on a fixture root: no distance verdict"
else
	sed 's/^/# /' "$tmp/none"
	not_ok "no --topology-xml on a fixture root: no distance verdict"
fi

# The fix is never "unset" a variable set to NCCL's default.
if grep -h 'fix:.*unset NCCL_NET_GDR_LEVEL' "$exp"/doctor-*.out >/dev/null; then
	not_ok "no fix says to unset NCCL_NET_GDR_LEVEL"
else
	ok "no fix says to unset NCCL_NET_GDR_LEVEL"
fi

# NCCL_NET_GDR_C2C=0 is judged; garbage in it is named.
nccl_lines NCCL_NET_GDR_C2C=0 "$doctor" --root $root >"$tmp/c2c"
grep -q '^warn  NCCL_NET_GDR_C2C  *0: on a Grace node' "$tmp/c2c" &&
	ok "NCCL_NET_GDR_C2C=0 warns" || not_ok "NCCL_NET_GDR_C2C=0 warns"
nccl_lines NCCL_NET_GDR_C2C=on "$doctor" --root $root >"$tmp/c2c"
grep -q '^warn  NCCL_NET_GDR_C2C  *NCCL_NET_GDR_C2C=on: not an integer' "$tmp/c2c" &&
	ok "NCCL_NET_GDR_C2C=on is named" || not_ok "NCCL_NET_GDR_C2C=on is named"

# NCCL_NET_GDR_READ garbage is not read as 0 either: NCCL decides per GPU.
nccl_lines NCCL_NET_GDR_READ=on "$doctor" --root $root >"$tmp/read"
joined "$tmp/read" |
	grep -q 'warn NCCL_NET_GDR_READ NCCL_NET_GDR_READ=on: not an integer (0 = off, 1 = on); NCCL would decide per GPU' && ok "NCCL_NET_GDR_READ=on is unset to NCCL, not 0" ||
	not_ok "NCCL_NET_GDR_READ=on is unset to NCCL, not 0"

# NCCL_DMABUF_ENABLE garbage is not read as 0: NCCL keeps its default, 1.
nccl_lines NCCL_DMABUF_ENABLE=yes "$doctor" --root $root >"$tmp/dmabuf"
joined "$tmp/dmabuf" |
	grep -q 'warn NCCL_DMABUF_ENABLE NCCL_DMABUF_ENABLE=yes: not an integer (0 = off, 1 = on); NCCL would use its default, 1 fix:' && ok "NCCL_DMABUF_ENABLE=yes is NCCL's default, not 0" ||
	not_ok "NCCL_DMABUF_ENABLE=yes is NCCL's default, not 0"
nccl_lines NCCL_DMABUF_ENABLE=0 "$doctor" --root tests/doctor/roots/dmabuf-node >"$tmp/dmabuf"
grep -q '^warn  NCCL_DMABUF_ENABLE  *0: NCCL will not use DMA-BUF although' "$tmp/dmabuf" &&
	ok "NCCL_DMABUF_ENABLE=0 on a DMA-BUF node warns" ||
	not_ok "NCCL_DMABUF_ENABLE=0 on a DMA-BUF node warns"

done_testing
