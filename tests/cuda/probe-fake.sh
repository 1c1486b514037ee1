#!/bin/sh
# tests/gpu/gpu_probe against the fake driver, as TAP: keeps the GPU-machine
# probe building and honest between the rare days a GPU is lent.
. "$(dirname "$0")/../tap.sh"
probe=$top_builddir/tests/gpu/gpu_probe
GDRPERF_LIBCUDA=$top_builddir/tests/fake_cuda/libcuda.so.1
export GDRPERF_LIBCUDA
"$probe" --quick --root "$top_srcdir/tests/cuda/roots/nvidia_peermem" >"$tmp/out" 2>&1
status=$?
plan $(($(grep -c '^\(ok\|FAIL\) - ' "$tmp/out") + 3))
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	"FAIL - "*) not_ok "${line#FAIL - }" ;;
	"info - "*) diag "$line" ;;
	esac
done <"$tmp/out"
if [ $status -eq 0 ]; then ok "probe exit status 0"; else not_ok "probe exit status $status"; fi
# The fake refuses unaligned ranges and reports pending events, as the probe expects of a GPU.
check "event pending right after enqueue" grep -q '^info - event right after enqueue: pending' "$tmp/out"
check "peermem detected in the fixture root" grep -q '^info - path peermem: GPU side ok' "$tmp/out"
done_testing
