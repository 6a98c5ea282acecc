#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Collectives through coll loom against coll tuned, in one run: bench_bcast,
# bench_reduce, bench_allreduce and bench_allgather, each under
#   default   coll loom as installed (it steps aside where its thresholds say)
#   loom      coll loom taking every size (its _min 0, _min_procs 2)
#   tuned     coll tuned over btl loom
#   tcp       coll tuned over btl tcp on the same devices
# rounds taking turns, the median of the rounds per size (us per call, the
# slowest rank's), and each configuration against tuned.  Calls are timed as
# OSU's benchmarks time them (bench_coll -b 1: a barrier between calls, each
# call alone); --barrier 0 times them back to back.
#
#   --where cluster   the virtual cluster: --nodes nodes x 2 tcp rails, one
#                     rank per node, --bind-to none (needs root)
#   --where node      --np ranks on this machine, btl self,loom on tcp:lo
#   --mbit M          (cluster) shape each rail to M mbit/s (0: unshaped)
#   --cores LIST      (cluster) rank r on core r of LIST (contrib/rank-core.sh),
#                     e.g. 0,1,0,1: which ranks share a core decides the time
#                     of a large broadcast more than the stack does here
#
# usage: contrib/coll-bench.sh [--where cluster|node] [--nodes N] [--np N]
#            [--mbit M] [--cores LIST] [--rounds R] [--min BYTES] [--max BYTES] [--iters I]
#            [--only "bench_bcast ..."] [--barrier 0|1] [--bindir DIR] [--out DIR]
# defaults: cluster, 4 nodes, 8 ranks, unshaped, 3 rounds, 64 KiB to 4 MiB,
# the benchmark's own iterations; build/bench/mpi; ./coll-results.  loom's
# components are found through OMPI_MCA_mca_base_component_path (the
# build's stage when unset).  The commands run are kept in the output
# folder (commands.txt), the raw outputs beside them.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
bindir=$src/build/bench/mpi
out=./coll-results
where=cluster
nodes=4
np=8
mbit=0
rounds=3
min=65536
max=4194304
iters=
cores=
barrier=1
only="bench_bcast bench_reduce bench_allreduce bench_allgather"
usage="usage: $0 [--where cluster|node] [--nodes N] [--np N] [--mbit M] [--cores LIST] [--rounds R] \
[--min BYTES] [--max BYTES] [--iters I] [--only \"PROGRAMS\"] [--barrier 0|1] [--bindir DIR] \
[--out DIR]"
while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
    case "$1" in
    --where) where=$2 ;;
    --nodes) nodes=$2 ;;
    --np) np=$2 ;;
    --mbit) mbit=$2 ;;
    --cores) cores=$2 ;;
    --rounds) rounds=$2 ;;
    --min) min=$2 ;;
    --max) max=$2 ;;
    --iters) iters=$2 ;;
    --only) only=$2 ;;
    --barrier) barrier=$2 ;;
    --bindir) bindir=$(cd "$2" && pwd) ;;
    --out) out=$2 ;;
    *) echo "$usage" >&2; exit 2 ;;
    esac
    shift 2
done
case "$where$barrier" in cluster[01]|node[01]) ;; *) echo "$usage" >&2; exit 2 ;; esac
case "$where,$cores" in cluster,*|node,) ;; *) echo "coll-bench: --cores is for --where cluster" >&2; exit 2 ;; esac
pin=()
[ -n "$cores" ] && pin=("$src/contrib/rank-core.sh" "$cores")
for n in "$nodes" "$np" "$mbit" "$rounds" "$min" "$max" ${iters:+"$iters"}; do
    case "$n" in ''|*[!0-9]*) echo "coll-bench: not a number: $n" >&2; exit 2 ;; esac
