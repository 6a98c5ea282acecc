#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# The MPI tests with eager RDMA rings on tcp (where they are off by default):
# once growing after two messages, once changing phase after every message;
# then the ring memory benchmark with its goals asserted, on 8 and 32 ranks
# (LOOM_EAGER_PASSES and LOOM_EAGER_BENCH choose).
# test_large runs once, in run-mpi-tests.sh: a 2 GiB message goes by
# rendezvous, never through a ring; so does test_allreduce, whose large
# reductions are pushes (its small messages are test_collectives').
set -eu
dir=$(dirname "$0")
export LOOM_TEST_REPEAT=1 # up to 4 ranks, without those two
# Nor the broadcasts, allgathers and the registration cache: their data goes
# by RDMA and pushes, not through rings (the collectives' messages are
# test_collectives')
export LOOM_TEST_LEAVE_OUT="${LOOM_TEST_LEAVE_OUT:-} test_bcast test_allgather test_rcache"
base="--mca pml ob1 --mca btl self,loom --mca btl_loom_rails tcp:lo --mca btl_loom_eager_rdma on"
# The passes (LOOM_EAGER_PASSES, default both: grow cycle)
passes=" ${LOOM_EAGER_PASSES:-grow cycle} "
# LOOM_EAGER_LARGEST_NP=1: each program once, at its largest count
[ "${LOOM_EAGER_LARGEST_NP:-0}" = 1 ] && export LOOM_TEST_LARGEST_NP=1
rc=0
if [[ "$passes" == *" grow "* ]]; then
    echo "=== eager rings growing on demand"
    LOOM_MPI_ARGS="$base --mca btl_loom_eager_msgs_before_ring 2" "$dir/run-mpi-tests.sh" || rc=1
fi
if [[ "$passes" == *" cycle "* ]]; then
    echo "=== eager rings changing phase after every message"
    LOOM_MPI_ARGS="$base --mca btl_loom_eager_cycle 1" "$dir/run-mpi-tests.sh" || rc=1
fi
# the benchmarks' programs: LOOM_BENCH_BINDIR (make check sets it), else beside
# LOOM_TEST_BINDIR's build tree, else an in-tree build's
benchdir=${LOOM_BENCH_BINDIR:-${LOOM_TEST_BINDIR:+$LOOM_TEST_BINDIR/../../bench/mpi}}
benchdir=${benchdir:-$dir/../../bench/mpi}
root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
# 32 ranks: MPI_Alltoall's aggregated messages must not buy large rings.
# Goals on memory accounting, checked in the plain build (LOOM_EAGER_BENCH=0
# leaves them out: the AddressSanitizer build's time goes to the passes).
[ "${LOOM_EAGER_BENCH:-1}" = 0 ] && exit $rc
for np in 8 32; do
    echo "=== eager ring memory (bench_eager_memory -c, $np ranks)"
    if ! timeout -k 10 300 mpirun "${root[@]}" --oversubscribe --mca oob_tcp_if_include lo \
            --mca btl_tcp_if_include lo $base --mca btl_loom_eager_idle_shrink 300 -np $np \
            "$benchdir/bench_eager_memory" -c -i 1500; then
        echo "FAIL bench_eager_memory ($np ranks)"
        rc=1
    fi
done
exit $rc
