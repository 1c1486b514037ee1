#!/bin/bash
# memcheck on a short real run: the server under valgrind with a plain client,
# then the client under valgrind with a plain server, WRITE and READ. Any
# memcheck error (invalid access, uninitialised value used, definite leak)
# fails the run through --error-exitcode. Suppressions: only rdma-core
# provider internals, each justified in tests/sanitizers/valgrind.supp.
. "$(dirname "$0")/lib.sh"
PORT=${GDRPERF_TEST_PORT:-25500}
command -v valgrind >/dev/null || skip_all "valgrind not installed"
# --track-origins=yes (where an uninitialised value came from) doubles
# memcheck's cost and finds nothing more: GDRPERF_VG_ORIGINS=1 adds it to
# explain a failure.
VG="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
	--show-leak-kinds=definite
	--suppressions=${top_srcdir:-.}/tests/sanitizers/valgrind.supp"
[ "${GDRPERF_VG_ORIGINS:-0}" = 1 ] && VG="$VG --track-origins=yes"
# Valgrind runs 20-50x slower (more under the VM's TCG): small runs, long timeouts.
# On a slow host the file took 403 s of its old 600 and once ran out (a server
# under memcheck waited 60 s for its ACK to complete): both limits doubled.
# timeout: 1200
RUN="--timeout 120 -s 4K -n 50 --warmup 4"
# HWLOC_COMPONENTS=-pci: hwloc finds the PCI devices in sysfs, not through
# libpciaccess, whose pci.ids name lookup grows an array one realloc at a time
# (the ASan pass does the same, scripts/test-all). Under memcheck that lookup
# alone took 85 s of the server's accept (seen 2026-12-04 in the VM), and on
# CI's loaded machine the client's 120 s wait ran out; with it, 35 s.
VG="env HWLOC_COMPONENTS=-pci $VG"

for prog in gdr_write_bw gdr_read_bw; do
	PORT=$((PORT + 1))
	# shellcheck disable=SC2086
	$VG --log-file="$TMP/vg-srv.log" "$B/$prog" -p "$PORT" $RUN >"$TMP/srv.out" 2>"$TMP/srv.err" &
	SPID=$!
	# Let the slow server reach rdma_listen first, so that the client's time is
	# spent on the run, not on retries (a stale attempt is dropped: t_20).
	wait_listen "$PORT" 40
	# shellcheck disable=SC2086
	timeout 300 "$B/$prog" -p "$PORT" $RUN "$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err"
	CRC=$?
	wait_server 120
	LOGS="$TMP/vg-srv.log $TMP/srv.err $TMP/cli.err" \
		check "$prog: server under memcheck: clean, both exit 0 ($SRC/$CRC)" \
		[ "$SRC/$CRC" = "0/0" ]

	PORT=$((PORT + 1))
	# shellcheck disable=SC2086
	"$B/$prog" -p "$PORT" $RUN >"$TMP/srv.out" 2>"$TMP/srv.err" &
	SPID=$!
	# shellcheck disable=SC2086
	timeout 300 $VG --log-file="$TMP/vg-cli.log" "$B/$prog" -p "$PORT" $RUN --csv "$TMP/vg.csv" \
		"$ADDR" >"$TMP/cli.out" 2>"$TMP/cli.err"
	CRC=$?
	wait_server 120
	LOGS="$TMP/vg-cli.log $TMP/srv.err $TMP/cli.err" \
		check "$prog: client under memcheck: clean, both exit 0 ($SRC/$CRC)" \
		[ "$SRC/$CRC" = "0/0" ]
done
finish
