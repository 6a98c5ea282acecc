#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Run a command on a node of the virtual cluster, with the node's hostname.
# Usage: contrib/vcluster-exec.sh node<i> command [args...]
set -eu
node=${1:?usage: $0 node<i> command [args...]}
shift
case "$node" in node[0-9]*) ;; *) echo "vcluster-exec: not a node name: $node" >&2; exit 2 ;; esac
exec ip netns exec "$node" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$node" "$@"
