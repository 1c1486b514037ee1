#!/bin/bash
# Each side its own memory (issue 48) on real Soft-RoCE, GPU paths on the
# test-only fake libcuda.so.1 (peermem found under GDRPERF_ROOT): --mem all
# with the server's side all (--mem-remote all) runs every combination rxe can
# run (host, peermem, bounce on either side: 9 ok rows a side) and skips the 7
# with dmabuf, naming the side whose registration failed (rxe has no
# ibv_reg_dmabuf_mr); --validate passes for WRITE and READ on host:peermem,
# peermem:host, bounce:host and host:bounce (bounce on one side only, each
# message 2 chunks); duration mode with bounce on one side; the server's own
# --mem chooses its side with no option on the client; both naming the
# server's side differently stops both; a latency tool takes the same
# options.
# timeout: 600
. "$(dirname "$0")/lib.sh"
use_fake_cuda
export GDRPERF_ROOT=${top_srcdir:-.}/tests/cuda/roots/nvidia_peermem
DMABUF_WHY='rxe0: ibv_reg_dmabuf_mr: Operation not supported'

# --mem all, --mem-remote all: 16 combinations, one rotation entry each.
server gdr_write_bw --timeout 60 --csv "$TMP/srv.csv"
wait_listen "$PORT"
client gdr_write_bw --timeout 60 --gpu 0 --mem all --mem-remote all -n 20 -s 4K \
	--csv "$TMP/all.csv"
wait_server
check "--mem all --mem-remote all: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
# combos CSV ROLE: 16 rows, each combination once, the 9 without dmabuf ok,
# each of those its own turn in the rotation of the 16 (order), all of ROLE.
combos() {
	pyq - "$@" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
pairs = {(r["path"], r["path_remote"]) for r in rows}
ok = [r for r in rows if r["status"] == "ok"]
want_ok = {(a, b) for a in ("host", "peermem", "bounce") for b in ("host", "peermem", "bounce")}
if len(rows) != 16 or len(pairs) != 16:
    sys.exit(f"{len(rows)} rows of {len(pairs)} combinations, expected 16 of 16")
if {(r["path"], r["path_remote"]) for r in ok} != want_ok or len(ok) != 9:
    sys.exit(f"ok: {sorted((r['path'], r['path_remote']) for r in ok)}")
turns = [int(r["order"]) for r in ok]
if len(set(turns)) != 9 or not all(0 <= t < 16 for t in turns):
    sys.exit(f"turns {sorted(turns)}: expected 9 distinct of 0..15 (skipped ones keep theirs)")
if any(r["role"] != sys.argv[2] or r["nic_remote"] != "rxe0" for r in rows):
    sys.exit("a row of the other role, or without the peer's NIC")
PY
}
check "client: 16 rows, one per combination; the 9 without dmabuf ok, each its own turn" \
	combos "$TMP/all.csv" client
check "client: dmabuf skipped with the side named, local or remote (both when both)" \
	csv_check "$TMP/all.csv" \
	"all:r['status'] == 'ok' or r['note'] == '; '.join(s + ': $DMABUF_WHY (provider has no DMA-BUF support)' for s, k in (('client (local)', r['path']), ('server (remote)', r['path_remote'])) if k == 'dmabuf')"
check "client: the GPU columns are this side's, the *_remote ones the server's" \
	csv_check "$TMP/all.csv" \
	'all:(r["gpu_name"] == "Fake GPU 0") == (r["path"] != "host")' \
	'all:(r["gpu_name_remote"] == "Fake GPU 0") == (r["path_remote"] != "host")' \
	'all:(r["gpu_bus_id_remote"] == "0000:10:00.0") == (r["path_remote"] != "host")'
check "client: bounce on one side names the staging side; the chunk on both, copies on the stager's" \
	csv_check "$TMP/all.csv" \
	'all:r["status"] != "ok" or ("bounce" in (r["path"], r["path_remote"])) == bool(r["bounce_chunk"])' \
	'all:r["status"] != "ok" or (r["path"] == "bounce") == bool(r["bounce_copy"])' \
	'count:2:r["status"] == "ok" and "on the client only; server " + r["path_remote"] + " registered directly" in r["note"]' \
	'count:2:r["status"] == "ok" and "on the server only; client " + r["path"] + " registered directly" in r["note"]'
check "server: the same 16 combinations on its own clock" combos "$TMP/srv.csv" server
check "server: each row its own path first (path_remote the client's)" \
	csv_check "$TMP/srv.csv" \
	'count:1:r["path"] == "bounce" and r["path_remote"] == "host" and "on the server only; client host registered directly" in r["note"]' \
	'any:r["status"] == "skipped" and r["path"] == "host" and r["note"].startswith("client (remote): ")' \
	'any:r["status"] == "skipped" and r["path"] == "dmabuf" and r["note"].startswith("server (local): ")'
