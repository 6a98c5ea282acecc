#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Bring up a virtual cluster on this machine: N nodes x R rails made of
# network namespaces, for multi-rail tests.  Nothing in it routes to the
# outside: every address is in 10.77.0.0/16 and lives only inside the
# namespaces.
#
#   node<i>      namespace of node i, hostname node<i> when entered through
#                contrib/vcluster-exec.sh
#   mgmt         device for the MPI runtime (10.77.0.<i+1>/24), never shaped
#                or failed, so mpirun keeps its connections
#   rail<r>      data rail r (10.77.<r+1>.<i+1>/24): one subnet per rail, or
#                the kernel would route every connection out of one device
#
# N=2: direct veth pairs; N>2: one bridge per network in namespace loomsw.
# Usage: contrib/vcluster-up.sh [-n NODES] [-r RAILS]   (needs root)
# Then:  contrib/vcluster-exec.sh node0 mpirun --hostfile /run/loom-vcluster/hostfile \
#            --mca plm_rsh_agent contrib/vcluster-rsh.sh --mca oob_tcp_if_include mgmt ...
set -eu
nodes=2
rails=2
while getopts "n:r:" opt; do
    case $opt in
    n) nodes=$OPTARG ;;
    r) rails=$OPTARG ;;
    *) echo "usage: $0 [-n NODES] [-r RAILS]" >&2; exit 2 ;;
    esac
done
case "$nodes$rails" in *[!0-9]*) echo "vcluster: -n and -r take numbers" >&2; exit 2 ;; esac
if [ "$nodes" -lt 2 ] || [ "$nodes" -gt 32 ] || [ "$rails" -lt 1 ] || [ "$rails" -gt 8 ]; then
    echo "vcluster: need 2-32 nodes and 1-8 rails (got $nodes x $rails)" >&2
    exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "vcluster: SKIP: creating network namespaces needs root" >&2
    exit 77
fi
state=/run/loom-vcluster
if [ -e "$state/nodes" ]; then
    echo "vcluster: a cluster is up already ($(cat "$state/nodes") nodes); run vcluster-down.sh first" >&2
    exit 1
fi
mkdir -p "$state"

nets=(mgmt)
for ((r = 0; r < rails; r++)); do nets+=("rail$r"); done

addr() { # network index, node index
    echo "10.77.$1.$(($2 + 1))"
}

for ((i = 0; i < nodes; i++)); do
    ip netns add "node$i"
    ip -n "node$i" link set lo up
    # The kernel's own TCP settings (a namespace starts with the defaults):
    # a connection of a failed rail may deliver what it had queued when the
    # link comes back, and loom's checked writes must refuse it.
    mkdir -p "/etc/netns/node$i"
    {
        echo "127.0.0.1 localhost"
        for ((j = 0; j < nodes; j++)); do echo "$(addr 0 "$j") node$j"; done
    } > "/etc/netns/node$i/hosts"
done

if [ "$nodes" -eq 2 ]; then
    for ((k = 0; k < ${#nets[@]}; k++)); do
        net=${nets[$k]}
        ip link add "lv0$net" netns node0 type veth peer name "lv1$net" netns node1
        for i in 0 1; do
            ip -n "node$i" link set "lv$i$net" name "$net"
            ip -n "node$i" addr add "$(addr "$k" "$i")/24" dev "$net"
            ip -n "node$i" link set "$net" up
        done
    done
else
    ip netns add loomsw
    for ((k = 0; k < ${#nets[@]}; k++)); do
        ip -n loomsw link add "br$k" type bridge
        ip -n loomsw link set "br$k" up
        for ((i = 0; i < nodes; i++)); do
            net=${nets[$k]}
            ip link add "ln$i-$k" netns "node$i" type veth peer name "sw$i-$k" netns loomsw
            ip -n loomsw link set "sw$i-$k" master "br$k" up
            ip -n "node$i" link set "ln$i-$k" name "$net"
            ip -n "node$i" addr add "$(addr "$k" "$i")/24" dev "$net"
            ip -n "node$i" link set "$net" up
        done
    done
fi

# Wait for carrier on every device: UCT lists only devices that are running.
for ((i = 0; i < nodes; i++)); do
    for net in "${nets[@]}"; do
        for ((t = 0; t < 50; t++)); do
            ip -n "node$i" link show "$net" | grep -q 'LOWER_UP' && break
            sleep 0.1
        done
        ip -n "node$i" link show "$net" | grep -q 'LOWER_UP' ||
            { echo "vcluster: node$i $net has no carrier" >&2; exit 1; }
    done
done

: > "$state/hostfile"
for ((i = 0; i < nodes; i++)); do echo "node$i slots=2" >> "$state/hostfile"; done
echo "$nodes" > "$state/nodes"
echo "$rails" > "$state/rails"
echo "vcluster: $nodes nodes x $rails rails up; hostfile $state/hostfile"
