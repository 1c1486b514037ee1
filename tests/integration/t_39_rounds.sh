#!/bin/bash
# Rounds until decided (issue 51) on real Soft-RoCE, GPU paths on the test-only
# fake libcuda.so.1: the client looks after the rule's rounds and tells the
# server (ROUND) whether a size takes more; both sides' rows say how many
# rounds each size took, why they stopped, the rule's looks and each round's
# numbers (rep_bw_gbps, rep_t_start_s, rep_t_end_s), under one run_id; the
# rounds of different paths interleave; --validate checks at each look; a
# time budget stops a size at its first look; gdr-ab pairs the rounds.
# timeout: 900
. "$(dirname "$0")/lib.sh"
use_fake_cuda
export GDRPERF_ROOT=${top_srcdir:-.}/tests/cuda/roots/nvidia_peermem

# rounds CSV MIN:MAX N..M STOPS: under --repeat MIN:MAX every ok row took N..M
# rounds (a look of the rule), stopped for one of STOPS (comma-separated), with
# the rule's K looks, and its lists have one value per round, each round after
# the one before it; every row (ok or skipped) has the run's one run_id; at
# each size the paths took as many rounds, and round k of each path ran before
# round k + 1 of any other.
rounds() {
	pyq - "$@" <<'PY'
import csv, math, sys
f, rule, took, stops = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
lo, hi = (int(x) for x in rule.split(":"))
nlo, nhi = (int(x) for x in took.split(".."))
rows = list(csv.DictReader(open(f, newline='')))
looks = [lo]
while looks[-1] < hi:
    looks.append(min(hi, max(looks[-1] + 1, math.ceil(looks[-1] * 1.25))))
ids = {r["run_id"] for r in rows}
if len(ids) != 1 or len(ids.pop()) != 16:
    sys.exit(f"run_id: {sorted({r['run_id'] for r in rows})}")
by = {}
for r in rows:
    if r["status"] != "ok":
        continue
    n = int(r["repeats"])
    if not nlo <= n <= nhi or n not in looks:
        sys.exit(f"{r['path']} {r['size_bytes']}: {n} rounds, not a look of {lo}:{hi} in {took}")
    if r["stop"] not in stops or int(r["looks"]) != (len(looks) if lo != hi else 1):
        sys.exit(f"{r['path']} {r['size_bytes']}: stop {r['stop']!r}, looks {r['looks']}")
    bw = [float(x) for x in r["rep_bw_gbps"].split(";")]
    t0 = [float(x) for x in r["rep_t_start_s"].split(";")]
    t1 = [float(x) for x in r["rep_t_end_s"].split(";")]
    if not len(bw) == len(t0) == len(t1) == n or min(bw) <= 0:
        sys.exit(f"{r['path']} {r['size_bytes']}: lists of {len(bw)}, {len(t0)}, {len(t1)} for {n}")
    if any(a > b for a, b in zip(t0, t1)) or any(b > a for a, b in zip(t0[1:], t1)):
        sys.exit(f"{r['path']} {r['size_bytes']}: rounds out of order: {list(zip(t0, t1))}")
    if abs(sum(bw) / n - float(r["bw_avg_gbps"])) > 0.002 + 1e-4 * float(r["bw_avg_gbps"]):
        sys.exit(f"{r['path']} {r['size_bytes']}: rounds' mean {sum(bw) / n} vs bw_avg_gbps {r['bw_avg_gbps']}")
    by.setdefault(int(r["size_bytes"]), []).append((n, t0, t1))
for s, got in by.items():
    if len({n for n, _, _ in got}) != 1:
        sys.exit(f"size {s}: paths took {[n for n, _, _ in got]} rounds")
    for k in range(got[0][0]):
        if max(t0[k] for _, t0, _ in got) > min(t1[k + 1] if k + 1 < len(t1) else math.inf
                                                for _, _, t1 in got):
            sys.exit(f"size {s}: round {k} of one path after round {k + 1} of another")
PY
}

