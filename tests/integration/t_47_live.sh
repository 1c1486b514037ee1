#!/bin/bash
# gdr_doctor --live on a real kernel (docs/usage-doctor.md#live-check):
#  1. a dma-buf that is really attached to a second device and then closed
#     stays in debugfs bufinfo with its attachment: Debian's kernel has no
#     udmabuf, so vivid exports a capture buffer and vgem imports it
#     (tests/tools/dmabuf_attach); its fdinfo exp_name is seen while the fd is
#     held, bufinfo's entry after it is closed, nothing after vgem lets go;
#  2. the rxe MRs of running gdr_write_bw processes (the fake libcuda, --mem
#     bounce: GPU processes whose MRs are on host memory) and of a thread that
#     registered for its process (tests/tools/mr_thread) are attributed to the
#     process by Tgid, and the VmPin arithmetic holds on host memory: VmPin
#     counts each MR's pages, so MR bytes <= VmPin < MR bytes + 2 pages per MR
#     and the DMA-BUF estimate is 0; the verdict says GPUDirect RDMA is off.
# timeout: 300
. "$(dirname "$0")/lib.sh"
require_rdma
DOCTOR=$top_builddir/bench/gdr_doctor
ATTACH=$top_builddir/tests/tools/dmabuf_attach
MRT=$top_builddir/tests/tools/mr_thread
FAKE=$top_builddir/tests/fake_cuda/libcuda.so.1
require_prog "$DOCTOR" rdma
for f in "$ATTACH" "$MRT" "$FAKE"; do
	[ -x "$f" ] || [ -f "$f" ] || skip_all "$f not built (make check builds it)"
done
[ "$(id -u)" = 0 ] || skip_all "needs root (debugfs, modules)"

# debugfs, as a node would mount it.
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
check "debugfs mounted: bufinfo readable" test -r /sys/kernel/debug/dma_buf/bufinfo

# --- 1. an attached dma-buf, closed -----------------------------------------------
# The guest's modules live in softroce-vm's kernel cache (the host's / is the guest's).
kdir=${GDRPERF_CACHE:-$HOME/.cache/gdrperf}/vm/$(uname -r)
for m in vgem vivid; do
	modprobe "$m" 2>/dev/null || modprobe -d "$kdir" "$m" 2>"$T/modprobe.err"
