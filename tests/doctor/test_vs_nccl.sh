#!/bin/sh
# gdr_doctor --nccl-log with --root/--topology-xml: did NCCL do what the node predicts?
# One case per class of answer, on the fixture roots and the NCCL log fixtures.
. "$top_srcdir/tests/doctor/lib.sh"
# Relative paths, so that the golden report is the same in every checkout.
cd "$top_srcdir/tests" || exit 1
R=doctor/roots L=doctor/nccl-logs X=topo
plan 19
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
	--root "$R/dmabuf-node" --nccl-log "$L/case01.log"
vs "peermem log, DMA-BUF available, NCCL_DMABUF_ENABLE=0 in the log" warn "NCCL_DMABUF_ENABLE=0 (log line 2)" \
	--root "$R/both" --nccl-log "$L/synth-2.24-dmabuf-disabled-env.log"
vs "peermem log from NCCL 2.7 on a DMA-BUF node" warn "predates DMA-BUF support" \
	--root "$R/both" --nccl-log "$L/case08.log"
vs "peermem log, no DMA-BUF line, DMA-BUF available" warn "NCCL used peermem although DMA-BUF is available: NCCL_DMABUF_ENABLE=0, or" \
	--root "$R/both" --nccl-log "$L/synth-2.23-peermem-no-gpu-dmabuf.log"
vs "peermem log on a peermem-only node" pass "the one path the node offers" \
	--root "$R/peermem-node" --nccl-log "$L/synth-2.12-peermem.log"
vs "dmabuf log on a node without a driver" warn "although the node view rules it out" \
	--root "$R/no-driver" --nccl-log "$L/case01.log"
vs "no GDR on a node without a driver" pass "as the node predicts" \
	--root "$R/no-driver" --nccl-log "$L/case03.log"
vs "Socket log on an RDMA node" warn "NCCL used Socket although the node offers" \
	--root "$R/both" --nccl-log "$L/case12.log"
vs "no GDR, distances not measured" warn "NCCL_NET_GDR_LEVEL? (distances not measured" \
	--root "$R/both" --nccl-log "$L/case03.log"
vs "no GDR, every nearest NIC beyond PXB" pass "as the distances predict: GPU0's nearest NIC mlx5_0 is PHB" \
	--root "$R/both" --topology-xml "$X/hostbridges.xml" --nccl-log "$L/case03.log"
vs "no GDR although the distance allows it" warn "although the GPU-NIC distance allows it" \
	--root "$R/both" --topology-xml "$X/xml/nvidia-dgx2h-v100-cx5.xml" --nccl-log "$L/case03.log"
vs "two runs that disagree" warn "different paths" \
	--root "$R/both" --nccl-log "$L/synth-two-runs.log"
vs "a log that does not say" n-a "nothing to compare" \
	--root "$R/both" --nccl-log "$L/synth-2.26-cut-short.log"
# Scope: a log from other hosts is not judged against this node; its own conclusion stands.
vs "case09 (hosts 21346d5cefce, 6a5a91752e39) against another host's topology" warn \
	"not compared: the log is from hosts 21346d5cefce, 6a5a91752e39, not this machine" \
	--topology-xml "$X/xml/dell-xe8640-h100-spr-snc4.xml" --nccl-log "$L/case09.log"
cp -R "$R/both" "$WORK/host-root"
mkdir -p "$WORK/host-root/etc"
echo node-b >"$WORK/host-root/etc/hostname"
vs "case09 against a tree whose host is another" warn \
	"not compared: the log is from hosts 21346d5cefce, 6a5a91752e39, not the tree's host node-b" \
	--root "$WORK/host-root" --nccl-log "$L/case09.log"
echo 21346d5cefce >"$WORK/host-root/etc/hostname"
vs "case09 against the tree of one of its hosts: compared" warn "NCCL used no GPUDirect although" \
	--root "$WORK/host-root" --nccl-log "$L/case09.log"
vs "case09 against the tree of one of its hosts: says which hosts were compared" warn \
	"[log hosts 21346d5cefce, 6a5a91752e39; the tree's host 21346d5cefce is one of them]" \
	--root "$WORK/host-root" --nccl-log "$L/case09.log"
vs "case09 against its host's tree and another host's topology" warn \
	"not compared: the log is from hosts 21346d5cefce, 6a5a91752e39, not the topology's host testhost-nvidia;" \
	--root "$WORK/host-root" --topology-xml "$X/xml/dell-xe8640-h100-spr-snc4.xml" --nccl-log "$L/case09.log"
# The whole report, text and JSON, pinned for one case.
doctor_env "$DOCTOR" --root "$R/both" --nccl-log "$L/synth-2.24-dmabuf-disabled-env.log" \
	--json "$WORK/vs.json" >"$WORK/vs-full.out" 2>&1
echo "exit $?" >>"$WORK/vs-full.out"
cat "$WORK/vs.json" >>"$WORK/vs-full.out"
golden vs-both-dmabuf-disabled.out "$WORK/vs-full.out"
done_testing
