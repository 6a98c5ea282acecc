#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# What the registration cache buys: bench_latency (2 ranks, 64 KiB to
# 4 MiB, where ob1 registers both buffers for every message) with loom's
# cache on (the default) and off (btl_loom_rcache_size 0), in turn, several
# rounds; prints the median latency of each and the ratio cache/nocache.
# Loopback or the rxe guest's devices only; needs no root.
#
# usage: contrib/rcache-cost.sh --bindir DIR [--rails SPEC] [--rounds N]
#                               [--bind core|none] [--uct-rcache y|n]
#   --rails       loom's rails (default tcp:lo; in the rxe guest rc_verbs:rxe0:1)
#   --uct-rcache  UCX_IB_RCACHE for every run: n also turns off UCT's own
#                 cache in the verbs memory domain, so that nothing but loom's
#                 cache saves a registration (default: UCX's setting)
set -eu
bindir= rounds=5 bind=core rails=tcp:lo uct_rcache=
usage() {
    echo "usage: $0 --bindir DIR [--rails SPEC] [--rounds N] [--bind core|none]" \
         "[--uct-rcache y|n]" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
        --bindir) bindir=$(cd "$2" && pwd); shift 2 ;;
        --rails) rails=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --bind) bind=$2; shift 2 ;;
        --uct-rcache) uct_rcache=$2; shift 2 ;;
        *) usage ;;
    esac
done
[ -n "$bindir" ] || usage
extra=()
[ "$(id -u)" -eq 0 ] && extra=(--allow-run-as-root)
[ -n "$uct_rcache" ] && extra+=(-x "UCX_IB_RCACHE=$uct_rcache")
out=$(mktemp -d "${TMPDIR:-/tmp}/loom-rcache-cost.XXXXXX")
sizes="65536 262144 1048576 4194304"
run() { # config round size, then mpirun arguments
    local config=$1 round=$2
    shift 2
    timeout 600 mpirun "${extra[@]}" -np 2 --bind-to "$bind" --mca oob_tcp_if_include lo \
        --mca btl_tcp_if_include lo --mca pml ob1 --mca btl self,loom \
        --mca btl_loom_rails "$rails" "$@" "$bindir/bench_latency" -m 4194304 -i 100 -w 10 \
        >"$out/$config.$round" 2>&1 ||
        { echo "FAIL: bench_latency, $config (see $out/$config.$round)"; exit 1; }
}
for r in $(seq 1 "$rounds"); do
    run cache "$r"
    run nocache "$r" --mca btl_loom_rcache_size 0
done
median() { # config size
    cat "$out/$1".* | awk -v s="$2" '$1 == s { print $2 }' | sort -g |
        awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo "# rails $rails, 2 ranks bound to $bind, UCX_IB_RCACHE ${uct_rcache:-default}," \
     "median of $rounds runs (us, half round trip)"
printf "%-8s %10s %10s %14s\n" "# size" cache nocache cache/nocache
for size in $sizes; do
    a=$(median cache "$size") b=$(median nocache "$size")
    printf "%-8s %10s %10s %14s\n" "$size" "$a" "$b" \
        "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
done
echo "# raw outputs in $out"
