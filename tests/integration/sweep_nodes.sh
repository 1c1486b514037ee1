# shellcheck shell=bash
# Three "nodes" in one guest for the sweep tests (t_62 under mpirun, t_63
# under Slurm; sourced after lib.sh): three rxe devices rxeNA..rxeNC, each
# on its own veth whose far end sits in one bridge, with its own address
# (169.254.79.1-3), so that every node pair has its own path on the wire.
#
# Routing on one kernel: rxe on Linux 6.1 sends from the initial namespace,
# so policy rules ("from ADDR_X lookup table X": out of node X's veth) keep
# traffic off lo, and packets arriving on a node's veth are delivered locally
# (as softroce-vm --pair does for two nodes).
NODES="A B C"
addr() { case $1 in A) echo 169.254.79.1 ;; B) echo 169.254.79.2 ;; C) echo 169.254.79.3 ;; esac; }
table() { case $1 in A) echo 131 ;; B) echo 132 ;; C) echo 133 ;; esac; }

# sweep_nodes_down: undo sweep_nodes_up (idempotent; for at_exit).
sweep_nodes_down() {
	local nd
	for nd in $NODES; do
		rdma link delete "rxeN$nd" 2>/dev/null
		ip rule del pref 95 from "$(addr "$nd")" 2>/dev/null
		ip rule del pref 85 iif "sw$nd" 2>/dev/null
		ip link del "sw$nd" 2>/dev/null
	done
	ip link del gdrsw 2>/dev/null
	[ -n "${moved_local:-}" ] && ip rule add pref 0 lookup local && ip rule del pref 200 lookup local
	moved_local=
}

# sweep_nodes_up: build the three nodes and check each device (TAP cases);
# 1 at once when the kernel has no bridge (the caller skips).
sweep_nodes_up() {
	local nd od c mac
	ip link add gdrsw type bridge 2>/dev/null || return 1
	ip link set gdrsw up
	# Local delivery after the per-node rules (softroce-vm --pair does this already).
	if ip rule show pref 0 | grep -q 'lookup local'; then
		ip rule add pref 200 lookup local && ip rule del pref 0 && moved_local=1
	fi
	for nd in $NODES; do
		ip link add "sw$nd" type veth peer name "sw${nd}p"
		ip link set "sw${nd}p" master gdrsw
		for c in all default "sw$nd"; do
			echo 0 >"/proc/sys/net/ipv4/conf/$c/rp_filter"
			echo 1 >"/proc/sys/net/ipv4/conf/$c/accept_local"
		done
		ip addr add "$(addr "$nd")/32" dev "sw$nd"
		ip link set "sw${nd}p" up
		ip link set "sw$nd" up
		ip rule add pref 85 iif "sw$nd" lookup local
		ip rule add pref 95 from "$(addr "$nd")" lookup "$(table "$nd")"
	done
	for nd in $NODES; do
		mac=$(cat "/sys/class/net/sw$nd/address")
		for od in $NODES; do
			[ "$od" = "$nd" ] && continue
			ip route add "$(addr "$nd")/32" dev "sw$od" src "$(addr "$od")" table "$(table "$od")"
			ip neigh replace "$(addr "$nd")" lladdr "$mac" dev "sw$od" nud permanent
		done
		rdma link add "rxeN$nd" type rxe netdev "sw$nd"
	done
	for nd in $NODES; do
		check "node $nd: rxeN$nd on sw$nd is ACTIVE with its IPv4 GID" wait_rxe "rxeN$nd" 30
	done
}

# sweep_node_slow ND: node ND's link (both directions) at a fraction of what
# the others get.
sweep_node_slow() {
	tc qdisc add dev "sw$1" root netem rate 20mbit limit 100000 &&
		tc qdisc add dev "sw${1}p" root netem rate 20mbit limit 100000
	check "node $1's link slowed with netem" bash -c "tc qdisc show dev sw$1 | grep -q netem"
}
