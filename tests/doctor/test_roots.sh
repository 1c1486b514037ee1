#!/bin/sh
# gdr_doctor on fixture roots: golden text and JSON, and the --expect exit status.
. "$top_srcdir/tests/doctor/lib.sh"
cd "$top_srcdir/tests/doctor/roots" || exit 1
plan 55

run() { # name root [VAR=value...]
	name=$1 root=$2
	shift 2
	doctor_env "$@" "$DOCTOR" --root "$root" >"$WORK/$name.out" 2>&1
	echo "exit $?" >>"$WORK/$name.out"
	golden "root-$name.out" "$WORK/$name.out"
}

run dmabuf-node dmabuf-node
run peermem-node peermem-node
run old-kernel old-kernel
run no-driver no-driver
run both both
# The H200 node of docs (no RDMA NIC, open module 580, no CUDA here: GPU side not probed).
run h200-nic-less h200-nic-less
# No NVIDIA GPU on the PCI bus: "no NVIDIA GPU", never "modprobe nvidia".
run no-gpu no-gpu
# The DMA-BUF node seen from a pod that sets NCCL_NET_PLUGIN=none.
run pod-plugin-none dmabuf-node NCCL_NET_PLUGIN=none
run nccl-pitfalls dmabuf-node NCCL_IB_DISABLE=1 NCCL_DMABUF_ENABLE=0 NCCL_NET_GDR_LEVEL=LOC \
	NCCL_NET_GDR_READ=0 NCCL_NET=Socket
run gdr-level-pix both NCCL_NET_GDR_LEVEL=PIX NCCL_DMABUF_ENABLE=0
run gdr-level-bad peermem-node NCCL_NET_GDR_LEVEL=FAR
# NCCL's defaults and their releases, as the one table has them (common/topo/nccl_settings.c).
run nccl-c2c-off dmabuf-node NCCL_NET_GDR_C2C=0 NCCL_NET_GDR_READ=-1

# NCCL_NET_GDR_LEVEL against measured distances (hwloc XML): GPU0's nearest NIC is PHB,
# GPU1's NODE (PHB to NCCL), GPU2/3's NODE: PXB is too strict for all four, PHB for none.
# Relative (the cwd is tests/doctor/roots): the report names the file, and its
# wrapping must not depend on where the tree is checked out.
xml=../../topo/hostbridges.xml
for lv in PXB PHB NVL; do
	doctor_env NCCL_NET_GDR_LEVEL=$lv "$DOCTOR" --root both --topology-xml "$xml" \
		>"$WORK/lv-$lv.out" 2>&1
	echo "exit $?" >>"$WORK/lv-$lv.out"
	golden "root-gdr-level-measured-$lv.out" "$WORK/lv-$lv.out"
done

# ofed_info found on PATH.
env -i PATH="$WORK/bin-ofed" GDRPERF_LIBCUDA=/nonexistent/libcuda.so.1 "$DOCTOR" --root peermem-node \
	>"$WORK/mofed.out" 2>&1
grep '^pass  mofed  *MLNX_OFED_LINUX-23.10-0.5.5.0$' "$WORK/mofed.out" >/dev/null &&
	ok "ofed_info -s on PATH is reported" || not_ok "ofed_info -s on PATH is reported"

# JSON, to a file and to stdout (then without the text report).
doctor_env "$DOCTOR" --root old-kernel --json "$WORK/old.json" >/dev/null 2>&1
golden root-old-kernel.json "$WORK/old.json"
doctor_env "$DOCTOR" --root both --json - >"$WORK/both.json" 2>&1
golden root-both.json "$WORK/both.json"
if command -v python3 >/dev/null 2>&1; then
	python3 -c 'import json,sys; [json.load(open(f)) for f in sys.argv[1:]]' \
		"$WORK/old.json" "$WORK/both.json" && ok "JSON parses" || not_ok "JSON parses"
else
	skip "JSON parses" "no python3"
fi

expect() { # root path want [VAR=value...]
	root=$1 path=$2 want=$3
	shift 3
	doctor_env "$@" "$DOCTOR" --root "$root" --expect "$path" --quiet >/dev/null 2>&1
	status_is "$root${1:+ $*} --expect $path" "$want" "$?"
}
expect dmabuf-node dmabuf 0
expect dmabuf-node peermem 1
expect dmabuf-node any 0
expect peermem-node dmabuf 1
expect peermem-node peermem 0
expect both dmabuf 0
expect both peermem 0
expect old-kernel any 0
expect no-driver any 1
expect no-driver dmabuf 1
expect dmabuf-node dmabuf 0 NCCL_NET_PLUGIN=none
expect h200-nic-less any 1
expect no-gpu any 1

