#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Shape the rails of the virtual cluster: rail r of every node sends at most
# the r-th rate, in mbit/s (tbf, burst 64kb, latency 50ms).  A rate of 0
# removes the shaping of that rail.
# Usage: contrib/vcluster-shape.sh RATE0 [RATE1 ...]
set -eu
state=/run/loom-vcluster
[ $# -gt 0 ] || { echo "usage: $0 RATE0 [RATE1 ...] (mbit/s per rail, 0: unshaped)" >&2; exit 2; }
[ -f "$state/nodes" ] || { echo "vcluster-shape: no virtual cluster is up" >&2; exit 1; }
nodes=$(cat "$state/nodes")
r=0
for rate in "$@"; do
    case "$rate" in ''|*[!0-9]*) echo "vcluster-shape: not a rate in mbit/s: $rate" >&2; exit 2 ;; esac
    for ((i = 0; i < nodes; i++)); do
        if [ "$rate" -eq 0 ]; then
            ip netns exec "node$i" tc qdisc del dev "rail$r" root 2>/dev/null || true
        else
            ip netns exec "node$i" tc qdisc replace dev "rail$r" root tbf rate "${rate}mbit" \
                burst 64kb latency 50ms
        fi
    done
    r=$((r + 1))
done
