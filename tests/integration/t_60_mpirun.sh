#!/bin/bash
# Launched pairs: Open MPI's mpirun starts gdr_write_bw with -np 2 (one pair)
# and -np 4 (two pairs at once), --mem all on the fake CUDA; the CSV rows are
# checked one by one (role, pair, path, status, GPU by local rank).
#
# Two routes, both from one build: with MPI (configure --with-mpi) rank 0
# gathers every rank's rows, writes the CSV alone (pair by pair) and prints the
# node-to-node table, checked against the sum of the rows; without MPI
# (--launch=no-mpi, or a build without MPI) every rank appends its own rows,
# the server comes from --peer / GDRPERF_SERVER, and gdr-ab --aggregate sums.
#
# All ranks share the one rxe device (rxe0 on 169.254.77.1), pairs on ports
# -p + pair. Two namespaces joined by a veth do not work
# on the guest's 6.1 kernel: rxe's UDP socket (port 4791) lives in the initial
# namespace, so rdma_cm from a device in gdrA/gdrB times out
# (RDMA_CM_EVENT_UNREACHABLE, -110) even within one namespace; and an MPI rank
# moved there with `ip netns exec` cannot reach mpirun's PMIx server on the
# initial namespace's loopback ("OPAL ERROR: Unreachable" in MPI_Init).
#
# timeout: 900
. "$(dirname "$0")/lib.sh"
PORT=${GDRPERF_TEST_PORT:-25600}
FAKE=${top_builddir:-.}/tests/fake_cuda/libcuda.so.1

command -v mpirun >/dev/null || skip_all "mpirun not installed (openmpi-bin)"
if [ ! -f "$FAKE" ]; then
	not_ok "fake libcuda.so.1 built ($FAKE missing: run make check)"
	finish
	exit 1
fi
mpi=0
grep -q '^#define HAVE_MPI 1' "${top_builddir:-.}/config.h" 2>/dev/null && mpi=1
diag "built with MPI: $mpi"

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

# check_rows CSV NPAIRS [gathered]: the rows of NPAIRS launched pairs, one by
# one; gathered: written by rank 0 alone, pair by pair (server, then client).
check_rows() {
	pyq "${top_srcdir:-.}/tests/integration/check_rows.py" "$1" "$2" \
		--verb write --peer "$ADDR" ${3:+--gathered}
}

# sums CSV: "verb path size pairs total" per line, each pair's client row (ok
# only) summed, as rank 0 and gdr-ab --aggregate should.
sums() {
	pyq - "$1" <<'PY'
import csv, sys
tot = {}
for r in csv.DictReader(open(sys.argv[1], newline="")):
    k = (r["verb"], r["path"], int(r["size_bytes"]))
    t = tot.setdefault(k, [0, 0.0])
    if r["role"] == "client" and r["status"] == "ok":
        t[0] += 1
        t[1] += float(r["bw_avg_gbps"])
for (v, p, s), (n, bw) in sorted(tot.items()):
    print(v, p, s, n, f"{bw:.6f}")
PY
}

