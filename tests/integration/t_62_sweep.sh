#!/bin/bash
# A cluster sweep over three "nodes" in this guest: three rxe devices, each on
# its own veth whose far end sits in one bridge, with its own address
# (169.254.79.1-3), so that every node pair has its own path on the wire.
# Node C's link is slowed with netem (both directions). mpirun starts one rank
# per node (-d indexed by local rank, GDRPERF_NODE names it);
# `gdr_write_bw --sweep=pairs` must run the 3 pairs in 3 rounds, print the
# node x node matrix, name node C as the slow one, and write one row per
# pair and side; `--sweep=ring` runs its rounds too. A node whose address
# does not answer is reported as failed pairs while the sweep goes on.
#
# The nodes: tests/integration/sweep_nodes.sh (shared with t_63_slurm).
#
# timeout: 900
. "$(dirname "$0")/lib.sh"
PORT=${GDRPERF_TEST_PORT:-27000}

command -v mpirun >/dev/null || skip_all "mpirun not installed (openmpi-bin)"
grep -q '^#define HAVE_MPI 1' "${top_builddir:-.}/config.h" 2>/dev/null ||
	skip_all "built without MPI (--sweep needs it)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TMPDIR=/tmp
. "$(dirname "$0")/sweep_nodes.sh"
at_exit sweep_nodes_down
sweep_nodes_up || skip_all "no bridge support in this kernel (softroce-vm loads the module)"
sweep_node_slow C

# sweep OUT ARGS...: one rank per node; status in $MRC.
sweep() {
	local out=$1
	shift
	timeout 600 mpirun --oversubscribe --bind-to none --mca btl self,vader \
		-np 1 -x GDRPERF_NODE=node-a "$B/gdr_write_bw" -p "$PORT" -d rxeNA,rxeNB,rxeNC "$@" : \
		-np 1 -x GDRPERF_NODE=node-b "$B/gdr_write_bw" -p "$PORT" -d rxeNA,rxeNB,rxeNC "$@" : \
		-np 1 -x GDRPERF_NODE=node-c "$B/gdr_write_bw" -p "$PORT" -d rxeNA,rxeNB,rxeNC "$@" \
		>"$out" 2>&1
	MRC=$?
}

sweep "$TMP/pairs.out" --sweep=pairs --timeout 30 -s 64K -n 300 --csv "$TMP/pairs.csv"
LOGS="$TMP/pairs.out"
check "pairs sweep of 3 nodes: exit 0" [ "$MRC" = 0 ]
check "3 rounds, each node sitting out one" [ "$(grep -c 'sits this round out' "$TMP/pairs.out")" = 3 ]
check "the matrix is printed" grep -q '^sweep: write host at 64 KiB, median Gb/s' "$TMP/pairs.out"
check "node C is named slow, with its NIC" grep -q '^sweep: slow node: node-c (NIC rxeNC' "$TMP/pairs.out"
check "only node C is named" [ "$(grep -c '^sweep: slow node:' "$TMP/pairs.out")" = 1 ]
check "rank 0's CSV: 6 rows (3 pairs x client and server)" [ "$(csv_rows "$TMP/pairs.csv")" = 6 ]
check "rank 0's CSV: every row ok" csv_all "$TMP/pairs.csv" 'r["status"] == "ok"'
check "every node pair appears once, node names in host/peer" [ "$(pyq - "$TMP/pairs.csv" <<'PY'
import csv, sys
pairs = sorted({tuple(sorted((r["host"], r["peer"]))) for r in csv.DictReader(open(sys.argv[1]))})
print(" ".join("-".join(p) for p in pairs))
PY
)" = "node-a-node-b node-a-node-c node-b-node-c" ]
csv_whole "$TMP/pairs.csv" || not_ok "pairs CSV whole" "$TMP/pairs.csv"
# gdr-ab reads rank 0's CSV and prints the same matrix. Its heatmap (matplotlib:
# about 45 s under TCG) is drawn from a sweep CSV on the host by
# tests/scripts/t_gdr_ab_matrix.sh; here the table only.
"${top_srcdir:-.}/scripts/gdr-ab" --matrix --no-plot "$TMP/pairs.csv" >"$TMP/ab.out" 2>&1
LOGS="$TMP/ab.out" check "gdr-ab --matrix --no-plot: the node x node table" \
	grep -q 'write host: node x node' "$TMP/ab.out"

sweep "$TMP/ring.out" --sweep=ring --timeout 30 -s 64K -n 200 --csv "$TMP/ring.csv"
LOGS="$TMP/ring.out"
check "ring sweep of 3 nodes: exit 0, 3 rounds" bash -c "[ $MRC = 0 ] &&
	grep -q '^sweep: ring, 3 nodes, 3 round(s)' '$TMP/ring.out'"
check "ring: a -> b, b -> c, c -> a measured (client sends)" [ "$(pyq - "$TMP/ring.csv" <<'PY'
import csv, sys
e = sorted("%s>%s" % (r["host"], r["peer"]) for r in csv.DictReader(open(sys.argv[1])) if r["role"] == "client")
print(" ".join(e))
PY
)" = "node-a>node-b node-b>node-c node-c>node-a" ]

# Node B's address stops answering (its link down): its pairs fail, the sweep
# goes on and the pair of A and C still measures.
ip link set swBp down
sweep "$TMP/dead.out" --sweep=pairs --timeout 8 -s 64K -n 100 --csv "$TMP/dead.csv"
ip link set swBp up
LOGS="$TMP/dead.out"
check "node B unreachable: the job fails (exit $MRC) but ends" bash -c "[ $MRC != 0 ] && [ $MRC != 124 ]"
check "node B unreachable: its pairs are failed rows, A-C is ok" [ "$(pyq - "$TMP/dead.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ok = sorted({tuple(sorted((r["host"], r["peer"]))) for r in rows if r["status"] == "ok"})
bad = sorted({tuple(sorted((r["host"], r["peer"]))) for r in rows if r["status"] == "failed"})
print(ok == [("node-a", "node-c")] and ("node-a", "node-b") in bad and ("node-b", "node-c") in bad)
PY
)" = True ]
check "node B unreachable: the matrix marks its pairs failed" grep -q '^sweep: failed: .*node-b' "$TMP/dead.out"

done_testing
