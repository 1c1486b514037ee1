#!/bin/bash
# Paths side by side in time (issue 38) on real Soft-RoCE, GPU paths on the
# test-only fake libcuda.so.1: with --mem all every (size, repeat) measures
# every path before the next repeat starts, so the rows of different paths at
# one size overlap in time (t_start_s .. t_end_s, on each side's own clock),
# and each row's `order` is its turn. For a bandwidth tool and a latency tool.
# timeout: 600
. "$(dirname "$0")/lib.sh"
use_fake_cuda
export GDRPERF_ROOT=${top_srcdir:-.}/tests/cuda/roots/nvidia_peermem

# interleaved CSV SIZES N_OK: at every size the ok rows (N_OK paths) overlap
# in time, each starts before every other one ends; their turns are distinct
# and the turns move on from one size to the next (the rotation goes on);
# skipped rows carry no times.
interleaved() {
	pyq - "$@" <<'PY'
import csv, sys
f, nsizes, n_ok = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = list(csv.DictReader(open(f, newline='')))
sizes = sorted({int(r["size_bytes"]) for r in rows})
if len(sizes) != nsizes:
    sys.exit(f"{len(sizes)} sizes, expected {nsizes}")
turns = []
for s in sizes:
    ok = [r for r in rows if int(r["size_bytes"]) == s and r["status"] == "ok"]
    if len(ok) != n_ok:
        sys.exit(f"size {s}: {len(ok)} ok rows, expected {n_ok}")
    t0 = [float(r["t_start_s"]) for r in ok]
    t1 = [float(r["t_end_s"]) for r in ok]
    if any(a > b for a, b in zip(t0, t1)):
        sys.exit(f"size {s}: a row ends before it starts: {list(zip(t0, t1))}")
    if not max(t0) < min(t1):
        sys.exit(f"size {s}: rows do not overlap in time: " +
                 ", ".join(f"{r['path']} {a:.3f}..{b:.3f}" for r, a, b in zip(ok, t0, t1)))
    order = {r["path"] + "/" + r["gpu_alloc"]: int(r["order"]) for r in ok}
    if len(set(order.values())) != len(order):
        sys.exit(f"size {s}: turns not distinct: {order}")
    turns.append(order)
for r in rows:
    if r["status"] == "skipped" and (r["t_start_s"] or r["t_end_s"] or r["order"]):
        sys.exit(f"skipped {r['path']} row carries times")
if nsizes > 1 and turns[0] == turns[1]:
    sys.exit(f"the turns did not move on between sizes: {turns[0]}")
PY
}

# sizes_in_order CSV: every ok row has times, and a size's rows start after the
# rows of the size before it end.
sizes_in_order() {
	pyq - "$1" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline='')) if r["status"] == "ok"]
if not rows or not all(0 <= float(r["t_start_s"]) < float(r["t_end_s"]) for r in rows):
    sys.exit("an ok row without times")
by = {}
for r in rows:
    by.setdefault(int(r["size_bytes"]), []).append(r)
s = sorted(by)
for a, b in zip(s, s[1:]):
    if not max(float(r["t_end_s"]) for r in by[a]) <= min(float(r["t_start_s"]) for r in by[b]):
        sys.exit(f"size {b} began before size {a} ended")
PY
}

# Bandwidth, WRITE, --mem all: host, peermem, bounce measured in turns (dmabuf is
# skipped on rxe), 3 repeats at each of 2 sizes; CSV on both sides.
server gdr_write_bw --timeout 40 --csv "$TMP/srv.csv"
wait_listen "$PORT"
client gdr_write_bw --timeout 40 --gpu 0 --mem all -n 100 --sizes 4K:8K --repeat 3 \
	--csv "$TMP/bw.csv"
wait_server
check "write_bw --mem all --repeat 3: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "write_bw: every path's buffers registered before the first row" bash -c "
	last=\$(grep -n '^bounce: ' '$TMP/cli.out' | head -1 | cut -d: -f1)
	first=\$(grep -n '^ host     write' '$TMP/cli.out' | head -1 | cut -d: -f1)
	[ -n \"\$last\" ] && [ -n \"\$first\" ] && [ \"\$last\" -lt \"\$first\" ]"
check "write_bw client: rows of host, peermem, bounce overlap in time at each size" \
	interleaved "$TMP/bw.csv" 2 3
check "write_bw server: the same on its own clock" interleaved "$TMP/srv.csv" 2 3
check "write_bw: sizes one after the other, paths side by side" sizes_in_order "$TMP/bw.csv"
check "write_bw: no path-major note" bash -c "! grep -q 'path-major' '$TMP/bw.csv'"

# Latency, READ: host and peermem in turns, 3 repeats at each of 2 sizes.
server gdr_read_lat --timeout 40 --csv "$TMP/lsrv.csv"
wait_listen "$PORT"
client gdr_read_lat --timeout 40 --gpu 0 --mem host,peermem -n 100 --sizes 64:128 --repeat 3 \
	--csv "$TMP/lat.csv"
wait_server
check "read_lat --mem host,peermem --repeat 3: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "read_lat client: host and peermem rows overlap in time at each size" \
	interleaved "$TMP/lat.csv" 2 2
check "read_lat server: the same on its own clock" interleaved "$TMP/lsrv.csv" 2 2

# One path: nothing to take turns with; its rows still say when they ran.
server gdr_write_bw --timeout 40
wait_listen "$PORT"
client gdr_write_bw --timeout 40 -n 100 --sizes 4K:8K --repeat 2 --csv "$TMP/one.csv"
wait_server
check "write_bw one path: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "write_bw one path: turn 0 on every row" [ "$(csv_vals "$TMP/one.csv" order)" = "0 0" ]
check "write_bw one path: each row's times, one size after the other" sizes_in_order "$TMP/one.csv"
finish
