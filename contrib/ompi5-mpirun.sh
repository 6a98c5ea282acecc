#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Open MPI 5.0's mpirun (from contrib/ompi5-build.sh's cache) on loopback
# only.  Its runtime, PRRTE, leaves loopback out wherever another interface
# exists (and would listen on this machine's outside address), so the run
# goes into a network namespace that has nothing but lo, made here on first
# use (loom-lo).  Needs root.  Arguments are mpirun's.
set -eu -o pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
prefix=$("$src/contrib/ompi5-build.sh" --check | tail -n 1)
[ -x "$prefix/bin/mpirun" ] || { echo "ompi5-mpirun: no mpirun in $prefix/bin" >&2; exit 2; }
ns=${LOOM_OMPI5_NETNS:-loom-lo}
if ! ip netns exec "$ns" true 2>/dev/null; then
    ip netns add "$ns" 2>/dev/null || ip netns exec "$ns" true
    ip netns exec "$ns" ip link set lo up
fi
exec ip netns exec "$ns" "$prefix/bin/mpirun" "$@"
