#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# The MPI tests again with rails connected endpoint to endpoint: the path
# connect-to-ep transports (rc_verbs) always take, exercised here on tcp.
# test_large and test_allreduce run once, in run-mpi-tests.sh: the
# connection path does not change how a 2 GiB message or a reduction's
# pushes move (the rxe guest runs test_allreduce over connect-to-ep rails).
set -eu
export LOOM_MPI_ARGS="--mca pml ob1 --mca btl self,loom --mca btl_loom_rails tcp:lo --mca btl_loom_connect_to_ep 1"
export LOOM_TEST_REPEAT=1 # up to 4 ranks, without those two
# what changes is how the rails connect: each program once, at its largest count
export LOOM_TEST_LARGEST_NP=1
exec "$(dirname "$0")/run-mpi-tests.sh"
