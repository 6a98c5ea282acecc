#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# The demo: installs what is missing, builds and installs loom into Open MPI's
# component directory, then compares latency and bandwidth of loom with
# Open MPI's btl tcp and pml ucx on loopback, the 8 B latency of the
# layers under both, and UCT's own put at 512 KiB and 1 MiB
# (loom-bench.sh --layers).
# With --ompi 5 as its first argument it does the same against Open MPI 5.0,
# built first where it is not cached (contrib/ompi5-build.sh), with 5.0's
# own btl tcp and pml ucx beside loom.  Other arguments go to loom-bench.sh.
set -eu -o pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
"$src/contrib/install-deps.sh"
build=$src/build
configure=()
ompi_info=ompi_info
if [ "${1:-}" = "--ompi" ]; then
    case "${2:-}" in
    4|4.1) ;;
    5|5.0)
        prefix=$(LOOM_OMPI5_WAIT=1 "$src/contrib/ompi5-build.sh" | tail -n 1)
        [ -x "$prefix/bin/mpirun" ] || { echo "demo: Open MPI 5.0 did not build" >&2; exit 1; }
        build=$src/build-ompi5
        configure=(--with-ompi="$prefix")
        ompi_info=$prefix/bin/ompi_info
        # on loopback only, in a namespace of its own (see there)
        export LOOM_MPIRUN="$src/contrib/ompi5-mpirun.sh"
        ;;
    *) echo "demo: --ompi 4 or --ompi 5" >&2; exit 2 ;;
    esac
    shift 2
fi
"$src/contrib/build.sh" "$build" "${configure[@]}"
make -C "$build" install >/dev/null
echo "demo: installed; $ompi_info sees:"
"$ompi_info" | grep 'MCA btl: loom' || { echo "demo: ompi_info does not list loom" >&2; exit 1; }
exec "$src/contrib/loom-bench.sh" --bindir "$build/bench/mpi" --layers "$@"
