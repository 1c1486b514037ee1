#!/bin/sh
# tests/gpu/gpu_probe against the fake driver, as TAP: keeps the GPU-machine
# probe building and honest between the rare days a GPU is lent.
probe=$top_builddir/tests/gpu/gpu_probe
GDRPERF_LIBCUDA=$top_builddir/tests/fake_cuda/libcuda.so.1
export GDRPERF_LIBCUDA
out=$("$probe" --quick --root "$top_srcdir/tests/cuda/roots/nvidia_peermem" 2>&1)
status=$?
n=$(printf '%s\n' "$out" | grep -c '^\(ok\|FAIL\) - ')
echo "1..$((n + 3))"
printf '%s\n' "$out" | grep '^\(ok\|FAIL\) - ' | sed 's/^FAIL - /not ok - /'
printf '%s\n' "$out" | grep '^info - ' | sed 's/^/# /'
if [ $status -eq 0 ]; then echo "ok - probe exit status 0"; else echo "not ok - probe exit status $status"; fi
# The fake refuses unaligned ranges and reports pending events, as the probe expects of a GPU.
if printf '%s\n' "$out" | grep -q '^info - event right after enqueue: pending'; then
	echo "ok - event pending right after enqueue"
else
	echo "not ok - event pending right after enqueue"
fi
if printf '%s\n' "$out" | grep -q '^info - path peermem: GPU side ok'; then
	echo "ok - peermem detected in the fixture root"
else
	echo "not ok - peermem detected in the fixture root"
fi
