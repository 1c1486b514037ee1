#!/bin/bash
# The pair's expected ceiling on real Soft-RoCE: ceiling_gbps is the port rate rxe reports
# (rxe has no PCI function, host memory has no GPU link), pct_of_ceiling follows bw_avg_gbps,
# bidirectional rows count both directions; gdr_doctor and gdr_topo read the live PCI tree.
. "$(dirname "$0")/lib.sh"
set -u

dev=$(ls /sys/class/infiniband | head -n 1)
rate=$(awk '{print $1; exit}' "/sys/class/infiniband/$dev/ports/1/rate" 2>/dev/null)

server gdr_write_bw --timeout 20
client gdr_write_bw --timeout 20 -n 200 --sizes 4K:8K --csv "$TMP/w.csv" --json "$TMP/w.json"
wait_server
check "write: client and server exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "write: ceiling_gbps is the port rate of $dev ($rate Gb/s)" \
	assert_csv_col "$TMP/w.csv" ceiling_gbps "n > 0 && n == $rate"
check "write: pct_of_ceiling = 100 * bw_avg_gbps / ceiling_gbps" pyq -c "
import csv, sys
rows = list(csv.DictReader(open('$TMP/w.csv')))
# Both printed values are rounded: pct_of_ceiling to 0.1 (0.05 off at most),
# bw_avg_gbps to 0.001 Gb/s (0.0005 off, times 100 / ceiling in percent).
tol = lambda r: 0.05 + 100 * 0.0005 / float(r['ceiling_gbps']) + 1e-9
bad = [r for r in rows if abs(float(r['pct_of_ceiling']) -
       100 * float(r['bw_avg_gbps']) / float(r['ceiling_gbps'])) > tol(r)]
sys.exit(1 if bad or not rows else 0)"
check "write --json: ceiling_gbps and pct_of_ceiling are numbers" pyq -c "
import json, sys
d = json.load(open('$TMP/w.json'))
sys.exit(0 if d and all(isinstance(r['ceiling_gbps'], float) and
                        isinstance(r['pct_of_ceiling'], float) for r in d) else 1)"

server gdr_read_bw --timeout 20
client gdr_read_bw --timeout 20 -n 100 -s 8K -b --csv "$TMP/b.csv"
wait_server
one=$(csv_get "$TMP/w.csv" 1 ceiling_gbps)
both=$(csv_get "$TMP/b.csv" 1 ceiling_gbps)
check "read -b: the ceiling counts both directions ($both = 2 x $one)" bash -c "
	[ $CRC = 0 -a $SRC = 0 ] && [ -n '$one' ] &&
	[ '$both' = \"\$(awk -v x='$one' 'BEGIN { printf \"%.3f\", x * 2 }')\" ]"

# The live PCI tree through libpci: no GPU here, so no pair, and no crash.
"$B/gdr_doctor" >"$TMP/doc.out" 2>&1
drc=$?
LOGS="$TMP/doc.out $LOGS"
check "gdr_doctor on the live system: exit 0, NIC firmware and the pcie summary" bash -c "
	[ $drc = 0 ] && grep -Eq '^(pass|n-a|warn) +$dev\.fw ' '$TMP/doc.out' &&
	grep -Eq '^n-a +pcie +' '$TMP/doc.out'"
"$B/gdr_topo" >"$TMP/topo.out" 2>&1
trc=$?
check "gdr_topo on the live system: exit 0" [ $trc = 0 ]
finish
