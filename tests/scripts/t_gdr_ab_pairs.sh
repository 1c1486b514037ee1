#!/bin/sh
# gdr-ab --aggregate: each launched pair's bandwidth (label "pair K") and the
# node-to-node total, the sum over pairs; a pair without a number is counted
# out of the total in words.
src=${top_srcdir:-.}
t=$(mktemp -d "${TMPDIR:-/tmp}/gdr-ab-pairs.XXXXXX") || exit 1
trap 'rm -rf "$t"' EXIT
h='timestamp,host,peer,role,verb,path,path_remote,size_bytes,iters,qps,tx_depth,post_list,bidir,repeats,bw_peak_gbps,bw_avg_gbps,bw_median_gbps,bw_min_gbps,bw_max_gbps,msg_rate_mpps,cpu_util_pct,gpu,gpu_bus_id,gpu_name,nic,nic_bus_id,distance,pcie_bridges,gpu_numa,nic_numa,status,note,label,version'
row() { # ROLE PATH SIZE BW STATUS LABEL
	echo "2026-01-01T00:00:00Z,a,10.0.0.1,$1,write,$2,$2,$3,50,1,128,1,0,1,$4,$4,$4,$4,$4,1,,,,,mlx5_0,,,,,,$5,,$6,0.1.0"
}
{
	echo "$h"
	row client host 65536 10.5 ok "pair 0"
	row server host 65536 99 ok "pair 0" # the client's row counts, not the server's
	row client host 65536 11.5 ok "run7; pair 1"
	row client bounce 65536 4.25 ok "pair 0"
	row client bounce 65536 "" failed "pair 1"
} >"$t/pairs.csv"
python3 "$src/scripts/gdr-ab" --no-plot --aggregate "$t/pairs.csv" >"$t/out" 2>&1
rc=$?
echo "1..4"
[ $rc = 0 ] && echo "ok 1 - gdr-ab --aggregate exits 0" || echo "not ok 1 - gdr-ab --aggregate exits 0 (status $rc)"
if grep -q 'node to node, 2 pair(s) at once' "$t/out"; then echo "ok 2 - two pairs found in the labels"; else echo "not ok 2 - two pairs found in the labels"; fi
if grep -Eq '^ +host +64 KiB +10\.500 +11\.500 +22\.000$' "$t/out"; then
	echo "ok 3 - host: each pair's client bandwidth and their sum"
else
	echo "not ok 3 - host: each pair's client bandwidth and their sum"
fi
if grep -Eq '^ +bounce +64 KiB +4\.250 +- +4\.250 \(1 of 2\)$' "$t/out"; then
	echo "ok 4 - bounce: a failed pair is left out of the total, and it says so"
else
	echo "not ok 4 - bounce: a failed pair is left out of the total, and it says so"
fi
sed 's/^/# /' "$t/out"
