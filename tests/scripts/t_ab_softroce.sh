#!/bin/sh
# The main job never destroys earlier results: a failed run (here: no RDMA
# device, or no bench built in this tree) leaves results/ab-softroce.csv as it
# was, and a path that is not a regular file is never replaced. TAP output.
src=${top_srcdir:-.}
. "$(dirname "$0")/../tap.sh"
if [ -n "$(ibv_devices 2>/dev/null | awk 'NR > 2')" ]; then
	skip_all "this host has an RDMA device: a run here would not fail"
fi
plan 4
out=$tmp/out
mkdir -p "$out"
printf 'old results\n' >"$out/ab-softroce.csv"
"$src/scripts/ab-softroce" --inside --no-deps --out "$out" >"$tmp/run.out" 2>"$tmp/run.err"
echo $? >"$tmp/run.rc"
LOGS="$tmp/run.err" check "a failed run exits 1 and says the last good results are kept" \
	sh -c "[ \$(cat '$tmp/run.rc') = 1 ] && grep -q 'keeps the last good run' '$tmp/run.err'"
check "a failed run leaves the earlier CSV as it was" \
	sh -c "[ \"\$(cat '$out/ab-softroce.csv')\" = 'old results' ]"

rm -f "$out/ab-softroce.csv"
mkdir "$out/ab-softroce.csv"
"$src/scripts/ab-softroce" --inside --no-deps --out "$out" >"$tmp/dir.out" 2>"$tmp/dir.err"
echo $? >"$tmp/dir.rc"
LOGS="$tmp/dir.err" check "a directory where the CSV goes: exit 1, named, not replaced" \
	sh -c "[ \$(cat '$tmp/dir.rc') = 1 ] && grep -q 'is not a regular file' '$tmp/dir.err'"
check "the directory is still there" test -d "$out/ab-softroce.csv"
done_testing
