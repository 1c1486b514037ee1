#!/bin/bash
# The cluster sweep under a real Slurm (Debian's slurm-wlm and munge): the
# three nodes of t_62 (sweep_nodes.sh), one slurmd per node, each in a UTS
# namespace of its own whose host name is the node's (node-a, node-b,
# node-c), all on 127.0.0.1 with their own ports; slurmctld and munged beside
# them, from a slurm.conf generated here. `srun -N3 --ntasks-per-node=1
# gdr_write_bw --sweep=pairs` must print the matrix and name node-c (its link
# slowed with netem), the node names coming from each rank's host name.
# srun starts the ranks itself, with no MPI: the rounds go through rank 0's
# TCP channel (--peer: node-a's address). Then one rank's process is killed
# in the middle of its first pair: its pairs must become failed rows, the
# sweep must go on, and the pair without it must still measure.
#
# Every rank runs through rank.sh, which picks the rank's own rxe device by
# its node's host name (srun gives every rank local rank 0, so a -d list
# indexed by local rank cannot tell the nodes apart) and writes its pid.
#
# timeout: 900
. "$(dirname "$0")/lib.sh"
PORT=${GDRPERF_TEST_PORT:-27300}
# Slurm's own ports: slurmctld, then one slurmd per node.
SPORT=${GDRPERF_TEST_SLURM_PORT:-26817}

for p in slurmctld slurmd srun scontrol sinfo munged munge unshare; do
	command -v "$p" >/dev/null || skip_all "$p not installed (slurm-wlm and munge: scripts/install-deps)"
done
. "$(dirname "$0")/sweep_nodes.sh"
S=$TMP/slurm
DPIDS=
stop_slurm() {
	local p
	# Only the daemons this test started, by their pid.
	for p in $DPIDS; do kill "$p" 2>/dev/null; done
	for p in $DPIDS; do
		for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	done
}
CG=
cgroups_down() {
	local d
	[ -n "$CG" ] || return 0
	for d in $CG; do umount "/sys/fs/cgroup/$d" 2>/dev/null; done
	umount /sys/fs/cgroup 2>/dev/null
	CG=
}
at_exit sweep_nodes_down
at_exit cgroups_down
at_exit stop_slurm
# slurmd will not start without /sys/fs/cgroup ("Unable to initialize cgroup
# plugin"), which the guest does not mount: the host's kind (v1 hierarchies
# on a tmpfs), in the throw-away guest only.
if [ "${GDRPERF_VM:-}" = 1 ] && ! mountpoint -q /sys/fs/cgroup; then
	mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup && CG=" "
	# slurmd's cgroup/v1 also stats the named systemd hierarchy.
	for d in freezer cpuset memory devices systemd; do
		o=$d
		[ "$d" = systemd ] && o=none,name=systemd
		mkdir -p "/sys/fs/cgroup/$d" && mount -t cgroup -o "$o" cgroup "/sys/fs/cgroup/$d" &&
			CG="$d $CG"
	done
fi
sweep_nodes_up || skip_all "no bridge support in this kernel (softroce-vm loads the module)"
sweep_node_slow C

# munged with a key of its own, on a socket of its own.
mkdir -p "$S/munge" "$S/state"
head -c 1024 /dev/urandom >"$S/munge/key" && chmod 600 "$S/munge/key"
munged --force --socket="$S/munge/sock" --key-file="$S/munge/key" \
	--pid-file="$S/munge/pid" --seed-file="$S/munge/seed" --log-file="$S/munge/log"
munge_up() { munge -S "$S/munge/sock" -n </dev/null >/dev/null 2>&1; }
LOGS="$S/munge/log"
check "munged answers on its socket" wait_deadline 60 munge_up
DPIDS=$(cat "$S/munge/pid" 2>/dev/null)

