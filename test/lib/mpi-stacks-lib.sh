# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Sourced by the scripts that run programs nobody here wrote through loom
# and through Open MPI's own stacks, to compare (test/mpich/mpich-tests.sh,
# test/hpcc-check.sh, test/netpipe-check.sh).

# The mpirun arguments that select a stack.  One-sided communication over a
# BTL without atomics needs osc pt2pt, which Debian's openmpi-mca-params.conf
# leaves out (without it MPI_Win_create fails, whatever the BTL);
# loom-rdma turns loom's atomics on, so that Open MPI's osc rdma runs on them.
mpi_stack_args() {
    case "$1" in
        loom) echo "--mca pml ob1 --mca btl self,loom --mca btl_loom_rails tcp:lo --mca osc pt2pt" ;;
        loom-rdma) echo "--mca pml ob1 --mca btl self,loom --mca btl_loom_rails tcp:lo --mca btl_loom_atomics 1" ;;
        tcp)  echo "--mca pml ob1 --mca btl self,tcp --mca osc pt2pt" ;;
        ucx)  echo "--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=lo --mca btl self --mca osc ucx" ;;
    esac
}

# The mpirun arguments every such run starts with: loopback only, and root
# allowed where it runs as root.
mpi_run_args() {
    [ "$(id -u)" -eq 0 ] && printf '%s ' --allow-run-as-root
    echo "--oversubscribe --mca oob_tcp_if_include lo --mca btl_tcp_if_include lo"
}
