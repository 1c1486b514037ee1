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
ROWS="pyq ${top_srcdir:-.}/tests/integration/gpu_rows.py"
if [ -f "$FAKE" ]; then
	export GDRPERF_LIBCUDA=$FAKE
	export GDRPERF_ROOT=${top_srcdir:-.}/tests/cuda/roots/nvidia_peermem
	server gdr_write_bw --timeout 40 --csv "$TMP/gs.csv"
	wait_listen "$PORT"
	client gdr_write_bw --timeout 40 --gpu 0 --mem host,peermem --repeat 1 --gpu-alloc all \
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

# --use_hugepages on both sides: the host buffer and the bounce staging ring
# on 2 MiB pages, each row saying what it got; with none reserved, normal
# pages and why. The pages are this guest's own vm.nr_hugepages.
# HP_RUN NAME [ENV...] -- [CLIENT ARGS...]: one run of host,bounce rows.
hp_run() {
	local name=$1
	shift
	server gdr_write_bw --timeout 40 --use_hugepages --csv "$TMP/${name}s.csv"
	wait_listen "$PORT"
	client gdr_write_bw --timeout 40 --use_hugepages --gpu 0 --mem host,bounce --repeat 1 --validate \
		-n 20 -s 64K --bounce-chunk 16K --bounce-slots 2 --csv "$TMP/$name.csv" "$@"
	wait_server
	check "--use_hugepages ($name): both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
}
HOSTP='r["path"] == "host" and r["status"] == "ok" and '
BOUNCEP='r["path"] == "bounce" and r["status"] == "ok" and r["note"].startswith("validated;") and '
# The mapping is the buffer rounded up to 2 MiB: the host buffer's size is the run's.
NOPAGES='" MiB): Cannot allocate memory (reserve pages: sysctl vm.nr_hugepages=N)"'
if [ -f "$FAKE" ] && read -r HP0 </proc/sys/vm/nr_hugepages; then
	export GDRPERF_LIBCUDA=$FAKE
	at_exit "echo $HP0 >/proc/sys/vm/nr_hugepages"
	echo 0 >/proc/sys/vm/nr_hugepages
	hp_run none
	for f in none nones; do
		check "--use_hugepages, none reserved: $f.csv says normal pages and why, on each row" \
			$ROWS "$TMP/$f.csv" 'count:2' \
			"count:1:${HOSTP}r[\"note\"].startswith(\"validated; host buffer on normal pages: mmap(MAP_HUGETLB, \") and r[\"note\"].endswith($NOPAGES)" \
			"count:1:${BOUNCEP}\"; bounce staging on normal pages: mmap(MAP_HUGETLB, 2\" + $NOPAGES in r[\"note\"]"
	done
	check "--use_hugepages, none reserved: said on stderr too" \
		grep -q 'bounce: staging ring on normal pages (mmap(MAP_HUGETLB' "$TMP/cli.err"
	echo 32 >/proc/sys/vm/nr_hugepages
	read -r got </proc/sys/vm/nr_hugepages
	check "32 huge pages reserved in the guest" [ "$got" = 32 ]
	hp_run huge
	hp_run sm --bounce-copy sm
	for f in huge huges sm sms; do
		check "--use_hugepages, pages reserved: $f.csv has both buffers on 2 MiB pages" \
			$ROWS "$TMP/$f.csv" 'count:2' \
			"count:1:${HOSTP}r[\"note\"] == \"validated; host buffer on 2 MiB huge pages\"" \
			"count:1:${BOUNCEP}r[\"note\"].endswith(\"; bounce staging on 2 MiB huge pages (MAP_HUGETLB + cuMemHostRegister)\")"
	done
	check "--bounce-copy sm on huge pages: the client's bounce row is sm" \
		$ROWS "$TMP/sm.csv" 'count:1:r["path"] == "bounce" and r["bounce_copy"] == "sm"'
	# The driver refuses to pin them: the ring falls back to cuMemHostAlloc, and says why.
	export GDRPERF_FAKE_CUDA_FAIL=cuMemHostRegister=CUDA_ERROR_NOT_PERMITTED
	hp_run refused
	unset GDRPERF_FAKE_CUDA_FAIL
	check "--use_hugepages, cuMemHostRegister refused: host on huge pages, staging on normal pages with the call and error" \
		$ROWS "$TMP/refused.csv" 'count:2' \
		"count:1:${HOSTP}r[\"note\"] == \"validated; host buffer on 2 MiB huge pages\"" \
		"count:1:${BOUNCEP}\"; bounce staging on normal pages: \" in r[\"note\"] and \"cuMemHostRegister(2 MiB): \" in r[\"note\"] and \"CUDA_ERROR_NOT_PERMITTED\" in r[\"note\"]"
	echo "$HP0" >/proc/sys/vm/nr_hugepages
	unset GDRPERF_LIBCUDA
else
	not_ok "fake libcuda.so.1 built and /proc/sys/vm/nr_hugepages readable"
