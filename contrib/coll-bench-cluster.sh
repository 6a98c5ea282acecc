#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Broadcast on the virtual cluster: 4 nodes with 2 rails each shaped with
# tbf, one rank per node, bench_bcast's time per broadcast for coll loom (a
# chain, the chain in 128 KiB segments still striped, and a tree of fanout
# 2) against coll tuned over btl loom and over btl tcp on the same rails,
# in one run.  Needs root (network namespaces);
# prints a table (us per broadcast) and keeps the raw outputs.
#
# usage: contrib/coll-bench-cluster.sh [--bindir DIR] [--out DIR] [--mbit M]
#                                      [--max BYTES]
#   defaults: --bindir build/bench/mpi --out coll-results --mbit 200
#             --max 4194304
# loom's components are found through OMPI_MCA_mca_base_component_path, as
# for every other run out of the build tree.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
bindir=$src/build/bench/mpi
out=./coll-results
mbit=200
max=4194304
while [ $# -gt 0 ]; do
    case "$1" in
    --bindir) bindir=$(cd "$2" && pwd); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --mbit) mbit=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    *) echo "usage: $0 [--bindir DIR] [--out DIR] [--mbit M] [--max BYTES]" >&2
       exit 2 ;;
    esac
done
. "$src/contrib/vcluster-bench-lib.sh"
bench_cluster_up coll-bench-cluster bench_bcast 4 2
"$src/contrib/vcluster-shape.sh" "$mbit" "$mbit" || exit 1

# bench_bcast under the given mpirun arguments, its output kept as name
run_bcast() {
    local name=$1; shift
    timeout 600 "$src/contrib/vcluster-exec.sh" node0 mpirun --allow-run-as-root -np 4 \
        --map-by node --bind-to none --hostfile /run/loom-vcluster/hostfile \
        --mca plm_rsh_agent "$src/contrib/vcluster-rsh.sh" --mca oob_tcp_if_include mgmt \
        -x OMPI_MCA_mca_base_component_path --mca pml ob1 "$@" \
        "$bindir/bench_bcast" -m "$max" -i 10 -w 2 >"$out/$name.txt" 2>&1
}
loom="--mca btl self,loom --mca btl_loom_rails tcp:rail0,tcp:rail1"
coll_loom="--mca coll loom,tuned,basic,libnbc,self --mca coll_loom_bcast_min_procs 2
           --mca coll_loom_bcast_min 65536 --mca coll_loom_select 0"
run_bcast loom-chain $loom $coll_loom --mca coll_loom_bcast_fanout 1
run_bcast loom-chain-128k $loom $coll_loom --mca coll_loom_bcast_fanout 1 \
    --mca coll_loom_bcast_segment 131072 --mca btl_loom_stripe_threshold 65536
run_bcast loom-fanout2 $loom $coll_loom --mca coll_loom_bcast_fanout 2
run_bcast tuned-loom $loom --mca coll ^loom
run_bcast tuned-tcp --mca btl self,tcp --mca btl_tcp_if_include rail0,rail1 --mca coll ^loom

echo "# broadcast on the virtual cluster, $(date -u '+%Y-%m-%d %H:%M UTC'): 4 nodes x 2 rails"
echo "# at $mbit mbit each, bench_bcast -i 10 -w 2, us per broadcast"
printf '%10s %14s %14s %14s %14s %14s\n' "# size" "loom chain" "chain 128 KiB" \
    "loom fanout 2" "tuned (loom)" "tuned (tcp)"
# the sizes of the first run, each with every configuration's time
awk '$1 ~ /^[0-9]+$/ && $1 >= 65536 { print $1 }' "$out/loom-chain.txt" | while read -r size; do
    row=()
    for name in loom-chain loom-chain-128k loom-fanout2 tuned-loom tuned-tcp; do
        row+=("$(awk -v s="$size" '$1 == s { print $2 }' "$out/$name.txt" | grep . || echo n/a)")
    done
    printf '%10s %14s %14s %14s %14s %14s\n' "$size" "${row[@]}"
done