# check_aggregate OUT CSV NPAIRS: rank 0's node-to-node table, line by line
# against the sums of the CSV rows (Gb/s, --report_gbits).
check_aggregate() {
	sums "$2" >"$TMP/sums" || return 1
	pyq - "$1" "$TMP/sums" "$3" <<'PY'
import re, sys
out, sums, npairs = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(out, errors="replace").read().splitlines()
heads = [i for i, l in enumerate(lines) if l.startswith("aggregate: node to node, ")]
bad = []
if len(heads) != 1:
    print(f"#   {len(heads)} aggregate tables, expected 1 (rank 0's)")
    sys.exit(1)
if f", {npairs} pair(s) at once" not in lines[heads[0]] or "Gb/sec" not in lines[heads[0]]:
    bad.append(f"heading: {lines[heads[0]]!r}")
got = {}
for l in lines[heads[0] + 2:]:
    m = re.match(r"^ (\S+) +(\S+) +(\d+) +(\S+) +(\d+)/(\d+) *(.*)$", l)
    if not m:
        break
    v, p, s, total, n, of, left = m.groups()
    got[(v, p, int(s))] = (int(n), int(of), total, left)
want = {}
for l in open(sums):
    v, p, s, n, bw = l.split()
    want[(v, p, int(s))] = (int(n), float(bw))
if set(got) != set(want):
    bad.append(f"lines {sorted(got)} != rows {sorted(want)}")
for k, (n, bw) in want.items():
    if k not in got:
        continue
    gn, of, total, left = got[k]
    if gn != n or of != npairs:
        bad.append(f"{k}: {gn}/{of} pairs, rows say {n}/{npairs}")
    if n == 0:
        if total != "-":
            bad.append(f"{k}: total {total}, expected - (no pair measured)")
        for p in range(npairs):
            if f"pair {p}: skipped (" not in left:
                bad.append(f"{k}: pair {p} not named as skipped: {left!r}")
    # The CSV holds 3 decimals, rank 0 sums the unrounded values: half a unit per pair.
    elif abs(float(total) - bw) > 0.0005 * (n + 1) + 1e-9:
        bad.append(f"{k}: total {total}, sum of the client rows {bw:.6f}")
    elif left:
        bad.append(f"{k}: left out {left!r} although every pair measured")
for b in bad[:20]:
    print("#   " + b)
sys.exit(1 if bad else 0)
PY
}

# check_gdr_ab CSV NPAIRS: gdr-ab --aggregate's totals equal the sums of the rows.
check_gdr_ab() {
	python3 "${top_srcdir:-.}/scripts/gdr-ab" --no-plot --aggregate "$1" >"$TMP/ab.out" 2>&1 || return 1
	sums "$1" >"$TMP/sums" || return 1
	pyq - "$TMP/ab.out" "$TMP/sums" "$2" <<'PY'
import sys
ab, sums, npairs = open(sys.argv[1]).read(), sys.argv[2], int(sys.argv[3])
bad = []
if f"write: node to node, {npairs} pair(s) at once" not in ab:
    bad.append("no node-to-node table for write")
names = {4096: "4 KiB", 8192: "8 KiB", 16384: "16 KiB"}
for l in open(sums):
    v, p, s, n, bw = l.split()
    if int(n) == 0:
        continue
    row = [x.split() for x in ab.splitlines() if x.split()[:3] == [p] + names[int(s)].split()]
    if not row or abs(float(row[0][-1]) - float(bw)) > 0.0006:
        bad.append(f"{p} {s}: gdr-ab {row[:1]}, sum of the client rows {bw}")
for b in bad:
    print("#   " + b)
sys.exit(1 if bad else 0)
PY
}

ARGS=(--mem all --repeat 1 -n 50 --sizes 4K:16K --validate --timeout 60 --report_gbits)

if [ $mpi = 1 ]; then
	# MPI: rank 0 gathers, and alone writes the CSV and the JSON.
	for np in 2 4; do
		npairs=$((np / 2))
		out=$TMP/mpi$np.out
		launch $np "$out" "${ARGS[@]}" --csv "$TMP/mpi$np.csv" --json "$TMP/mpi$np.json"
		LOGS=$out
		check "MPI -np $np: mpirun exits 0" [ "$MRC" = 0 ]
		check "MPI -np $np: every rank's role, the launcher named, MPI barrier announced" bash -c "
			for k in \$(seq 0 $((npairs - 1))); do
				grep -q \"^launch: Open MPI rank \$k of $np (local \$k): server for rank \$((k + $npairs)) (pair \$k of $npairs, port \$(($PORT + k)), MPI barrier\" '$out' &&
				grep -q \"^launch: Open MPI rank \$((k + $npairs)) of $np (local \$((k + $npairs))): client of rank \$k (pair \$k of $npairs, server $ADDR, port \$(($PORT + k)), MPI barrier\" '$out' || exit 1
			done"
		check "MPI -np $np: rank 0 alone reports the gather, $((np * 12)) rows of $np ranks" bash -c "
			[ \$(grep -c '^gather: ' '$out') = 2 ] &&
			grep -qx 'gather: rank 0 has the rows of all $np ranks ($npairs pair(s))' '$out' &&
			grep -qx 'gather: $((np * 12)) row(s) of $np rank(s) in $TMP/mpi$np.csv' '$out'"
		check "MPI -np $np: each pair's rows printed by rank 0 under its heading" bash -c "
			for k in \$(seq 0 $((npairs - 1))); do
				grep -qx \"pair \$k server (rank \$k): 12 row(s)\" '$out' &&
				grep -qx \"pair \$k client (rank \$((k + $npairs))): 12 row(s)\" '$out' || exit 1
			done"
		check "MPI -np $np: CSV whole" csv_whole "$TMP/mpi$np.csv"
		LOGS="$out $TMP/mpi$np.csv"
		check "MPI -np $np: $((np * 12)) rows, each checked, written pair by pair by rank 0 alone" \
			check_rows "$TMP/mpi$np.csv" $npairs gathered
		check "MPI -np $np: rank 0's aggregate table = sum over pairs of the client rows, skipped pairs named" \
			check_aggregate "$out" "$TMP/mpi$np.csv" $npairs
		check "MPI -np $np: JSON from rank 0 holds the same $((np * 12)) rows" pyq -c "
