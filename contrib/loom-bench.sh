#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
#
# Compare loom against Open MPI's own transports on loopback: runs
# bench_latency and bench_bw (2 ranks) with
#   loom: pml ob1 + btl self,loom (rails tcp:lo)
#   tcp:  pml ob1 + btl self,tcp
#   ucx:  pml ucx with UCX_TLS=tcp,self on lo
# (loom's rails and UCX's transports and devices can be changed, e.g. to
# rc_verbs on soft-RoCE) and prints latency and bandwidth tables with the ratios loom/tcp and
# loom/ucx: each value the median of --rounds runs, the configurations
# taking turns, so that a noisy machine moves all of them alike; the same
# tables of the runs within 1.5x of each configuration's quarter-best run
# (on a machine whose runs fall into a fast and a slow group, the fast
# group's); and the lowest and highest run at a few sizes, with how many
# runs were near the quarter-best.  Builds nothing.  A configuration that
# fails shows as n/a.
#
# --layers adds, in the same rounds, the 8 B latency of the layers under
# the two MPI stacks: UCT's own (ucx_perftest am_lat over loom's rail, and
# raw UCT in bench_am_lat's processes), loom's engine alone (bench_am_lat,
# no MPI) and UCP's (ucx_perftest
# tag_lat with pml ucx's UCX_TLS), so that what ob1 with the BTL and what
# pml ucx add over their transports show apart; and UCT's own put at
# 512 KiB and 1 MiB (ucx_perftest put_lat over loom's rail), the time the
# bytes alone take one way on UCT, beside each stack's whole message.
#
# --unchecked adds a fourth configuration in the same rounds: loom with
# btl_loom_tcp_trust_network 1, whose tcp rails take raw puts instead of
# checked writes (no check at the target, no copy out of UCT's receive
# buffer), so that the tables show what checking every remote write costs.
#
# usage: loom-bench.sh [--bindir DIR] [--out DIR] [--max SIZE]
#   --bindir DIR  directory holding bench_latency and bench_bw
#                 (default: build/bench/mpi of this repository)
#   --out DIR     where raw outputs, commands and tables go
#                 (default: ./bench-results)
#   --max SIZE    largest message size, passed as -m (default: the
#                 benchmarks' own, 4 MiB)
#   --rails SPEC  loom's rails (btl_loom_rails, default tcp:lo)
#   --rounds N    runs of each configuration, the median shown (default 3)
#   --ucx-tls TLS --ucx-devices DEVS
#                 UCX_TLS and UCX_NET_DEVICES of the pml ucx runs
#                 (default tcp,self and lo)
#   --layers      also the 8 B latency by layer and UCT's put at 512 KiB
#                 and 1 MiB (needs ucx_perftest and bench_am_lat, built
#                 beside the MPI benchmarks in ../unit)
#   --unchecked   also loom with unchecked tcp writes (above; the same as
#                 loom on rails whose NIC checks keys)
# environment:
#   LOOM_MPIRUN           mpirun command (default: mpirun)
#   LOOM_BENCH_LOOM_ARGS  extra mpirun arguments for the loom runs
#   LOOM_BENCH_BIND       mpirun --bind-to value (default: core)
#   LOOM_BENCH_LAYER_ITERS, LOOM_BENCH_PUT_ITERS
#                         iterations of the 8 B layers and of the put layer
#                         (default 20000 and 1000)

set -u

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bindir="$script_dir/../build/bench/mpi"
outdir="./bench-results"
bench_args=()
rails=tcp:lo
ucx_tls=tcp,self
ucx_devices=lo
rounds=3
layers=0
unchecked=0

