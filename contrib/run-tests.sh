#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# The test command: installs what is missing, builds loom and runs every test
# (unit tests of the engine, MPI tests through `--mca btl self,loom`, component
# and virtual-cluster checks), then the same again built with AddressSanitizer;
# the soft-RoCE guest's run over rc_verbs goes on beside both.
# Then loom again, built against Open MPI 5.0 (test/ompi5-stage.sh), from the
# cache contrib/ompi5-build.sh keeps outside the clone: on a machine without
# it, that build starts at once in the background at the lowest priority
# and goes on after this command ends; the stage says it skipped, and the
# next run has it (or with --wait-ompi5 this run waits for it).
# Usage: contrib/run-tests.sh [--no-asan] [--wait-ompi5]
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
asan=yes
wait_ompi5=no
for arg in "$@"; do
    case "$arg" in
    --no-asan) asan=no ;;
    --wait-ompi5) wait_ompi5=yes ;;
    *) echo "usage: $0 [--no-asan] [--wait-ompi5]" >&2; exit 2 ;;
    esac
done

"$src/contrib/install-deps.sh"

# Open MPI 5.0 for the last stage: built beside everything else when not
# cached (about 25 minutes on 2 cores), in a session of its own so that it
# outlives this command.
mkdir -p "$src/build"
ompi5_pid=
ompi5_check=0
"$src/contrib/ompi5-build.sh" --check >/dev/null 2>&1 || ompi5_check=$?
if [ $ompi5_check -eq 2 ]; then # absent; 3: another process builds it
    echo "=== Open MPI 5.0: not cached; building it in the background (log build/ompi5-build.out)"
    setsid nice -n 19 "$src/contrib/ompi5-build.sh" >"$src/build/ompi5-build.out" 2>&1 </dev/null &
    ompi5_pid=$!
fi

# Say plainly why a test was skipped (its log's SKIP line).
say_skips() {
    local trs
    for trs in "$1"/test/*.trs "$1"/test/*/*.trs; do
        [ -f "$trs" ] && grep -q '^:test-result: SKIP' "$trs" || continue
        echo "    skipped ${trs#$1/}: $(grep -h '^SKIP' "${trs%.trs}.log" | tail -n 1)"
    done
}

# The soft-RoCE guest's own summary: what ran over rc_verbs, on which rails.
say_rxe() {
    local log=$1/test/rxe-check.log
    [ -f "$log" ] || return 0
    grep -E '^(=== loom MPI tests over|Summary:|SKIP:|PASS bench_eager_memory|PASS rxe failover|FAIL|\(took)' "$log" | sed 's/^/    rxe guest: /'
}

# $1 build directory, $2 make's output: the test lines, and the end of the
# log of each test that failed
report() {
    local dir=$1 out=$2 log
    grep -E '^(PASS|FAIL|SKIP|XFAIL|ERROR):' "$out" || true
    for log in "$dir"/test/*.log "$dir"/test/*/*.log; do
        [ -f "$log" ] || continue
        if grep -q '^:test-result: \(FAIL\|ERROR\)' "${log%.log}.trs" 2>/dev/null; then
            echo "--- $log"
            tail -n 40 "$log"
        fi
    done
    return 0
}

status=0
guest_pid=
# $1 name, $2 build directory, then configure options: configure and build,
# and the test programs (before two makes run in the directory)
build_suite() {
    local name=$1 dir=$2
    shift 2
    echo "=== $name: build"
    "$src/contrib/build.sh" "$dir" "$@" && make -C "$dir" -s check TESTS= >/dev/null
}
# $1 name, $2 build directory: the host's tests
check_suite() {
    local name=$1 dir=$2
    echo "=== $name: make check-host (every test on this machine)"
    if make -C "$dir" check-host >"$dir/check.out" 2>&1; then
        report "$dir" "$dir/check.out"
        say_skips "$dir"
        echo "=== $name: passed"
    else
        report "$dir" "$dir/check.out"
        echo "=== $name: FAILED"
        status=1
    fi
}

