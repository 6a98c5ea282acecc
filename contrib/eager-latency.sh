#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Latency with loom's eager RDMA rings against without them, on the same
# rails in the same run: bench_latency up to 4 KiB, ring on and off in turn,
# several rounds, the median per size; prints 8 B and 4 KiB and their ratio.
#
# usage: contrib/eager-latency.sh --bindir DIR --rails SPEC [--rounds N] [--iters N]
#                                 [--bind core|none]
# Stays on loopback for the runtime (oob and btl tcp restricted to lo).
set -eu
bindir= rails= rounds=5 iters=2000 bind=core
while [ $# -gt 0 ]; do
    case $1 in
        --bindir) bindir=$2; shift 2 ;;
        --rails) rails=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --iters) iters=$2; shift 2 ;;
        --bind) bind=$2; shift 2 ;;
        *) echo "usage: $0 --bindir DIR --rails SPEC [--rounds N] [--iters N] [--bind core|none]" >&2
           exit 2 ;;
    esac
done
[ -n "$bindir" ] && [ -n "$rails" ] || { echo "$0: --bindir and --rails are required" >&2; exit 2; }
root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
out=$(mktemp -d "${TMPDIR:-/tmp}/loom-eager-lat.XXXXXX")
run() { # mode round
    mpirun "${root[@]}" -np 2 --bind-to "$bind" --mca oob_tcp_if_include lo \
        --mca btl_tcp_if_include lo --mca pml ob1 --mca btl self,loom \
        --mca btl_loom_rails "$rails" --mca btl_loom_eager_rdma "$1" \
        --mca btl_loom_eager_msgs_before_ring 1 \
        "$bindir/bench_latency" -m 4096 -i "$iters" -w $((iters / 10)) > "$out/$1.$2" 2>&1 ||
        { echo "FAIL: bench_latency with btl_loom_eager_rdma=$1 (see $out/$1.$2)"; exit 1; }
}
for r in $(seq 1 "$rounds"); do
    run on "$r"
    run off "$r"
done
median() { # mode size
    cat "$out/$1".* | awk -v s="$2" '$1 == s { print $2 }' | sort -g |
        awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo "# eager ring latency over $rails, median of $rounds runs of $iters round trips each (us, half round trip)"
printf "%-8s %10s %10s %12s\n" "# size" "ring on" "ring off" "on/off"
for size in 8 4096; do
    on=$(median on "$size") off=$(median off "$size")
    printf "%-8s %10s %10s %12s\n" "$size" "$on" "$off" "$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.2f", a / b }')"
done
