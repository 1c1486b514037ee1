#!/bin/bash
# Launched pairs: Open MPI's mpirun starts gdr_write_bw with -np 2 (one pair)
# and -np 4 (two pairs at once), --mem all on the fake CUDA; every rank's CSV
# rows are checked one by one (role, pair, path, status, GPU by local rank).
#
# All ranks share the one rxe device (rxe0 on 169.254.77.1), pairs on ports
# -p + pair. Two namespaces joined by a veth do not work
# on the guest's 6.1 kernel: rxe's UDP socket (port 4791) lives in the initial
# namespace, so rdma_cm from a device in gdrA/gdrB times out
# (RDMA_CM_EVENT_UNREACHABLE, -110) even within one namespace; and an MPI rank
# moved there with `ip netns exec` cannot reach mpirun's PMIx server on the
# initial namespace's loopback ("OPAL ERROR: Unreachable" in MPI_Init).
#
# A build with --with-mpi passes the server address through MPI and syncs
# the pairs; a build without it gets it from --peer / GDRPERF_SERVER.
# timeout: 600
. "$(dirname "$0")/bw_lib.sh"
PORT=${GDRPERF_TEST_PORT:-25600}
FAKE=${top_builddir:-.}/tests/fake_cuda/libcuda.so.1

if ! command -v mpirun >/dev/null; then
	echo "1..0 # SKIP mpirun not installed (openmpi-bin)"
	exit 0
fi
if [ ! -f "$FAKE" ]; then
	not_ok "fake libcuda.so.1 built ($FAKE missing: run make check)"
	finish
	exit 1
fi
mpi=0
grep -q '^#define HAVE_MPI 1' "${top_builddir:-.}/config.h" 2>/dev/null && mpi=1
echo "# built with MPI: $mpi"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export GDRPERF_LIBCUDA=$FAKE
export GDRPERF_ROOT=${top_srcdir:-.}/tests/cuda/roots/nvidia_peermem
export GDRPERF_FAKE_CUDA_DEVICES=4
# Open MPI keeps its session directory (with sockets) under TMPDIR.
export TMPDIR=/tmp

# launch NP OUT ARGS...: mpirun NP ranks of gdr_write_bw; status in $MRC.
launch() {
	local np=$1 out=$2
	shift 2
	timeout 300 mpirun -np "$np" --oversubscribe --bind-to none --mca btl self,vader \
		-x GDRPERF_LIBCUDA -x GDRPERF_ROOT -x GDRPERF_FAKE_CUDA_DEVICES \
		${GDRPERF_SERVER:+-x GDRPERF_SERVER} \
		"$B/gdr_write_bw" -p "$PORT" "$@" >"$out" 2>&1
	MRC=$?
}

# check_rows CSV NPAIRS: the rows of NPAIRS launched pairs, one by one.
check_rows() {
	python3 - "$1" "$2" "$ADDR" <<'PY'
import csv, sys
path, npairs, addr = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = list(csv.DictReader(open(path, newline="")))
sizes = {"4096", "8192", "16384"}
bad = []
seen = {}
for i, r in enumerate(rows, 2):
    lab = r["label"]
    if not lab.startswith("pair "):
        bad.append(f"line {i}: label {lab!r} does not name the pair")
        continue
    pair = int(lab[5:])
    role = r["role"]
    key = (pair, role, r["path"], r["size_bytes"])
    seen[key] = seen.get(key, 0) + 1
    # Local rank = rank on one node: pair k's server is rank k, its client rank k + N.
    gpu = str(pair if role == "server" else pair + npairs)
    if r["size_bytes"] not in sizes:
        bad.append(f"line {i}: size {r['size_bytes']}")
    if r["verb"] != "write":
        bad.append(f"line {i}: verb {r['verb']}")
    if r["path"] == "dmabuf":
        if r["status"] != "skipped" or not r["note"]:
            bad.append(f"line {i}: dmabuf on rxe should be skipped with a reason: {r['status']} {r['note']!r}")
    elif r["status"] != "ok" or float(r["bw_avg_gbps"] or 0) <= 0:
        bad.append(f"line {i}: {r['path']} status {r['status']} bw {r['bw_avg_gbps']} note {r['note']!r}")
    if r["path"] in ("peermem", "bounce") and r["gpu"] != gpu:
        bad.append(f"line {i}: pair {pair} {role} {r['path']} on GPU {r['gpu']!r}, expected local rank's {gpu}")
    if r["path"] == "host" and r["gpu"]:
        bad.append(f"line {i}: host row names GPU {r['gpu']}")
    if role == "client" and r["peer"] != addr:
        bad.append(f"line {i}: client peer {r['peer']}, expected {addr}")
    if r["nic"] != "rxe0":
        bad.append(f"line {i}: nic {r['nic']}")
for pair in range(npairs):
    for role in ("server", "client"):
        for p in ("host", "dmabuf", "peermem", "bounce"):
            for s in sizes:
                if seen.get((pair, role, p, s)) != 1:
                    bad.append(f"pair {pair} {role} {p} {s}: {seen.get((pair, role, p, s), 0)} rows, expected 1")
if len(rows) != npairs * 2 * 12:
    bad.append(f"{len(rows)} rows, expected {npairs * 2 * 12}")
for b in bad[:20]:
    print("#   " + b)
sys.exit(1 if bad else 0)
PY
}

