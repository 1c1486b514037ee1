#!/bin/bash
# gdr_write_lat / gdr_read_lat on real Soft-RoCE: every path (GPU paths on the
# test-only fake libcuda.so.1), the latency columns by name, skip reasons,
# refused options and a bandwidth/latency mismatch.
. "$(dirname "$0")/lib.sh"
FAKE=${top_builddir:-.}/tests/fake_cuda/libcuda.so.1

# lat_rows CSV N PATHS...: N rows; ok rows on the given paths have
# 0 < min <= p50 <= p90 <= p99 <= p99.9 <= max, min <= avg <= max, no bandwidth.
lat_rows() {
	pyq - "$@" <<'PY'
import csv, sys
f, n, paths = sys.argv[1], int(sys.argv[2]), set(sys.argv[3:])
rows = list(csv.DictReader(open(f, newline='')))
if len(rows) != n:
    sys.exit(f"{len(rows)} rows, expected {n}")
seen = set()
for r in rows:
    if r["status"] != "ok":
        continue
    seen.add(r["path"])
    v = [float(r[k]) for k in ("lat_min_us", "lat_p50_us", "lat_p90_us", "lat_p99_us",
                               "lat_p999_us", "lat_max_us")]
    avg = float(r["lat_avg_us"])
    if not (0 < v[0] and v == sorted(v) and v[0] <= avg <= v[-1]):
        sys.exit(f"bad latencies {v} avg {avg} in {r['path']} {r['size_bytes']}")
    if any(r[k] for k in ("bw_peak_gbps", "bw_avg_gbps", "msg_rate_mpps")):
        sys.exit("bandwidth columns on a latency row")
if not paths <= seen:
    sys.exit(f"ok rows on {sorted(seen)}, expected {sorted(paths)}")
PY
}

# Host WRITE ping-pong (memory polling), sizes 2 B .. 256 B, CSV on both sides.
# Small counts: both sides spin, and a loaded TCG guest has millisecond tails.
server gdr_write_lat --timeout 20 --csv "$TMP/ws.csv"
client gdr_write_lat --timeout 20 -n 100 --sizes 2:256 --repeat 2 --csv "$TMP/w.csv"
wait_server
check "write_lat host: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "write_lat host: 8 ok rows, ordered percentiles, no bandwidth" lat_rows "$TMP/w.csv" 8 host
check "write_lat host: the server's rows carry the client's latencies" \
	[ "$(csv_col "$TMP/ws.csv" lat_p50_us)" = "$(csv_col "$TMP/w.csv" lat_p50_us)" ]
check "write_lat: the table has the latency header and a row per size" bash -c "
	grep -q 't_p99.9\[usec\]' '$TMP/cli.out' && [ \$(grep -c '^ host     write' '$TMP/cli.out') = 8 ]"

# Host READ.
server gdr_read_lat --timeout 20
client gdr_read_lat --timeout 20 -n 100 --sizes 8:64K --json "$TMP/r.json" --csv "$TMP/r.csv"
wait_server
check "read_lat host: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "read_lat host: ordered percentiles" lat_rows "$TMP/r.csv" 14 host
check "read_lat --json: latency keys, null bandwidth" pyq -c "
import json, sys
d = json.load(open('$TMP/r.json'))
sys.exit(0 if len(d) == 14 and d[0]['lat_p50_us'] > 0 and d[0]['bw_avg_gbps'] is None else 1)"

# Options a ping-pong refuses; a latency client against a bandwidth server.
check "write_lat -b: usage error naming the option" bash -c "
	'$B/gdr_write_lat' -b 127.0.0.1 2>'$TMP/e'; [ \$? = 2 ] && grep -q -- '-b/--bidirectional: not a latency option' '$TMP/e'"
check "read_lat --pin: usage error naming the option" bash -c "
	'$B/gdr_read_lat' --pin 127.0.0.1 2>'$TMP/e'; [ \$? = 2 ] && grep -q -- '--pin/--no-pin: not a latency option' '$TMP/e'"
server gdr_write_bw --timeout 20
client gdr_write_lat --timeout 20 -n 50 -s 64
wait_server
check "write_lat client vs write_bw server: both fail, the cause named" bash -c "
	[ $CRC = 1 ] && grep -q 'latency tool' '$TMP/cli.err' '$TMP/srv.err'"

