#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Inside the rxe guest (contrib/rxe-guest-run.sh): loom's MPI correctness
# tests over real rc_verbs on soft-RoCE, on one rail and on both, every byte
# verified; rc_verbs rails whose ports go down and come back under a verified
# stream; then the benchmarks, loom against btl tcp and pml ucx (rc_verbs
# on the same device) in the same boot.  TCG timing is noisy: the numbers are
# printed, never asserted.
set -u
src=${LOOM_SRCDIR:?run through make check-rxe or contrib/rxe-guest-run.sh}
bindir=${LOOM_TEST_BINDIR:?run through make check-rxe or contrib/rxe-guest-run.sh}
benchdir=${LOOM_BENCH_BINDIR:?run through make check-rxe or contrib/rxe-guest-run.sh}
if [ -z "${LOOM_IN_GUEST:-}" ]; then
    echo "rxe-guest-suite: runs inside the guest only (contrib/rxe-guest-run.sh)" >&2
    exit 2
fi
fail=0
# The benchmarks are measurements: they get what the correctness stages left
# of the guest's time limit, less a margin, and one cut short says so and
# fails nothing (a busy host makes the emulated guest slower still).
budget=${LOOM_GUEST_BUDGET:-1500}
# $1: what is measured, then the command; returns its status, 0 if cut short
measure() {
    local what=$1 left=$((budget - SECONDS - 60)) rc=0
    shift
    if [ $left -lt 60 ]; then
        echo "MEASUREMENT skipped: $what (${SECONDS} s of the guest's ${budget} s used)"
        return 0
    fi
    timeout -k 10 $left "$@" || rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        echo "MEASUREMENT cut short after $left s: $what (the results so far are above)"
        return 0
    fi
    return $rc
}
# The passes: one rail at 2 ranks with the eager rings changing phase after
# every message (every ring replacement raced against the traffic; rings are
# on by default over rc_verbs) and without the programs of the wider MPI
# surface (more modes, collectives, spawn, threads, one-sided atomics); both
# rails at 2 ranks with everything but the programs that the first pass ran
# and that striping does not change (small messages, derived types, the
# registration cache, pvars), spawn, every size and the many outstanding
# requests with the progress thread (the host runs those; the thread's other
# programs run here); both rails at 4 ranks with the broadcasts and stock
# collectives only (allgather and reductions at 4 ranks run on the host and
# the virtual cluster; the reductions run here at 2).  The emulated CPU makes more too slow: the guest runs
# beside the host's tests, and the test command waits for it.
surface="test_p2p_modes test_collectives test_bcast test_allreduce test_allgather test_spawn test_threads test_large test_osc_atomics"
wide="test_collectives test_bcast"
# Variants the two-rail pass at 2 ranks runs already, or the host does: the
# progress thread, the idle blocking, the broadcast as a chain, the
# broadcast slots sent by rendezvous (a low eager limit), and broadcasts
# without slots (the 4-rank run's calls above 256 KiB go that way).
# test_idle_block runs on two rails with the default rings, where its
# waiting rank must poll a ring (a write into it wakes no sleeper) until the
# ring's writer drops it, asked by the wait; not where rings change phase
# after every message, which leaves a ring or none at a wait by chance.
thread=OMPI_MCA_btl_loom_progress_thread=1
# where streaming stores take checked writes: tcp only (rc_verbs has none)
tcp_only="LOOM_EXPECT_STREAMED=1 LOOM_EXPECT_STREAMED=some"
# The 32 threads' broadcasts (each 200 s here) run at 4 ranks only, below,
# where a late push of theirs showed over rc_verbs; the host runs both.
threads32=test_bcast/LOOM_BCAST_THREADS=32
two_rails_leave_out="$tcp_only test_datatypes test_any_source test_alltoall test_pvars test_rcache test_spawn test_sizes/$thread test_many_outstanding/$thread $threads32"
variants="OMPI_MCA_btl_loom_block_when_idle=1 OMPI_MCA_coll_loom_bcast_fanout=1 OMPI_MCA_btl_loom_eager_limit=512 OMPI_MCA_coll_loom_bcast_eager_max=0"
# The emulated NICs are the guest's CPU: with the host busy (the test command
# runs the host's tests meanwhile) one rail can stall for seconds while the
# other delivers, which the rail watch takes for a dead rail after
# btl_loom_rail_timeout (1 s).  The rail would come back, but a correctness
# pass is no place for that: these passes check what moves over rc_verbs,
# and test/rxe-failover-check.sh (below) checks rails that fail and return.
watch="--mca btl_loom_rail_timeout 20000"
one=rc_verbs:rxe0:1 two=rc_verbs:rxe0:1,rc_verbs:rxe1:1
# rails, smallest and largest process count, programs (all: empty), left
# out, extra mpirun arguments, and what else the pass does
passes=(
    "$one|1|2||$surface $thread $tcp_only test_idle_block|--mca btl_loom_eager_cycle 1|, eager rings changing phase after every message"
    "$two|1|2||$two_rails_leave_out|-x LOOM_EXPECT_RING_POLLED=1|"
    "$two|4|4|$wide|$variants|| at 4 ranks, collectives"
)
for pass in "${passes[@]}"; do
    IFS='|' read -r rails min_np max_np only leave_out extra what <<< "$pass"
    echo "=== loom MPI tests over $rails$what"
    start=$SECONDS
    LOOM_MPI_ARGS="--mca pml ob1 --mca btl self,loom --mca btl_loom_rails $rails $extra $watch" \
    LOOM_TEST_LOGDIR=/tmp/loom-rxe-logs.${rails//[:,]/_}.$min_np LOOM_TEST_TIMEOUT=600 \
    LOOM_TEST_MIN_NP=$min_np LOOM_TEST_MAX_NP=$max_np LOOM_TEST_ONLY=$only \
    LOOM_TEST_LEAVE_OUT=$leave_out "$src/test/mpi/run-mpi-tests.sh" || fail=1
    echo "(took $((SECONDS - start)) s)"
done
root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
echo "=== eager ring memory over rc_verbs:rxe0:1 (bench_eager_memory -c, 4 ranks)"
start=$SECONDS
if ! timeout -k 10 600 mpirun "${root[@]}" --oversubscribe --mca oob_tcp_if_include lo \
        --mca btl_tcp_if_include lo --mca pml ob1 --mca btl self,loom \
        --mca btl_loom_rails rc_verbs:rxe0:1 --mca btl_loom_eager_idle_shrink 500 \
        --mca btl_loom_eager_ack_timeout 10000 -np 4 "$benchdir/bench_eager_memory" -c -i 3000; then
    echo "FAIL: bench_eager_memory over rc_verbs"
    fail=1
fi
echo "(took $((SECONDS - start)) s)"
echo "=== rc_verbs rails failing and coming back (test/rxe-failover-check.sh)"
start=$SECONDS
"$src/test/rxe-failover-check.sh" || fail=1
echo "(took $((SECONDS - start)) s)"
# The measurements are for docs/dev/rxe-guest.md (make -C build check-rxe runs them);
# the test command leaves them out (LOOM_RXE_MEASURE=0): beside the host's
# tests their numbers say nothing, and they were a quarter of the guest's time.
if [ "${LOOM_RXE_MEASURE:-1}" = 0 ]; then
    echo "=== measurements left out (LOOM_RXE_MEASURE=0; the guest ran ${SECONDS} s)"
    exit $fail
fi
echo "=== eager ring latency over rc_verbs:rxe0:1"
start=$SECONDS
measure "eager ring latency" "$src/contrib/eager-latency.sh" --bindir "$benchdir" \
    --rails rc_verbs:rxe0:1 --rounds 3 --iters 500 --bind none || fail=1
echo "(took $((SECONDS - start)) s)"
echo "=== benchmarks: loom over rc_verbs:rxe0:1, pml ucx over rc_v (rc_verbs with ud_verbs for wireup, rxe0:1), btl tcp"
start=$SECONDS
measure "loom, btl tcp and pml ucx benchmarks" \
    env LOOM_BENCH_BIND=none LOOM_BENCH_LAYER_ITERS=5000 \
    "$src/contrib/loom-bench.sh" --bindir "$benchdir" --out /tmp/loom-rxe-bench \
    --max "${LOOM_RXE_BENCH_MAX:-262144}" --rounds 1 --rails rc_verbs:rxe0:1 \
    --ucx-tls rc_v,self --ucx-devices rxe0:1 --layers || fail=1
echo "(took $((SECONDS - start)) s; the guest ran ${SECONDS} s)"
# loom failing to run a benchmark is a failure, not a measurement
if grep -q "^WARNING: configuration 'loom'" /tmp/loom-rxe-bench/summary.txt 2>/dev/null; then
    echo "FAIL: loom's benchmark run failed over rc_verbs"
    fail=1
fi
exit $fail
