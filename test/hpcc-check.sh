#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# The HPC Challenge benchmark (Debian's hpcc: HPL, PTRANS, MPIRandomAccess,
# MPIFFT, the ring and ping-pong latency and bandwidth; a program nobody
# here wrote) through loom at 4 ranks on the 2 cores, oversubscribed as a
# user's laptop or a shared node is: the run must end, and every check of
# its own must pass (HPL's and PTRANS's residuals, RandomAccess's table
# with no wrong entry, the FFT's error).  Then once with eager rings on.
# Its problem is the example input's with N=250: a few seconds per run on
# an idle machine, up to a minute under the test command's load
# (docs/dev/external-suites.md has its times beside btl tcp's and pml
# ucx's).  Run by `make check`, which sets the component path; skips
# without hpcc (contrib/install-deps.sh installs it).
set -u
src=${LOOM_SRCDIR:?run through make check}
. "$src/test/lib/mpi-stacks-lib.sh"
example=/usr/share/doc/hpcc/examples/_hpccinf.txt
if ! command -v hpcc >/dev/null || [ ! -f "$example" ]; then
    echo "SKIP: hpcc is not installed (contrib/install-deps.sh installs it)"
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/loom-hpcc.XXXXXX")
# the example's problem, smaller: its one HPL size (line 6) set to 250
sed '6s/^[0-9]\+/250/' "$example" >"$work/hpccinf.txt"
read -r -a run_args <<<"$(mpi_run_args)"

# $1 a run's HPCC output, $2 a key of its summary: the key's value
hpcc_value() { sed -n "s/^$2=//p" "$1" 2>/dev/null | head -n 1; }

# $1 a label, then the stack's mpirun arguments: runs hpcc, prints its
# results, and fails when it did not end well or one of its checks failed.
hpcc_run() {
    local label=$1 out start rc bad=
    shift
    out=$work/$label
    mkdir -p "$out"
    cp "$work/hpccinf.txt" "$out/"
    start=$SECONDS
    (cd "$out" && timeout -k 10 600 mpirun "${run_args[@]}" -np 4 "$@" hpcc </dev/null >run.log 2>&1)
    rc=$?
    summary() { hpcc_value "$out/hpccoutf.txt" "$1"; }
    echo "$label: exit $rc after $((SECONDS - start)) s; HPL $(summary HPL_Tflops) Tflop/s," \
        "PTRANS $(summary PTRANS_GBs) GB/s, MPIRandomAccess $(summary MPIRandomAccess_GUPs) GUP/s," \
        "MPIFFT $(summary MPIFFT_Gflops) Gflop/s, ring latency $(summary RandomlyOrderedRingLatency_usec) us," \
        "ring bandwidth $(summary RandomlyOrderedRingBandwidth_GBytes) GB/s"
    [ $rc -eq 0 ] || bad="exit code $rc"
    [ -z "$bad" ] && [ "$(summary Success)" != 1 ] && bad="no Success=1 in its summary"
    [ -z "$bad" ] && grep -q "[1-9][0-9]* tests completed and failed residual checks" "$out/hpccoutf.txt" &&
        bad="HPL or PTRANS failed its residual check"
    [ -z "$bad" ] && [ "$(summary MPIRandomAccess_Errors)" != 0 ] &&
        bad="MPIRandomAccess found $(summary MPIRandomAccess_Errors) wrong entries"
    [ -z "$bad" ] && [ "$(summary MPIRandomAccess_LCG_Errors)" != 0 ] &&
        bad="MPIRandomAccess_LCG found $(summary MPIRandomAccess_LCG_Errors) wrong entries"
    [ -z "$bad" ] && ! awk -v e="$(summary MPIFFT_maxErr)" 'BEGIN { exit !(e != "" && e + 0 < 1e-10) }' &&
        bad="MPIFFT's error is $(summary MPIFFT_maxErr)"
    if [ -n "$bad" ]; then
        echo "FAIL hpcc $label: $bad (output in $out)"
        grep -v '^ *$' "$out/run.log" | tail -n 15 | sed 's/^/    | /'
        return 1
    fi
}

status=0
hpcc_run loom $(mpi_stack_args loom) || status=1
hpcc_run loom-rings $(mpi_stack_args loom) --mca btl_loom_eager_rdma on || status=1
if [ $status -eq 0 ]; then
    echo "PASS hpcc-check: every check of HPCC's own passed through loom, with and without eager rings"
    rm -rf "$work"
fi
exit $status
