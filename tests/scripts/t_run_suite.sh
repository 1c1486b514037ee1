#!/bin/sh
# tests/integration/run-suite, the integration runner, without a VM: on a
# directory of small TAP scripts it counts what each reports, turns every way a
# file can go wrong into failures, and starts python3 without the shim that
# PATH finds first.
src=${top_srcdir:-.}
runner=$src/tests/integration/run-suite
. "$(dirname "$0")/../tap.sh"

command -v python3 >/dev/null || skip_all "python3 not found"
command -v bash >/dev/null || skip_all "bash not found"

# run DIR [ARGS...]: run-suite on DIR's t_*.sh; output in $tmp/out, status in $RC.
run() {
	d=$1
	shift
	bash "$runner" --dir "$d" "$@" >"$tmp/out" 2>&1
	RC=$?
}
# has REGEX: the runner's output has a line matching it.
has() { grep -Eq -- "$1" "$tmp/out"; }

# --- counting -----------------------------------------------------------------
c=$tmp/count
mkdir "$c"
printf '%s\n' 'echo 1..2' 'echo ok 1 a' 'echo ok 2 b' >"$c/t_01_pass.sh"
printf '%s\n' 'echo 1..2' 'echo ok 1 a' 'echo "not ok 2 b"' >"$c/t_02_fail.sh"
printf '%s\n' 'echo 1..3' 'echo ok 1 a' 'echo "ok 2 b # SKIP no device"' 'echo ok 3 c' >"$c/t_03_skip.sh"
printf '%s\n' 'echo 1..4' 'echo ok 1 a' 'exit 0' >"$c/t_04_short.sh"
printf '%s\n' 'echo ok 1 a' >"$c/t_05_noplan.sh"
printf '%s\n' 'echo 1..1' 'echo ok 1 a' 'exit 3' >"$c/t_06_status.sh"
printf '%s\n' 'echo 1..1' 'echo ok 1 a' 'echo ok 2 b' >"$c/t_07_extra.sh"
# The runner's per-file limit, not a wait of the test's: the file blocks forever.
printf '%s\n' '# timeout: 2' 'echo 1..1' 'exec tail -f /dev/null' >"$c/t_08_hang.sh"
printf '%s\n' 'echo "1..0 # SKIP nothing here"' >"$c/t_09_skipall.sh"
run "$c"
LOGS=$tmp/out check "counting: 9 files give 10 passed, 8 failed, exit 1" \
	sh -c "[ $RC = 1 ] && grep -qx 'integration: 10 passed, 8 failed' '$tmp/out'"
LOGS=$tmp/out check "counting: a failed case is named with its file" has '^\[t_02_fail\] not ok 2 b$'
LOGS=$tmp/out check "counting: a skipped case is neither passed nor failed" \
	has '^\[t_03_skip\] == 2 passed, 0 failed, 1 skipped in '
LOGS=$tmp/out check "counting: missing planned results are failures" \
	has '^\[t_04_short\] == 1 passed, 3 failed, 0 skipped in [0-9]+s \(3 planned result\(s\) missing \(exit status 0\)\)$'
LOGS=$tmp/out check "counting: no plan is a failure" has '^\[t_05_noplan\] == 1 passed, 1 failed, .*\(no TAP plan'
LOGS=$tmp/out check "counting: a bad exit status with no failed case is a failure" \
	has '^\[t_06_status\] == 1 passed, 1 failed, .*\(exit status 3 with no failed case\)$'
LOGS=$tmp/out check "counting: more results than planned is a failure" \
	has '^\[t_07_extra\] == 2 passed, 1 failed, .*\(2 results for a plan of 1\)$'
LOGS=$tmp/out check "counting: a file past its own '# timeout:' is cut off and fails" \
	has '^\[t_08_hang\] == 0 passed, 1 failed, .*\(timed out after 2s\)$'
LOGS=$tmp/out check "counting: a file that skips all counts one skip" \
	has '^\[t_09_skipall\] == 0 passed, 0 failed, 1 skipped in '

