#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# The demo: installs what is missing, builds and installs loom into Open MPI's
# component directory, then compares latency and bandwidth of loom with
# Open MPI's btl tcp and pml ucx on loopback, the 8 B latency of the
# layers under both, and UCT's own put at 512 KiB and 1 MiB
# (loom-bench.sh --layers).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
"$src/contrib/install-deps.sh"
"$src/contrib/build.sh" "$src/build"
make -C "$src/build" install >/dev/null
echo "demo: installed; ompi_info sees:"
ompi_info | grep 'MCA btl: loom' || { echo "demo: ompi_info does not list loom" >&2; exit 1; }
exec "$src/contrib/loom-bench.sh" --bindir "$src/build/bench/mpi" --layers "$@"