nodes() { local nd; for nd in $NODES; do printf 'node-%s ' "$(echo "$nd" | tr A-Z a-z)"; done; }
{
	cat <<EOF
ClusterName=gdrperf
SlurmctldHost=$(hostname)(127.0.0.1)
SlurmctldPort=$SPORT
AuthType=auth/munge
AuthInfo=socket=$S/munge/sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool-%n
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd-%n.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/linear
MpiDefault=none
ReturnToService=2
# A task that dies must not end the others: the sweep goes on without it.
KillOnBadExit=0
WaitTime=0
EOF
	i=0
	for nn in $(nodes); do
		i=$((i + 1))
		echo "NodeName=$nn NodeHostname=$nn NodeAddr=127.0.0.1 Port=$((SPORT + i)) CPUs=1 State=UNKNOWN"
	done
	echo "PartitionName=gdr Nodes=$(nodes | tr ' ' ',' | sed 's/,$//') Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
} >"$S/slurm.conf"
export SLURM_CONF=$S/slurm.conf

slurmctld -D -i >"$S/slurmctld.out" 2>&1 &
DPIDS="$DPIDS $!"
for nn in $(nodes); do
	mkdir -p "$S/spool-$nn"
	# Its own UTS namespace: slurmd finds its node by the host name.
	unshare -u sh -c "hostname $nn && exec slurmd -D" >"$S/slurmd-$nn.out" 2>&1 &
	DPIDS="$DPIDS $!"
done
ctld_up() { scontrol ping 2>/dev/null | grep -q 'is UP'; }
all_idle() {
	sinfo -h -o '%D %T' >"$S/sinfo.now" 2>&1
	[ "$(cat "$S/sinfo.now")" = "3 idle" ]
}
LOGS="$S/slurmctld.out $S/slurmctld.log"
check "slurmctld up (scontrol ping)" wait_deadline 120 ctld_up
LOGS="$S/sinfo.now $S/slurmctld.log $(for nn in $(nodes); do echo "$S/slurmd-$nn.out $S/slurmd-$nn.log"; done)"
check "3 nodes idle (sinfo)" wait_deadline 180 all_idle
# Without its nodes every srun below would only wait for them.
[ "$TAP_FAILED" = 0 ] || { done_testing; exit 1; }
sinfo >"$S/sinfo.out" 2>&1
timeout 120 srun -I60 -N3 --ntasks-per-node=1 -l sh -c 'echo "$(hostname) $SLURM_PROCID/$SLURM_NTASKS local $SLURM_LOCALID"' \
	>"$S/hosts.out" 2>&1