usage() {
    cat <<EOF
usage: loom-bench.sh [--bindir DIR] [--out DIR] [--max SIZE]
  --bindir DIR  directory holding bench_latency and bench_bw
                (default: build/bench/mpi of this repository)
  --out DIR     where raw outputs, commands and tables go
                (default: ./bench-results)
  --max SIZE    largest message size, passed as -m (default: 4 MiB)
  --rails SPEC  loom's rails (default tcp:lo)
  --rounds N    runs of each configuration; the tables show medians (default 3)
  --ucx-tls TLS, --ucx-devices DEVS
                UCX_TLS and UCX_NET_DEVICES for pml ucx (default tcp,self, lo)
  --layers      also the 8 B latency of UCT, loom's engine and UCP, and
                UCT's own put at 512 KiB and 1 MiB
  --unchecked   also loom with btl_loom_tcp_trust_network 1 (raw tcp puts; on
                rails that check keys themselves, rc_verbs, the same as loom)
environment: LOOM_MPIRUN (default mpirun), LOOM_BENCH_LOOM_ARGS (extra
mpirun arguments for the loom runs), LOOM_BENCH_BIND (--bind-to value,
default core), LOOM_BENCH_LAYER_ITERS and LOOM_BENCH_PUT_ITERS (iterations
of the 8 B layers and of the put layer, default 20000 and 1000)
EOF
    exit "$1"
}

while [ $# -gt 0 ]; do
    case "$1" in
    --bindir) bindir=${2:?--bindir needs a directory}; shift 2 ;;
    --out) outdir=${2:?--out needs a directory}; shift 2 ;;
    --max) bench_args=(-m "${2:?--max needs a size}"); shift 2 ;;
    --rails) rails=${2:?--rails needs a rail list}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --ucx-tls) ucx_tls=${2:?--ucx-tls needs a transport list}; shift 2 ;;
    --ucx-devices) ucx_devices=${2:?--ucx-devices needs a device list}; shift 2 ;;
    --layers) layers=1; shift ;;
    --unchecked) unchecked=1; shift ;;
    -h|--help) usage 0 ;;
    *) echo "unknown argument: $1" >&2; usage 2 ;;
    esac
done

bindir=$(cd "$bindir" 2>/dev/null && pwd || echo "$bindir")
for bench in bench_latency bench_bw; do
    if [ ! -x "$bindir/$bench" ]; then
        echo "error: $bindir/$bench not found or not executable (use --bindir)" >&2
        exit 1
    fi
done
mkdir -p "$outdir" || exit 1
# the medians are of this run's rounds only, not of an earlier run's
rm -f "$outdir"/latency-*.r*.txt* "$outdir"/bw-*.r*.txt* "$outdir"/layer-*.r*.txt*
read -r -a mpirun <<< "${LOOM_MPIRUN:-mpirun}"
read -r -a loom_extra <<< "${LOOM_BENCH_LOOM_ARGS:-}"

if [ "$layers" = 1 ]; then
    # shellcheck source=contrib/bench-layers.sh
    . "$script_dir/bench-layers.sh"
    layers_check
fi

# everything stays on loopback
common=(-np 2 --bind-to "${LOOM_BENCH_BIND:-core}" --mca oob_tcp_if_include lo
        --mca btl_tcp_if_include lo)
if [ "$(id -u)" -eq 0 ]; then
    common=(--allow-run-as-root "${common[@]}")
fi

configs=(loom tcp ucx)
if [ "$unchecked" = 1 ]; then
    configs+=(unchecked)
fi
args_loom=(--mca pml ob1 --mca btl "self,loom" --mca btl_loom_rails "$rails"
           ${loom_extra[@]+"${loom_extra[@]}"})
args_tcp=(--mca pml ob1 --mca btl "self,tcp")
# pml ucx only selects itself on "any" transport/device: its defaults want
# InfiniBand (mlx*) devices
args_ucx=(--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any
          -x "UCX_TLS=$ucx_tls" -x "UCX_NET_DEVICES=$ucx_devices" --mca btl self)

# the command line of config $1 running benchmark $2, one word per line
command_of() {
    local cfg_args
    case "$1" in
    loom) cfg_args=("${args_loom[@]}") ;;
    unchecked) cfg_args=("${args_loom[@]}" --mca btl_loom_tcp_trust_network 1) ;;
    tcp) cfg_args=("${args_tcp[@]}") ;;
    ucx) cfg_args=("${args_ucx[@]}") ;;
    esac
    printf '%s\n' "${mpirun[@]}" "${common[@]}" "${cfg_args[@]}" \
        "$bindir/$2" ${bench_args[@]+"${bench_args[@]}"}
}

# words joined by spaces, shell-quoted only where needed
quote_words() {
    local word line=""
    for word in "$@"; do
        if [[ ! "$word" =~ ^[A-Za-z0-9_./:,=^+@%-]+$ ]]; then
            word=$(printf '%q' "$word")
        fi
        line+="${line:+ }$word"
    done
    echo "$line"
}

