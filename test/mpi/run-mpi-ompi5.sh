#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# The MPI programs of the Open MPI 5.0 stage (make check-ompi5 in a build
# configured --with-ompi=<5.0>): one run of every path a message takes
# through loom (eager and rendezvous sizes, datatypes, wildcards, striping
# over two rails, pushes and coll loom's collectives and how it chooses them, threads, spawn, the
# pvars), each at its largest process count up to 4, the eager rings, then one-sided
# communication with no --mca osc argument at 2, 4 and 8 ranks: Open MPI
# 5.0's default osc must run it over loom's RDMA and atomics (the pvar
# btl_loom_atomics counts them; test_osc_atomics includes dynamic windows).
# 5.0 has no osc pt2pt: the runs that ask for it are left out.
set -eu
dir=$(dirname "${BASH_SOURCE[0]}")
export LOOM_TEST_LEAVE_OUT="${LOOM_TEST_LEAVE_OUT:-} OMPI_MCA_osc=pt2pt OMPI_MCA_btl_loom_atomics=1"
rc=0
LOOM_TEST_ONLY="test_sizes test_datatypes test_many_outstanding test_any_source test_alltoall \
test_stripe test_p2p_modes test_collectives test_bcast test_allreduce test_allgather test_coll_select test_rcache \
test_threads test_spawn test_pvars" LOOM_TEST_LARGEST_NP=1 LOOM_TEST_MAX_NP=4 "$dir/run-mpi-tests.sh" ||
    rc=1
# the eager rings (on tcp only when asked: "rdma" leaves them to RDMA
# rails), then one-sided by default: no osc and no btl_loom_atomics argument
LOOM_TEST_ENTRIES="OMPI_MCA_btl_loom_eager_rdma=on test_sizes 2 4
OMPI_MCA_btl_loom_eager_rdma=on test_any_source 4
test_rma 2 4 8
LOOM_EXPECT_BTL_ATOMICS=1 test_osc_atomics 2 4 8
test_osc_loops 2 4" "$dir/run-mpi-tests.sh" || rc=1
exit $rc