LOGS="$S/hosts.out"
check "srun -N3: each task on its node (host name), ranks 0..2 of 3" [ "$(sort "$S/hosts.out")" = "0: node-a 0/3 local 0
1: node-b 1/3 local 0
2: node-c 2/3 local 0" ]

cat >"$TMP/rank.sh" <<EOF
#!/bin/sh
# This node's own device (node-a -> rxeNA), and its pid for the kill below.
n=\$(hostname)
echo \$\$ >"$TMP/pid.\$n"
exec "$B/gdr_write_bw" -d "rxeN\$(echo "\${n#node-}" | tr a-z A-Z)" "\$@"
EOF
chmod +x "$TMP/rank.sh"

# srun_sweep OUT ARGS...: one task per node, in the background; pid in $SRUN.
srun_sweep() {
	local out=$1
	shift
	timeout 600 srun -I60 -N3 --ntasks-per-node=1 -l "$TMP/rank.sh" -p "$PORT" \
		--peer "$(addr A)" "$@" >"$out" 2>&1 &
	SRUN=$!
}

srun_sweep "$TMP/pairs.out" --sweep=pairs --timeout 30 -s 64K -n 300 --csv "$TMP/pairs.csv"
wait "$SRUN"
SRC=$?
LOGS="$TMP/pairs.out"
check "srun pairs sweep of 3 nodes: exit 0" [ "$SRC" = 0 ]
check "rank 0 is node-a, named by its host name, 3 rounds" \
	grep -q '^0: sweep: pairs, 3 nodes, 3 round(s); this rank is node node-a$' "$TMP/pairs.out"
check "the matrix is printed by rank 0" grep -q '^0: sweep: write host at 64 KiB, median Gb/s' "$TMP/pairs.out"
check "node-c is named slow, with its NIC" grep -q '^0: sweep: slow node: node-c (NIC rxeNC' "$TMP/pairs.out"
check "only node-c is named" [ "$(grep -c 'sweep: slow node:' "$TMP/pairs.out")" = 1 ]
check "rank 0's CSV: 6 rows (3 pairs x client and server)" [ "$(csv_rows "$TMP/pairs.csv")" = 6 ]
check "rank 0's CSV: every row ok" csv_all "$TMP/pairs.csv" 'r["status"] == "ok"'
check "every node pair once, the host names in host/peer" [ "$(pyq - "$TMP/pairs.csv" <<'PY'
import csv, sys
pairs = sorted({tuple(sorted((r["host"], r["peer"]))) for r in csv.DictReader(open(sys.argv[1]))})
print(" ".join("-".join(p) for p in pairs))
PY
)" = "node-a-node-b node-a-node-c node-b-node-c" ]

# For the record: what rank 0 printed (TAP comments).
grep '^0: ' "$TMP/pairs.out" | sed 's/^/# /'

# A rank killed in the middle of its first pair. Round 1 is node-b serving
# node-c (node-a sits out); node-b's process dies once data moves.
rm -f "$TMP"/pid.*
srun_sweep "$TMP/dead.out" --sweep=pairs --timeout 10 -s 64K -D 6 --csv "$TMP/dead.csv"
LOGS="$TMP/dead.out"
if wait_for "$TMP/dead.out" '^1: sweep: round 1 of 3: node node-b serves node node-c' 180 &&
	wait_traffic 200 120 && [ -s "$TMP/pid.node-b" ]; then
	kill -9 "$(cat "$TMP/pid.node-b")"
	ok "node-b's rank killed while its pair with node-c measures"
else
	not_ok "node-b's rank killed while its pair with node-c measures" "$TMP/dead.out"
fi
wait "$SRUN"
SRC=$?
check "the job ends (exit $SRC, not a timeout) and says node-b failed" bash -c "
	[ $SRC != 0 ] && [ $SRC != 124 ] && grep -q 'node-b: task 1: Killed' '$TMP/dead.out'"
check "rank 0 drops node-b and goes on" grep -q '^0: .*sweep: node node-b (rank 1): .*its connection closed' "$TMP/dead.out"
check "rank 0 still writes its CSV" [ -s "$TMP/dead.csv" ]
check "node-b's pairs are failed rows, the pair without it measured" [ "$(pyq - "$TMP/dead.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ok = sorted({tuple(sorted((r["host"], r["peer"]))) for r in rows if r["status"] == "ok"})
bad = sorted({tuple(sorted((r["host"], r["peer"]))) for r in rows if r["status"] == "failed"})
gone = [r for r in rows if r["host"] == "node-a" and r["peer"] == "node-b" and "is gone" in r["note"]]
print(ok == [("node-a", "node-c")] and bad == [("node-a", "node-b"), ("node-b", "node-c")] and len(gone) == 1)
PY
)" = True ]
check "rank 0's summary marks node-b's pairs failed" bash -c "
	grep -q '^0: sweep: failed: .*node-b.*node-c\|^0: sweep: failed: .*node-c.*node-b' '$TMP/dead.out' &&
	grep -q '^0: sweep: failed: .*node-a.*node-b\|^0: sweep: failed: .*node-b.*node-a' '$TMP/dead.out'"
grep -E '^0: |^srun: error' "$TMP/dead.out" | sed 's/^/# /'

done_testing