summary="$outdir/summary.txt"
: > "$summary"
say() {
    echo "$@" | tee -a "$summary"
}

say "# loom benchmark comparison, $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(hostname)"
say "# commands:"
for bench in bench_latency bench_bw; do
    for cfg in "${configs[@]}"; do
        mapfile -t cmd < <(command_of "$cfg" "$bench")
        say "#   $cfg: $(quote_words "${cmd[@]}")"
    done
done
if [ "$layers" = 1 ]; then
    layers_say_commands
fi
cp "$summary" "$outdir/commands.txt"

ok_count=0
declare -A ok
for round in $(seq 1 "$rounds"); do
    if [ "$layers" = 1 ]; then
        layers_round "$round"
    fi
    for bench in bench_latency bench_bw; do
        for cfg in "${configs[@]}"; do
            raw="$outdir/${bench#bench_}-$cfg.r$round.txt"
            mapfile -t cmd < <(command_of "$cfg" "$bench")
            echo "round $round/$rounds: running $bench with $cfg ..." >&2
            rc=0
            timeout -k 10 900 "${cmd[@]}" > "$raw" 2>&1 || rc=$?
            if [ "$rc" -eq 0 ] && grep -q '^[0-9]' "$raw"; then
                ok["$bench.$cfg"]=1
                ok_count=$((ok_count + 1))
            else
                # kept apart, so that the tables read only runs that succeeded
                mv -f "$raw" "$raw.failed"
                say "WARNING: configuration '$cfg' failed for $bench (exit $rc, round $round)," \
                    "left out of its median; output in $raw.failed"
            fi
        done
    done
done

# "name size value" lines in, "name size median" out: one line per (name,
# size), sorted by name and size (the tables below and layers_table)
medians() {
    LC_ALL=C sort -s -k1,1 -k2,2n -k3,3g | awk '
        # the values of each (name, size) arrive sorted
        { key = $1 " " $2; n[key]++; val[key, n[key]] = $3; if (n[key] == 1) keys[++k] = key }
        END {
            for (i = 1; i <= k; i++) {
                c = n[keys[i]]
                m = (c % 2) ? val[keys[i], (c + 1) / 2] \
                            : (val[keys[i], c / 2] + val[keys[i], c / 2 + 1]) / 2
                print keys[i], m
            }
        }'
}

# "config size value" lines of every run of benchmark $1 that succeeded
runs_of() {
    local cfg
    for cfg in "${configs[@]}"; do
        if [ -n "${ok[$1.$cfg]:-}" ]; then
            cat "$outdir/${1#bench_}-$cfg".r*.txt |
                awk -v cfg="$cfg" '/^[0-9]/ && NF >= 2 { print cfg, $1, $2 }'
        fi
    done
}

# "config size value" lines in, each with a fourth field: 1 if the run came
# within 1.5x of its config and size's reference run, else 0 ($1: "lower"
# or "higher" is better).  The reference is the quarter-best run (the best
# of up to 4, the 3rd best of 9), so that one run far better than the rest
# does not leave the others out.  On a machine whose runs fall into a fast
# and a slow group (docs/perf/measuring.md) the runs marked 1 are the fast group
# as long as it holds at least a quarter of them.
near_best() {
    LC_ALL=C sort -s -k1,1 -k2,2n -k3,3g | awk -v better="$1" '
        # the values of each (config, size) arrive in ascending order
        {
            k = $1 SUBSEP $2
            line[++n] = $0; key[n] = k; val[n] = $3 + 0
            count[k]++; sorted[k, count[k]] = val[n]
        }
        END {
            for (k in count) {
                q = int((count[k] + 3) / 4)
                ref[k] = (better == "lower") ? sorted[k, q] : sorted[k, count[k] + 1 - q]
            }
            for (i = 1; i <= n; i++) {
                r = ref[key[i]]
                near = (better == "lower") ? val[i] <= 1.5 * r : 1.5 * val[i] >= r
                print line[i], near ? 1 : 0
            }
        }'
}

