#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
#
# Run the loom MPI correctness tests.
#
# Environment:
#   LOOM_MPIRUN        mpirun command (default: mpirun)
#   LOOM_MPI_ARGS      extra mpirun arguments (default: use loom:
#                      --mca pml ob1 --mca btl self,loom --mca btl_loom_rails tcp:lo)
#   LOOM_TEST_BINDIR   directory of the built test programs (default: this
#                      script's directory)
#   LOOM_TEST_LOGDIR   where each run's output is kept (default: a new
#                      temporary directory)
#   LOOM_TEST_TIMEOUT  seconds per run (default: 300)
#   LOOM_TEST_MAX_NP   skip runs with more processes (default: none skipped;
#                      the emulated rxe guest uses 2)
#   LOOM_TEST_MIN_NP   skip runs with fewer processes (default: none skipped)
#   LOOM_TEST_LARGEST_NP  1: run each entry once, at the largest of its process
#                      counts that the limits leave (default: 0, every count;
#                      the AddressSanitizer build looks for memory errors,
#                      which the smaller counts add little to)
#   LOOM_TEST_ONLY     run only these programs, separated by spaces (default:
#                      all; the guest runs a few at 4 ranks this way)
#   LOOM_TEST_LEAVE_OUT  programs not to run, separated by spaces, or NAME=value
#                      words: the runs that set that variable, or
#                      PROGRAM/NAME=value: that program's runs that set it
#                      (default: none; the emulated rxe guest leaves some out)
#   LOOM_TEST_ENTRIES  entries run instead of the table below, one per line,
#                      written as the table's (the Open MPI 5.0 stage's
#                      one-sided runs)
#   LOOM_TEST_REPEAT   1: a pass repeated in another mode (the eager ring and
#                      connect-to-ep wrappers): at most 4 processes, without
#                      test_large and test_allreduce, which the plain pass runs
#
# Every run stays on loopback (oob and btl tcp restricted to lo).  Each test
# runs with -np 2, all but test_pvars with -np 4 as well.  Exit code 77 of a
# test means skipped.  Exits 1 if any run failed.

set -eu

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

read -r -a mpirun <<< "${LOOM_MPIRUN:-mpirun}"
read -r -a mpi_args <<< "${LOOM_MPI_ARGS:---mca pml ob1 --mca btl self,loom --mca btl_loom_rails tcp:lo}"
bindir=${LOOM_TEST_BINDIR:-$script_dir}
logdir=${LOOM_TEST_LOGDIR:-$(mktemp -d "${TMPDIR:-/tmp}/loom-mpi-tests.XXXXXX")}
run_timeout=${LOOM_TEST_TIMEOUT:-300}
max_np=${LOOM_TEST_MAX_NP:-0}
min_np=${LOOM_TEST_MIN_NP:-0}
largest_np=${LOOM_TEST_LARGEST_NP:-0}
only=" ${LOOM_TEST_ONLY:-} "
leave_out=" ${LOOM_TEST_LEAVE_OUT:-} "
if [ "${LOOM_TEST_REPEAT:-0}" = 1 ]; then
    [ "$max_np" -gt 0 ] && [ "$max_np" -lt 4 ] || max_np=4
    leave_out="$leave_out test_large test_allreduce "
fi

fixed_args=(--oversubscribe --mca oob_tcp_if_include lo --mca btl_tcp_if_include lo)
# Every run is on one node, where coll loom's defaults leave broadcasts and
# allgathers to coll tuned (measured faster there): the tests have it take
# them, to check them.
export OMPI_MCA_coll_loom_bcast_one_node=${OMPI_MCA_coll_loom_bcast_one_node:-1}
export OMPI_MCA_coll_loom_allgather_one_node=${OMPI_MCA_coll_loom_allgather_one_node:-1}
# The calls a test makes coll loom take must reach it: not measured against
# the next component (coll_loom_select 1, the default), which would leave
# them to it where it measured faster; test_coll_select checks that.
export OMPI_MCA_coll_loom_select=${OMPI_MCA_coll_loom_select:-0}
if [ "$(id -u)" -eq 0 ]; then
    fixed_args=(--allow-run-as-root "${fixed_args[@]}")
