#!/bin/sh
# gdr_doctor --nccl-log with --root/--topology-xml: did NCCL do what the node predicts?
# One case per class of answer, on the fixture roots and the NCCL log fixtures.
. "$top_srcdir/tests/doctor/lib.sh"
# Relative paths, so that the golden report is the same in every checkout: the tests
# run in $WORK/t, where doctor/roots holds the fixture roots (links) and the trees made
# below, doctor/nccl-logs and topo the checked-in ones.
src=$(cd "$top_srcdir/tests" && pwd) || exit 1
mkdir -p "$WORK/t/doctor/roots"
for r in "$src"/doctor/roots/*; do ln -s "$r" "$WORK/t/doctor/roots/"; done
ln -s "$src/doctor/nccl-logs" "$WORK/t/doctor/nccl-logs"
ln -s "$src/topo" "$WORK/t/topo"
cd "$WORK/t" || exit 1
R=doctor/roots L=doctor/nccl-logs X=topo
# Trees with the GPUs and NICs of the log each case reads (nccl-vs-node compares them
# before it compares paths): NAME BASE HOST GPUS NICS.
node_tree "$R/dmabuf-case01" "$R/dmabuf-node" n013 0000:81:00.0 "mlx5_0 mlx5_2"
node_tree "$R/both-nodee" "$R/both" "" 0000:1a:00.0 "mlx5_0 mlx5_1"
node_tree "$R/both-case08" "$R/both" "" 0000:3b:00.0 "mlx5_8 mlx5_9 mlx5_10 mlx5_11 mlx5_12 mlx5_14 mlx5_15 mlx5_16 mlx5_17"
node_tree "$R/both-noded" "$R/both" "" 0000:5d:00.0 mlx5_4
node_tree "$R/peermem-nodea" "$R/peermem-node" "" 0000:1b:00.0 "mlx5_0 mlx5_1"
node_tree "$R/both-test1" "$R/both" "" 0000:81:00.0 "mlx5_0 mlx5_1"
plan 25
# vs NAME WANT-STATUS WANT-SUBSTRING args...: the nccl-vs-node check's status and words.
vs() {
	name=$1 want=$2 words=$3
	shift 3
	doctor_env "$DOCTOR" "$@" >"$WORK/vs.out" 2>&1
	line=$(unwrap "$WORK/vs.out" | grep '^[a-z-]*  *nccl-vs-node ')
	case "$line" in
	"$want"*"$words"*) ok "$name" ;;
	*) sed 's/^/# /' "$WORK/vs.out"; not_ok "$name (got: $line)" ;;
	esac
}
vs "dmabuf log on a DMA-BUF node" pass "NCCL used DMA-BUF, as the node allows" \
	--root "$R/dmabuf-case01" --nccl-log "$L/case01.log"
vs "peermem log, DMA-BUF available, NCCL_DMABUF_ENABLE=0 in the log" warn "NCCL_DMABUF_ENABLE=0 (log line 2)" \
	--root "$R/both-nodee" --nccl-log "$L/synth-2.24-dmabuf-disabled-env.log"
vs "peermem log from NCCL 2.7 on a DMA-BUF node" warn "predates DMA-BUF support" \
	--root "$R/both-case08" --nccl-log "$L/case08.log"
vs "peermem log, no DMA-BUF line, DMA-BUF available" warn "NCCL used peermem although DMA-BUF is available: NCCL_DMABUF_ENABLE=0, or" \
	--root "$R/both-noded" --nccl-log "$L/synth-2.23-peermem-no-gpu-dmabuf.log"
vs "peermem log on a peermem-only node" pass "the one path the node offers" \
	--root "$R/peermem-nodea" --nccl-log "$L/synth-2.12-peermem.log"
vs "dmabuf log on a node without a driver" warn "although the node view rules it out" \
	--root "$R/no-driver" --nccl-log "$L/case01.log"
vs "no GDR on a node without a driver" pass "as the node predicts" \
	--root "$R/no-driver" --nccl-log "$L/case03.log"
vs "Socket log on an RDMA node" warn "NCCL used Socket although the node offers" \
	--root "$R/both" --nccl-log "$L/case12.log"
vs "no GDR, distances not measured" warn "NCCL_NET_GDR_LEVEL? (distances not measured" \
	--root "$R/both-test1" --nccl-log "$L/case03.log"
# case03 with its GPU moved to one of the topology's (and the tree's).
sed 's/busId 81000/busId 1000/' "$L/case03.log" >case03-gpu-01.log
sed 's/busId 81000/busId 34000/' "$L/case03.log" >case03-gpu-34.log
node_tree "$R/both-01" "$R/both" "" 0000:01:00.0 "mlx5_0 mlx5_1"
node_tree "$R/both-34" "$R/both" "" 0000:34:00.0 "mlx5_0 mlx5_1"
vs "no GDR, every nearest NIC beyond PXB" pass "as the distances predict: GPU0's nearest NIC mlx5_0 is PHB" \
	--root "$R/both-01" --topology-xml "$X/hostbridges.xml" --nccl-log case03-gpu-01.log
vs "no GDR although the distance allows it" warn "although the GPU-NIC distance allows it" \
	--root "$R/both-34" --topology-xml "$X/xml/nvidia-dgx2h-v100-cx5.xml" --nccl-log case03-gpu-34.log
vs "two runs that disagree" warn "different paths" \
	--root "$R/both" --nccl-log "$L/synth-two-runs.log"
vs "a log that does not say" n-a "nothing to compare" \
	--root "$R/both" --nccl-log "$L/synth-2.26-cut-short.log"
# Scope: a log from other hosts is not judged against this node; its own conclusion stands.
vs "case09 (hosts 21346d5cefce, 6a5a91752e39) against another host's topology" warn \
	"not compared: the log is from hosts 21346d5cefce, 6a5a91752e39, not this machine" \
	--topology-xml "$X/xml/dell-xe8640-h100-spr-snc4.xml" --nccl-log "$L/case09.log"
node_tree "$WORK/host-root" "$R/both" node-b 0000:3b:00.0 "mlx5_1 mlx5_2 mlx5_3"
vs "case09 against a tree whose host is another" warn \
	"not compared: the log is from hosts 21346d5cefce, 6a5a91752e39, not the tree's host node-b" \
	--root "$WORK/host-root" --nccl-log "$L/case09.log"
echo 21346d5cefce >"$WORK/host-root/etc/hostname"
vs "case09 against the tree of one of its hosts: compared" warn "NCCL used no GPUDirect although" \
	--root "$WORK/host-root" --nccl-log "$L/case09.log"
vs "case09 against the tree of one of its hosts: says which hosts were compared" warn \
	"[log hosts 21346d5cefce, 6a5a91752e39; the tree's host 21346d5cefce is one of them; the log's NICs mlx5_1, mlx5_2, mlx5_3 are the tree's]" \
	--root "$WORK/host-root" --nccl-log "$L/case09.log"
vs "case09 against its host's tree and another host's topology" warn \
	"not compared: the log is from hosts 21346d5cefce, 6a5a91752e39, not the topology's host testhost-nvidia;" \
	--root "$WORK/host-root" --topology-xml "$X/xml/dell-xe8640-h100-spr-snc4.xml" --nccl-log "$L/case09.log"
# Devices: a log whose GPUs or NICs the node does not have is from another node.
node_tree "$R/both-case01-no-mlx5_2" "$R/both" n013 0000:81:00.0 mlx5_0
vs "case01 on a tree without its NIC mlx5_2" warn \
	"not compared: the log's NIC mlx5_2 is not the tree's (it has GPU 0000:81:00.0; NIC mlx5_0); the log's own conclusion: dmabuf" \
	--root "$R/both-case01-no-mlx5_2" --nccl-log "$L/case01.log"
node_tree "$R/both-case01-gpu-3b" "$R/both" n013 0000:3b:00.0 "mlx5_0 mlx5_2"
vs "case01 on a tree without its GPU" warn \
	"not compared: the log's GPU 0000:81:00.0 is not the tree's (it has GPU 0000:3b:00.0; NICs mlx5_0, mlx5_2)" \
	--root "$R/both-case01-gpu-3b" --nccl-log "$L/case01.log"
vs "case01 on its node: the devices compared are named" pass \
	"NCCL used DMA-BUF, as the node allows [log host n013; the tree's host n013 is one of them; the log's GPU 0000:81:00.0 and NICs mlx5_0, mlx5_2 are the tree's]" \
	--root "$R/dmabuf-case01" --nccl-log "$L/case01.log"
node_tree "$R/both-1e" "$R/both" "" 0000:00:1e.0 "mlx5_0 mlx5_1"
vs "case13 (no host) against a topology without its GPU" warn \
	"not compared: the log's GPU 0000:00:1e.0 is not the topology's (it has GPUs 0000:34:00.0, 0000:36:00.0, 0000:39:00.0, 0000:3b:00.0 +12 more; NICs mlx5_0, mlx5_1, mlx5_2, mlx5_3 +7 more)" \
	--root "$R/both-1e" --topology-xml "$X/xml/nvidia-dgx2h-v100-cx5.xml" --nccl-log "$L/case13.log"
echo 6a5a91752e39 >"$WORK/host-root/etc/hostname"
rm -rf "$WORK/host-root/sys/class/infiniband/mlx5_2" "$WORK/host-root/sys/class/infiniband/mlx5_3"
vs "case09 against the tree of its other host: the NICs of 21346d5cefce do not count" warn \
	"NCCL used no GPUDirect although" \
	--root "$WORK/host-root" --nccl-log "$L/case09.log"
# The whole report, text and JSON, pinned for one case.
doctor_env "$DOCTOR" --root "$R/both-nodee" --nccl-log "$L/synth-2.24-dmabuf-disabled-env.log" \
	--json "$WORK/vs.json" >"$WORK/vs-full.out" 2>&1
echo "exit $?" >>"$WORK/vs-full.out"
cat "$WORK/vs.json" >>"$WORK/vs-full.out"
golden vs-both-dmabuf-disabled.out "$WORK/vs-full.out"
# --quiet: the nccl-vs-node line and the verdict, wrapped to 80 columns (test_width.sh).
{
	doctor_env "$DOCTOR" --quiet --root "$R/both-nodee" --nccl-log "$L/synth-2.24-dmabuf-disabled-env.log"
	doctor_env "$DOCTOR" --quiet --root "$R/both-case01-gpu-3b" --nccl-log "$L/case01.log"
} >"$WORK/vs-quiet.out" 2>&1
golden vs-quiet.out "$WORK/vs-quiet.out"
done_testing