run "$c" _pass 03_
LOGS=$tmp/out check "patterns select files: 2 files, 4 passed, 0 failed, exit 0" \
	sh -c "[ $RC = 0 ] && grep -qx 'integration: 4 passed, 0 failed' '$tmp/out' && ! grep -q t_02_fail '$tmp/out'"

# --- python3 started without a shim ----------------------------------------------
# A version manager's shim first in PATH (pyenv's costs seconds per start under
# TCG): run-suite asks it once for the interpreter and starts that directly.
py=$(command -v python3)
p=$tmp/py
mkdir "$p" "$tmp/shims"
cat >"$tmp/shims/python3" <<EOF
#!/bin/sh
echo "\$*" >>'$tmp/shim.log'
exec '$py' "\$@"
EOF
chmod +x "$tmp/shims/python3"
cat >"$p/t_01_python.sh" <<'EOF'
echo 1..2
n=0
for i in 1 2 3 4 5; do python3 -c 'import sys; sys.exit(0)' && n=$((n + 1)); done
[ "$n" = 5 ] && echo "ok 1 python3 ran 5 times" || echo "not ok 1 python3 ran $n of 5 times"
# A script with an env shebang reaches the same wrapper.
printf '#!/usr/bin/env python3\nprint("from-shebang")\n' >"$TMPDIR/s.py"
chmod +x "$TMPDIR/s.py"
[ "$("$TMPDIR/s.py")" = from-shebang ] && echo "ok 2 env shebang" || echo "not ok 2 env shebang"
EOF
: >"$tmp/shim.log"
PATH=$tmp/shims:$PATH TMPDIR=$tmp run "$p"
LOGS="$tmp/out $tmp/shim.log" check "shim: the tests' 6 python3 starts pass" \
	sh -c "[ $RC = 0 ] && grep -qx 'integration: 2 passed, 0 failed' '$tmp/out'"
LOGS="$tmp/out $tmp/shim.log" check "shim: started once, by run-suite itself, not per python3" \
	[ "$(wc -l <"$tmp/shim.log")" = 1 ]
LOGS=$tmp/out check "shim: run-suite says which interpreter it starts and what PATH found" \
	has "^integration: python3 is .*, started directly \(PATH found $tmp/shims/python3 first\)$"
LOGS=$tmp/out check "shim: its wrapper directory is gone after the run" \
	sh -c "! ls -d '$tmp'/run-suite-py.* 2>/dev/null"

# Without a shim (python3 on PATH is the interpreter itself) nothing changes
# and nothing is said.
mkdir "$tmp/real"
ln -s "$(python3 -c 'import sys; print(sys.executable)')" "$tmp/real/python3"
PATH=$tmp/real:$PATH TMPDIR=$tmp run "$p"
LOGS=$tmp/out check "no shim: python3 as PATH finds it, no wrapper" \
	sh -c "[ $RC = 0 ] && grep -qx 'integration: 2 passed, 0 failed' '$tmp/out' && ! grep -q 'started directly' '$tmp/out'"

# GDRPERF_TEST_TRACE=DIR: each file's commands with the time each started, in
# DIR/NAME.trace; the file runs (and counts) as without it.
tr=$tmp/trace
mkdir "$tr"
printf '%s\n' 'echo 1..1' 'here=$(dirname "$0")' 'true traced-command' 'echo "ok 1 a $here"' >"$tr/t_01_traced.sh"
GDRPERF_TEST_TRACE=$tmp/traces run "$tr"
LOGS=$tmp/out check "trace: the file counts as without it, \$0 its own path" \
	sh -c "[ $RC = 0 ] && grep -qx 'integration: 1 passed, 0 failed' '$tmp/out' && grep -q 'ok 1 a $tr\$' '$tmp/out'"
LOGS="$tmp/out $tmp/traces/t_01_traced.trace" check "trace: its commands, each with a time and its line" \
	grep -Eq '^\++ [0-9]+\.[0-9]+ t_01_traced\.sh:3 true traced-command$' "$tmp/traces/t_01_traced.trace"

done_testing
