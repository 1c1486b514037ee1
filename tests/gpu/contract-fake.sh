#!/bin/sh
# The recorded driver contract against the fake libcuda.so.1, as TAP: the
# fake must answer every recorded case of the H200 (tests/gpu/recorded/) as
# that driver did, in both export modes of the fake (the real driver's
# lenient rule, and GDRPERF_FAKE_CUDA_DMABUF_STRICT=1 where only the export
# cases around and across allocations, small or 4 MiB, may differ). The fake runs with
# its defaults: no GDRPERF_FAKE_CUDA_* setting.
. "$(dirname "$0")/../tap.sh"
prog=$top_builddir/tests/gpu/gpu_contract
rec=$top_srcdir/tests/gpu/recorded/NVIDIA-H200_580.159.04_cuda-13.0.txt
GDRPERF_LIBCUDA=$top_builddir/tests/fake_cuda/libcuda.so.1
export GDRPERF_LIBCUDA
for v in $(env | sed -n 's/^\(GDRPERF_FAKE_CUDA_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
plan 4
"$prog" --expect "$rec" >"$tmp/out" 2>&1
status=$?
diag_file "$tmp/out"
if [ $status -eq 0 ]; then ok "fake = recorded H200 answers"; else not_ok "fake differs from $rec"; fi
check "some cases compared" grep -q ': [1-9][0-9]* agree, 0 differ' "$tmp/out"
GDRPERF_FAKE_CUDA_DMABUF_STRICT=1 "$prog" --expect "$rec" >"$tmp/strict" 2>&1
diag_file "$tmp/strict"
# The documented rule refuses exactly the lenient exports, and nothing else differs.
check "strict mode refuses the exports around small allocations" \
	grep -q '^differs: export of the host page holding the first small allocation: recorded 0, .*, here 1$' "$tmp/strict"
other=$(grep '^differs: ' "$tmp/strict" |
	grep -cv '^differs: export \(of the host page\|of the 4 KiB-rounded\|of the 64 KiB-rounded\|spanning adjacent\)')
if [ "$other" = 0 ]; then ok "strict mode differs only there"; else not_ok "strict mode: $other other differences"; fi
done_testing
