#!/bin/bash
# The GPU paths on real Soft-RoCE with the test-only fake libcuda.so.1 (host
# memory behind "device pointers"): peermem mechanics (fixture sysfs root so
# detection passes), dmabuf skipped with the provider's EOPNOTSUPP, --mem all
# over both allocators (--gpu-alloc all) with the provenance columns,
# --disable_pcie_relaxed, --use_data_direct's skip. The DMA-BUF data path
# through tests/fake_verbs is t_30_dmabuf_emulated.sh. CSV columns are picked
# by name (gpu_rows.py).
# timeout: 900
. "$(dirname "$0")/lib.sh"
FAKE=${top_builddir:-.}/tests/fake_cuda/libcuda.so.1
ROWS="pyq ${top_srcdir:-.}/tests/integration/gpu_rows.py"
if [ ! -f "$FAKE" ]; then
	not_ok "fake libcuda.so.1 built ($FAKE missing: run make check)"
	finish
	exit 1
fi
export GDRPERF_LIBCUDA=$FAKE

# peermem with the module "loaded" (fixture root): WRITE and READ, validated.
export GDRPERF_ROOT=${top_srcdir:-.}/tests/cuda/roots/nvidia_peermem
server gdr_write_bw --timeout 20
wait_listen "$PORT"
client gdr_write_bw --timeout 20 --gpu 0 --mem peermem -n 100 --sizes 4K:256K --validate --csv "$TMP/pm.csv"
wait_server
check "peermem write --validate: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "--gpu 0 without -d: the nearest active NIC is chosen and printed" \
	grep -q '^placement: rxe0 is the nearest active NIC to GPU 0' "$TMP/cli.out"
check "peermem write: 7 ok validated rows on path peermem with the GPU named" $ROWS "$TMP/pm.csv" \
	'count:7' 'all:r["path"] == "peermem" and r["status"] == "ok" and r["note"] == "validated"' \
	'all:r["gpu"] == "0" and r["gpu_bus_id"] != ""'
check "peermem write: registration cost printed (reg and dereg timed)" \
	grep -qE '^peermem: ibv_reg_mr on cuMemAlloc memory, alloc [0-9.]+ us, reg [0-9.]+ us, dereg [0-9.]+ us' "$TMP/cli.out"
server gdr_read_bw --timeout 20
wait_listen "$PORT"
client gdr_read_bw --timeout 20 --gpu 0 --mem peermem -n 100 -s 64K --validate
wait_server
check "peermem read --validate: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]

# Without a peer-memory client the path is skipped with that reason.
export GDRPERF_ROOT=${top_srcdir:-.}/tests/cuda/roots/none
server gdr_write_bw --timeout 20
wait_listen "$PORT"
client gdr_write_bw --timeout 20 --gpu 0 --mem peermem,host --repeat 1 -n 50 -s 4K --csv "$TMP/none.csv"
wait_server
check "no nvidia_peermem: skipped with the sysfs path, host still runs" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	$ROWS '$TMP/none.csv' 'count:1:r[\"path\"] == \"peermem\" and r[\"status\"] == \"skipped\" and \"nvidia_peermem\" in r[\"note\"]' \
		'count:1:r[\"path\"] == \"host\" and r[\"size_bytes\"] == \"4096\" and r[\"status\"] == \"ok\"'"

# dmabuf: rxe has no reg_dmabuf_mr, so the path is skipped with the provider's answer.
server gdr_write_bw --timeout 20
wait_listen "$PORT"
client gdr_write_bw --timeout 20 --gpu 0 --mem dmabuf -n 50 -s 4K --csv "$TMP/db.csv"
wait_server
check "dmabuf on rxe: skipped, reason names the device and EOPNOTSUPP" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	$ROWS '$TMP/db.csv' 'all:r[\"status\"] == \"skipped\" and \"rxe0\" in r[\"note\"] and (\"Operation not supported\" in r[\"note\"] or \"DMA-BUF\" in r[\"note\"])'"

# --mem all --gpu-alloc all: both allocators on every GPU path, host once; every new column.
export GDRPERF_ROOT=${top_srcdir:-.}/tests/cuda/roots/nvidia_peermem
server gdr_write_bw --timeout 40 --gpu-alloc all --csv "$TMP/all-srv.csv"
wait_listen "$PORT"
client gdr_write_bw --timeout 40 --gpu 0 --mem all --gpu-alloc all --repeat 1 -n 50 --sizes 4K:16K --csv "$TMP/all.csv"
wait_server
check "--mem all --gpu-alloc all: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "--mem all --gpu-alloc all: host once, 3 GPU paths x 2 allocators, x 3 sizes = 21 rows" \
	$ROWS "$TMP/all.csv" 'count:21' 'count:3:r["path"] == "host"' \
	'count:3:r["path"] == "peermem" and r["status"] == "ok" and r["gpu_alloc"] == "cuMemAlloc"' \
	'count:3:r["path"] == "peermem" and r["status"] == "ok" and r["gpu_alloc"] == "cuMemCreate"' \
	'count:6:r["path"] == "bounce" and r["status"] == "ok"' \
	'count:3:r["path"] == "bounce" and r["gpu_alloc"] == "cuMemCreate"'
