#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Plot per-rail throughput over time from test_failover's output (its
# "sample <t> <bytes rail0> <bytes rail1> ..." lines) into a PNG.  The
# "down_epoch <unix time>" and "up_epoch <unix time>" lines that
# test/failover-check.sh writes, with the test's "start_epoch", mark when the
# rail went down and came back.
#
# usage: contrib/failover-plot.sh OUTPUT PNG
# Needs gnuplot (contrib/install-deps.sh --plot installs it).
set -eu
[ $# -eq 2 ] || { echo "usage: $0 OUTPUT PNG" >&2; exit 2; }
# seconds into the run of the line named $1
mark() {
    awk -v name="$1" '$1 == "start_epoch" { s = $2 } $1 == name { d = $2 }
                      END { if (s != "" && d != "") printf "%.2f", d - s }' "$2"
}
down=$(mark down_epoch "$1")
up=$(mark up_epoch "$1")
command -v gnuplot >/dev/null || { echo "failover-plot: gnuplot is missing" >&2; exit 1; }
data=$(mktemp)
trap 'rm -f "$data"' EXIT
# MB/s per rail between consecutive samples
awk '$1 == "sample" {
        if (n++) {
            printf "%s", $2
            for (i = 3; i <= NF; i++) printf " %.2f", ($i - prev[i]) / 1e6 / ($2 - t)
            printf "\n"
        }
        t = $2; for (i = 3; i <= NF; i++) prev[i] = $i; rails = NF - 2
    }
    END { if (n < 2) exit 1 }' "$1" >"$data" || { echo "failover-plot: no samples in $1" >&2; exit 1; }
rails=$(awk '{ print NF - 1; exit }' "$data")
plots=""
for ((r = 0; r < rails; r++)); do
    plots+="${plots:+, }'$data' using 1:$((r + 2)) with lines lw 2 title 'rail$r'"
done
gnuplot <<GP
set terminal pngcairo size 900,450
set output '$2'
set title 'loom: per-rail throughput, failover run'
set xlabel 'time (s)'
set ylabel 'MB/s into rank 1'
set key top right
set grid
${down:+set arrow from $down, graph 0 to $down, graph 1 nohead dt 2 lc rgb 'red'}
${down:+set label 'rail down' at $down, graph 0.95 offset 1,0 tc rgb 'red'}
${up:+set arrow from $up, graph 0 to $up, graph 1 nohead dt 2 lc rgb 'dark-green'}
${up:+set label 'rail up' at $up, graph 0.88 offset 1,0 tc rgb 'dark-green'}
plot $plots
GP
echo "failover-plot: wrote $2"