fi

# test name and the process counts it runs with
tests=(
    "test_sizes 2 4"
    "test_datatypes 2 4"
    "test_many_outstanding 2 4"
    "test_any_source 2 4 16"
    "test_alltoall 2 4 8"
    "test_rma 2 4"
    "OMPI_MCA_btl_loom_atomics=1 OMPI_MCA_osc=rdma test_rma 2 4"
    "OMPI_MCA_btl_loom_atomics=1 LOOM_EXPECT_BTL_ATOMICS=1 test_osc_atomics 2 4 8"
    "OMPI_MCA_osc=pt2pt test_osc_atomics 2 4"
    "OMPI_MCA_osc=pt2pt test_osc_loops 2 4"
    "OMPI_MCA_btl_loom_atomics=1 OMPI_MCA_osc=rdma test_osc_loops 2 4"
    "test_pvars 2"
    "test_rcache 2 3"
    "OMPI_MCA_btl_loom_rcache_size=0 test_rcache 2"
    "test_stripe 2"
    "test_p2p_modes 2 4"
    "test_collectives 2 3 4"
    "OMPI_MCA_coll_loom_bcast_min_procs=2 OMPI_MCA_coll_loom_bcast_min=65536 LOOM_EXPECT_COLL_LOOM=1 test_bcast 2 3 4"
    "LOOM_EXPECT_COLL_LOOM=1 test_bcast 8"
    "OMPI_MCA_coll_loom_bcast_min_procs=2 OMPI_MCA_coll_loom_bcast_eager_max=0 LOOM_EXPECT_COLL_LOOM=1 test_bcast 4"
    "OMPI_MCA_coll_loom_bcast_segment=65536 OMPI_MCA_btl_loom_push_waiting=16 OMPI_MCA_coll_loom_bcast_eager_max=4194304 LOOM_BCAST_FAILURE=1 LOOM_BCAST_SLOTTED_FAILURE=1 test_bcast 8"
    "OMPI_MCA_coll_loom_bcast_min_procs=2 OMPI_MCA_coll_loom_bcast_min=65536 OMPI_MCA_coll_loom_bcast_segment=4096 LOOM_BCAST_THREADS=32 test_bcast 2 4"
    "OMPI_MCA_coll_loom_bcast_min_procs=2 OMPI_MCA_coll_loom_bcast_fanout=1 OMPI_MCA_coll_loom_bcast_segment=65536 LOOM_EXPECT_COLL_LOOM=1 test_bcast 4"
    "OMPI_MCA_btl_loom_eager_limit=512 OMPI_MCA_coll_loom_bcast_min_procs=2 OMPI_MCA_coll_loom_bcast_min=65536 LOOM_EXPECT_COLL_LOOM=1 test_bcast 4"
    "OMPI_MCA_coll_loom_bcast_min_procs=2 OMPI_MCA_coll_loom_bcast_min=0 LOOM_TEST_LAST_RANK_ENV=OMPI_MCA_coll_loom_bcast_segment=8192 LOOM_BCAST_PARAMS_DIFFER=1 test_bcast 3"
    "OMPI_MCA_coll_loom_reduce_min=65536 OMPI_MCA_coll_loom_allreduce_min=65536 LOOM_EXPECT_COLL_LOOM=1 test_allreduce 2 4 8"
    "OMPI_MCA_coll_loom_reduce_min=4096 OMPI_MCA_coll_loom_allreduce_min=4096 OMPI_MCA_coll_loom_reduce_depth=1 OMPI_MCA_coll_loom_reduce_staging=65536 test_allreduce 3"
    "OMPI_MCA_coll_loom_allgather_min=65536 OMPI_MCA_coll_loom_allgather_min_procs=2 LOOM_EXPECT_COLL_LOOM=1 test_allgather 2 3 4 8"
    "OMPI_MCA_coll_loom_allgather_min=0 OMPI_MCA_coll_loom_allgather_min_procs=2 OMPI_MCA_coll_loom_allgather_segment=4096 OMPI_MCA_coll_loom_allgather_window=1024 test_allgather 3"
    "OMPI_MCA_coll_loom_select=1 OMPI_MCA_coll_loom_bcast_min=65536 OMPI_MCA_coll_loom_bcast_min_procs=2 OMPI_MCA_coll_loom_reduce_min=65536 OMPI_MCA_coll_loom_allreduce_min=65536 OMPI_MCA_coll_loom_allgather_min=65536 OMPI_MCA_coll_loom_allgather_min_procs=2 test_coll_select 2 4"
    "OMPI_MCA_coll_loom_select=1 OMPI_MCA_coll_loom_select_margin=-99 LOOM_EXPECT_CHOICE=next OMPI_MCA_coll_loom_bcast_min=65536 OMPI_MCA_coll_loom_bcast_min_procs=2 OMPI_MCA_coll_loom_reduce_min=65536 OMPI_MCA_coll_loom_allreduce_min=65536 OMPI_MCA_coll_loom_allgather_min=65536 OMPI_MCA_coll_loom_allgather_min_procs=2 test_coll_select 2"
    "OMPI_MCA_coll_loom_select=1 OMPI_MCA_coll_loom_select_pairs=1 OMPI_MCA_coll_loom_select_margin=100000 LOOM_EXPECT_CHOICE=loom OMPI_MCA_coll_loom_bcast_min=65536 OMPI_MCA_coll_loom_bcast_min_procs=2 OMPI_MCA_coll_loom_reduce_min=65536 OMPI_MCA_coll_loom_allreduce_min=65536 OMPI_MCA_coll_loom_allgather_min=65536 OMPI_MCA_coll_loom_allgather_min_procs=2 test_coll_select 3"
    "test_spawn 2"
    "test_threads 2 4"
    "test_large 2"
    "OMPI_MCA_btl_loom_progress_thread=1 test_sizes 2 4"
    "OMPI_MCA_btl_loom_progress_thread=1 test_many_outstanding 2"
    "OMPI_MCA_btl_loom_progress_thread=1 test_threads 2"
    "OMPI_MCA_btl_loom_progress_thread=1 OMPI_MCA_btl_loom_atomics=1 LOOM_EXPECT_BTL_ATOMICS=1 test_osc_atomics 2 4"
    "OMPI_MCA_btl_loom_block_when_idle=1 test_any_source 2 16"
    "OMPI_MCA_btl_loom_block_when_idle=1 test_collectives 4"
    "OMPI_MCA_btl_loom_block_when_idle=1 test_idle_block 2"
    "OMPI_MCA_btl_loom_tcp_stream_copy=65536 OMPI_MCA_btl_loom_tcp_stream_reuse=0 LOOM_EXPECT_STREAMED=1 test_sizes 2"
    "OMPI_MCA_btl_loom_tcp_stream_copy=524288 LOOM_EXPECT_STREAMED=some test_sizes 2"
)

