#!/usr/bin/env python3
"""Check, row by row, the CSV of launched pairs run with
`--mem all --sizes 4K:16K` on Soft-RoCE and the fake libcuda (t_60, t_80).

usage: check_rows.py CSV NPAIRS --verb write|read --peer ADDR
                     [--gathered] [--hosts HOST_A,HOST_B]

Every pair k (label "pair k") has one server and one client row per path
(host, dmabuf, peermem, bounce) and size (4K, 8K, 16K): dmabuf skipped with a
reason (rxe has no DMA-BUF), the others ok with a bandwidth. The GPU of a GPU
row is the rank's local rank: on one node (no --hosts) pair k's server is
rank k and its client rank k + NPAIRS; with --hosts A,B the servers run on A
and the clients on B (the `host` column), both local rank k. --gathered: one
writer (rank 0) wrote the rows pair by pair, server block then client block.
Prints up to 20 problems (`check` in tests/tap.sh shows them as TAP comments
when the case fails); exit 1 if there is any.
"""
import argparse
import csv
import sys

PATHS = ("host", "dmabuf", "peermem", "bounce")
SIZES = ("4096", "8192", "16384")


def problems(rows, npairs, verb, peer, gathered, hosts):
    bad = []
    seen = {}
    order = []
    for i, r in enumerate(rows, 2):
        lab = r["label"]
        if not lab.startswith("pair "):
            bad.append(f"line {i}: label {lab!r} does not name the pair")
            continue
        pair = int(lab[5:])
        role = r["role"]
        key = (pair, role, r["path"], r["size_bytes"])
        seen[key] = seen.get(key, 0) + 1
        if not order or order[-1] != (pair, role):
            order.append((pair, role))
        if hosts:
            want_host = hosts[0] if role == "server" else hosts[1]
            if r["host"] != want_host:
                bad.append(f"line {i}: pair {pair} {role} ran on {r['host']!r}, expected {want_host}")
            gpu = str(pair)
        else:
            gpu = str(pair if role == "server" else pair + npairs)
        if r["size_bytes"] not in SIZES:
            bad.append(f"line {i}: size {r['size_bytes']}")
        if r["verb"] != verb:
            bad.append(f"line {i}: verb {r['verb']}, expected {verb}")
        if r["path"] == "dmabuf":
            if r["status"] != "skipped" or not r["note"]:
                bad.append(f"line {i}: dmabuf on rxe should be skipped with a reason: "
                           f"{r['status']} {r['note']!r}")
        elif r["status"] != "ok" or float(r["bw_avg_gbps"] or 0) <= 0:
            bad.append(f"line {i}: {r['path']} status {r['status']} bw {r['bw_avg_gbps']} "
                       f"note {r['note']!r}")
        if r["path"] in ("peermem", "bounce") and r["gpu"] != gpu:
            bad.append(f"line {i}: pair {pair} {role} {r['path']} on GPU {r['gpu']!r}, "
                       f"expected local rank's {gpu}")
        if r["path"] == "host" and r["gpu"]:
            bad.append(f"line {i}: host row names GPU {r['gpu']}")
        if role == "client" and r["peer"] != peer:
            bad.append(f"line {i}: client peer {r['peer']}, expected {peer}")
        if r["nic"] != "rxe0":
            bad.append(f"line {i}: nic {r['nic']}")
    for pair in range(npairs):
        for role in ("server", "client"):
            for p in PATHS:
                for s in SIZES:
                    got = seen.get((pair, role, p, s), 0)
                    if got != 1:
                        bad.append(f"pair {pair} {role} {p} {s}: {got} rows, expected 1")
    want_rows = npairs * 2 * len(PATHS) * len(SIZES)
    if len(rows) != want_rows:
        bad.append(f"{len(rows)} rows, expected {want_rows}")
    want = [(p, role) for p in range(npairs) for role in ("server", "client")]
    if gathered and order != want:
        bad.append(f"rows not written pair by pair by one writer: blocks {order}, expected {want}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("npairs", type=int)
    ap.add_argument("--verb", required=True, choices=("write", "read"))
    ap.add_argument("--peer", required=True, help="the server address client rows name")
    ap.add_argument("--gathered", action="store_true")
    ap.add_argument("--hosts", help="HOST_A,HOST_B: servers on A, clients on B")
    a = ap.parse_args()
    hosts = a.hosts.split(",") if a.hosts else None
    if hosts and len(hosts) != 2:
        ap.error("--hosts takes HOST_A,HOST_B")
    try:
        with open(a.csv, newline="") as f:
            rows = list(csv.DictReader(f))
        bad = problems(rows, a.npairs, a.verb, a.peer, a.gathered, hosts)
    except (OSError, KeyError, ValueError) as e:
        bad = [f"{a.csv}: {e!r}"]
    for b in bad[:20]:
        print("  " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