ARGS=(--mem all -n 50 --sizes 4K:16K --validate --timeout 60)
peer_np2=()
[ $mpi = 1 ] || peer_np2=(--peer "$ADDR")

# One pair.
launch 2 "$TMP/np2.out" "${ARGS[@]}" "${peer_np2[@]}" --csv "$TMP/np2.csv"
LOGS="$TMP/np2.out"
check "-np 2: mpirun exits 0" [ "$MRC" = 0 ]
check "-np 2: rank 0 serves rank 1, rank 1 connects to rank 0, launcher named" bash -c "
	grep -q '^launch: Open MPI rank 0 of 2 (local 0): server for rank 1 (pair 0 of 1, port $PORT' '$TMP/np2.out' &&
	grep -q '^launch: Open MPI rank 1 of 2 (local 1): client of rank 0 (pair 0 of 1, server $ADDR, port $PORT' '$TMP/np2.out'"
check "-np 2: CSV whole (every row as many fields as the header)" csv_whole "$TMP/np2.csv"
LOGS="$TMP/np2.out $TMP/np2.csv"
check "-np 2: 24 rows, each checked (pair, role, path, status, GPU by local rank)" check_rows "$TMP/np2.csv" 1

# Two pairs at once, the server list from the environment when there is no MPI.
PORT=$((PORT + 10))
[ $mpi = 1 ] || export GDRPERF_SERVER="$ADDR,$ADDR"
launch 4 "$TMP/np4.out" "${ARGS[@]}" --csv "$TMP/np4.csv"
unset GDRPERF_SERVER
LOGS="$TMP/np4.out"
check "-np 4: mpirun exits 0" [ "$MRC" = 0 ]
check "-np 4: ranks 0,1 serve on ports p, p+1; ranks 2,3 connect to them" bash -c "
	grep -q '^launch: Open MPI rank 0 of 4 (local 0): server for rank 2 (pair 0 of 2, port $PORT' '$TMP/np4.out' &&
	grep -q '^launch: Open MPI rank 1 of 4 (local 1): server for rank 3 (pair 1 of 2, port $((PORT + 1))' '$TMP/np4.out' &&
	grep -q '^launch: Open MPI rank 2 of 4 (local 2): client of rank 0 (pair 0 of 2, server $ADDR, port $PORT' '$TMP/np4.out' &&
	grep -q '^launch: Open MPI rank 3 of 4 (local 3): client of rank 1 (pair 1 of 2, server $ADDR, port $((PORT + 1))' '$TMP/np4.out'"
check "-np 4: CSV whole after four ranks appended to it" csv_whole "$TMP/np4.csv"
LOGS="$TMP/np4.out $TMP/np4.csv"
check "-np 4: 48 rows, each checked (pair, role, path, status, GPU by local rank)" check_rows "$TMP/np4.csv" 2
if [ $mpi = 1 ]; then
	check "-np 4: MPI barrier announced on every rank" \
		[ "$(grep -c 'MPI barrier before each measurement' "$TMP/np4.out")" = 4 ]
fi

# Mistakes are refused in words.
PORT=$((PORT + 10))
launch 3 "$TMP/np3.out" -n 10 --timeout 10
LOGS="$TMP/np3.out"
check "-np 3: refused, pairs need an even number of ranks" bash -c "
	[ $MRC != 0 ] && grep -q 'started 3 ranks: pairs need an even number' '$TMP/np3.out'"
if [ $mpi = 0 ]; then
	launch 2 "$TMP/nopeer.out" -n 10 --timeout 10
	LOGS="$TMP/nopeer.out"
	check "no MPI, no --peer: the client says to give --peer, GDRPERF_SERVER or --with-mpi" bash -c "
		[ $MRC != 0 ] && grep -q 'give --peer HOST (or GDRPERF_SERVER=HOST' '$TMP/nopeer.out' &&
		grep -q 'configure --with-mpi' '$TMP/nopeer.out'"
fi
finish