# BAR1 through NVML where sysfs has no resource file (the H200 VM: nvidia-smi said 262144 MiB).
doctor_env GDRPERF_LIBNVML="$FAKE_NVML" GDRPERF_FAKE_NVML_BAR1=0000:00:06.0=262144 \
	"$DOCTOR" --root h200-nic-less >"$WORK/nvml.out" 2>&1
golden root-h200-nic-less-nvml.out "$WORK/nvml.out"
doctor_env GDRPERF_LIBNVML="$FAKE_NVML" GDRPERF_FAKE_NVML_BAR1=0000:00:06.0=256 \
	"$DOCTOR" --root h200-nic-less --buffer-size 512M >"$WORK/nvml-small.out" 2>&1
unwrap "$WORK/nvml-small.out" | grep -F 'fail  gpu0.bar1              0000:00:06.0: BAR1 256 MiB (NVML) is smaller than the 512 MiB a run registers' >/dev/null &&
	ok "a small BAR1 from NVML fails" || { sed 's/^/# /' "$WORK/nvml-small.out"; not_ok "a small BAR1 from NVML fails"; }
doctor_env GDRPERF_LIBNVML="$FAKE_NVML" GDRPERF_FAKE_NVML_BAR1=0000:99:00.0=1024 \
	"$DOCTOR" --root h200-nic-less >"$WORK/nvml-none.out" 2>&1
unwrap "$WORK/nvml-none.out" | grep -F 'n-a   gpu0.bar1              0000:00:06.0: BAR1 size unknown (no resource file; nvmlDeviceGetHandleByPciBusId_v2(0000:00:06.0): Not Found (6))' >/dev/null &&
	ok "NVML without the GPU: BAR1 unknown, and why" || { sed 's/^/# /' "$WORK/nvml-none.out"; not_ok "NVML without the GPU: BAR1 unknown, and why"; }

# "n-a never blocks": in every report, a check that blocks a path says fail, and every
# blocker of a path is in its verdict's list.
if command -v python3 >/dev/null 2>&1; then
	for r in dmabuf-node peermem-node old-kernel no-driver both h200-nic-less no-gpu; do
		doctor_env "$DOCTOR" --root "$r" --json "$WORK/inv-$r.json" >/dev/null 2>&1
	done
	python3 - "$WORK"/inv-*.json <<'PY' >"$WORK/inv.out" 2>&1 && ok "only fail blocks, and every blocker is in the verdict" || { sed 's/^/# /' "$WORK/inv.out"; not_ok "only fail blocks, and every blocker is in the verdict"; }
import json, sys
bad = []
for f in sys.argv[1:]:
    d = json.load(open(f))
    for c in d["checks"]:
        if c["blocks"] and c["status"] != "fail":
            bad.append("%s: %s is %s but blocks %s" % (f, c["name"], c["status"], c["blocks"]))
        for p in c["blocks"]:
            if c["name"] not in [b["check"] for b in d["verdict"][p]["blockers"]]:
                bad.append("%s: %s blocks %s, not in its verdict" % (f, c["name"], p))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
else
	skip "only fail blocks, and every blocker is in the verdict" "no python3"
fi
# 80 columns: no line of any text report is longer.
wide=$(cat "$WORK"/*.out | awk 'length($0) > 80' | head -3)
[ -z "$wide" ] && ok "text reports fit 80 columns" || not_ok "text reports fit 80 columns: $wide"

# PCIe health: one fixture per case, written by tests/doctor/gen-pcie-roots.py.
for r in pcie-*; do
	run "$r" "$r"
done
doctor_env "$DOCTOR" --root pcie-bar1-small --buffer-size 512M >"$WORK/bar1.out" 2>&1
echo "exit $?" >>"$WORK/bar1.out"
golden root-pcie-bar1-too-small.out "$WORK/bar1.out"
doctor_env "$DOCTOR" --root pcie-acs --json "$WORK/acs.json" >/dev/null 2>&1
golden root-pcie-acs.json "$WORK/acs.json"

doctor_env "$DOCTOR" --root no-driver --quiet >"$WORK/q.out" 2>&1
golden root-no-driver-quiet.out "$WORK/q.out"
done_testing
