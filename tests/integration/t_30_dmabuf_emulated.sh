#!/bin/bash
# The DMA-BUF data path end to end on Soft-RoCE, which has no
# ibv_reg_dmabuf_mr: the test-only interposer tests/fake_verbs (LD_PRELOAD)
# maps the very pages the fake libcuda exported, at the offset gdrperf
# passes, and registers them at iova = the device pointer; --validate then
# proves offset, length, iova and the fd's lifetime, for both verbs and both
# allocators, and a deliberately wrong offset (test hook) must fail it.
# The skip path on plain rxe is in t_30_gpu_paths.sh. Columns by name.
# timeout: 1500
. "$(dirname "$0")/lib.sh"
FAKE=${top_builddir:-.}/tests/fake_cuda/libcuda.so.1
FAKE_VERBS=$(cd "${top_builddir:-.}" && pwd)/tests/fake_verbs/libfake_verbs.so
ROWS="pyq ${top_srcdir:-.}/tests/integration/gpu_rows.py"
for f in "$FAKE" "$FAKE_VERBS"; do
	if [ ! -f "$f" ]; then
		not_ok "test library built ($f missing: run make check)"
		finish
		exit 1
	fi
done
export GDRPERF_LIBCUDA=$FAKE
# The interposer goes to the bench processes alone (BENCH_ENV), not to the
# tools around them. An ASan build (test-all's second pass) must have its
# runtime first in the library list: preload it ahead of the interposer.
asan_rt=$(ldd "$B/gdr_write_bw" 2>/dev/null | awk '/libasan/ { print $3; exit }')
PRELOAD="${asan_rt:+$asan_rt:}$FAKE_VERBS"

# DMA-BUF end to end: the interposer maps the very pages the fake exported, at the offset
# gdrperf passes, and registers them at iova = the device pointer. Both verbs, both allocators,
# under both export rules of the fake: the real driver's (default: any range of device memory)
# and the documented one (GDRPERF_FAKE_CUDA_DMABUF_STRICT=1: inside one allocation), so that
# gdrperf never depends on the real driver's leniency. The export rule is the
# same for both verbs (the buffer is exported before the verb matters): the
# strict rule runs on WRITE alone, both allocators, to keep the file's time.
for strict in 0 1; do
	export GDRPERF_FAKE_CUDA_DMABUF_STRICT=$strict
	verbs="write read"
	[ "$strict" = 1 ] && verbs=write
	for verb in $verbs; do
		for alloc in memalloc vmm; do
			BENCH_ENV="env LD_PRELOAD=$PRELOAD"
			server gdr_${verb}_bw --timeout 30 --gpu-alloc $alloc
			wait_listen "$PORT"
			client gdr_${verb}_bw --timeout 30 --gpu 0 --mem dmabuf --gpu-alloc $alloc -n 20 \
				--sizes 4K:16K --validate --csv "$TMP/emu-$verb-$alloc-$strict.csv"
			wait_server
			BENCH_ENV=
			check "dmabuf $verb $alloc (strict exports $strict) --validate through the emulated registration: both exit 0" \
				[ "$CRC" = 0 -a "$SRC" = 0 ]
			check "dmabuf $verb $alloc (strict exports $strict): 3 ok validated rows, said to be emulated" \
				$ROWS "$TMP/emu-$verb-$alloc-$strict.csv" \
				'count:3' 'all:r["status"] == "ok" and r["note"].startswith("validated") and "emulated" in r["note"]' \
				'all:r["reg_call"] == "ibv_reg_dmabuf_mr (emulated)" and num(r["reg_us"]) > 0 and r["dmabuf_mapping"] == "default"' \
				'all:"SYNC_MEMOPS" not in r["note"]'
		done
	done
done
unset GDRPERF_FAKE_CUDA_DMABUF_STRICT

# A GPU whose NIC writes are not ordered (GPU_DIRECT_RDMA_WRITES_ORDERING 0, where the
# fake's default is the H200's 100): --validate's reads go through the flush and still pass.
export GDRPERF_FAKE_CUDA_WRITES_ORDERING=0
BENCH_ENV="env LD_PRELOAD=$PRELOAD"
server gdr_write_bw --timeout 30 --gpu-alloc vmm
wait_listen "$PORT"
client gdr_write_bw --timeout 30 --gpu 0 --mem dmabuf --gpu-alloc vmm -n 20 -s 16K --validate \
	--csv "$TMP/unordered.csv"
wait_server
BENCH_ENV=
unset GDRPERF_FAKE_CUDA_WRITES_ORDERING
check "dmabuf write vmm, WRITES_ORDERING 0 (flushed before reading): validated" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	$ROWS '$TMP/unordered.csv' 'count:1' 'all:r[\"status\"] == \"ok\" and r[\"note\"].startswith(\"validated\")'"

# ...and a deliberately wrong offset (test hook) never gives an ok row: the fake's DMA-BUF is
# exactly the exported range, as a real one is, so 4 KiB off runs past its end and the
# registration is refused (EINVAL, as the kernel refuses it); were it inside, the data would
# land elsewhere and validation would fail.
BENCH_ENV="env LD_PRELOAD=$PRELOAD"
export GDRPERF_TEST_DMABUF_OFFSET_SKEW=4096
server gdr_write_bw --timeout 30
wait_listen "$PORT"
client gdr_write_bw --timeout 30 --gpu 0 --mem dmabuf -n 20 -s 16K --validate --csv "$TMP/skew.csv"
wait_server
BENCH_ENV=
unset GDRPERF_TEST_DMABUF_OFFSET_SKEW
check "dmabuf with the offset 4 KiB off: no ok row, the registration refused (EINVAL) or validation failed" \
	$ROWS "$TMP/skew.csv" 'count:1' 'all:r["status"] != "ok"' \
	'all:("ibv_reg_dmabuf_mr" in r["note"] and "Invalid argument" in r["note"]) or "validation failed" in r["note"]'

finish
