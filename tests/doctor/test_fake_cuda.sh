#!/bin/sh
# gdr_doctor's CUDA checks against the fake libcuda.so.1 (tests/fake_cuda): driver version,
# per-GPU DMA_BUF_SUPPORTED / GPU_DIRECT_RDMA_SUPPORTED, BAR1 matched by bus id.
. "$top_srcdir/tests/doctor/lib.sh"
cd "$top_srcdir/tests/doctor/roots" || exit 1
FAKE="$top_builddir/tests/fake_cuda/libcuda.so.1"
plan 9
# Each case twice: the fake's default export rule (the real driver's) and
# GDRPERF_FAKE_CUDA_DMABUF_STRICT=1 (the documented one); the doctor's verdict
# must not depend on which.
fake() { # name root [VAR=value...]
	name=$1 root=$2
	shift 2
	for strict in 0 1; do
		env -i PATH="$WORK/bin" GDRPERF_LIBCUDA="$FAKE" GDRPERF_LIBNVML=/nonexistent/libnvidia-ml.so.1 \
			GDRPERF_FAKE_CUDA_DMABUF_STRICT=$strict "$@" "$DOCTOR" --root "$root" \
			>"$WORK/$name.out" 2>&1
		echo "exit $?" >>"$WORK/$name.out"
		golden_file "fake-cuda-$name.out$([ $strict = 1 ] && echo ' (strict exports)')" \
			"$EXPECTED/fake-cuda-$name.out" "$WORK/$name.out"
	done
}
# A DMA-BUF node whose GPU says DMA_BUF_SUPPORTED=1.
fake dmabuf-node dmabuf-node GDRPERF_FAKE_CUDA_BUS_IDS=0000:3b:00.0 GDRPERF_FAKE_CUDA_NAMES=H200
# Two GPUs without DMA-BUF on an old CUDA driver: both block DMA-BUF, peermem stays.
fake peermem-node peermem-node GDRPERF_FAKE_CUDA_DEVICES=2 \
	GDRPERF_FAKE_CUDA_BUS_IDS=0000:18:00.0,0000:86:00.0 GDRPERF_FAKE_CUDA_NAMES=A100,A100 \
	GDRPERF_FAKE_CUDA_DMA_BUF_SUPPORTED=0,0 GDRPERF_FAKE_CUDA_DRIVER_VERSION=11040
# No GPU at all for peer memory: GPU_DIRECT_RDMA_SUPPORTED=0 everywhere blocks peermem.
fake both-no-gdr both GDRPERF_FAKE_CUDA_BUS_IDS=0000:3b:00.0 GDRPERF_FAKE_CUDA_NAMES=L4 \
	GDRPERF_FAKE_CUDA_GPU_DIRECT_RDMA_SUPPORTED=0
# The H200 of docs (open module 580.159.04, kernel 6.18, CUDA 13.0, DMA_BUF_SUPPORTED=1, no
# RDMA NIC, no nvidia_peermem): DMA-BUF's GPU side is ready, only the NIC is missing.
fake h200-nic-less h200-nic-less GDRPERF_FAKE_CUDA_BUS_IDS=0000:00:06.0 GDRPERF_FAKE_CUDA_NAMES=H200 \
	GDRPERF_FAKE_CUDA_DRIVER_VERSION=13000
env -i PATH="$WORK/bin" GDRPERF_LIBCUDA="$FAKE" GDRPERF_LIBNVML=/nonexistent/libnvidia-ml.so.1 \
	GDRPERF_FAKE_CUDA_BUS_IDS=0000:00:06.0 \
	GDRPERF_FAKE_CUDA_DRIVER_VERSION=13000 "$DOCTOR" --root h200-nic-less --json - >"$WORK/h200.json"
if command -v python3 >/dev/null 2>&1; then
	python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["verdict"]
d = v["dmabuf"]
assert v["order"][0] == "dmabuf", v["order"]
assert d["gpu_side"] == "ready" and d["nic_side"] == "blocked", d
assert [b["check"] for b in d["blockers"]] == ["rdma-devices"], d["blockers"]
assert v["peermem"]["gpu_side"] == "not needed", v["peermem"]
' "$WORK/h200.json" && ok "H200 JSON: DMA-BUF GPU side ready, NIC side blocked by rdma-devices only" ||
		not_ok "H200 JSON: DMA-BUF GPU side ready, NIC side blocked by rdma-devices only"
else
	skip "H200 JSON" "no python3"
fi
done_testing
