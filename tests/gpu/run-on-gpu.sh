#!/bin/sh
# Run gdrperf's GPU checks on a machine with a real NVIDIA GPU (no RDMA NIC
# needed), in under 3 minutes:
#   1. say what the machine has (kernel, driver, open or proprietary module,
#      peer-memory modules, toolkit headers, build tools) and what is missing;
#   2. build the tree (autogen/configure/make, then make check against the
#      fake driver), or, when autotools or libibverbs are missing, compile just
#      the probe with cc;
#   3. run tests/gpu/gpu_probe against the real libcuda.so.1: DMA-BUF export of
#      several sizes and offsets, the backend's export in both allocators
#      (cuMemAlloc, cuMemCreate) and both mapping types (default, PCIe), timed;
#      the VMM/flush/ordering attributes, UUID selection (GPU-, MIG-), the
#      flush before --validate; pinned copy bandwidth, SYNC_MEMOPS, events,
#      and each GPU path's skip reason;
#   4. when run as root where rdma_rxe loads: one --mem host,bounce
#      --gpu-alloc all --validate run over Soft-RoCE on the real GPU;
#   5. the bounce copy stages: gdr_doctor --measure's copy table, and the
#      copy-pipeline loopback (tests/gpu/bounce_loopback, no NIC: staging ->
#      staging by memcpy in place of RDMA, or none) in both copy modes;
#   6. the DMA-BUF exporter's name: a dma-buf of GPU memory held open
#      (tests/gpu/dmabuf_hold) while its /proc/PID/fdinfo "exp_name:" is
#      recorded, debugfs bufinfo with it when debugfs is mounted (root), and
#      gdr_doctor --live beside it (docs/usage-doctor.md#live-check).
# Logs go to $OUT (the device tool's output folder) or ./gpu-run.
#
# usage: tests/gpu/run-on-gpu.sh [--quick] [--no-check] [--probe-only] [--gpu N|BDF] [--fake]
#   --quick       smaller buffers (64 MiB instead of 256 MiB / 1 GiB)
#   --no-check    skip make check (the unit tests against the fake driver)
#   --probe-only  skip the autotools build, compile only the probe with cc
#   --fake        run the probe against tests/fake_cuda/libcuda.so.1 (to try
#                 this script on a machine without a GPU)
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${OUT:-$top/gpu-run}
quick=
check=yes
gpu=0
fake=
full=yes
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=--quick ;;
	--no-check) check= ;;
	--gpu) gpu=$2; shift ;;
	--fake) fake=yes ;;
	--probe-only) full= ;;
	*) echo "usage: $0 [--quick] [--no-check] [--probe-only] [--gpu N|BDF] [--fake]" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$out"
log=$out/run-on-gpu.log
: >"$log"
start=$(date +%s)

say() { printf '%s\n' "$*" | tee -a "$log"; }
run() { # run CMD... with its output in the log; returns its status
	say "\$ $*"
	"$@" >>"$log" 2>&1
}
have() { command -v "$1" >/dev/null 2>&1; }
jobs=$( (nproc || echo 4) 2>/dev/null)

say "== machine"
say "kernel: $(uname -r)"
if [ -r /proc/driver/nvidia/version ]; then
	say "nvidia: $(head -n1 /proc/driver/nvidia/version)"
else
	say "nvidia: /proc/driver/nvidia/version absent (no NVIDIA kernel module loaded?)"
fi
if have modinfo; then
	lic=$(modinfo -F license nvidia 2>/dev/null)
	case $lic in
	*MIT*) say "kernel module: open ($lic): DMA-BUF export possible" ;;
	NVIDIA) say "kernel module: proprietary ($lic): no DMA-BUF export" ;;
	*) say "kernel module: license unknown (${lic:-modinfo found nothing})" ;;
	esac
fi
for m in nvidia_peermem nv_peer_mem; do
	if [ -d /sys/module/$m ]; then
		say "$m: loaded ($(cat /sys/module/$m/version 2>/dev/null || echo no version))"
	else
		say "$m: not loaded"
	fi
done
if have nvidia-smi; then
	nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,pcie.link.gen.current,pcie.link.width.current,memory.total \
		--format=csv 2>&1 | tee -a "$log"
