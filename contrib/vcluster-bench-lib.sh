# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Sourced by the benchmarks that run on the virtual cluster
# (stripe-bench.sh, coll-bench-cluster.sh), which set src, bindir and out.

# $1: the benchmark's name, $2: the program it runs from $bindir, $3: nodes,
# $4: rails per node.  Checks what the benchmark needs, makes $out and
# brings the cluster up, torn down when the script exits.
bench_cluster_up() {
    local name=$1 prog=$2
    [ "$(id -u)" -eq 0 ] || { echo "$name: needs root (network namespaces)" >&2; exit 77; }
    [ -x "$bindir/$prog" ] || { echo "$name: no $bindir/$prog (build first)" >&2; exit 1; }
    if [ -e /run/loom-vcluster/nodes ]; then
        echo "$name: a virtual cluster is up already; take it down first" >&2
        exit 1
    fi
    mkdir -p "$out"
    "$src/contrib/vcluster-up.sh" -n "$3" -r "$4" >/dev/null || exit 1
    trap '"$src/contrib/vcluster-down.sh" >/dev/null' EXIT
}