if [ -n "${LOOM_TEST_ENTRIES:-}" ]; then
    mapfile -t tests <<<"$LOOM_TEST_ENTRIES"
fi

# A test that runs out of time shows where its ranks stood: their stacks go to
# its log (gdb, where installed) before it is killed.
dump_stacks() {
    local prog=$1 pid
    command -v gdb >/dev/null || { echo "run-mpi-tests: no gdb for the stacks"; return; }
    for pid in $(pgrep -f "^$prog( |\$)"); do
        echo "=== stacks of $prog, pid $pid, after ${run_timeout}s"
        timeout 60 gdb -p "$pid" -batch -nx -ex "thread apply all bt" 2>&1 |
            grep -E '^(#|Thread)'
        # loom's state towards its first two peers, when loom is loaded
        timeout 60 gdb -p "$pid" -batch -nx -ex "set print pretty on" \
            -ex "p *mca_btl_loom_component.module->engine" \
            -ex "p *mca_btl_loom_component.module->endpoints->peer" \
            -ex "p *mca_btl_loom_component.module->endpoints->next->peer" 2>&1 |
            sed -n '/^\$1 = /,$p'
    done
}

mkdir -p "$logdir"
echo "loom MPI tests: binaries in $bindir, logs in $logdir"
echo "mpirun: ${mpirun[*]} ${fixed_args[*]} ${mpi_args[*]}"

