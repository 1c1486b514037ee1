#!/bin/bash
# Two real hosts: guest A and guest B of `scripts/softroce-vm --two-hosts`,
# two kernels joined by a qemu link, each with its own rxe0.  mpirun on A
# launches gdr_write_bw and gdr_read_bw through ssh onto B with -np 2 (A
# serves, B connects) and -np 4 (two pairs, two ranks per host), --mem all
# on the fake CUDA; every CSV row is checked (pair, role, host, path,
# status, GPU by local rank on its own host).
#
# Why two guests and not two namespaces in one: see t_60_mpirun.sh (rxe in
# Linux 6.1 keeps its UDP socket in the initial namespace, and a rank in a
# namespace cannot reach mpirun's PMIx).  This file lives in its own
# directory so the single-guest run-suite (tests/integration/t_*.sh) never
# picks it up; run it with
#   scripts/softroce-vm --two-hosts -- tests/integration/run-suite --dir tests/integration/two-hosts
# timeout: 1500
. "$(dirname "$0")/../lib.sh"
PORT=${GDRPERF_TEST_PORT:-25800}
FAKE=${top_builddir:-.}/tests/fake_cuda/libcuda.so.1

[ "${GDRPERF_TWO_HOSTS:-}" = 1 ] || skip_all "needs two guests: run under scripts/softroce-vm --two-hosts"
command -v mpirun >/dev/null || skip_all "mpirun not installed (openmpi-bin)"
if [ ! -f "$FAKE" ]; then
	not_ok "fake libcuda.so.1 built ($FAKE missing: run make check)"
	finish
	exit 1
fi
HA=$GDRPERF_HOST_A
HB=$GDRPERF_HOST_B
SA=$GDRPERF_RDMA_ADDR_A
mpi=0
grep -q '^#define HAVE_MPI 1' "${top_builddir:-.}/config.h" 2>/dev/null && mpi=1
diag "built with MPI: $mpi; hosts $HA ($SA) and $HB ($GDRPERF_RDMA_ADDR_B)"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export GDRPERF_LIBCUDA=$FAKE
export GDRPERF_ROOT=${top_srcdir:-.}/tests/cuda/roots/nvidia_peermem
export GDRPERF_FAKE_CUDA_DEVICES=4
# Open MPI keeps its session directory (with sockets) under TMPDIR: each
# guest's own tmpfs.
export TMPDIR=/tmp
# The CSV is written on both guests: /tmp is not shared, this is.
S=$(mktemp -d "$GDRPERF_SHARED_DIR/t80.XXXXXX") || exit 1
at_exit 'rm -rf "$S"'

