#!/bin/bash
# The GPU paths on real Soft-RoCE with the test-only fake libcuda.so.1 (host
# memory behind "device pointers"): peermem mechanics (fixture sysfs root so
# detection passes), dmabuf skipped with the provider's EOPNOTSUPP, --mem all.
. "$(dirname "$0")/bw_lib.sh"
FAKE=${top_builddir:-.}/tests/fake_cuda/libcuda.so.1
if [ ! -f "$FAKE" ]; then
	not_ok "fake libcuda.so.1 built ($FAKE missing: run make check)"
	finish
	exit 1
fi
export GDRPERF_LIBCUDA=$FAKE

# peermem with the module "loaded" (fixture root): WRITE and READ, validated.
export GDRPERF_ROOT=${top_srcdir:-.}/tests/cuda/roots/nvidia_peermem
server gdr_write_bw --timeout 20
client gdr_write_bw --timeout 20 --gpu 0 --mem peermem -n 100 --sizes 4K:256K --validate --csv "$TMP/pm.csv"
wait_server
check "peermem write --validate: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "--gpu 0 without -d: the nearest active NIC is chosen and printed" \
	grep -q '^placement: rxe0 is the nearest active NIC to GPU 0' "$TMP/cli.out"
check "peermem write: 7 ok validated rows on path peermem with the GPU named" awk -F, '
	NR > 1 { n++; if ($6 != "peermem" || $31 != "ok" || $32 != "validated" || $22 != "0" || $23 == "") bad = 1 }
	END { exit (bad || n != 7) }' "$TMP/pm.csv"
server gdr_read_bw --timeout 20
client gdr_read_bw --timeout 20 --gpu 0 --mem peermem -n 100 -s 64K --validate
wait_server
check "peermem read --validate: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]

# Without a peer-memory client the path is skipped with that reason.
export GDRPERF_ROOT=${top_srcdir:-.}/tests/cuda/roots/none
server gdr_write_bw --timeout 20
client gdr_write_bw --timeout 20 --gpu 0 --mem peermem,host -n 50 -s 4K --csv "$TMP/none.csv"
wait_server
check "no nvidia_peermem: skipped with the sysfs path, host still runs" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	grep -q 'skipped,.*nvidia_peermem' '$TMP/none.csv' && grep -q ',host,host,4096,.*,ok,' '$TMP/none.csv'"

# dmabuf: rxe has no reg_dmabuf_mr, so the path is skipped with the provider's answer.
server gdr_write_bw --timeout 20
client gdr_write_bw --timeout 20 --gpu 0 --mem dmabuf -n 50 -s 4K --csv "$TMP/db.csv"
wait_server
check "dmabuf on rxe: skipped, reason names the device and EOPNOTSUPP" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	grep -q 'skipped' '$TMP/db.csv' && grep -qE 'rxe0.*(Operation not supported|DMA-BUF)' '$TMP/db.csv'"

# --mem all: one row per path x size, each ok or skipped with a reason.
export GDRPERF_ROOT=${top_srcdir:-.}/tests/cuda/roots/nvidia_peermem
server gdr_write_bw --timeout 30
client gdr_write_bw --timeout 30 --gpu 0 --mem all -n 50 --sizes 4K:16K --csv "$TMP/all.csv"
wait_server
check "--mem all: 4 paths x 3 sizes = 12 rows" bash -c "[ $CRC = 0 -a $SRC = 0 ] && [ \$(tail -n +2 '$TMP/all.csv' | wc -l) = 12 ]"
check "--mem all: topology line before the table, rxe is 'not PCI' (unknown)" bash -c "
	grep -q '^topology: GPU (.*) <-> rxe0 (not PCI): unknown' '$TMP/cli.out' &&
	[ \$(grep -n '^topology:' '$TMP/cli.out' | cut -d: -f1) -lt \$(grep -n '^ path ' '$TMP/cli.out' | cut -d: -f1) ]"
check "--mem all: GPU rows carry the GPU and distance 'unknown', host rows none" awk -F, '
	NR > 1 && $6 != "host" && ($22 != "0" || $27 != "unknown") { bad = 1 }
	NR > 1 && $6 == "host" && ($22 != "" || $27 != "") { bad = 1 } END { exit bad }' "$TMP/all.csv"
check "--mem all: every row ok, or skipped with a note" awk -F, '
	NR > 1 { if (!($31 == "ok" || ($31 == "skipped" && $32 != ""))) bad = 1; paths[$6] = 1 }
	END { exit (bad || length(paths) != 4) }' "$TMP/all.csv"

# No driver at all: GPU paths skipped with dlopen's reason; host unaffected.
export GDRPERF_LIBCUDA=/nonexistent/libcuda.so.1
server gdr_read_bw --timeout 20
client gdr_read_bw --timeout 20 --gpu 0 --mem host,bounce -n 50 -s 4K --csv "$TMP/nodrv.csv"
wait_server
check "no CUDA driver: -d auto falls back to rdma_cm's NIC with a warning" \
	grep -q 'warning: -d auto: no CUDA driver' "$TMP/cli.err"
check "no CUDA driver: bounce skipped with 'no CUDA driver', host ok" bash -c "[ $CRC = 0 -a $SRC = 0 ] &&
	grep -q 'no CUDA driver' '$TMP/nodrv.csv' && grep -q ',host,host,4096,.*,ok,' '$TMP/nodrv.csv'"

finish