done
export OMPI_MCA_mca_base_component_path=${OMPI_MCA_mca_base_component_path:-$src/build/stage:$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')}
configs="default loom tuned tcp"

if [ "$where" = cluster ]; then
    . "$src/contrib/vcluster-bench-lib.sh"
    bench_cluster_up coll-bench bench_bcast "$nodes" 2
    if [ "$mbit" -gt 0 ]; then
        "$src/contrib/vcluster-shape.sh" "$mbit" "$mbit" || exit 1
    fi
    launch=("$src/contrib/vcluster-exec.sh" node0 mpirun --allow-run-as-root -np "$nodes"
            --map-by node --bind-to none --hostfile /run/loom-vcluster/hostfile
            --mca plm_rsh_agent "$src/contrib/vcluster-rsh.sh" --mca oob_tcp_if_include mgmt
            -x OMPI_MCA_mca_base_component_path --mca pml ob1)
    loom_btl="--mca btl self,loom --mca btl_loom_rails tcp:rail0,tcp:rail1"
    tcp_btl="--mca btl self,tcp --mca btl_tcp_if_include rail0,rail1"
    shape="$nodes nodes x 2 tcp rails, $( [ "$mbit" -gt 0 ] && echo "$mbit mbit/s each" || echo unshaped), one rank per node, --bind-to none${cores:+, ranks on cores $cores}"
else
    mkdir -p "$out"
    launch=(mpirun -np "$np" --oversubscribe --mca oob_tcp_if_include lo --mca pml ob1)
    [ "$(id -u)" -eq 0 ] && launch+=(--allow-run-as-root)
    loom_btl="--mca btl self,loom --mca btl_loom_rails tcp:lo"
    tcp_btl="--mca btl self,tcp --mca btl_tcp_if_include lo"
    shape="$np ranks on this machine, tcp:lo"
fi
everything="--mca coll_loom_bcast_min 0 --mca coll_loom_bcast_min_procs 2 \
--mca coll_loom_reduce_min 0 --mca coll_loom_allreduce_min 0 --mca coll_loom_reduce_min_procs 2 \
--mca coll_loom_allgather_min 0 --mca coll_loom_allgather_min_procs 2 --mca coll_loom_select 0 \
--mca coll_loom_bcast_one_node 1 --mca coll_loom_allgather_one_node 1"

config_args() {
    case "$1" in
    default) echo "$loom_btl" ;;
    loom) echo "$loom_btl $everything" ;;
    tuned) echo "$loom_btl --mca coll ^loom" ;;
    tcp) echo "$tcp_btl --mca coll ^loom" ;;
    esac
}

: >"$out/commands.txt"
for ((r = 1; r <= rounds; r++)); do
    for prog in $only; do
        for c in $configs; do
            # shellcheck disable=SC2046,SC2207 # the arguments are words
            cmd=("${launch[@]}" $(config_args "$c") "${pin[@]}" "$bindir/$prog" -s "$min" -m "$max"
                 -b "$barrier" ${iters:+-i "$iters"})
            echo "${cmd[*]}" >>"$out/commands.txt"
            timeout 900 "${cmd[@]}" >"$out/$prog.$c.$r.txt" 2>&1 ||
                echo "coll-bench: $prog ($c, round $r) failed: $out/$prog.$c.$r.txt" >&2
        done
    done
done

# the median over the rounds of one configuration's time at one size
median() {
    local prog=$1 c=$2 size=$3
    cat "$out/$prog.$c".*.txt 2>/dev/null |
        awk -v s="$size" '$1 == s && $2 ~ /^[0-9.]+$/ { print $2 }' | LC_ALL=C sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a";
             else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# a over b, two decimals, or n/a
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b > 0) printf "%.2f", a / b;
                                    else print "n/a" }'
}

echo "# coll-bench, $(date -u '+%Y-%m-%d %H:%M UTC'): $shape; median of $rounds rounds,"
echo "# us per call (slowest rank); x: against coll tuned over btl loom"
for prog in $only; do
    echo "## $prog"
    printf '%10s %11s %11s %11s %11s %9s %9s\n' size default loom tuned tcp "default x" "loom x"
    for ((size = min; size <= max; size *= 2)); do
        row=()
        for c in $configs; do
            row+=("$(median "$prog" "$c" "$size")")
        done
        printf '%10s %11s %11s %11s %11s %9s %9s\n' "$size" "${row[@]}" \
            "$(ratio "${row[0]}" "${row[2]}")" "$(ratio "${row[1]}" "${row[2]}")"
    done
done
