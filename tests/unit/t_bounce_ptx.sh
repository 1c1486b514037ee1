#!/bin/sh
# The committed PTX of the SM copy kernel (common/mem/bounce_copy.ptx) is what
# `make regen-bounce-ptx` makes of common/mem/bounce_copy.cu: checked where an
# nvcc of the release the PTX names is on PATH (or $NVCC), skipped otherwise
# (comment lines, which name the compiler build, are left out). TAP output.
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$(dirname "$0")/../tap.sh"
NVCC=${NVCC:-nvcc}
PTX=$srcdir/common/mem/bounce_copy.ptx
CU=$srcdir/common/mem/bounce_copy.cu

want=$(sed -n 's|^// Cuda compilation tools, \(release [0-9.]*, V[0-9.]*\)$|\1|p' "$PTX")
check "the committed PTX names the nvcc release that made it" [ -n "$want" ]
if ! command -v "$NVCC" >/dev/null 2>&1; then
	skip "the committed PTX is what nvcc makes of bounce_copy.cu" "no nvcc"
elif ! "$NVCC" --version | grep -q "$want"; then
	skip "the committed PTX is what nvcc makes of bounce_copy.cu" "nvcc is not $want"
else
	# The command mk/bounce.am's regen-bounce-ptx runs.
	"$NVCC" --ptx -arch=compute_75 -O3 -o - "$CU" | sed -e 's/^\.version .*/.version 7.0/' \
		>"$tmp/new.ptx" 2>"$tmp/err"
	grep -v '^//' "$PTX" >"$tmp/old"
	grep -v '^//' "$tmp/new.ptx" >"$tmp/new"
	LOGS="$tmp/err" check "the committed PTX is what nvcc makes of bounce_copy.cu (make regen-bounce-ptx)" \
		cmp -s "$tmp/old" "$tmp/new"
fi
done_testing
