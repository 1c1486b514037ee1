#!/bin/sh
# pyq (tests/integration/lib.sh), the integration checkers' python, without a
# VM: served by its per-file server (pyq_server.py, a fork per script), it
# answers as python3 -S does, byte for byte on stdout and stderr and in exit
# status, for every way the suites call it; scripts at once each get their own
# answer; the server ends with the shell and no `wait` waits on it.
src=${top_srcdir:-.}
. "$(dirname "$0")/../tap.sh"

command -v python3 >/dev/null || skip_all "python3 not found"
command -v bash >/dev/null || skip_all "bash not found"

d=$tmp/case
mkdir "$d" "$d/sub"
printf 'a,b\n1,x\n2,"y, z"\n' >"$d/rows.csv"
printf 'VALUE = 42\n' >"$d/helper.py"
printf '%s\n' 'import sys, helper' 'print(sys.argv[1:], helper.VALUE, __name__)' \
	'sys.exit(int(sys.argv[1]))' >"$d/script.py"

# The cases, one per line of a bash script: each runs once through pyq with the
# server up and once through python3 -S; out.N, err.N and rc.N must agree.
cat >"$d/cases.bash" <<'EOF'
c() { "$@" >"$out.$n.out" 2>"$out.$n.err"; echo $? >"$out.$n.rc"; n=$((n + 1)); }
n=0
c $run - "$d/rows.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(len(rows), rows[1]["b"], sys.argv[0])
PY
c $run -c 'import sys; print(sys.argv); sys.exit(3)' x 'y z'
c $run -c 'import sys; sys.exit("a message")'
c $run -c 'import sys; sys.exit(None)'
c $run -c 'raise ValueError("boom")'
c $run -c 'import json, sys; json.loads(sys.argv[1])' '{not json'
c $run - <<'PY'
def f():
    return 1 / 0
f()
PY
c $run "$d/script.py" 7
c $run -c 'import sys; sys.stdout.write("no newline"); sys.stderr.write("err, no newline")'
c $run -c 'print("é ✓ 中"); print("x" * 200000)'
c $run -c 'import os; print(os.getcwd()); print(open("rows.csv").readline(), end="")'
c bash -c "printf 'l1\nl2\n' | $run -c 'import sys; print(sys.stdin.read().split())'"
c $run -c 'import sys; print(repr(sys.stdin.read()))' </dev/null
c bash -c "cd sub && $run -c 'import os; print(os.path.basename(os.getcwd()))'"
c bash -c "x=\$($run -c 'print(1 + 1)'); echo \"got \$x\""
EOF

# The server is up (its pid file), then every case through pyq, then python3 -S.
cat >"$d/run.bash" <<EOF
. "$src/tests/integration/lib.sh"
d=$d
for i in \$(seq 300); do [ -s "\$_PYQ_DIR/pid" ] && break; read -rt 0.1 <> <(:); done
[ -s "\$_PYQ_DIR/pid" ] || { echo "no server after 30 s"; exit 1; }
cat "\$_PYQ_DIR/pid" >"$d/server.pid"
# A script run by the server is its child: parent's pid = the server's.
pyq -c 'import os; print(os.getppid())' >"$d/parent"
cd "$d"
run=pyq out=$d/pyq
. "$d/cases.bash"
run='python3 -S' out=$d/py
. "$d/cases.bash"
echo \$n >"$d/ncases"
# Four at once, each with its own answer.
for i in 1 2 3 4; do
	pyq -c 'import sys, time; time.sleep(0.2); print("job", sys.argv[1])' \$i >"$d/job.\$i" &
done
start=\$SECONDS
wait
echo \$((SECONDS - start)) >"$d/waited"
EOF
bash "$d/run.bash" >"$tmp/run.out" 2>&1
rc=$?
LOGS="$tmp/run.out" check "the cases ran (exit 0)" [ "$rc" = 0 ]
LOGS="$tmp/run.out" check "the scripts ran in the server (a fork of it), not a python3 of their own" \
	[ "$(cat "$d/parent" 2>/dev/null)" = "$(cat "$d/server.pid" 2>/dev/null)" ]

i=0
n=$(cat "$d/ncases" 2>/dev/null || echo 0)
check "15 cases" [ "$n" = 15 ]
while [ "$i" -lt "$n" ]; do
	what=$(sed -n "$((i + 1))p" "$d/cases.bash" 2>/dev/null)
	for k in out err rc; do
		if cmp -s "$d/pyq.$i.$k" "$d/py.$i.$k"; then :; else
			diag "case $i $k: pyq then python3 -S:"
			head -c 600 "$d/pyq.$i.$k" | sed 's/^/# /'
			head -c 600 "$d/py.$i.$k" | sed 's/^/# /'
			not_ok "case $i: same $k as python3 -S"
			i=$((i + 1))
			continue 2
		fi
	done
	ok "case $i: stdout, stderr and status as python3 -S ($(cat "$d/py.$i.rc"))"
	i=$((i + 1))
done
# Cases 1 to 6 (the 2nd line of cases.bash is the 1st case): statuses that matter.
check "statuses 0 3 1 0 1 1 1 7 (argv, sys.exit text/None, tracebacks, a file)" \
	[ "$(cat "$d/pyq.0.rc" "$d/pyq.1.rc" "$d/pyq.2.rc" "$d/pyq.3.rc" "$d/pyq.4.rc" \
		"$d/pyq.5.rc" "$d/pyq.6.rc" "$d/pyq.7.rc" | tr '\n' ' ')" = "0 3 1 0 1 1 1 7 " ]
check "four scripts at once: each its own answer" \
	[ "$(cat "$d/job.1" "$d/job.2" "$d/job.3" "$d/job.4" | tr '\n' ' ')" = "job 1 job 2 job 3 job 4 " ]
check "a bare wait waited on the four, not on the server ($(cat "$d/waited" 2>/dev/null) s)" \
	[ "$(cat "$d/waited" 2>/dev/null)" -lt 20 ]
gone() { ! kill -0 "$(cat "$d/server.pid")" 2>/dev/null; }
i=0
while [ $i -lt 300 ] && ! gone; do
	sleep 0.1
	i=$((i + 1))
done
check "the server ended with the shell" gone

# Without a server (another host, or before it is up) pyq is python3 -S.
cat >"$d/noserver.bash" <<EOF
. "$src/tests/integration/lib.sh"
_PYQ_DIR=$d/none
pyq -c 'import sys; print(sys.argv); sys.exit(4)' a
EOF
out=$(bash "$d/noserver.bash" 2>&1)
rc=$?
check "no server: python3 -S itself ($rc, $out)" [ "$rc:$out" = "4:['-c', 'a']" ]
done_testing
