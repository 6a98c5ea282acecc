#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# mpirun's remote shell inside the virtual cluster (--mca plm_rsh_agent):
# called as "<agent> [options] <host> <command line>", runs the command line
# on that node.
set -eu
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done  # rsh/ssh options
host=${1:?vcluster-rsh: no host}
shift
exec ip netns exec "$host" unshare --uts sh -c 'hostname "$0" && eval "$1"' "$host" "$*"
