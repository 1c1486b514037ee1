#!/usr/bin/env python3
"""Does gdr_doctor --nccl-log's text report say what its JSON says? TEXT JSON -> exit 0 or 1.

Compared: the conclusion, its cause, fix and reason (wrapped in the text), the line that shows
the cause, the reason, the deciding lines (number and text), every NCCL WARN line, every
network error with its explanation and every process's conclusion; a mismatch is printed as 'field: text=... json=...'.
"""
import json
import re
import sys

WRAP_INDENT = " " * 18
NUMBERED = re.compile(r"    (\d+): (.*)$")


def parse_text(path):
    out = {"procs": [], "lines": [], "warns": [], "errors": []}
    section = None
    err_open = False
    wrapped = None  # the field a continuation line belongs to
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if wrapped and line.startswith(WRAP_INDENT) and line.strip():
                out[wrapped] += " " + line.strip()
                continue
            wrapped = None
            if line.startswith("  conclusion:"):
                out["conclusion"] = line.split(":", 1)[1].strip()
            elif line.startswith("  cause:") or line.startswith("  fix:"):
                wrapped = line.split(":", 1)[0].strip()
                out[wrapped] = line.split(":", 1)[1].strip()
            elif line.startswith("  because:"):
                wrapped = "reason"
                out["reason"] = line.split(":", 1)[1].strip()
            elif line.startswith("  deciding line:"):
                m = re.match(r"  deciding line:  (\d+): (.*)$", line)
                out["cause_line"] = (int(m.group(1)), m.group(2)) if m else None
            elif line.startswith("  per process:"):
                section = "procs"
            elif line.startswith("  deciding lines:"):
                section = "lines"
            elif line.startswith("  NCCL WARN:"):
                section = "warns"
            elif line.startswith("  network errors:"):
                section = "errors"
            elif line.startswith("      ") and section == "errors":
                if err_open:  # an error's explanation wrapped
                    out["errors"][-1] = (out["errors"][-1][0], out["errors"][-1][1] + " " + line.strip())
            elif line.startswith("      ") and section == "procs":
                continue  # a process's line wrapped
            elif line.startswith("    ") and section == "procs":
                out["procs"].append(line.strip().split(":", 1)[0])
            elif line.startswith("    ") and section in ("lines", "warns", "errors"):
                m = NUMBERED.match(line)
                err_open = bool(m) and section == "errors"
                if m:
                    out[section].append((int(m.group(1)), m.group(2)))
            elif not line.startswith("    "):
                section = None
    return out


def main():
    text = parse_text(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        js = json.load(f)
    bad = []

    def same(field, t, j):
        if t != j:
            bad.append("%s: text=%r json=%r" % (field, t, j))

    same("conclusion", text.get("conclusion"), js["conclusion"])
    same("cause", text.get("cause"), js["cause"])
    same("fix", text.get("fix"), js["fix"] or "none needed")
    cl = js["cause_line"]
    same("cause line", text.get("cause_line"), (cl["line"], cl["text"]) if cl else None)
    same("reason", text.get("reason"), js["reason"])
    same("deciding lines", text["lines"], [(d["line"], d["text"]) for d in js["deciding_lines"]])
    same("NCCL WARN lines", text["warns"], [(d["line"], d["text"]) for d in js["nccl_warn_lines"]])
    # Each network error with its explanation (HINT lines read as one event).
    same("network errors", text["errors"], [(d["line"], d["explanation"]) for d in js["network_errors"]])
    jp = [p["conclusion"] for p in js["processes"]]
    if text["procs"] and text["procs"][-1].startswith("("):
        text["procs"].pop()  # "(N more not listed)"
    # The text lists processes when there are several (or they disagree).
    if js["nccl_log"] and (text["procs"] or len(jp) > 1):
        same("processes", text["procs"], jp)
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