fi

# bind_pair LABEL BIND OPT DEST PEER_EXPR PEER_WORDS: a server --bind BIND, a
# client to DEST from OPT BIND (--bind or perftest's --source_ip); both exit
# 0 with one ok row each, whose peer satisfies PEER_EXPR (Python, on peer).
bind_pair() {
	local label=$1 bind=$2 opt=$3 dest=$4 expr=$5 words=$6 f=$TMP/bp$RANDOM
	server gdr_write_bw --timeout 20 --bind "$bind" --csv "$f.s.csv"
	wait_listen "$PORT"
	timeout 120 "$B/gdr_write_bw" -p "$PORT" --timeout 20 -n 100 -s 4K "$opt" "$bind" \
		--csv "$f.c.csv" "$dest" >"$TMP/cli.out" 2>"$TMP/cli.err"
	CRC=$?
	wait_server
	check "$label: server --bind $bind, client to $dest from $opt $bind: both exit 0" \
		[ "$CRC" = 0 -a "$SRC" = 0 ]
	check "$label: one ok row on each side, the peer $words" pyq -c "
import csv, sys
for f in ('$f.c.csv', '$f.s.csv'):
    rows = list(csv.DictReader(open(f, newline='')))
    peer = rows[0]['peer'] if rows else ''
    if len(rows) != 1 or rows[0]['status'] != 'ok' or not ($expr):
        sys.exit(f'{f}: {rows}')"
}

# IPv6 end to end: a ULA on the rxe device's netdev; the server --bind's it,
# the client connects to it from it (--source_ip, perftest's --bind).
V6=fd00:43::1
NETDEV=$(ip -o -4 addr show | awk -v a="$ADDR/" 'index($4, a) == 1 { print $2; exit }')
if [ -n "$NETDEV" ] && ip -6 addr replace "$V6/64" dev "$NETDEV" nodad 2>"$TMP/ip.err"; then
	at_exit "ip -6 addr del $V6/64 dev $NETDEV 2>/dev/null"
	# rxe adds the GID when the address appears.
	wait_until 20 sh -c "grep -qs '^fd00:0043:' /sys/class/infiniband/*/ports/1/gids/*"
	bind_pair IPv6 "$V6" --source_ip "$V6" "':' in peer" "an IPv6 address"
else
	not_ok "IPv6 address $V6 on ${NETDEV:-the rxe netdev}" "$TMP/ip.err"
fi

# Host names end to end: a name for the rxe address in a private /etc/hosts
# (a bind mount in this guest only); the server --bind's the name, the client
# connects to it from it, and the rows name the address it resolved to.
NAME=gdrperf-dropin43
cat /etc/hosts >"$TMP/hosts" && printf '%s %s\n' "$ADDR" "$NAME" >>"$TMP/hosts"
if mount --bind "$TMP/hosts" /etc/hosts 2>"$TMP/mount.err"; then
	at_exit "umount /etc/hosts 2>/dev/null"
	check "getent hosts $NAME gives $ADDR" \
		bash -c "getent hosts $NAME | grep -q '^$ADDR '"
	bind_pair "host names" "$NAME" --bind "$NAME" "peer == '$ADDR'" "$ADDR"
else
	not_ok "a private /etc/hosts naming $ADDR $NAME" "$TMP/mount.err"
fi

# A name that does not resolve: exit 1 (the run failed, docs/exit-status.md),
# one line on stderr that names the name. .invalid never resolves (RFC 6761).
BAD=nosuch.invalid
timeout 60 "$B/gdr_write_bw" -p "$((PORT + 1))" --timeout 5 -n 10 -s 4K "$BAD" \
	>"$TMP/cli.out" 2>"$TMP/cli.err"
CRC=$?
diag "client to $BAD: $(cat "$TMP/cli.err")"
check "client to $BAD: exit 1, one line naming '$BAD'" bash -c "[ $CRC = 1 ] &&
	[ \$(wc -l <'$TMP/cli.err') = 1 ] && grep -q \"server '$BAD'\" '$TMP/cli.err'"
timeout 60 "$B/gdr_write_bw" -p "$((PORT + 1))" --timeout 5 --bind "$BAD" \
	>"$TMP/srv.out" 2>"$TMP/srv.err"
SRC=$?
check "server --bind $BAD: exit 1, one line naming it" bash -c "[ $SRC = 1 ] &&
	[ \$(wc -l <'$TMP/srv.err') = 1 ] && grep -q -- '--bind $BAD' '$TMP/srv.err'"
timeout 60 "$B/gdr_write_bw" -p "$((PORT + 1))" --timeout 5 -n 10 -s 4K --bind "$BAD" \
	"$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err"
CRC=$?
check "client --bind $BAD: exit 1, one line naming it" bash -c "[ $CRC = 1 ] &&
	[ \$(wc -l <'$TMP/cli.err') = 1 ] && grep -q -- '--bind $BAD' '$TMP/cli.err'"

finish
