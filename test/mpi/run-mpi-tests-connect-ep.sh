#!/bin/bash
# The MPI tests again with rails connected endpoint to endpoint: the path
# connect-to-ep transports (rc_verbs) always take, exercised here on tcp.
set -eu
export LOOM_MPI_ARGS="--mca pml ob1 --mca btl self,loom --mca btl_loom_rails tcp:lo --mca btl_loom_connect_to_ep 1"
exec "$(dirname "$0")/run-mpi-tests.sh"