# Bandwidth, WRITE, --mem all (host, peermem, bounce; dmabuf skipped on rxe),
# rounds until decided within 3..4 (looks 3 and 4), both sides' CSV.
server gdr_write_bw --timeout 60 --csv "$TMP/srv.csv"
wait_listen "$PORT"
client gdr_write_bw --timeout 60 --gpu 0 --mem all -n 50 --sizes 4K:8K --repeat 3:4 \
	--validate --csv "$TMP/bw.csv"
wait_server
check "write_bw --mem all --repeat 3:4 --validate: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "the client says the rule, before the table" \
	grep -q '^rounds: 3 to 4 per size, until each path.s ratio to host is known within 1 -+ 5 %' "$TMP/cli.out"
check "client rows: 3 or 4 rounds per size, the stop and looks, each round's numbers" \
	rounds "$TMP/bw.csv" 3:4 3..4 "decided,max rounds"
check "server rows: the same rounds" rounds "$TMP/srv.csv" 3:4 3..4 "decided,max rounds"
check "one run: the client's and the server's rows have one run_id" pyq - "$TMP/bw.csv" "$TMP/srv.csv" <<'PY'
import csv, sys
ids = [{r["run_id"] for r in csv.DictReader(open(f, newline=''))} for f in sys.argv[1:]]
sys.exit(0 if ids[0] == ids[1] and len(ids[0]) == 1 else f"run ids {ids}")
PY
check "the server took the client's word: the same rounds at each size" bash -c "
	[ \"\$(awk -F, 'NR > 1 { print \$6, \$8, \$14 }' '$TMP/bw.csv' | sort)\" = \"\$(awk -F, 'NR > 1 { print \$6, \$8, \$14 }' '$TMP/srv.csv' | sort)\" ]"
check "gdr-ab pairs the rounds: ratios with intervals at the error rate, no traceback" bash -c "
	python3 '${top_srcdir:-.}/scripts/gdr-ab' --no-plot --expect 'peermem>=0.5*host' '$TMP/bw.csv' >'$TMP/ab.out' 2>&1
	rc=\$?; [ \$rc = 0 -o \$rc = 1 -o \$rc = 3 ] && grep -q 'geometric mean of the rounds' '$TMP/ab.out' &&
	! grep -q Traceback '$TMP/ab.out'"

# A time budget spent at once: each size stops at its first look, saying why.
server gdr_read_bw --timeout 60
wait_listen "$PORT"
client gdr_read_bw --timeout 60 --gpu 0 --mem host,bounce -n 20 -s 4K --repeat 3:20 \
	--time-per-size 0.001 --csv "$TMP/budget.csv"
wait_server
check "read_bw --time-per-size 0.001: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "read_bw --time-per-size: 3 rounds, stopped by the time budget" \
	rounds "$TMP/budget.csv" 3:20 3..3 "time budget,decided"
check "each side says under the size's rows how many rounds it took and why" bash -c "
	grep -Eq '^   3 rounds: (not decided: --time-per-size spent|decided: every ratio)' '$TMP/cli.out' &&
	grep -Eq '^   3 rounds: (not decided: --time-per-size spent|decided: every ratio)' '$TMP/srv.out'"

# The default with two paths and no --repeat: rounds until decided, 5:40.
server gdr_write_bw --timeout 60
wait_listen "$PORT"
client gdr_write_bw --timeout 60 --mem host,bounce -n 20 -s 4K --time-per-size 0.001 \
	--csv "$TMP/default.csv"
wait_server
check "two paths, no --repeat: both exit 0" [ "$CRC" = 0 -a "$SRC" = 0 ]
check "two paths, no --repeat: 5 rounds (5:40's first look, the budget spent)" \
	rounds "$TMP/default.csv" 5:40 5..5 "time budget,decided"

done_testing
