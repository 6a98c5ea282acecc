#!/bin/bash
# The test command: installs what is missing, builds loom and runs every test
# (unit tests of the engine, MPI tests through `--mca btl self,loom`, component
# checks), then the same again built with AddressSanitizer.
# Usage: contrib/run-tests.sh [--no-asan]
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
asan=yes
[ "${1:-}" = "--no-asan" ] && asan=no

"$src/contrib/install-deps.sh"

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
    local log=$1/test/rxe-check.sh.log
    [ -f "$log" ] || return 0
    grep -E '^(=== loom MPI tests over|Summary:|SKIP:|PASS bench_eager_memory|FAIL|\(took)' "$log" | sed 's/^/    rxe guest: /'
}

status=0
run_suite() {
    local name=$1 dir=$2; shift 2
    echo "=== $name: build"
    "$src/contrib/build.sh" "$dir" "$@"
    echo "=== $name: make check"
    if make -C "$dir" check >"$dir/check.out" 2>&1; then
        grep -E '^(PASS|FAIL|SKIP|XFAIL|ERROR):' "$dir/check.out" || true
        say_skips "$dir"
        say_rxe "$dir"
        echo "=== $name: passed"
    else
        grep -E '^(PASS|FAIL|SKIP|XFAIL|ERROR):' "$dir/check.out" || true
        for log in "$dir"/test/*.log "$dir"/test/*/*.log; do
            [ -f "$log" ] || continue
            grep -q '^:test-result: \(FAIL\|ERROR\)' "${log%.log}.trs" 2>/dev/null && { echo "--- $log"; tail -n 40 "$log"; }
        done
        echo "=== $name: FAILED"
        status=1
    fi
}

run_suite "loom" "$src/build"
if [ "$asan" = yes ]; then
    run_suite "loom with AddressSanitizer" "$src/build-asan" --enable-asan
fi
[ $status -eq 0 ] && echo "ALL TESTS PASSED" || echo "SOME TESTS FAILED"
exit $status