# Launched pairs: mpirun -np 4 = two pairs at once, as for the bandwidth tools.
if command -v mpirun >/dev/null; then
	PORT=$((PORT + 10))
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TMPDIR=/tmp
	rm -f "$TMP/m.csv"
	# A build without MPI (the ASan pass) takes the server from --peer, and every
	# rank appends its own rows (one kernel here: flock keeps them whole).
	peer=()
	grep -q '^#define HAVE_MPI 1' "${top_builddir:-.}/config.h" 2>/dev/null || peer=(--peer "$ADDR")
	timeout 300 mpirun -np 4 --oversubscribe --bind-to none --mca btl self,vader \
		"$B/gdr_write_lat" -p "$PORT" --timeout 30 -n 50 --sizes 64:128 --csv "$TMP/m.csv" \
		"${peer[@]}" >"$TMP/m.out" 2>&1
	MRC=$?
	PORT=$((PORT + 10))
	LOGS="$TMP/m.out" check "mpirun -np 4 gdr_write_lat: exit 0, 2 pairs x 2 sides x 2 sizes ok latency rows" bash -c "
		[ $MRC = 0 ] && pyq - '$TMP/m.csv' <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline='')))
ok = [r for r in rows if r['status'] == 'ok' and float(r['lat_p50_us']) > 0 and not r['bw_avg_gbps']]
sys.exit(0 if len(rows) == 8 and len(ok) == 8 else 1)
PY"
else
	diag "mpirun not installed: launched latency pairs not tested"
fi

if [ ! -f "$FAKE" ]; then
	not_ok "fake libcuda.so.1 built ($FAKE missing: run make check)"
	finish
	exit 1
fi
export GDRPERF_LIBCUDA=$FAKE
export GDRPERF_ROOT=${top_srcdir:-.}/tests/cuda/roots/nvidia_peermem

# GPU paths: --mem all; peermem and bounce run (immediate data), dmabuf is skipped on rxe.
for verb in write read; do
	server gdr_${verb}_lat --timeout 30 --csv "$TMP/gs.csv"
	client gdr_${verb}_lat --timeout 30 --gpu 0 --mem all -n 50 --sizes 64:256 --csv "$TMP/g$verb.csv"
	wait_server
	check "${verb}_lat --mem all: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
	check "${verb}_lat --mem all: 4 paths x 3 sizes, host, peermem and bounce ok" \
		lat_rows "$TMP/g$verb.csv" 12 host peermem bounce
	check "${verb}_lat --mem all: dmabuf skipped with the provider's reason" csv_check "$TMP/g$verb.csv" \
		'any:r["path"] == r["path_remote"] == "dmabuf" and r["size_bytes"] == "64" and r["status"] == "skipped"' \
		'any:r["path"] == "dmabuf" and r["nic"] == "rxe0" and ("Operation not supported" in r["note"] or "DMA-BUF" in r["note"])'
	rm -f "$TMP/gs.csv"
done

# bounce stages a message whole: a size above the ring is skipped, with the reason, on both sides.
server gdr_write_lat --timeout 30 --csv "$TMP/bs.csv"
client gdr_write_lat --timeout 30 --gpu 0 --mem bounce --bounce-slots 2 --bounce-chunk 64K -n 50 --sizes 64K:256K --csv "$TMP/b.csv"
wait_server
# The ring is 2 x 64 KiB: 64K and 128K fit, 256K does not.
too_big='count:1:r["status"] == "skipped" and "larger than the staging ring" in r["note"]'
ring_rows() {
	[ "$CRC" = 0 ] && [ "$SRC" = 0 ] &&
		csv_check "$TMP/b.csv" "$too_big" \
			'any:r["path"] == r["path_remote"] == "bounce" and r["size_bytes"] == "262144" and r["status"] == "skipped"' \
			'count:2:r["path"] == r["path_remote"] == "bounce" and r["status"] == "ok"' &&
		csv_check "$TMP/bs.csv" "$too_big"
}
check "bounce lat above the ring: 256K skipped with the reason on both sides, 64K and 128K ok" ring_rows

finish