# Not a fake second host: B answers over the launcher's own agent with its
# own name and its own ACTIVE rxe0.
$GDRPERF_RSH_AGENT "$HB" 'hostname; rdma link show rxe0/1' >"$TMP/b.out" 2>&1
LOGS="$TMP/b.out"
check "$HB answers through the rsh agent: another kernel with its own rxe0" bash -c "
	[ \"\$(head -n1 '$TMP/b.out')\" = '$HB' ] && [ \"\$(hostname)\" = '$HA' ] &&
	grep -q '^link rxe0/1 state ACTIVE' '$TMP/b.out'"

# launch PROG OUT HOSTS NP CSV ARGS...: mpirun NP ranks of PROG over HOSTS;
# status in $MRC.  With MPI rank 0 gathers every rank's rows and alone
# writes CSV.csv (a path on A only: nothing is written on B).  Without MPI
# each rank writes CSV.RANK.csv in the shared directory: one --csv file
# appended to from two kernels over 9p loses rows (each guest appends at
# the end it last saw), so merge_csv joins them afterwards.
# ob1/tcp between the hosts: UCX would try rxe itself.
launch() {
	local prog=$1 out=$2 hosts=$3 np=$4 run
	export T80_CSV=$5
	shift 5
	if [ $mpi = 1 ]; then
		run=("$B/$prog" -p "$PORT" "$@" --csv "$T80_CSV.csv")
	else
		run=(bash -c 'exec "$@" --csv "$T80_CSV.$OMPI_COMM_WORLD_RANK.csv"' bash
			"$B/$prog" -p "$PORT" "$@")
	fi
	timeout 300 mpirun -np "$np" -H "$hosts" --bind-to none \
		--mca pml ob1 --mca btl self,vader,tcp --mca btl_tcp_if_include "${SA%.*}.0/24" \
		--mca oob_tcp_if_include "${SA%.*}.0/24" \
		-x GDRPERF_LIBCUDA -x GDRPERF_ROOT -x GDRPERF_FAKE_CUDA_DEVICES -x T80_CSV \
		${GDRPERF_SERVER:+-x GDRPERF_SERVER} \
		"${run[@]}" >"$out" 2>&1
	MRC=$?
	# 9p cache=loose keeps B's writes in B's page cache after its ranks
	# exit; A reads the host's file, which gets them only when B flushes.
	$GDRPERF_RSH_AGENT "$HB" sync
}

# csv_ready BASE NP: BASE.csv whole with every rank's rows: rank 0's gathered
# file (MPI; no rank wrote a file of its own), or the ranks' files merged.
csv_ready() {
	if [ $mpi = 1 ]; then
		csv_whole "$1.csv" && ! ls "$1".[0-9]*.csv 2>/dev/null
	else
		merge_csv "$1" "$2"
	fi
}

# merge_csv BASE NP: every rank's BASE.RANK.csv whole, with one header, into
# BASE.csv.  A rank that wrote no file is not an error here (a gathering
# rank 0 may write them all); check_rows counts the rows.
merge_csv() {
	pyq - "$1" "$2" <<'PY'
import csv, os, sys
base, np = sys.argv[1], int(sys.argv[2])
header, out, bad = None, [], []
for r in range(np):
    f = f"{base}.{r}.csv"
    if not os.path.exists(f):
        continue
    data = open(f, newline="").read()
    rows = list(csv.reader(data.splitlines()))
    if not rows or not data.endswith("\n"):
        bad.append(f"{f}: empty or no final newline")
        continue
    if header is None:
        header = rows[0]
    if rows[0] != header or any(len(x) != len(header) for x in rows):
        bad.append(f"{f}: header differs or a row has the wrong number of fields")
    out += rows[1:]
if header is None:
    bad.append(f"{base}.*.csv: no rank wrote a CSV")
for b in bad:
    print(b)
if not bad:
    with open(base + ".csv", "w", newline="") as o:
        csv.writer(o, lineterminator="\n").writerows([header] + out)
sys.exit(1 if bad else 0)
PY
}

# check_rows CSV NPAIRS VERB: the rows of NPAIRS pairs, servers on A and
# clients on B, one by one.
check_rows() {
	pyq "${top_srcdir:-.}/tests/integration/check_rows.py" "$1" "$2" \
		--verb "$3" --peer "$SA" --hosts "$HA,$HB"
}

ARGS=(--mem all --repeat 1 -n 50 --sizes 4K:16K --validate --timeout 60)

for prog in gdr_write_bw gdr_read_bw; do
	verb=${prog#gdr_}
	verb=${verb%_bw}

	# One pair: rank 0 on A serves, rank 1 on B connects.
	PORT=$((PORT + 10))
	peer=()
	[ $mpi = 1 ] || peer=(--peer "$SA")
	[ $mpi = 1 ] && base=$TMP || base=$S
	launch "$prog" "$TMP/$verb-np2.out" "$HA,$HB" 2 "$base/$verb-np2" "${ARGS[@]}" "${peer[@]}"
	LOGS="$TMP/$verb-np2.out"
	check "$verb -np 2 -H $HA,$HB: mpirun exits 0" [ "$MRC" = 0 ]
	check "$verb -np 2: rank 0 (local 0) serves, rank 1 (local 0 on the other host) connects to $SA" bash -c "
		grep -q '^launch: Open MPI rank 0 of 2 (local 0): server for rank 1 (pair 0 of 1, port $PORT' '$TMP/$verb-np2.out' &&
		grep -q '^launch: Open MPI rank 1 of 2 (local 0): client of rank 0 (pair 0 of 1, server $SA, port $PORT' '$TMP/$verb-np2.out'"
	check "$verb -np 2: CSV whole (gathered by rank 0 with MPI, else one per rank)" csv_ready "$base/$verb-np2" 2
	LOGS="$TMP/$verb-np2.out $base/$verb-np2.csv"
	check "$verb -np 2: 24 rows, each checked (server on $HA, client on $HB, path, status, GPU)" \
		check_rows "$base/$verb-np2.csv" 1 "$verb"
	if [ $mpi = 1 ]; then
		check "$verb -np 2: rank 0 on $HA gathered the rank on $HB" \
			grep -qx 'gather: rank 0 has the rows of all 2 ranks (1 pair(s))' "$TMP/$verb-np2.out"
	fi

	# Two pairs, two ranks per host: ranks 0,1 on A serve ranks 2,3 on B.
	PORT=$((PORT + 10))
	[ $mpi = 1 ] || export GDRPERF_SERVER="$SA,$SA"
	launch "$prog" "$TMP/$verb-np4.out" "$HA:2,$HB:2" 4 "$base/$verb-np4" "${ARGS[@]}"
	unset GDRPERF_SERVER
	LOGS="$TMP/$verb-np4.out"
	check "$verb -np 4 -H $HA:2,$HB:2: mpirun exits 0" [ "$MRC" = 0 ]
	check "$verb -np 4: ranks 0,1 on $HA serve on p, p+1; ranks 2,3 (local 0,1 on $HB) connect" bash -c "
		grep -q '^launch: Open MPI rank 0 of 4 (local 0): server for rank 2 (pair 0 of 2, port $PORT' '$TMP/$verb-np4.out' &&
		grep -q '^launch: Open MPI rank 1 of 4 (local 1): server for rank 3 (pair 1 of 2, port $((PORT + 1))' '$TMP/$verb-np4.out' &&
		grep -q '^launch: Open MPI rank 2 of 4 (local 0): client of rank 0 (pair 0 of 2, server $SA, port $PORT' '$TMP/$verb-np4.out' &&
		grep -q '^launch: Open MPI rank 3 of 4 (local 1): client of rank 1 (pair 1 of 2, server $SA, port $((PORT + 1))' '$TMP/$verb-np4.out'"
	check "$verb -np 4: CSV whole (gathered by rank 0 with MPI, else one per rank)" csv_ready "$base/$verb-np4" 4
	LOGS="$TMP/$verb-np4.out $base/$verb-np4.csv"
	check "$verb -np 4: 48 rows, each checked (servers on $HA, clients on $HB, path, status, GPU)" \
		check_rows "$base/$verb-np4.csv" 2 "$verb"
	if [ $mpi = 1 ]; then
		check "$verb -np 4: MPI barrier on every rank; rank 0 gathered all 4 ranks of both hosts" bash -c "
			[ \"\$(grep -c 'MPI barrier before each measurement' '$TMP/$verb-np4.out')\" = 4 ] &&
			grep -qx 'gather: rank 0 has the rows of all 4 ranks (2 pair(s))' '$TMP/$verb-np4.out'"
	fi
done
finish
