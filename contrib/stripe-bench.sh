#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Striping bandwidth on the virtual cluster: 2 nodes, 3 rails shaped with
# tbf, bench_bw's 4 MiB bandwidth for loom on each rail alone, on 2 and 3
# equal rails and on 3 unequal rails, against the sum of what each rail
# delivers alone to loom in the same run, and btl tcp on the same rails.
# Needs root (network namespaces); prints a table and keeps raw outputs.
#
# usage: contrib/stripe-bench.sh [--bindir DIR] [--out DIR] [--equal MBIT]
#                                [--unequal M0,M1,M2]
#   defaults: --bindir build/bench/mpi --out stripe-results --equal 200
#             --unequal 200,100,50
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
bindir=$src/build/bench/mpi
out=./stripe-results
equal=200
unequal=200,100,50
while [ $# -gt 0 ]; do
    case "$1" in
    --bindir) bindir=$(cd "$2" && pwd); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --equal) equal=$2; shift 2 ;;
    --unequal) unequal=$2; shift 2 ;;
    *) echo "usage: $0 [--bindir DIR] [--out DIR] [--equal MBIT] [--unequal M0,M1,M2]" >&2
       exit 2 ;;
    esac
done
. "$src/contrib/vcluster-bench-lib.sh"
bench_cluster_up stripe-bench bench_bw 2 3

# MB/s of 4 MiB messages from bench_bw under the given mpirun arguments
run_bw() {
    local name=$1; shift
    local log="$out/$name.txt"
    timeout 600 "$src/contrib/vcluster-exec.sh" node0 mpirun --allow-run-as-root -np 2 \
        --map-by node --hostfile /run/loom-vcluster/hostfile \
        --mca plm_rsh_agent "$src/contrib/vcluster-rsh.sh" --mca oob_tcp_if_include mgmt \
        -x OMPI_MCA_mca_base_component_path "$@" "$bindir/bench_bw" -m 4M -i 4 -w 1 -W 8 \
        >"$log" 2>&1
    awk '$1 == 4194304 { print $2 }' "$log" | grep . || echo n/a
}
loom() { echo --mca pml ob1 --mca btl self,loom --mca btl_loom_rails "$1"; }
tcp() { echo --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include "$1"; }
sum() { awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; print s }' <<<"$*"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "n/a" || b + 0 == 0) print "n/a"; else printf "%.3f", a / b }'; }

{
echo "# loom striping on the virtual cluster, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# bench_bw -m 4M -i 4 -w 1 -W 8, MB/s at 4 MiB; 2 nodes, runtime on mgmt"
printf '%-28s %10s %10s %8s\n' "# configuration" "MB/s" "sum alone" "ratio"

IFS=, read -r -a uneq <<<"$unequal"
for phase in equal unequal; do
    if [ $phase = equal ]; then rates=("$equal" "$equal" "$equal"); else rates=("${uneq[@]}"); fi
    "$src/contrib/vcluster-shape.sh" "${rates[@]}" || exit 1
    tag="${rates[0]}/${rates[1]}/${rates[2]} mbit"
    alone=()
    for r in 0 1 2; do
        alone[$r]=$(run_bw "$phase-loom-rail$r" $(loom "tcp:rail$r"))
        printf '%-28s %10s %10s %8s\n' "loom rail$r alone (${rates[$r]})" "${alone[$r]}" - -
    done
    if [ $phase = equal ]; then
        two=$(run_bw "$phase-loom-2" $(loom tcp:rail0,tcp:rail1))
        s2=$(sum "${alone[0]}" "${alone[1]}")
        printf '%-28s %10s %10s %8s\n' "loom 2 rails ($tag)" "$two" "$s2" "$(ratio "$two" "$s2")"
        t2=$(run_bw "$phase-tcp-2" $(tcp rail0,rail1))
        printf '%-28s %10s %10s %8s\n' "btl tcp 2 rails" "$t2" "$s2" "$(ratio "$t2" "$s2")"
    fi
    three=$(run_bw "$phase-loom-3" $(loom tcp:rail0,tcp:rail1,tcp:rail2))
    s3=$(sum "${alone[@]}")
    printf '%-28s %10s %10s %8s\n' "loom 3 rails ($tag)" "$three" "$s3" "$(ratio "$three" "$s3")"
    t3=$(run_bw "$phase-tcp-3" $(tcp rail0,rail1,rail2))
    printf '%-28s %10s %10s %8s\n' "btl tcp 3 rails" "$t3" "$s3" "$(ratio "$t3" "$s3")"
done
} | tee "$out/summary.txt"
