#!/bin/sh
# nccl-vs-node on every shared NCCL log (tests/doctor/nccl-logs/caseNN.log, from
# /work/shared/nccl-logs) against a node that matches the log and one that does not:
# the GPUs, NICs and host below are read off each log by hand (not by the reader), and
# the trees are made from the fixture root "both" by node_tree (lib.sh). A log that
# names no device is mismatched by host; a log that names no host by a topology XML.
. "$top_srcdir/tests/doctor/lib.sh"
src=$(cd "$top_srcdir/tests" && pwd) || exit 1
mkdir -p "$WORK/t/doctor/roots"
ln -s "$src/doctor/roots/both" "$WORK/t/doctor/roots/both"
ln -s "$src/doctor/nccl-logs" "$WORK/t/doctor/nccl-logs"
ln -s "$src/topo" "$WORK/t/topo"
cd "$WORK/t" || exit 1
R=doctor/roots L=doctor/nccl-logs X=topo/xml
OTHER_GPU=0000:e1:00.0
# case HOST GPUS NICS ("-": the log names none)
cat >cases <<'TABLE'
case01 n013 0000:81:00.0 mlx5_0,mlx5_2
case02 test1 0000:81:00.0 mlx5_0
case03 test1 0000:81:00.0 mlx5_0
case04 gpu-st-ml-1 0000:30:00.0 -
case05 deepseek-v2-5-0 0001:00:00.0 mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
case06 tpgds-aihub0003 0000:0a:00.0 mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7,mlx5_10
case07 tpgds-aihub0008 0000:18:00.0 mlx5_0,mlx5_1,mlx5_2,mlx5_5,mlx5_6,mlx5_7,mlx5_8,mlx5_11
case08 10-90-43-152 - mlx5_8,mlx5_9,mlx5_10,mlx5_11,mlx5_12,mlx5_14,mlx5_15,mlx5_16,mlx5_17
case09 21346d5cefce - mlx5_1,mlx5_2,mlx5_3
case10 hostname1 0000:1c:00.0 mlx5_0,mlx5_1
case11 axa - -
case12 worker - -
case13 - 0000:00:1e.0 -
case14 aigc-maas-instance-leader-0 0000:42:00.0 -
case15 - - rocep1s0f0
case16 master_node - mlx5_0
case17 swat1-04 - -
case18 <cluster_name> - -
case19 learn01 - mlx5_0,mlx5_1,mlx5_2
case20 leader-h2nng - -
case21 dgxh100-3 - mlx5_10,mlx5_11
case22 test1 0000:81:00.0 mlx5_0
case23 elsah100 - mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7,mlx5_8
TABLE
plan 1
# block NAME args...: the nccl-vs-node check as gdr_doctor prints it, under a title.
block() {
	echo "== $1"
	shift
	doctor_env "$DOCTOR" "$@" 2>&1 | awk '/^[a-z-]+ +nccl-vs-node / { on = 1; print; next }
		on && /^ / { print; next } { on = 0 }'
}
: >devices.out
while read -r c host gpus nics; do
	h=$host g=$gpus n=$nics
	[ "$h" = - ] && h=
	[ "$g" = - ] && g=0000:3b:00.0
	[ "$n" = - ] && n=mlx5_0,mlx5_1
	g=$(echo "$g" | tr , ' ') n=$(echo "$n" | tr , ' ')
	node_tree "$R/$c" "$R/both" "$h" "$g" "$n"
	block "$c on its node" --root "$R/$c" --nccl-log "$L/$c.log" >>devices.out
	# The mismatch: another GPU, else the first NIC renamed, else another host.
	if [ "$gpus" != - ]; then
		node_tree "$R/$c-other" "$R/both" "$h" "$OTHER_GPU" "$n"
		why="GPU $OTHER_GPU"
	elif [ "$nics" != - ]; then
		rest=${n#"${n%% *}"}
		node_tree "$R/$c-other" "$R/both" "$h" "$g" "mlx5_99$rest"
		why="NIC mlx5_99 for ${n%% *}"
	else
		node_tree "$R/$c-other" "$R/both" other-node "$g" "$n"
		why="host other-node"
	fi
	if [ "$host" = - ]; then
		block "$c on its tree, a topology without its devices" --root "$R/$c" \
			--topology-xml "$X/nvidia-dgx2h-v100-cx5.xml" --nccl-log "$L/$c.log" >>devices.out
	fi
	block "$c on a tree with $why" --root "$R/$c-other" --nccl-log "$L/$c.log" >>devices.out
done <cases
golden vs-devices.out devices.out
done_testing