build_suite "loom" "$src/build"
# The emulated guest runs beside the host's
# tests (which leave their time budgets room for a loaded machine), so that
# the test command stays within half an hour; so does the ASan build, at a
# lower priority (at the lowest it waited for the tests to end).
echo "=== soft-RoCE guest: started beside the host's tests"
guest_start=$(date +%s)
(
    rc=0
    LOOM_RXE_MEASURE=0 make -C "$src/build" check-rxe >"$src/build/check-rxe.out" 2>&1 || rc=$?
    echo $(($(date +%s) - guest_start)) >"$src/build/check-rxe.seconds"
    exit $rc
) &
guest_pid=$!
if [ "$asan" = yes ]; then
    mkdir -p "$src/build-asan"
    asan_out=$src/build-asan/build.out
    nice -n 10 bash -c "$(declare -f build_suite); src='$src'; \
        build_suite 'loom with AddressSanitizer' '$src/build-asan' --enable-asan" \
        >"$asan_out" 2>&1 &
    asan_build_pid=$!
fi
# The wire fuzzer is built meanwhile too, for test/fuzz-check.sh (which builds
# it itself where this did not, and says why it skips where it cannot), and
# the MPICH test suite is fetched and built for test/mpich-check.sh (which
# waits for this, or does it itself, and skips, saying why, where it cannot).
nice -n 10 make -C "$src/build" -s fuzz >/dev/null 2>&1 &
nice -n 10 "$src/test/mpich/mpich-tests.sh" --prepare >"$src/build/mpich-prepare.out" 2>&1 &
check_suite "loom" "$src/build"
# loom against the cached Open MPI 5.0 is built beside the ASan pass (its
# stage configures it again, in seconds, and reports a build that failed)
ompi5_prebuild_pid=
if [ $ompi5_check -eq 0 ]; then
    ompi5_prefix=$("$src/contrib/ompi5-build.sh" --check 2>/dev/null | tail -n 1)
    nice -n 10 bash -c "$(declare -f build_suite); src='$src'; \
        build_suite 'loom against Open MPI 5.0' '$src/build-ompi5' --with-ompi='$ompi5_prefix'" \
        >"$src/build/ompi5-prebuild.out" 2>&1 &
    ompi5_prebuild_pid=$!
fi
if [ "$asan" = yes ]; then
    if wait "$asan_build_pid"; then
        cat "$asan_out"
        check_suite "loom with AddressSanitizer" "$src/build-asan"
    else
        cat "$asan_out"
        echo "=== loom with AddressSanitizer: build FAILED"
        status=1
    fi
fi
if [ "$wait_ompi5" = yes ] && [ -n "$ompi5_pid" ]; then
    echo "=== Open MPI 5.0: waiting for its build"
    wait "$ompi5_pid" || true
fi
[ -n "$ompi5_prebuild_pid" ] && { wait "$ompi5_prebuild_pid" || true; }
echo "=== Open MPI 5.0 stage"
rc=0
"$src/test/ompi5-stage.sh" "$src/build-ompi5" || rc=$?
[ $rc -ne 77 ] && [ -f "$src/build-ompi5/check-ompi5.out" ] &&
    report "$src/build-ompi5" "$src/build-ompi5/check-ompi5.out"
if [ $rc -eq 77 ]; then
    echo "=== Open MPI 5.0 stage: skipped${ompi5_pid:+ (its build goes on in the background: build/ompi5-build.out)}"
elif [ $rc -eq 0 ]; then
    echo "=== Open MPI 5.0 stage: passed"
else
    echo "=== Open MPI 5.0 stage: FAILED"
    status=1
fi
if [ -n "$ompi5_pid" ] && ! kill -0 "$ompi5_pid" 2>/dev/null && ! wait "$ompi5_pid"; then
    echo "=== Open MPI 5.0: its build FAILED (build/ompi5-build.out):"
    tail -n 20 "$src/build/ompi5-build.out"
    status=1
fi
echo "=== soft-RoCE guest: waiting for it"
if wait "$guest_pid"; then
    report "$src/build" "$src/build/check-rxe.out"
    say_rxe "$src/build"
    echo "=== soft-RoCE guest: passed (took $(cat "$src/build/check-rxe.seconds") s)"
else
    report "$src/build" "$src/build/check-rxe.out"
    say_rxe "$src/build"
    echo "=== soft-RoCE guest: FAILED"
    status=1
fi
echo "(the test command took $((SECONDS / 60)) min $((SECONDS % 60)) s)"
[ $status -eq 0 ] && echo "ALL TESTS PASSED" || echo "SOME TESTS FAILED"
exit $status
