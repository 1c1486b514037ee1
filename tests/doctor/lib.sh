# Shared by the gdr_doctor golden tests: a clean environment, golden diffs. TAP, $tmp
# and GDRPERF_REGEN=1 (rewrite the expected files instead of comparing; review the
# diff!; docs/testing.md) come from ../tap.sh.
. "$(dirname "$0")/../tap.sh"
: "${top_srcdir:?run through make check}" "${top_builddir:?run through make check}"
DOCTOR="$top_builddir/bench/gdr_doctor"
EXPECTED="$top_srcdir/tests/doctor/expected"
WORK=$tmp
# A PATH with only what gdr_doctor may run: gzip (for /proc/config.gz); ofed_info only when a test adds it.
mkdir -p "$WORK/bin" "$WORK/bin-ofed"
ln -s "$(command -v gzip)" "$WORK/bin/gzip"
ln -s "$(command -v gzip)" "$WORK/bin-ofed/gzip"
ln -s "$top_srcdir/tests/doctor/bin/ofed_info" "$WORK/bin-ofed/ofed_info"

# doctor_env [VAR=value...] -- args: gdr_doctor with nothing from the caller's environment
# (no NCCL_*, no real libcuda or NVML) so that outputs are the same on every machine.
# HWLOC_COMPONENTS passes through: scripts/sanitize sets it (-pci) so that a
# live topology load (the live run of test_cli.sh) does not go through
# libpciaccess, whose name cache is never freed.
doctor_env() {
	env -i PATH="$WORK/bin" GDRPERF_LIBCUDA=/nonexistent/libcuda.so.1 \
		GDRPERF_LIBNVML=/nonexistent/libnvidia-ml.so.1 \
		${HWLOC_COMPONENTS:+HWLOC_COMPONENTS="$HWLOC_COMPONENTS"} "$@"
}

# golden NAME FILE: compare FILE with expected/NAME.
golden() { golden_file "$1" "$EXPECTED/$1" "$2"; }

# status NAME WANT GOT
status_is() {
	if [ "$2" = "$3" ]; then ok "$1: exit $3"; else not_ok "$1: exit $3, wanted $2"; fi
}

# unwrap FILE: the text report with each wrapped value joined back onto its line (the
# report wraps at spaces to 80 columns), for greps that look for a whole value.
unwrap() {
	awk '/^ / { sub(/^ +/, ""); buf = buf " " $0; next }
		{ if (NR > 1) print buf; buf = $0 } END { if (NR) print buf }' "$1"
}
FAKE_NVML="$top_builddir/tests/fake_nvml/libnvidia-ml.so.1"

# node_tree DIR BASE HOST "GPU-BUS-IDS" "NICS": DIR, a copy of the fixture root BASE whose
# host name, NVIDIA GPUs and RDMA devices are these (BASE's first GPU and first NIC are the
# model for the new ones; HOST "" leaves BASE's host name). For nccl-vs-node, which
# compares the log's devices with the node's.
node_tree() {
	nt_dir=$1 nt_base=$2
	rm -rf "$nt_dir"
	mkdir -p "$nt_dir"
	cp -R "$nt_base/." "$nt_dir/"
	if [ -n "$3" ]; then
		mkdir -p "$nt_dir/etc"
		echo "$3" >"$nt_dir/etc/hostname"
	fi
	nt_gpu= nt_nic=
	for nt_d in "$nt_dir"/sys/bus/pci/devices/*; do
		[ "$(cat "$nt_d/vendor" 2>/dev/null)" = 0x10de ] || continue
		case $(cat "$nt_d/class" 2>/dev/null) in 0x0300* | 0x0302*) ;; *) continue ;; esac
		[ -n "$nt_gpu" ] || { nt_gpu=$WORK/model-gpu && rm -rf "$nt_gpu" && cp -R "$nt_d" "$nt_gpu"; }
		rm -rf "$nt_d"
	done
	for nt_d in "$nt_dir"/sys/class/infiniband/*; do
		[ -d "$nt_d" ] || continue
		[ -n "$nt_nic" ] || { nt_nic=$WORK/model-nic && rm -rf "$nt_nic" && cp -R "$nt_d" "$nt_nic"; }
		rm -rf "$nt_d"
	done
	for nt_d in $4; do
		mkdir -p "$nt_dir/sys/bus/pci/devices"
		cp -R "${nt_gpu:?BASE has no GPU}" "$nt_dir/sys/bus/pci/devices/$nt_d"
	done
	for nt_d in $5; do
		mkdir -p "$nt_dir/sys/class/infiniband"
		cp -R "${nt_nic:?BASE has no NIC}" "$nt_dir/sys/class/infiniband/$nt_d"
	done
}
