#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Runs a program on the core its MPI rank is given: rank r on the r-th entry
# of LIST (comma separated; taken again from the start when there are more
# ranks).  On the virtual cluster four ranks share this machine's two cores,
# and which ranks share one decides a broadcast's time more than the stack
# does: at 1 MiB 1x, 1.9x or 2.8x, the same in every configuration.  With
# --bind-to none the scheduler picks that pairing at start-up and keeps it
# for the whole job (docs/perf/2026-12-07-pairs.md).
#
# usage: contrib/rank-core.sh LIST program [arguments]
set -u
[ $# -ge 2 ] || { echo "usage: $0 LIST program [arguments]" >&2; exit 2; }
IFS=, read -r -a cores <<<"$1"
[ ${#cores[@]} -gt 0 ] || { echo "rank-core: no core in LIST '$1'" >&2; exit 2; }
shift
rank=${OMPI_COMM_WORLD_RANK:?rank-core: not started by mpirun (no OMPI_COMM_WORLD_RANK)}
core=${cores[$((rank % ${#cores[@]}))]}
case "$core" in ''|*[!0-9]*) echo "rank-core: not a core number: '$core'" >&2; exit 2 ;; esac
exec taskset -c "$core" "$@"