check "client table: path:remote in the first column" \
	grep -Eq '^ bounce:peermem +write +4096 +20 ' "$TMP/cli.out"

# --validate across combinations, bounce on one side only: 2 chunks a message.
for verb in write read; do
	server gdr_${verb}_bw --timeout 60 --csv "$TMP/vs-$verb.csv"
	wait_listen "$PORT"
	client gdr_${verb}_bw --timeout 60 --gpu 0 --validate -n 12 --warmup 2 --sizes 4K:8K \
		--bounce-chunk 4K --bounce-slots 2 \
		--mem host:peermem,peermem:host,bounce:host,host:bounce --csv "$TMP/v-$verb.csv"
	wait_server
	check "$verb --validate on host:peermem, peermem:host, bounce:host, host:bounce: both exit 0" \
		[ "$CRC" = 0 -a "$SRC" = 0 ]
	for f in "$TMP/v-$verb.csv" "$TMP/vs-$verb.csv"; do
		check "$verb --validate ($(basename "$f")): 8 rows, all ok and validated" \
			csv_check "$f" 'count:8' \
			'all:r["status"] == "ok" and r["note"].startswith("validated")' \
			'count:2:(r["path"], r["path_remote"]) == ("bounce", "host")' \
			'count:2:(r["path"], r["path_remote"]) == ("host", "bounce")'
	done
done

# Duration mode, bounce on one side: the side that times it ends the run alone.
for verb in write read; do
	server gdr_${verb}_bw --timeout 60
	wait_listen "$PORT"
	client gdr_${verb}_bw --timeout 60 --gpu 0 -D 0.3 -s 16K --mem bounce:host,host:bounce \
		--csv "$TMP/d-$verb.csv"
	wait_server
	check "$verb -D 0.3 --mem bounce:host,host:bounce: both exit 0, both rows ok" \
		csv_check "$TMP/d-$verb.csv" 'count:2:r["status"] == "ok" and num(r["bw_avg_gbps"]) > 0'
done

# As perftest: the server's own --mem is its side; the client names nothing.
server gdr_read_bw --timeout 60 --gpu 0 --mem peermem --csv "$TMP/own-s.csv"
wait_listen "$PORT"
client gdr_read_bw --timeout 60 -n 20 -s 4K --csv "$TMP/own.csv"
wait_server
check "server --mem peermem, client plain: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "server chooses: the client's row is host:peermem, the server's peermem:host" \
	bash -c "pyq '$IT_DIR/gpu_rows.py' '$TMP/own.csv' 'count:1' \
		'all:(r[\"path\"], r[\"path_remote\"], r[\"status\"]) == (\"host\", \"peermem\", \"ok\")' &&
	pyq '$IT_DIR/gpu_rows.py' '$TMP/own-s.csv' 'count:1' \
		'all:(r[\"path\"], r[\"path_remote\"], r[\"status\"]) == (\"peermem\", \"host\", \"ok\")'"

# Both name the server's side, differently: both stop before measuring, naming both.
server gdr_write_bw --timeout 30 --gpu 0 --mem peermem
wait_listen "$PORT"
client gdr_write_bw --timeout 30 --mem-remote bounce -n 20
wait_server
want="plan mismatch: the server's side: the client names bounce (--mem-remote or --mem LOCAL:REMOTE), the server's --mem says peermem"
check "both name the server's side differently: both exit 1" [ "$CRC" = 1 -a "$SRC" = 1 ]
check "... the client and the server say why, naming both" \
	bash -c "grep -qF \"$want\" '$TMP/cli.err' && grep -qF \"$want\" '$TMP/srv.err'"

# A latency tool: the same options; WRITE arrival by immediate when either side is a GPU path.
server gdr_write_lat --timeout 60
wait_listen "$PORT"
client gdr_write_lat --timeout 60 --gpu 0 -n 20 -s 64 --mem host:peermem,bounce:host,host:host \
	--csv "$TMP/lat.csv"
wait_server
check "write_lat --mem host:peermem,bounce:host,host:host: both exit 0, 3 ok rows" \
	[ "$CRC" = 0 -a "$SRC" = 0 ]
check "write_lat: each combination measured, by immediate unless both sides host" \
	csv_check "$TMP/lat.csv" 'count:3:r["status"] == "ok" and num(r["lat_p50_us"]) > 0' \
	'count:1:r["path_remote"] == "peermem" and "immediate" in r["note"]' \
	'count:1:r["path"] == "bounce" and "the client stages" in r["note"]' \
	'count:1:r["path"] == r["path_remote"] == "host" and "polling the last byte" in r["note"]'
done_testing
