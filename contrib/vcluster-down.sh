#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Tear the virtual cluster down.  Processes still running in a node are
# listed, not killed: stop them yourself, then run this again.
set -u
if [ "$(id -u)" -ne 0 ]; then
    echo "vcluster: SKIP: needs root" >&2
    exit 77
fi
busy=0
for ns in $(ip netns list | awk '{print $1}' | grep -E '^(node[0-9]+|loomsw)$'); do
    pids=$(ip netns pids "$ns")
    if [ -n "$pids" ]; then
        echo "vcluster: $ns still runs:" >&2
        ps -o pid=,args= -p $pids >&2
        busy=1
    fi
done
[ $busy -eq 0 ] || exit 1
for ns in $(ip netns list | awk '{print $1}' | grep -E '^(node[0-9]+|loomsw)$'); do
    ip netns del "$ns"
    rm -rf "/etc/netns/$ns"
done
rm -rf /run/loom-vcluster
echo "vcluster: down"
