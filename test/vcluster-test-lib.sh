# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Sourced by the tests that run on the virtual cluster.

# Bring up 2 nodes with $1 rails, torn down when the test exits; exit 77
# (skip), saying why, where the cluster cannot be made.
vcluster_test_up() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "SKIP: the virtual cluster needs root (network namespaces)"
        exit 77
    fi
    if ! ip netns add loomprobe$$ 2>/dev/null; then
        echo "SKIP: this machine cannot create network namespaces"
        exit 77
    fi
    ip netns del loomprobe$$
    if [ -e /run/loom-vcluster/nodes ]; then
        echo "SKIP: a virtual cluster is up already; not touching it"
        exit 77
    fi
    "$src/contrib/vcluster-up.sh" -n 2 -r "$1" >/dev/null || exit 1
    trap '"$src/contrib/vcluster-down.sh" >/dev/null' EXIT
}

# mpirun with one rank on each node, the runtime on mgmt and loom the only
# BTL; $1: time limit in seconds, then mpirun's further arguments and the
# program with its arguments.  On Open MPI 5.0 without coll han, which
# would stand between coll loom and the component it leaves a call to
# (coll loom then counts a call twice, on the communicator and on han's
# part of it), and whose own MPI_Allgather of a vector type hands back
# wrong bytes across nodes in 5.0.9, over btl tcp and without loom too
# (docs/perf/2026-12-07-ompi5.md).
vcluster_mpirun() {
    local limit=$1 series_args=()
    shift
    [ "${LOOM_OMPI_SERIES:-4.1}" = 5.0 ] && series_args=(--mca coll ^han)
    timeout -k 10 "$limit" "$src/contrib/vcluster-exec.sh" node0 "${LOOM_CLUSTER_MPIRUN:-mpirun}" \
        --allow-run-as-root -np "${VCLUSTER_NP:-2}" \
        --map-by node --hostfile /run/loom-vcluster/hostfile \
        --mca plm_rsh_agent "$src/contrib/vcluster-rsh.sh" --mca oob_tcp_if_include mgmt \
        -x OMPI_MCA_mca_base_component_path --mca pml ob1 --mca btl self,loom \
        "${series_args[@]}" "$@"
}
