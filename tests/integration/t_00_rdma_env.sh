#!/usr/bin/env bash
# The Soft-RoCE environment itself, with system tools only: if this file
# fails, every later integration result is suspect.
# timeout: 240
. "$(dirname "$0")/lib.sh"
set -u
require_rdma
require_prog ibv_devinfo rping ib_write_bw stdbuf

dev=$GDRPERF_RDMA_DEV
addr=$GDRPERF_RDMA_ADDR
diag "device $dev, address $addr${GDRPERF_VM:+, in the Soft-RoCE VM}"

check "$dev: port 1 is PORT_ACTIVE" \
	sh -c "ibv_devinfo -d '$dev' -i 1 | grep -q 'state:.*PORT_ACTIVE'"

if [ -n "${GDRPERF_VM:-}" ]; then
	host=$(hostname)
	if [ "$host" != "(none)" ] && [ -n "$host" ]; then
		ok "hostname is set ($host): Open MPI needs one"
	else
		not_ok "hostname is set: Open MPI needs one"
		diag "hostname: '$host'"
	fi
	# Open MPI puts sockets in /tmp; 9p would refuse them.
	check "/tmp takes special files" mkfifo "$T/fifo"
fi

# rdma_cm: resolve address and route, connect, 3 SEND/RDMA round trips.
run_bg rping_srv rping -s -a "$addr" -C 3 -v
if retry 10 1 timeout 30 rping -c -a "$addr" -C 3 -v >"$T/rping_cli.log" 2>&1 &&
	wait_bg rping_srv 30 &&
	[ "$(grep -c 'ping data' "$T/rping_cli.log")" = 3 ]; then
	ok "rping: 3 round trips over rdma_cm to $addr"
else
	not_ok "rping: 3 round trips over rdma_cm to $addr" "$T/rping_cli.log" "$T/rping_srv.log"
	kill_bg rping_srv
fi

# perftest, the reference the benchmarks are compared with.  Its server
# prints its banner before it listens (stdbuf: the log is a file, not a tty),
# and a client that connects while the guest is slow can leave the server
# stuck on a dead connection: each try restarts both sides.
bw_try() {
	run_bg bw_srv stdbuf -oL ib_write_bw -R -d "$dev" -s 65536 -n 100
	wait_for_log bw_srv 'Waiting for client' 60 &&
		timeout 60 ib_write_bw -R -d "$dev" -s 65536 -n 100 "$addr" >"$T/bw_cli.log" 2>&1 &&
		wait_bg bw_srv 30 && return 0
	kill_bg bw_srv
	return 1
}
if retry 3 1 bw_try; then
	# The result row: size, iterations, peak, average, message rate.
	bw=$(awk '$1 == 65536 && $2 == 100 { print $4 }' "$T/bw_cli.log")
	if awk -v b="$bw" 'BEGIN { exit !(b + 0 > 0) }'; then
		ok "ib_write_bw -R: 64 KiB RDMA WRITEs at $bw MB/s"
	else
		not_ok "ib_write_bw -R: bandwidth > 0" "$T/bw_cli.log"
	fi
else
	not_ok "ib_write_bw -R: client and server complete" "$T/bw_cli.log" "$T/bw_srv.log"
fi

# --pair: a client connecting to A goes out of rxeB/vB and across the veth
# cable to rxeA/vA; the byte counter on vA proves it did not take lo.
if [ -n "${GDRPERF_ADDR_A:-}" ]; then
	read -r rx0 </sys/class/net/vA/statistics/rx_bytes
	run_bg pair_srv rping -s -a "$GDRPERF_ADDR_A" -C 3 -v
	if retry 10 1 timeout 30 rping -c -a "$GDRPERF_ADDR_A" -C 3 -v >"$T/pair_cli.log" 2>&1 &&
		wait_bg pair_srv 30; then
		read -r rx1 </sys/class/net/vA/statistics/rx_bytes
		if [ "$rx1" -gt "$rx0" ]; then
			ok "pair: rping $GDRPERF_RDMA_DEV_B -> $GDRPERF_RDMA_DEV_A over the veth ($((rx1 - rx0)) bytes into vA)"
		else
			not_ok "pair: traffic crosses the veth"
			diag "vA rx_bytes $rx0 -> $rx1"
		fi
	else
		not_ok "pair: rping to $GDRPERF_ADDR_A" "$T/pair_cli.log" "$T/pair_srv.log"
		kill_bg pair_srv
	fi
fi

done_testing
