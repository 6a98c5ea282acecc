#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# What keeping messages for re-sending costs in latency: bench_latency on the
# virtual cluster (2 nodes, 2 unshaped rails), in the same run and in turn:
#   loom-2:       loom on rail0 and rail1, messages kept until acknowledged
#   loom-2-nokeep: the same with btl_loom_msg_window 0 (nothing kept)
#   loom-1:       loom on rail0 alone (one rail: nothing is ever kept)
#   tcp-2:        Open MPI's btl tcp on rail0 and rail1
# several rounds, the median per size; prints 8 B, 4 KiB and 32 KiB and the
# ratios against loom-2-nokeep and btl tcp.  Needs root (network namespaces);
# brings the cluster up if it is down and takes it down again.
#
# usage: contrib/resend-latency.sh --bindir DIR [--rounds N] [--iters N]
set -eu
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bindir= rounds=5 iters=2000
while [ $# -gt 0 ]; do
    case $1 in
        --bindir) bindir=$(cd "$2" && pwd); shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --iters) iters=$2; shift 2 ;;
        *) echo "usage: $0 --bindir DIR [--rounds N] [--iters N]" >&2; exit 2 ;;
    esac
done
[ -n "$bindir" ] || { echo "$0: --bindir is required" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "$0: needs root for the virtual cluster" >&2; exit 1; }
if [ ! -e /run/loom-vcluster/nodes ]; then
    "$src/contrib/vcluster-up.sh" -n 2 -r 2 >/dev/null
    trap '"$src/contrib/vcluster-down.sh" >/dev/null' EXIT
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/loom-resend-lat.XXXXXX")
run() { # config round, then mpirun arguments
    local config=$1 round=$2
    shift 2
    "$src/contrib/vcluster-exec.sh" node0 mpirun --allow-run-as-root -np 2 --map-by node \
        --bind-to none \
        --hostfile /run/loom-vcluster/hostfile --mca plm_rsh_agent "$src/contrib/vcluster-rsh.sh" \
        --mca oob_tcp_if_include mgmt -x OMPI_MCA_mca_base_component_path --mca pml ob1 "$@" \
        "$bindir/bench_latency" -m 32768 -i "$iters" -w $((iters / 10)) \
        >"$out/$config.$round" 2>&1 ||
        { echo "FAIL: bench_latency, $config (see $out/$config.$round)"; exit 1; }
}
for r in $(seq 1 "$rounds"); do
    run loom-2 "$r" --mca btl self,loom --mca btl_loom_rails tcp:rail0,tcp:rail1
    run loom-2-nokeep "$r" --mca btl self,loom --mca btl_loom_rails tcp:rail0,tcp:rail1 \
        --mca btl_loom_msg_window 0
    run loom-1 "$r" --mca btl self,loom --mca btl_loom_rails tcp:rail0
    run tcp-2 "$r" --mca btl self,tcp --mca btl_tcp_if_include rail0,rail1
done
median() { # config size
    cat "$out/$1".* | awk -v s="$2" '$1 == s { print $2 }' | sort -g |
        awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "# latency on the virtual cluster, 2 unshaped rails, median of $rounds runs of $iters round trips (us, half round trip)"
printf "%-7s %8s %14s %8s %8s %16s %12s\n" "# size" "loom-2" "loom-2-nokeep" "loom-1" "tcp-2" \
    "loom-2/nokeep" "loom-2/tcp-2"
for size in 8 4096 32768; do
    a=$(median loom-2 "$size") b=$(median loom-2-nokeep "$size")
    c=$(median loom-1 "$size") d=$(median tcp-2 "$size")
    printf "%-7s %8s %14s %8s %8s %16s %12s\n" "$size" "$a" "$b" "$c" "$d" "$(ratio "$a" "$b")" \
        "$(ratio "$a" "$d")"
done
echo "# raw outputs in $out"