else
	say "nvidia-smi: not installed"
fi
if have ldconfig; then
	say "libcuda.so.1: $(ldconfig -p 2>/dev/null | grep -m1 'libcuda.so.1 ' | sed 's/.*=> //' || true)"
fi
say "RDMA devices: $(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ' || true)"

say "== build prerequisites"
missing=
need() { # need WHAT DEB RPM: note a missing prerequisite with the packages that bring it
	missing="$missing
  $1 (Debian/Ubuntu: $2; RHEL: $3)"
}
cc=${CC:-cc}
have "$cc" || { have gcc && cc=gcc; } || need "C compiler" gcc gcc
have make || need make make make
autotools=yes
for t in autoreconf aclocal automake; do
	have $t || { autotools=; need "$t" "autoconf automake" "autoconf automake"; }
done
have pkg-config || { autotools=; need pkg-config pkg-config pkgconf-pkg-config; }
cuda_dir=
for d in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda /usr/local/cuda-* /usr /opt/cuda; do
	[ -n "$d" ] && [ -f "$d/include/cuda.h" ] && [ -f "$d/include/cudaTypedefs.h" ] && {
		cuda_dir=$d
		break
	}
done
[ -n "$cuda_dir" ] || need "CUDA headers (cuda.h, cudaTypedefs.h >= 11.7)" \
	"cuda-cudart-dev-12-x or the CUDA toolkit" "cuda-cudart-devel-12-x or the CUDA toolkit"
verbs=
if have pkg-config && pkg-config --exists libibverbs 2>/dev/null; then
	verbs=yes
elif printf '#include <infiniband/verbs.h>\n' | $cc -E - >/dev/null 2>&1; then
	verbs=yes
else
	need "libibverbs headers" libibverbs-dev rdma-core-devel
fi
if [ "$autotools" = yes ]; then
	pkg-config --exists librdmacm 2>/dev/null || { autotools=; need librdmacm librdmacm-dev rdma-core-devel; }
	pkg-config --exists 'hwloc >= 2.0' 2>/dev/null || { autotools=; need "hwloc >= 2" libhwloc-dev hwloc-devel; }
	pkg-config --exists cmocka 2>/dev/null || say "cmocka: missing (libcmocka-dev): unit tests will not run"
fi
if [ -n "$missing" ]; then
	say "missing:$missing"
else
	say "all present"
fi
say "CUDA headers: ${cuda_dir:-none}"
if [ -z "$cuda_dir" ] || ! have "$cc"; then
	say "RESULT: cannot build the probe without a C compiler and CUDA headers (see missing above)"
	exit 1
fi

probe=$out/gpu_probe
built=
if [ -n "$full" ] && [ "$autotools" = yes ] && [ -n "$verbs" ] && have make; then
	say "== full build (autotools), log in $log"
	cd "$top" || exit 1
	if run ./autogen.sh && run ./configure --with-cuda="$cuda_dir" &&
		run make -j"$jobs"; then
		built=tree
		if [ -n "$check" ]; then
			if run make -j"$jobs" check; then
				say "make check: passed"
			else
				say "make check: FAILED (see $log and test-suite.log)"
				cp test-suite.log "$out/" 2>/dev/null
			fi
		fi
		# The probe is a check program: built with the tree's own flags.
		if run make fake-cuda tests/gpu/gpu_probe; then
			cp tests/gpu/gpu_probe "$probe"
		else
			say "probe build in the tree failed: falling back to compiling it alone"
			built=
		fi
	else
		say "full build failed (last lines below, all in $log): compiling the probe alone"
		tail -n 5 "$log"
	fi