# table for benchmark $1 with title $2: size, one column per config, and
# each loom config's ratios against tcp and ucx; with $3 ("lower" or
# "higher" is better) of the runs near the best only (near_best)
table() {
    local bench=$1 title=$2 better=${3:-} what="median of $rounds runs"
    if [ -n "$better" ]; then
        what="median of the runs within 1.5x of the quarter-best, of $rounds"
    fi
    runs_of "$bench" |
        if [ -n "$better" ]; then
            near_best "$better" | awk '$4 == 1 { print $1, $2, $3 }'
        else
            cat
        fi | medians | sort -s -k2,2n |
        awk -v title="$title" -v what="$what" -v configs="${configs[*]}" '
        function val(c, s) { return ((c, s) in v) ? v[c, s] : "n/a" }
        function ratio(a, b) {
            return (a == "n/a" || b == "n/a" || b + 0 == 0) ? "n/a" : sprintf("%.2f", a / b)
        }
        { v[$1, $2] = $3; if (!($2 in seen)) { seen[$2] = 1; order[n++] = $2 } }
        END {
            nc = split(configs, cfgs, " ")
            nr = 0
            for (c = 1; c <= nc; c++) {
                if (cfgs[c] != "tcp" && cfgs[c] != "ucx") { subj[++nr] = cfgs[c] }
            }
            printf "\n# %s, %s\n", title, what
            printf "%-10s", "# Size"
            for (c = 1; c <= nc; c++) { printf " %12s", cfgs[c] }
            for (r = 1; r <= nr; r++) { printf " %15s %15s", subj[r] "/tcp", subj[r] "/ucx" }
            printf "\n"
            for (i = 0; i < n; i++) {
                s = order[i]
                printf "%-10s", s
                for (c = 1; c <= nc; c++) { printf " %12s", val(cfgs[c], s) }
                for (r = 1; r <= nr; r++) {
                    printf " %15s %15s", ratio(val(subj[r], s), val("tcp", s)),
                           ratio(val(subj[r], s), val("ucx", s))
                }
                printf "\n"
            }
        }'
}

# the lowest and highest run of each config at a few sizes of benchmark $1
# (title $2; $3 "lower" or "higher" is better), and how many runs came
# near the quarter-best one (near_best): fewer than half means that the
# median is one of the slow group
spread() {
    runs_of "$1" | near_best "$3" |
        awk -v title="$2" -v rounds="$rounds" -v configs="${configs[*]}" \
            -v sizes="8 65536 524288 4194304" '
        {
            # compared as numbers, printed as the benchmark wrote them
            k = $1 SUBSEP $2
            if (!(k in lo) || $3 + 0 < lo_val[k]) { lo[k] = $3; lo_val[k] = $3 + 0 }
            if (!(k in hi) || $3 + 0 > hi_val[k]) { hi[k] = $3; hi_val[k] = $3 + 0 }
            runs[k]++
            near[k] += $4
            seen[$2] = 1
        }
        END {
            nc = split(configs, cfgs, " ")
            ns = split(sizes, sz, " ")
            printf "\n# %s, lowest-highest run of %d rounds (runs within 1.5x of the quarter-best)\n%-10s",
                   title, rounds, "# Size"
            for (c = 1; c <= nc; c++) { printf " %25s", cfgs[c] }
            printf "\n"
            for (i = 1; i <= ns; i++) {
                if (!(sz[i] in seen)) { continue }
                printf "%-10s", sz[i]
                for (c = 1; c <= nc; c++) {
                    k = cfgs[c] SUBSEP sz[i]
                    printf " %25s", (k in lo) ? lo[k] "-" hi[k] " (" near[k] "/" runs[k] ")" : "n/a"
                }
                printf "\n"
            }
        }'
}

{
    table bench_latency "Latency (us), lower is better"
    table bench_bw "Bandwidth (MB/s), higher is better"
    table bench_latency "Latency (us)" lower
    table bench_bw "Bandwidth (MB/s)" higher
    spread bench_latency "Latency (us)" lower
    spread bench_bw "Bandwidth (MB/s)" higher
    if [ "$layers" = 1 ]; then
        layers_table
        layers_put_table
    fi
} | tee -a "$summary"

echo
echo "raw outputs, commands.txt and summary.txt are in $outdir"
if [ "$ok_count" -eq 0 ]; then
    echo "error: every configuration failed" >&2
    exit 1
fi
exit 0