import json, sys
d = json.load(open('$TMP/mpi$np.json'))
rows = d if isinstance(d, list) else d.get('results', d.get('rows'))
sys.exit(0 if isinstance(rows, list) and len(rows) == $((np * 12)) else 1)"
		PORT=$((PORT + 10))
	done

	# Each side its own memory (issue 48): every rank has the same command line;
	# the client rank takes --mem, the server rank --mem-remote (its own --mem is
	# its client's). Rank 0's aggregate names each line client:server.
	out=$TMP/sides.out
	launch 2 "$out" --mem host,bounce --mem-remote peermem -n 30 -s 4K --timeout 60 \
		--report_gbits --csv "$TMP/sides.csv"
	LOGS="$out $TMP/sides.csv"
	check "MPI -np 2 --mem host,bounce --mem-remote peermem: mpirun exits 0" [ "$MRC" = 0 ]
	check "... the client rank's rows host:peermem and bounce:peermem, the server rank's the other way" \
		csv_check "$TMP/sides.csv" 'count:4:r["status"] == "ok"' \
		'count:1:(r["role"], r["path"], r["path_remote"]) == ("client", "host", "peermem")' \
		'count:1:(r["role"], r["path"], r["path_remote"]) == ("client", "bounce", "peermem")' \
		'count:1:(r["role"], r["path"], r["path_remote"]) == ("server", "peermem", "host")' \
		'count:1:(r["role"], r["path"], r["path_remote"]) == ("server", "peermem", "bounce")'
	check "... rank 0's aggregate: one line per combination, client:server" bash -c "
		grep -Eq '^ write +host:peermem +4096 +[0-9.]+ +1/1 ' '$out' &&
		grep -Eq '^ write +bounce:peermem +4096 +[0-9.]+ +1/1 ' '$out'"
	PORT=$((PORT + 10))

	# A failed rank still takes part in the gather: pair 1's client is sent to an
	# unreachable server, so it fails, and the others give up at the next barrier
	# (--timeout): rank 0 hears from every rank, names the failed ones, writes
	# what rows there are, and the job fails, in bounded time.
	out=$TMP/fail.out
	launch 4 "$out" --mem host -n 50 -s 4K --timeout 10 --report_gbits \
		--peer "$ADDR,192.0.2.1" --csv "$TMP/fail.csv"
	LOGS=$out
	check "MPI -np 4, pair 1's client sent to an unreachable server: mpirun fails, not hangs" \
		bash -c "[ $MRC != 0 ] && [ $MRC != 124 ]"
	check "MPI -np 4, pair 1 failed: rank 0 still gathers all 4 ranks and names the failed one" bash -c "
		grep -qx 'gather: rank 0 has the rows of all 4 ranks (2 pair(s))' '$out' &&
		grep -qx 'pair 1 client (rank 3): 0 row(s), the rank failed (its messages say why)' '$out' &&
		grep -q '^gather: [0-9]* row(s) of 4 rank(s) in $TMP/fail.csv' '$out'"
	# With no row at all (the barrier stops pair 0 before its first size) no file is
	# created: never a header-only CSV (docs/output-files.md).
	check "MPI -np 4, pair 1 failed: the CSV rank 0 wrote is whole, or absent with 0 rows" bash -c "
		if grep -q '^gather: 0 row(s) of 4 rank(s)' '$out'; then [ ! -e '$TMP/fail.csv' ]; else
		[ -s '$TMP/fail.csv' ] && [ -z \"\$(tail -c1 '$TMP/fail.csv')\" ]; fi"
	PORT=$((PORT + 10))

	# A rank that fails before the run (pair 1's server: --gpu auto, and the
	# VM's topology has no GPU) still takes part in the address exchange: its
	# client learns the cause from it at once instead of waiting for a
	# connection that cannot come, and nobody waits in the exchange.
	out=$TMP/place.out
	launch 4 "$out" --mem host -n 50 -s 4K --timeout 10 -d rxe0 --gpu 0,auto,2,3
	LOGS=$out
	check "MPI -np 4, pair 1's server cannot place itself: mpirun fails, not hangs" \
		bash -c "[ $MRC != 0 ] && [ $MRC != 124 ]"
	check "MPI -np 4, pair 1's server: its own cause, and its client names it (rank 1)" bash -c "
		grep -q 'gdr_write_bw: --gpu auto: no GPU found in the topology to pair with rxe0' '$out' &&
		grep -q 'launch: server rank 1 failed before the run: --gpu auto: no GPU found in the topology to pair with rxe0' '$out'"
	check "MPI -np 4, pair 1's server failed: rank 0 gathers all 4 ranks, pair 1 named failed" bash -c "
		grep -qx 'gather: rank 0 has the rows of all 4 ranks (2 pair(s))' '$out' &&
		grep -qx 'pair 1 server (rank 1): 0 row(s), the rank failed (its messages say why)' '$out' &&
		grep -qx 'pair 1 client (rank 3): 0 row(s), the rank failed (its messages say why)' '$out'"
	PORT=$((PORT + 10))

	# The other two ways a pair fails in the address exchange, in one job:
	# pair 0's server is on an rxe whose netdev (a dummy link made here) has
	# no IPv4 address, so it has none to publish; pair 1's client cannot place
	# itself (--gpu auto). Each side of each pair fails at once, naming the
	# cause: the server's own ("give --bind"), its client's from it, and the
	# failed client's at its server.
	if ip link add gdrnoip type dummy && ip link set gdrnoip up &&
		rdma link add rxenoip type rxe netdev gdrnoip; then
		out=$TMP/noaddr.out
		launch 4 "$out" --mem host -n 50 -s 4K --timeout 10 -d rxenoip,rxe0,rxe0,rxe0 \
			--gpu 0,1,2,auto
		LOGS=$out
		check "MPI -np 4, a server without an address, a client that cannot place itself: mpirun fails, not hangs" \
			bash -c "[ $MRC != 0 ] && [ $MRC != 124 ]"
		check "MPI -np 4, pair 0's server has no address: it says to give --bind, its client (rank 2) names why" bash -c "
			grep -q 'gdr_write_bw: launch: this server has no address to give rank 2: rxenoip port 1: no IPv4 address on its network interface .*(give --bind ADDR)' '$out' &&
			grep -q 'gdr_write_bw: launch: server rank 0 failed before the run: rxenoip port 1: no IPv4 address' '$out'"
		check "MPI -np 4, pair 1's client failed placement: its server (rank 1) names client rank 3 and the cause" bash -c "
			grep -q 'gdr_write_bw: launch: client rank 3 failed before the run: --gpu auto: no GPU found in the topology to pair with rxe0' '$out' &&
			grep -qx 'gather: rank 0 has the rows of all 4 ranks (2 pair(s))' '$out'"
		rdma link delete rxenoip
		ip link delete gdrnoip
	else
		not_ok "a dummy link with an rxe device on it (ip link add ... type dummy; rdma link add)"
	fi
	PORT=$((PORT + 10))
fi

# Without MPI (the same build with --launch=no-mpi): every rank appends its
# own rows, the server from --peer, then from GDRPERF_SERVER.
out=$TMP/nompi2.out
launch 2 "$out" "${ARGS[@]}" --launch=no-mpi --peer "$ADDR" --csv "$TMP/nompi2.csv"
LOGS=$out
check "no MPI -np 2 (--peer): mpirun exits 0" [ "$MRC" = 0 ]
check "no MPI -np 2: rank 0 serves rank 1, rank 1 connects to rank 0, no MPI barrier, no gather" bash -c "
	grep -q '^launch: Open MPI rank 0 of 2 (local 0): server for rank 1 (pair 0 of 1, port $PORT)' '$out' &&
	grep -q '^launch: Open MPI rank 1 of 2 (local 1): client of rank 0 (pair 0 of 1, server $ADDR, port $PORT)' '$out' &&
	! grep -q '^gather: ' '$out'"
check "no MPI -np 2: CSV whole" csv_whole "$TMP/nompi2.csv"
LOGS="$out $TMP/nompi2.csv"
check "no MPI -np 2: 24 rows, each checked" check_rows "$TMP/nompi2.csv" 1

PORT=$((PORT + 10))
out=$TMP/nompi4.out
export GDRPERF_SERVER="$ADDR,$ADDR"
launch 4 "$out" "${ARGS[@]}" --launch=no-mpi --csv "$TMP/nompi4.csv"
unset GDRPERF_SERVER
LOGS=$out
check "no MPI -np 4 (GDRPERF_SERVER): mpirun exits 0" [ "$MRC" = 0 ]
check "no MPI -np 4: ranks 0,1 serve on ports p, p+1; ranks 2,3 connect to them" bash -c "
	grep -q '^launch: Open MPI rank 0 of 4 (local 0): server for rank 2 (pair 0 of 2, port $PORT)' '$out' &&
	grep -q '^launch: Open MPI rank 1 of 4 (local 1): server for rank 3 (pair 1 of 2, port $((PORT + 1)))' '$out' &&
	grep -q '^launch: Open MPI rank 2 of 4 (local 2): client of rank 0 (pair 0 of 2, server $ADDR, port $PORT)' '$out' &&
	grep -q '^launch: Open MPI rank 3 of 4 (local 3): client of rank 1 (pair 1 of 2, server $ADDR, port $((PORT + 1)))' '$out'"
check "no MPI -np 4: CSV whole after four ranks appended to it" csv_whole "$TMP/nompi4.csv"
LOGS="$out $TMP/nompi4.csv"
check "no MPI -np 4: 48 rows, each checked" check_rows "$TMP/nompi4.csv" 2
LOGS="$TMP/ab.out $TMP/sums"
check "no MPI -np 4: gdr-ab --aggregate totals = sum over pairs of the client rows" \
	check_gdr_ab "$TMP/nompi4.csv" 2

# Mistakes are refused in words.
PORT=$((PORT + 10))
launch 3 "$TMP/np3.out" -n 10 --timeout 10
LOGS="$TMP/np3.out"
check "-np 3: refused, pairs need an even number of ranks" bash -c "
	[ $MRC != 0 ] && grep -q 'started 3 ranks: pairs need an even number' '$TMP/np3.out'"
launch 2 "$TMP/nopeer.out" -n 10 --timeout 10 --launch=no-mpi
LOGS="$TMP/nopeer.out"
if [ $mpi = 1 ]; then hint='drop --launch=no-mpi'; else hint='configure --with-mpi'; fi
check "no MPI, no --peer: the client says to give --peer or GDRPERF_SERVER ($hint)" bash -c "
	[ $MRC != 0 ] && grep -q 'give --peer HOST (or GDRPERF_SERVER=HOST' '$TMP/nopeer.out' &&
	grep -q -- '$hint' '$TMP/nopeer.out'"
finish
