#!/bin/bash
# issue 43 on real Soft-RoCE: perftest's -T/--tos reaches the QP (the tos
# column is read back from ibv_query_qp on both sides), -m is checked against
# the path MTU rdma_cm set, and the plan carries what both sides must agree on.
. "$(dirname "$0")/lib.sh"
require_rdma

# -T 106 (DSCP 26, as NCCL_IB_TC=106): both sides' rows say the QP got it.
server gdr_write_bw --timeout 20 --csv "$TMP/ts.csv"
client gdr_write_bw --timeout 20 -n 200 -s 4K -T 106 --csv "$TMP/t.csv"
wait_server
check "-T 106: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "-T 106: the client's row has tos 106" [ "$(csv_col "$TMP/t.csv" tos)" = 106 ]
check "-T 106: the server's row has tos 106" [ "$(csv_col "$TMP/ts.csv" tos)" = 106 ]

# Without -T: the default class, 0; --tclass is the same byte as -T.
server gdr_write_bw --timeout 20
client gdr_write_bw --timeout 20 -n 200 -s 4K --csv "$TMP/d.csv"
wait_server
check "no -T: tos 0" [ "$CRC" = 0 -a "$SRC" = 0 -a "$(csv_col "$TMP/d.csv" tos)" = 0 ]
server gdr_read_bw --timeout 20
client gdr_read_bw --timeout 20 -n 200 -s 4K --tclass 96 --csv "$TMP/c.csv"
wait_server
check "--tclass 96: tos 96" [ "$CRC" = 0 -a "$SRC" = 0 -a "$(csv_col "$TMP/c.csv" tos)" = 96 ]

# -m: one of 256 and 4096 is not the path MTU; the run says which one it got,
# and -m with that one runs.
got=
for m in 256 4096; do
	server gdr_write_bw --timeout 10
	client gdr_write_bw --timeout 10 -n 100 -s 4K -m "$m"
	wait_server 20
	if [ "$CRC" != 0 ]; then
		got=$(sed -n 's/.*-m '"$m"': rdma_cm set the path MTU to \([0-9]*\).*/\1/p' "$TMP/cli.err")
		break
	fi
done
check "-m: a path MTU other than rdma_cm's fails, naming both" [ -n "$got" ]
server gdr_write_bw --timeout 20
client gdr_write_bw --timeout 20 -n 100 -s 4K -m "${got:-1024}"
wait_server
check "-m $got (the path MTU): runs" [ "$CRC" = 0 -a "$SRC" = 0 ]

# One plan: --gpu-alloc all and --disable_pcie_relaxed given to the client only
# (before, the server ran memalloc only and both ended in "expected BYE, got BUF").
FAKE=${top_builddir:-.}/tests/fake_cuda/libcuda.so.1
ROWS="python3 ${top_srcdir:-.}/tests/integration/gpu_rows.py"
if [ -f "$FAKE" ]; then
	export GDRPERF_LIBCUDA=$FAKE
	export GDRPERF_ROOT=${top_srcdir:-.}/tests/cuda/roots/nvidia_peermem
	server gdr_write_bw --timeout 40 --csv "$TMP/gs.csv"
	wait_listen "$PORT"
	client gdr_write_bw --timeout 40 --gpu 0 --mem host,peermem --gpu-alloc all \
		--disable_pcie_relaxed -n 50 -s 4K --csv "$TMP/g.csv"
	wait_server
	check "--gpu-alloc all to the client only: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
	for f in g gs; do
		check "--gpu-alloc all to the client only: $f.csv has host once, peermem per allocator" \
			$ROWS "$TMP/$f.csv" 'count:3' 'count:1:r["path"] == "host"' \
			'count:1:r["path"] == "peermem" and r["status"] == "ok" and r["gpu_alloc"] == "cuMemAlloc"' \
			'count:1:r["path"] == "peermem" and r["status"] == "ok" and r["gpu_alloc"] == "cuMemCreate"' \
			'all:r["relaxed_ordering"] == "0"'
	done
	# An explicit server option that contradicts the plan: refused with both values.
	server gdr_write_bw --timeout 20 --gpu-alloc memalloc
	wait_listen "$PORT"
	client gdr_write_bw --timeout 20 --gpu 0 --mem peermem --gpu-alloc all -n 50 -s 4K
	wait_server
	check "server --gpu-alloc memalloc, client all: both fail naming the option and both values" \
		bash -c "[ $CRC = 1 -a $SRC = 1 ] &&
		grep -q 'plan mismatch: --gpu-alloc: server has memalloc, client asks all' '$TMP/srv.err' &&
		grep -q 'plan mismatch: --gpu-alloc: server has memalloc, client asks all' '$TMP/cli.err'"
	unset GDRPERF_LIBCUDA GDRPERF_ROOT
else
	not_ok "fake libcuda.so.1 built ($FAKE missing: run make check)"
fi

# IPv6 end to end: a ULA on the rxe device's netdev; the server --bind's it,
# the client connects to it from it (--source_ip, perftest's --bind).
V6=fd00:43::1
NETDEV=$(ip -o -4 addr show | awk -v a="$ADDR/" 'index($4, a) == 1 { print $2; exit }')
if [ -n "$NETDEV" ] && ip -6 addr replace "$V6/64" dev "$NETDEV" nodad 2>"$TMP/ip.err"; then
	at_exit "ip -6 addr del $V6/64 dev $NETDEV 2>/dev/null"
	# rxe adds the GID when the address appears.
	wait_until 20 sh -c "grep -qs '^fd00:0043:' /sys/class/infiniband/*/ports/1/gids/*"
	server gdr_write_bw --timeout 20 --bind "$V6" --csv "$TMP/v6s.csv"
	wait_listen "$PORT"
	timeout 120 "$B/gdr_write_bw" -p "$PORT" --timeout 20 -n 100 -s 4K --source_ip "$V6" \
		--csv "$TMP/v6.csv" "$V6" >"$TMP/cli.out" 2>"$TMP/cli.err"
	CRC=$?
	wait_server
	check "IPv6: server --bind $V6, client to $V6 from --source_ip $V6: both exit 0" \
		[ "$CRC" = 0 -a "$SRC" = 0 ]
	check "IPv6: one ok row on each side, the peer an IPv6 address" python3 -c "
import csv, sys
for f in ('$TMP/v6.csv', '$TMP/v6s.csv'):
    rows = list(csv.DictReader(open(f, newline='')))
    if len(rows) != 1 or rows[0]['status'] != 'ok' or ':' not in rows[0]['peer']:
        sys.exit(f'{f}: {rows}')"
else
	not_ok "IPv6 address $V6 on ${NETDEV:-the rxe netdev}" "$TMP/ip.err"
fi

finish