fi
if [ -z "$built" ]; then
	if [ -z "$verbs" ]; then
		say "RESULT: libibverbs headers missing: the probe needs them for the backends (install libibverbs-dev / rdma-core-devel)"
		exit 1
	fi
	say "== probe-only build with $cc"
	cfg=$(mktemp -d)
	{
		echo '#define _GNU_SOURCE 1'
		echo '#define HAVE_CUDA 1'
		printf '#include <infiniband/verbs.h>\nvoid *p = (void *)ibv_reg_dmabuf_mr;\n' |
			$cc -x c -c -o /dev/null - 2>/dev/null && echo '#define HAVE_IBV_REG_DMABUF_MR 1'
	} >"$cfg/config.h"
	cd "$top" || exit 1
	run $cc -std=c11 -O2 -Wall -Wextra -I"$cfg" $(for d in common/*/; do printf -- "-iquote %s " "${d%/}"; done) -I"$cuda_dir/include" \
		-o "$probe" tests/gpu/gpu_probe.c common/core/util.c common/mem/cuda_load.c common/mem/cuda_error.c common/mem/cuda_gpu.c \
		common/mem/cuda_mem.c common/mem/cuda_vmm.c common/mem/cuda_stream.c common/mem/cuda_uuid.c \
		common/mem/mem_gpu.c common/mem/mem_dmabuf.c common/mem/mem_peermem.c common/mem/mem_data_direct.c \
		common/mem/mem_host.c -libverbs -ldl -lpthread || {
		say "RESULT: probe build failed (see $log)"
		rm -rf "$cfg"
		exit 1
	}
	rm -rf "$cfg"
	built=probe
fi

say "== gpu_probe ($([ -n "$fake" ] && echo fake driver || echo real driver))"
if [ -n "$fake" ]; then
	if [ "$built" = tree ]; then
		GDRPERF_LIBCUDA=$top/tests/fake_cuda/libcuda.so.1
	else
		GDRPERF_LIBCUDA=$out/libcuda.so.1
		$cc -std=c11 -shared -fPIC -fvisibility=hidden -I"$cuda_dir/include" \
			-o "$GDRPERF_LIBCUDA" "$top"/tests/fake_cuda/*.c -lpthread
	fi
	export GDRPERF_LIBCUDA
else
	unset GDRPERF_LIBCUDA
fi
if have timeout; then
	timeout 150 "$probe" --gpu "$gpu" $quick 2>&1 | tee "$out/gpu_probe.log" | tee -a "$log"
else
	"$probe" --gpu "$gpu" $quick 2>&1 | tee "$out/gpu_probe.log" | tee -a "$log"
fi
fails=$(grep -c '^FAIL' "$out/gpu_probe.log")
summary=$(grep '^summary:' "$out/gpu_probe.log")

# The recorded driver contract (tests/gpu/gpu_contract): this driver's
# answers, the differences from every file in tests/gpu/recorded/, and a new
# recorded file (in $out) when none is named for this GPU and driver.
contract_section() {
	say "== driver contract ($([ -n "$fake" ] && echo fake driver || echo real driver))"
	contract=$out/gpu_contract
	if [ "$built" = tree ] && (cd "$top" && run make tests/gpu/gpu_contract); then
		cp "$top/tests/gpu/gpu_contract" "$contract"
	else
		cfg=$(mktemp -d)
		printf '#define _GNU_SOURCE 1\n#define HAVE_CUDA 1\n' >"$cfg/config.h"
		(cd "$top" && run $cc -std=c11 -O2 -Wall -Wextra -I"$cfg" \
			$(for d in common/*/; do printf -- "-iquote %s " "${d%/}"; done) \
			-I"$cuda_dir/include" -o "$contract" tests/gpu/gpu_contract.c \
			common/core/util.c common/core/input.c common/core/text.c common/mem/cuda_load.c \
			common/mem/cuda_error.c -ldl -lpthread)
		rm -rf "$cfg"
	fi
	if [ ! -x "$contract" ]; then
		say "contract: build failed (see $log)"
		contract_result="not built"
		return
	fi
	if ! timeout 60 "$contract" --gpu "$gpu" >"$out/contract.txt" 2>>"$log"; then
		say "contract: gpu_contract failed (see $log)"
		contract_result=FAILED
		return
	fi
	ver=$(sed -n 's/^cuDriverGetVersion: //p' "$out/contract.txt")
	cuda=$((ver / 1000)).$((ver % 1000 / 10))
	name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "$gpu" 2>/dev/null | head -n1)
	drv=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i "$gpu" 2>/dev/null |
		head -n1)
	[ -n "$fake" ] && name="fake libcuda" && drv=fake
	file=$(printf '%s_%s_cuda-%s.txt' "${name:-unknown GPU}" "${drv:-unknown}" "$cuda" |
		tr ' /' '-_')
	contract_result="own answers in $out/contract.txt"
	for rec in "$top"/tests/gpu/recorded/*.txt; do
		[ -f "$rec" ] || continue
		"$contract" --gpu "$gpu" --expect "$rec" 2>>"$log" | tee -a "$log"
	done
	if [ ! -f "$top/tests/gpu/recorded/$file" ]; then
		{
			echo "# The driver contract of tests/gpu/gpu_contract, as a real driver answered it."
			echo "# GPU: ${name:-unknown}; driver: ${drv:-unknown}, CUDA $cuda ($ver);"
			echo "# kernel $(uname -r), $(uname -m); $(date -u +%Y-%m-%d)."
			echo "# Produced by tests/gpu/run-on-gpu.sh (gpu_contract --gpu $gpu)."
			cat "$out/contract.txt"
		} >"$out/$file"
		say "contract: new recorded file $out/$file: add it as tests/gpu/recorded/$file"
		contract_result="new recorded file $file"
	fi
}
contract_section
say "driver contract: $contract_result"

# 4. If this machine lets rdma_rxe load (root, a kernel with it), one
#    end-to-end run on the real GPU over Soft-RoCE: host and bounce (rxe has no
#    DMA-BUF and no peer memory), both allocators, with the new columns.
e2e=skipped
if [ "$built" = tree ] && [ -z "$fake" ] && have rdma && have ip && [ "$(id -u)" = 0 ] &&
	modprobe rdma_rxe 2>>"$log"; then
	say "== end to end over rdma_rxe (--mem host,bounce, --gpu-alloc all)"
	ip link add gdrgpu0 type dummy 2>>"$log" && ip addr add 169.254.88.1/32 dev gdrgpu0 &&
		ip link set gdrgpu0 up && rdma link add gdrrxe0 type rxe netdev gdrgpu0 2>>"$log"
	if [ -d /sys/class/infiniband/gdrrxe0 ]; then
		csv=$out/e2e.csv
		rm -f "$csv"
		timeout 60 "$top/bench/gdr_write_bw" -p 19777 --timeout 30 --gpu-alloc all \
			>"$out/e2e-server.log" 2>&1 &
		spid=$!
		for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
			rdma resource show cm_id 2>/dev/null | grep LISTEN | grep -q ':19777\b' && break
			sleep 0.5
		done
		if timeout 60 "$top/bench/gdr_write_bw" -p 19777 --timeout 30 -d gdrrxe0 --gpu "$gpu" \
			--mem host,bounce --gpu-alloc all -n 200 --sizes 64K:1M --validate --csv "$csv" \
			169.254.88.1 >"$out/e2e-client.log" 2>&1 && wait "$spid"; then
			e2e=passed
		else
			e2e=FAILED
		fi
		wait "$spid" 2>/dev/null
		cat "$out/e2e-client.log" >>"$log"
	else
		say "rdma link add gdrrxe0 failed: no end-to-end run"
	fi
	rdma link delete gdrrxe0 2>/dev/null
	ip link delete gdrgpu0 2>/dev/null
fi
say "end to end over rxe: $e2e"

# 5. The bounce copy stages on this GPU (issue 40; docs/bounce.md): the measured
#    copy table (gdr_doctor --measure), then the copy-pipeline loopback in both
#    copy modes: GPU -> staging -> (memcpy in place of RDMA, or none) -> staging
#    -> GPU, every byte checked. A COPY-PIPELINE test, not a network number; its
#    rate is set against the measured best of its mode (the 64 MiB row, the
#    slower direction): >= 90 % at 4 MiB messages is the target without the
#    memcpy, whose single CPU thread may well be the limit with it.
copy_pipeline=skipped
copy_pipeline_section() {
	[ "$built" = tree ] && [ -x "$top/tests/gpu/bounce_loopback" ] || return 0
	say "== bounce copy stages: gdr_doctor --measure, copy-pipeline loopback"
	timeout 120 "$top/bench/gdr_doctor" --measure 2>&1 | tee "$out/measure.log" | tee -a "$log"
	copy_pipeline=passed
	for mode in ce sm; do
		best=$(awk -v m=$mode '$1 == "64" && $2 == "MiB" {
			a = (m == "ce") ? $3 : $5; b = (m == "ce") ? $4 : $6
			if (a != "-" && b != "-") print (a < b ? a : b) }' "$out/measure.log")
		for extra in --no-memcpy ""; do
			for size in 4M 64M; do
				# shellcheck disable=SC2086
				line=$(timeout 60 "$top/tests/gpu/bounce_loopback" --gpu "$gpu" --copy $mode \
					$([ $mode = sm ] && echo --blocks 16) --size $size $extra 2>&1)
				rc=$?
				say "$line"
				[ $rc = 0 ] || copy_pipeline=FAILED
				rate=$(printf '%s\n' "$line" | sed -n 's/.*: \([0-9.]*\) GB\/s over.*/\1/p')
				[ -n "$best" ] && [ -n "$rate" ] &&
					say "  = $(awk -v r="$rate" -v b="$best" 'BEGIN { printf "%.0f", 100 * r / b }') % of the measured $mode best ($best GB/s)"
			done
		done
	done
}
copy_pipeline_section
say "bounce copy pipeline: $copy_pipeline"