check "--mem all --gpu-alloc all: dmabuf skipped with rxe's reason in both allocators" \
	$ROWS "$TMP/all.csv" \
	'count:6:r["path"] == "dmabuf" and r["status"] == "skipped" and "rxe0" in r["note"] and r["dmabuf_mapping"] == "default"' \
	'count:3:r["path"] == "dmabuf" and r["gpu_alloc"] == "cuMemCreate"'
check "--mem all: topology line before the table, rxe is 'not PCI' (unknown)" bash -c "
	grep -q '^topology: GPU (.*) <-> rxe0 (not PCI): unknown' '$TMP/cli.out' &&
	[ \$(grep -n '^topology:' '$TMP/cli.out' | head -1 | cut -d: -f1) -lt \$(grep -n '^ path ' '$TMP/cli.out' | head -1 | cut -d: -f1) ]"
check "--mem all: GPU rows carry the GPU, its UUID, the driver and distance 'unknown'; host rows none" \
	$ROWS "$TMP/all.csv" \
	'all:r["path"] == "host" or (r["gpu"] == "0" and r["distance"] == "unknown" and r["gpu_uuid"].startswith("GPU-") and r["cuda_driver"] == "13.0")' \
	'all:r["path"] != "host" or (r["gpu"] == "" and r["distance"] == "" and r["gpu_alloc"] == "" and r["gpu_uuid"] == "" and r["cuda_driver"] == "")'
check "--mem all: every measured row has reg_us, dereg_us, reg_call ibv_reg_mr; relaxed ordering asked" \
	$ROWS "$TMP/all.csv" \
	'all:r["status"] != "ok" or (num(r["reg_us"]) is not None and num(r["reg_us"]) > 0 and num(r["dereg_us"]) is not None and r["reg_call"] == "ibv_reg_mr")' \
	'all:r["relaxed_ordering"] == "1" and r["kernel"] != "" and r["libibverbs"] != "" and r["nic_fw"] != ""' \
	'all:r["path"] == "dmabuf" or r["dmabuf_mapping"] == ""'
check "--mem all: every row ok, or skipped with a note" $ROWS "$TMP/all.csv" \
	'all:r["status"] == "ok" or (r["status"] == "skipped" and r["note"] != "")'
check "--gpu-alloc all: the server's rows too (21, both allocators)" $ROWS "$TMP/all-srv.csv" \
	'count:21' 'count:6:r["path"] == "peermem" and r["status"] == "ok"' 'count:9:r["gpu_alloc"] == "cuMemCreate"'

# --disable_pcie_relaxed is recorded; no GPU_DIRECT_RDMA_WITH_CUDA_VMM: vmm skipped with why.
server gdr_write_bw --timeout 20 --gpu-alloc vmm --disable_pcie_relaxed
wait_listen "$PORT"
GDRPERF_FAKE_CUDA_VMM_GDR=0 client gdr_write_bw --timeout 20 --gpu 0 --mem host,peermem --repeat 1 --gpu-alloc vmm \
	--disable_pcie_relaxed -n 50 -s 4K --csv "$TMP/norelax.csv"
wait_server
check "--disable_pcie_relaxed: relaxed_ordering 0 on every row" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	$ROWS '$TMP/norelax.csv' 'all:r[\"relaxed_ordering\"] == \"0\"'"
check "vmm without GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED: skipped with the attribute" $ROWS "$TMP/norelax.csv" \
	'count:1:r["path"] == "peermem" and r["status"] == "skipped" and "GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 0" in r["note"] and r["gpu_alloc"] == "cuMemCreate"'

# --use_data_direct: rdma-core 44's libmlx5 has no mlx5dv_reg_dmabuf_mr (and rxe is no mlx5).
server gdr_write_bw --timeout 20 --use_data_direct
wait_listen "$PORT"
client gdr_write_bw --timeout 20 --gpu 0 --mem dmabuf --use_data_direct -n 50 -s 4K --csv "$TMP/dd.csv"
wait_server
check "--use_data_direct: skipped with the reason, reg_call mlx5dv_reg_dmabuf_mr" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	$ROWS '$TMP/dd.csv' 'all:r[\"status\"] == \"skipped\" and \"data direct\" in r[\"note\"] and r[\"reg_call\"] == \"mlx5dv_reg_dmabuf_mr\"'"

# No driver at all: GPU paths skipped with dlopen's reason; host unaffected.
export GDRPERF_LIBCUDA=/nonexistent/libcuda.so.1
server gdr_read_bw --timeout 20
wait_listen "$PORT"
client gdr_read_bw --timeout 20 --gpu 0 --mem host,bounce --repeat 1 -n 50 -s 4K --csv "$TMP/nodrv.csv"
wait_server
check "no CUDA driver: -d auto falls back to rdma_cm's NIC with a warning" \
	grep -q 'warning: -d auto: no CUDA driver' "$TMP/cli.err"
check "no CUDA driver: bounce skipped with 'no CUDA driver', host ok" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	$ROWS '$TMP/nodrv.csv' 'any:\"no CUDA driver\" in r[\"note\"]' \
		'count:1:r[\"path\"] == \"host\" and r[\"size_bytes\"] == \"4096\" and r[\"status\"] == \"ok\"'"

finish