done
# live [NAME]: gdr_doctor --live's JSON into $T/NAME.json, text into $T/NAME.out.
live() {
	"$DOCTOR" --live --json "$T/$1.json" >"$T/$1.out" 2>&1
}
if [ -e /sys/class/drm/card0 ] && ls /sys/class/video4linux/*/name >/dev/null 2>&1; then
	coproc ATT { exec "$ATTACH" --timeout 60; }
	read -rt 60 -u "${ATT[0]}" l1
	read -rt 60 -u "${ATT[0]}" l2
	apid=${l1#pid }
	check "dmabuf_attach: vivid's buffer exported and imported by vgem" \
		[ "${l2%% *}" = held ]
	live held
	check "held: the holder's fdinfo names the exporter (videobuf2_vmalloc)" \
		pyq - "$T/held.json" "$apid" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = [p for p in d["processes"] if p["pid"] == int(sys.argv[2])]
sys.exit(0 if p and p[0]["dmabuf_fds"] == 1
         and p[0]["dmabuf_fd_list"][0]["exp_name"] == "videobuf2_vmalloc" else 1)
PY
	echo close >&"${ATT[1]}"
	read -rt 60 -u "${ATT[0]}" l3
	check "dmabuf_attach: fd and video device closed" [ "$l3" = closed ]
	live closed
	check "closed: no process holds the fd, bufinfo still lists the buffer attached to vgem" \
		pyq - "$T/closed.json" "$apid" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
held = [p for p in d["processes"] if p["pid"] == int(sys.argv[2]) and p["dmabuf_fds"]]
bufs = [b for b in d["dmabuf"]["buffers"]
        if b["exp_name"] == "videobuf2_vmalloc" and b["devices"] == ["vgem"]]
others = [o for o in d["dmabuf"]["other_exporters"] if o["exp_name"] == "videobuf2_vmalloc"]
sys.exit(0 if not held and len(bufs) == 1 and others and others[0]["attached"] == 1 else 1)
PY
	check "closed: the text names the other exporter and its attachment" \
		grep -q '^other exporter videobuf2_vmalloc: 1 dma-buf, .*1 attached (one to vgem)' \
		"$T/closed.out"
	check "not the NVIDIA exporter: DMA-BUF not in use" \
		grep -q '^  DMA-BUF: not in use' "$T/closed.out"
	fd=${ATT[1]}
	exec {fd}>&-
	wait "$ATT_PID"
	check "dmabuf_attach exits 0" [ $? = 0 ]
	live after
	check "vgem let go: the buffer is gone from bufinfo" pyq -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(1 if [b for b in d["dmabuf"]["buffers"] if b["exp_name"] == "videobuf2_vmalloc"] else 0)' \
		"$T/after.json"
else
	skip "an attached dma-buf in bufinfo" "vgem or vivid not loadable ($(head -c 200 "$T/modprobe.err" 2>/dev/null))"
fi

# --- 2. rxe MRs by process -------------------------------------------------------
use_fake_cuda
server gdr_write_bw --timeout 60
wait_listen "$PORT"
run_bg cli env GDRPERF_LIBCUDA="$FAKE" "$B/gdr_write_bw" -p "$PORT" --timeout 60 -D 30 -s 1M \
	--mem bounce --gpu 0 "$ADDR"
wait_running "$T/cli.log" 60
coproc MRT_CO { exec "$MRT" "$GDRPERF_RDMA_DEV" 4194304 --timeout 60; }
read -rt 60 -u "${MRT_CO[0]}" m1
read -r _ mpid _ mtid _ mbytes <<<"$m1"
check "mr_thread: 4 MiB registered by a second thread" test -n "$mtid" -a "$mtid" != "$mpid"
rdma -j res show mr >"$T/mr.json"
live run
check "every MR of the node is attributed: by Tgid, and the VmPin arithmetic holds" \
	pyq - "$T/run.json" "$T/mr.json" "$mpid" "$mtid" "$mbytes" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
mrs = json.load(open(sys.argv[2]))
mpid, mtid, mbytes = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
procs = {p["pid"]: p for p in d["processes"]}
bad = []
# rdma's own list, summed by thread: each thread's MRs belong to its process.
by_tid = {}
for m in mrs:
    by_tid.setdefault(m.get("pid"), []).append(m["mrlen"])
if mtid not in by_tid or mtid in procs:
    bad.append("thread %d: not rdma's pid, or listed as a process" % mtid)
p = procs.get(mpid)
if not p or p["threads"] != [mtid] or p["mr_bytes"] != mbytes:
    bad.append("mr_thread %d: %r" % (mpid, p))
bench = [p for p in d["processes"] if p["command"] == "gdr_write_bw"]
if len(bench) != 2:
    bad.append("%d gdr_write_bw processes" % len(bench))
for p in bench + ([procs[mpid]] if mpid in procs else []):
    want = sum(by_tid.get(p["pid"], [])) + sum(sum(by_tid.get(t, [])) for t in p["threads"])
    pin = p["vmpin_bytes"]
    if p["mr_bytes"] != want or not p["mrs"]:
        bad.append("pid %d: %d MR bytes, rdma says %d" % (p["pid"], p["mr_bytes"], want))
    # ib_umem_get charges every page an MR covers: at least its bytes, at most two
    # pages more per MR (a start and an end not on a page boundary).
    if pin is None or not (p["mr_bytes"] <= pin < p["mr_bytes"] + 2 * 4096 * p["mrs"]):
        bad.append("pid %d: VmPin %r for %d MR bytes" % (p["pid"], pin, p["mr_bytes"]))
    if p["dmabuf_bytes_estimate"] != 0:
        bad.append("pid %d: DMA-BUF estimate %r" % (p["pid"], p["dmabuf_bytes_estimate"]))
if not all(p["maps_libcuda"] for p in bench):
    bad.append("gdr_write_bw does not map libcuda")
v = d["verdict"]
if v["in_use"] != "none" or v["gpu_processes_without_gpudirect"] != 2:
    bad.append("verdict %r" % v)
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
check "text: GPUDirect RDMA is off for the 2 GPU processes" \
	grep -q '"text": "neither in use: 2 GPU processes hold RDMA MRs on host memory: GPUDirect RDMA is off' \
	"$T/run.json"
"$DOCTOR" --live --expect dmabuf --quiet >/dev/null 2>&1
check "--expect dmabuf: no peer memory on this node: exit 0" [ $? = 0 ]
fd=${MRT_CO[1]}
exec {fd}>&-
wait "$MRT_CO_PID"
check "mr_thread exits 0" [ $? = 0 ]
kill_bg cli
wait_server
# A thread that registered and then exited: the kernel gives its MR no pid
# (fill_res_name_pid: a dead task); in the node's PID namespace, said so.
coproc GONE { exec "$MRT" "$GDRPERF_RDMA_DEV" 65536 --timeout 60 --thread-exits; }
read -rt 60 -u "${GONE[0]}" g1
read -r _ gpid _ gtid _ <<<"$g1"
wait_until 30 test ! -e "/proc/$gpid/task/$gtid"
live gone
check "an MR whose thread has exited: counted without a pid, said so" pyq - "$T/gone.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
src = [s for s in d["sources"] if s["name"] == "processes"][0]
sys.exit(0 if d["mrs"]["without_pid"] == 1 and src["state"] == "read"
         and "threads have exited" in src["detail"] else 1)
PY
fd=${GONE[1]}
exec {fd}>&-
wait "$GONE_PID"
check "mr_thread --thread-exits exits 0" [ $? = 0 ]
done_testing
