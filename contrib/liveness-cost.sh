#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# What watching the rails costs: loom on two tcp rails over lo (one device
# carrying both, btl_loom_rails_repeat), 2 ranks, in the same run and in turn:
#   watch:   the defaults: the rail watch and message watch
#            (btl_loom_rail_timeout 1000) and the kernel keepalive loom sets
#            on every tcp socket (btl_loom_tcp_keepalive 20)
#   nowatch: btl_loom_rail_timeout 0 and btl_loom_tcp_keepalive 0: only the
#            transport's own errors fail a rail
#   tcp:     Open MPI's btl tcp on lo, for scale
# bench_latency (8 B) and bench_bw (64 KiB, 4 MiB, striped over both rails
# from 256 KiB), several rounds, the median of each; prints the ratios
# watch/nowatch and watch/tcp.  Loopback only; needs no root.
#
# usage: contrib/liveness-cost.sh --bindir DIR [--rounds N] [--bind core|none]
#   (the component as contrib/demo.sh installs it, or a build tree's:
#   docs/user/installing.md)
set -eu
bindir= rounds=5 bind=core
while [ $# -gt 0 ]; do
    case $1 in
        --bindir) bindir=$(cd "$2" && pwd); shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --bind) bind=$2; shift 2 ;;
        *) echo "usage: $0 --bindir DIR [--rounds N] [--bind core|none]" >&2; exit 2 ;;
    esac
done
[ -n "$bindir" ] || { echo "$0: --bindir is required" >&2; exit 2; }
root_args=()
[ "$(id -u)" -eq 0 ] && root_args=(--allow-run-as-root)
out=$(mktemp -d "${TMPDIR:-/tmp}/loom-liveness-cost.XXXXXX")
loom=(--mca btl self,loom --mca btl_loom_rails tcp:lo,tcp:lo --mca btl_loom_rails_repeat 1)
run() { # config round, then mpirun arguments
    local config=$1 round=$2 kind bench
    shift 2
    for kind in lat bw; do
        if [ "$kind" = lat ]; then
            bench=(bench_latency -m 8 -i 20000 -w 2000)
        else
            bench=(bench_bw -m 4194304 -i 20 -w 5)
        fi
        timeout 300 mpirun "${root_args[@]}" -np 2 --bind-to "$bind" \
            --mca oob_tcp_if_include lo --mca btl_tcp_if_include lo --mca pml ob1 "$@" \
            "$bindir/${bench[0]}" "${bench[@]:1}" >"$out/$config.$kind.$round" 2>&1 ||
            { echo "FAIL: ${bench[0]}, $config (see $out/$config.$kind.$round)"; exit 1; }
    done
}
for r in $(seq 1 "$rounds"); do
    run watch "$r" "${loom[@]}"
    run nowatch "$r" "${loom[@]}" --mca btl_loom_rail_timeout 0 --mca btl_loom_tcp_keepalive 0
    run tcp "$r" --mca btl self,tcp
done
median() { # config kind (lat, bw) size
    cat "$out/$1.$2".* | awk -v s="$3" '$1 == s { print $2 }' | sort -g |
        awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "# loopback, 2 ranks bound to $bind, median of $rounds runs (8 B: us, half round trip; else MB/s)"
printf "%-8s %9s %9s %9s %14s %10s\n" "# size" watch nowatch tcp watch/nowatch watch/tcp
for point in lat:8 bw:65536 bw:4194304; do
    kind=${point%:*} size=${point#*:}
    a=$(median watch "$kind" "$size") b=$(median nowatch "$kind" "$size")
    c=$(median tcp "$kind" "$size")
    printf "%-8s %9s %9s %9s %14s %10s\n" "$size" "$a" "$b" "$c" "$(ratio "$a" "$b")" \
        "$(ratio "$a" "$c")"
done
echo "# raw outputs in $out"