passed=0
failed=0
skipped=0
failed_names=()

for entry in "${tests[@]}"; do
    read -r -a words <<< "$entry"
    env_args=() x_args=() # leading NAME=value words: exported to this entry's ranks
    while [[ "${words[0]}" == *=* ]]; do
        env_args+=("${words[0]}")
        x_args+=(-x "${words[0]}")
        words=("${words[@]:1}")
    done
    name=${words[0]}
    nps=${words[*]:1}
    if [ "$only" != "  " ] && [[ "$only" != *" $name "* ]]; then
        continue
    fi
    left=
    [[ "$leave_out" == *" $name "* ]] && left=$name
    for arg in "${env_args[@]}"; do
        [[ "$leave_out" == *" $arg "* ]] && left=$arg
        [[ "$leave_out" == *" $name/$arg "* ]] && left=$name/$arg
    done
    if [ -n "$left" ]; then
        echo "SKIP $name${env_args[*]:+ (${env_args[*]})}: $left left out by LOOM_TEST_LEAVE_OUT"
        skipped=$((skipped + 1))
        continue
    fi
    kept=()
    for np in $nps; do
        [ "$max_np" -gt 0 ] && [ "$np" -gt "$max_np" ] && continue
        [ "$np" -lt "$min_np" ] && continue
        kept+=("$np")
    done
    # the counts are listed smallest first
    [ "$largest_np" = 1 ] && [ ${#kept[@]} -gt 1 ] && kept=("${kept[-1]}")
    for np in "${kept[@]}"; do
        label="$name (np=$np${env_args[*]:+, ${env_args[*]}})"
        log="$logdir/$name.np$np${env_args[*]:+.env${#env_args[@]}}.log"
        if [ ! -x "$bindir/$name" ]; then
            echo "FAIL $label: $bindir/$name not found or not executable"
            failed=$((failed + 1))
            failed_names+=("$label")
            continue
        fi

        start=$SECONDS
        rc=0
        # appended to, as the stacks are: neither writes over the other
        : > "$log"
        timeout -k 10 $((run_timeout + 90)) "${mpirun[@]}" "${fixed_args[@]}" "${x_args[@]}" \
            "${mpi_args[@]}" -np "$np" "$bindir/$name" >> "$log" 2>&1 &
        run=$!
        (sleep "$run_timeout" && dump_stacks "$bindir/$name" && kill "$run") >> "$log" 2>&1 &
        watch=$!
        wait "$run" || rc=$?
        pkill -P "$watch" sleep 2>/dev/null || true
        wait "$watch" 2>/dev/null || true
        elapsed=$((SECONDS - start))

        if [ "$rc" -eq 0 ] && grep -q "^PASS $name\( \|\$\)" "$log"; then
            echo "PASS $label ${elapsed}s"
            passed=$((passed + 1))
        elif [ "$rc" -eq 77 ]; then
            reason=$(sed -n 's/^SKIP: //p' "$log" | head -n 1)
            echo "SKIP $label: ${reason:-exit code 77}"
            skipped=$((skipped + 1))
        else
            if grep -q "^=== stacks of " "$log"; then
                reason="timed out after ${run_timeout}s (the ranks' stacks are in the log)"
            elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] || [ "$rc" -eq 143 ]; then
                reason="timed out after ${run_timeout}s"
            elif [ "$rc" -eq 0 ]; then
                reason="exit code 0 but no 'PASS $name' line"
            else
                reason="exit code $rc"
            fi
            echo "FAIL $label: $reason, ${elapsed}s, log $log"
            grep -v '^ *$' "$log" | tail -n 15 | sed 's/^/    | /'
            failed=$((failed + 1))
            failed_names+=("$label")
        fi
    done
done

echo
if [ "$failed" -gt 0 ]; then
    echo "failed: ${failed_names[*]}"
fi
echo "Summary: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
