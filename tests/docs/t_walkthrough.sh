#!/bin/sh
# The commands of the per-side pages against the real parser and plan
# (issue 48), through tests/docs/doc_plan: every command line with a prompt
# ("nodeA$ gdr_write_bw ...") in a code block of docs/migration.md and
# docs/usage-bw.md parses as the tool would take it; the migration
# walkthrough measures dmabuf:dmabuf, peermem:peermem and dmabuf:peermem, and
# its sample table (a real run) shows the combinations of its commands and
# no other; the offload table's combinations are what its commands run.
# TAP output.
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$srcdir}
. "$(dirname "$0")/../tap.sh"
if [ -z "${PYTHON:-}" ]; then
	if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
helper=$builddir/tests/docs/doc_plan
[ -x "$helper" ] || {
	echo "Bail out! $helper not built (make check builds it)"
	exit 1
}

cat >"$tmp/walk.py" <<'PY'
import re, shlex, subprocess, sys

helper, page, mode = sys.argv[1], sys.argv[2], sys.argv[3]
PROMPT = re.compile(r"^\s*[A-Za-z0-9_.-]*\$ ((?:bench/)?(gdr_(?:write|read)_(?:bw|lat))\b.*)$")
TOOL = re.compile(r"\bgdr_(write|read)_(bw|lat)\b")
lines = open(page, encoding="utf-8").read().split("\n")
bad, cmds, block = [], [], False
for i, line in enumerate(lines, 1):
    if line.lstrip().startswith("```"):
        block = not block
        continue
    m = PROMPT.match(line) if block else None
    if not m:
        continue
    words = shlex.split(m.group(1), comments=True)
    if words and words[-1] == "&":  # a server started in the background
        words.pop()
    tool = words[0].split("/")[-1]
    out = subprocess.run([helper, tool] + words[1:], capture_output=True, text=True)
    if out.returncode:
        bad.append(f"{page}:{i}: {m.group(1)!r} does not parse: {out.stderr.strip()}")
        continue
    what = out.stdout.split()
    cmds.append((i, tool, what[0], set(what[1:]) if what[0] == "client:" else set()))
if not cmds:
    bad.append(f"{page}: no command found")
clients = [c for c in cmds if c[2] == "client:"]
planned = set().union(*[c[3] for c in clients]) if clients else set()
if mode == "migration":
    for want in ("dmabuf:dmabuf", "peermem:peermem", "dmabuf:peermem"):
        if want not in planned:
            bad.append(f"{page}: no command measures {want}")
    # The sample tables (a real run): their first column is path:remote.
    shown = set()
    for line in lines:
        m = re.match(r"^ ([a-z]+:[a-z]+) +(write|read) +[0-9]+ ", line)
        if m:
            shown.add(m.group(1))
    if not shown:
        bad.append(f"{page}: no sample table with path:remote rows")
    for c in sorted(shown - planned):
        bad.append(f"{page}: the sample shows {c}, which no command of the page runs")
    for i, tool, _, pairs in clients:
        if len(pairs) > 1 and not pairs <= shown:
            bad.append(f"{page}:{i}: the sample does not show {sorted(pairs - shown)}")
elif mode == "offload":
    rows = re.findall(r"^\| `(gdr_(?:write|read)_bw)` \| `([a-z]+:[a-z]+)` \|", "\n".join(lines),
                      re.M)
    if len(rows) < 4:
        bad.append(f"{page}: the offload table has {len(rows)} rows, expected 4")
    for tool, pair in rows:
        if not any(t == tool and pair in p for _, t, _, p in clients):
            bad.append(f"{page}: the offload table says {tool} {pair}; no {tool} command runs it")
for b in bad:
    print(b)
print(len(cmds), file=sys.stderr)
PY

walk() {
	page=$1 mode=$2 name=$3
	if [ ! -f "$srcdir/$page" ]; then
		not_ok "$page: missing"
		return
	fi
	"$PYTHON" "$tmp/walk.py" "$helper" "$srcdir/$page" "$mode" >"$tmp/bad" 2>"$tmp/n" || {
		not_ok "$page: read" "$tmp/n"
		return
	}
	if [ -s "$tmp/bad" ]; then
		not_ok "$page: $name ($(tail -n 1 "$tmp/n") commands)" "$tmp/bad"
	else
		ok "$page: $name ($(tail -n 1 "$tmp/n") commands)"
	fi
}
walk docs/migration.md migration \
	"every command parses; dmabuf:dmabuf, peermem:peermem, dmabuf:peermem measured and in the sample"
walk docs/usage-bw.md offload "every command parses; the offload table is what its commands run"

# The helper itself: it must refuse what the tools refuse, and say what they run.
check "doc_plan: a server's --mem is its side" \
	sh -c "[ \"\$('$helper' gdr_write_bw --mem peermem,host)\" = 'server: peermem,host' ]"
check "doc_plan: --mem-remote crosses the client's paths with the server's" \
	sh -c "[ \"\$('$helper' gdr_read_bw --mem host --mem-remote bounce,peermem x)\" = \
		'client: host:bounce host:peermem' ]"
check "doc_plan: refused options fail (exit 2)" \
	sh -c "! '$helper' gdr_write_bw --mem host:gpu x 2>/dev/null && \
		! '$helper' gdr_write_bw --mem-remote host 2>/dev/null && \
		! '$helper' gdr_write_lat --pin x 2>/dev/null"
done_testing
