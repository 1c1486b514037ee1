#!/bin/sh
# gdr-ab --aggregate: each launched pair's bandwidth (label "pair K") and the
# node-to-node total, the sum over pairs; a pair without a number is counted
# out of the total in words.
. "$(dirname "$0")/ab_lib.sh"
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
} >"$tmp/pairs.csv"
run pairs --no-plot --aggregate "$tmp/pairs.csv"
plan 5
check "gdr-ab --aggregate exits 0" rc_is pairs 0
check "two pairs found in the labels" grep -q 'node to node, 2 pair(s) at once' "$tmp/pairs.out"
check "host: each pair's client bandwidth and their sum" \
	grep -Eq '^ +host +64 KiB +10\.500 +11\.500 +22\.000$' "$tmp/pairs.out"
check "bounce: a failed pair is left out of the total, and it says so" \
	grep -Eq '^ +bounce +64 KiB +4\.250 +- +4\.250 \(1 of 2\)$' "$tmp/pairs.out"
# A pair number wider than the column (a hand-made label): the names used to
# run together ('pair 1pair 12345678901234').
{
	echo "$h"
	row client host 65536 10.5 ok "pair 1"
	row client host 65536 11.5 ok "pair 12345678901234"
} >"$tmp/wide.csv"
run wide --no-plot --aggregate "$tmp/wide.csv"
check "a long pair name: its own column, apart from the next" \
	sh -c "grep -Eq '^ +path +size +pair 1 pair 12345678901234 +total\$' '$tmp/wide.out' && grep -Eq '^ +host +64 KiB +10\.500 +11\.500 +22\.000\$' '$tmp/wide.out'"
sed 's/^/# /' "$tmp/pairs.out" "$tmp/pairs.err"
done_testing
