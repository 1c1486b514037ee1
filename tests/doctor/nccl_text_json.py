#!/usr/bin/env python3
"""Does gdr_doctor --nccl-log's text report say what its JSON says? TEXT JSON -> exit 0 or 1.

Compared: the conclusion, the reason, the deciding lines (number and text), and every
process's conclusion; a mismatch is printed as 'field: text=... json=...'.
"""
import json
import re
import sys


def parse_text(path):
    out = {"procs": [], "lines": []}
    section = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("  conclusion:"):
                out["conclusion"] = line.split(":", 1)[1].strip()
            elif line.startswith("  because:"):
                out["reason"] = line.split(":", 1)[1].strip()
            elif line.startswith("  per process:"):
                section = "procs"
            elif line.startswith("  deciding lines:"):
                section = "lines"
            elif line.startswith("    ") and section == "procs":
                out["procs"].append(line.rsplit("; ", 1)[-1])
            elif line.startswith("    ") and section == "lines":
                m = re.match(r"    (\d+): (.*)$", line)
                if m:
                    out["lines"].append((int(m.group(1)), m.group(2)))
            elif not line.startswith("    "):
                section = None
    return out


def main():
    text = parse_text(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        js = json.load(f)
    bad = []
    if text.get("conclusion") != js["conclusion"]:
        bad.append("conclusion: text=%r json=%r" % (text.get("conclusion"), js["conclusion"]))
    if text.get("reason") != js["reason"]:
        bad.append("reason: text=%r json=%r" % (text.get("reason"), js["reason"]))
    jl = [(d["line"], d["text"]) for d in js["deciding_lines"]]
    if text["lines"] != jl:
        bad.append("deciding lines: text=%r json=%r" % (text["lines"], jl))
    jp = [p["conclusion"] for p in js["processes"]]
    if text["procs"] and text["procs"][-1].startswith("("):
        text["procs"].pop()  # "(N more not listed)"
    if js["nccl_log"] and text["procs"] != jp:
        bad.append("processes: text=%r json=%r" % (text["procs"], jp))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
