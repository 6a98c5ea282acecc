#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# The quick tier's MPI programs (make check): one program for each path a
# message takes through loom on tcp:lo (sizes across the eager and
# rendezvous limits, derived datatypes, wildcards, one-sided, striping over
# two rails, coll loom's broadcast, reductions and allgather, the pvars),
# each entry of run-mpi-tests.sh once, at its largest process count up to 4.
# The README's test command runs all of them at every count, and much more.
set -eu
export LOOM_TEST_ONLY=${LOOM_TEST_ONLY:-"test_sizes test_datatypes test_any_source test_rma \
test_stripe test_collectives test_bcast test_allreduce test_allgather test_pvars"}
export LOOM_TEST_LARGEST_NP=${LOOM_TEST_LARGEST_NP:-1}
export LOOM_TEST_MAX_NP=${LOOM_TEST_MAX_NP:-4}
exec "$(dirname "${BASH_SOURCE[0]}")/run-mpi-tests.sh"