# 6. The name the driver gives its dma-bufs (nv_dmabuf from 580.65.06, nvidia
#    before: gdr_doctor --live counts both), as fdinfo shows it while a process
#    holds the fd, and as bufinfo lists the buffer (debugfs, root). Recorded in
#    $out (dmabuf-hold.log, bufinfo.txt, live.txt/live.json), not judged: the
#    fake driver's export is a memfd, which has no exporter at all.
exporter=skipped
dmabuf_name_section() {
	hold=$top/tests/gpu/dmabuf_hold
	[ "$built" = tree ] && [ -x "$hold" ] || return 0
	say "== the DMA-BUF exporter's name (fdinfo, bufinfo, gdr_doctor --live)"
	fifo=$out/dmabuf-hold.in
	rm -f "$fifo" && mkfifo "$fifo" || return 0
	timeout 90 "$hold" --gpu "$gpu" --timeout 60 <"$fifo" >"$out/dmabuf-hold.log" 2>&1 &
	hpid=$!
	exec 7>"$fifo" # the holder keeps the dma-buf until this closes
	i=0
	while [ $i -lt 60 ] && ! grep -q '^held$' "$out/dmabuf-hold.log" && kill -0 "$hpid" 2>/dev/null; do
		sleep 0.5
		i=$((i + 1))
	done
	cat "$out/dmabuf-hold.log" >>"$log"
	if grep -q '^held$' "$out/dmabuf-hold.log"; then
		exporter=$(sed -n 's/^exp_name:[[:space:]]*//p' "$out/dmabuf-hold.log")
		exporter=${exporter:-"none in fdinfo (not a dma-buf: $([ -n "$fake" ] && echo "the fake driver's memfd" || echo 'see dmabuf-hold.log'))"}
		if [ -r /sys/kernel/debug/dma_buf/bufinfo ]; then
			cp /sys/kernel/debug/dma_buf/bufinfo "$out/bufinfo.txt"
			say "bufinfo: recorded in $out/bufinfo.txt ($(grep -c "	$exporter	" "$out/bufinfo.txt") line(s) of the exporter)"
		else
			say "bufinfo: not readable (mount -t debugfs none /sys/kernel/debug, as root)"
		fi
		if [ -x "$top/bench/gdr_doctor" ]; then
			timeout 60 "$top/bench/gdr_doctor" --live --json "$out/live.json" >"$out/live.txt" 2>&1
			cat "$out/live.txt" >>"$log"
			say "gdr_doctor --live: $(sed -n 's/^in use ([^)]*): //p' "$out/live.txt" | head -n1)"
		fi
	else
		exporter="not exported ($(tail -n 1 "$out/dmabuf-hold.log"))"
	fi
	exec 7>&-
	wait "$hpid" 2>/dev/null
	rm -f "$fifo"
}
dmabuf_name_section
say "DMA-BUF exporter name: $exporter"
say "== done in $(($(date +%s) - start)) s: ${summary:-probe did not finish (crash or timeout)}"
[ -n "$summary" ] && [ "$fails" -eq 0 ] && [ "$e2e" != FAILED ] && [ "$copy_pipeline" != FAILED ]
