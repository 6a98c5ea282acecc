#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Run every built unit test binary (test_*) found in a directory, each under
# `timeout 120`; print PASS/FAIL/SKIP per test and a summary line.
# Exit status: 0 if nothing failed, 1 otherwise.  A test exiting 77 is skipped.
# Usage: test/unit/run-unit-tests.sh DIR
set -u

dir=${1:?usage: $0 DIR-WITH-TEST-BINARIES}
[ -d "$dir" ] || { echo "run-unit-tests: no directory $dir" >&2; exit 1; }

passed=0 failed=0 skipped=0 found=0
for test in "$dir"/test_*; do
    [ -f "$test" ] && [ -x "$test" ] || continue
    case "$test" in *.c|*.o|*.log|*.trs|*.sh) continue ;; esac
    found=$((found + 1))
    name=$(basename "$test")
    log=$(mktemp)
    timeout 120 "$test" >"$log" 2>&1
    rc=$?
    case $rc in
    0)  echo "PASS: $name"; passed=$((passed + 1)) ;;
    77) echo "SKIP: $name ($(grep -m1 '^SKIP:' "$log" | sed 's/^SKIP: *//'))"
        skipped=$((skipped + 1)) ;;
    124) echo "FAIL: $name (timed out after 120 s)"; failed=$((failed + 1))
        sed 's/^/    /' "$log" | tail -n 40 ;;
    *)  echo "FAIL: $name (exit status $rc)"; failed=$((failed + 1))
        sed 's/^/    /' "$log" | tail -n 40 ;;
    esac
    rm -f "$log"
done

if [ $found -eq 0 ]; then
    echo "run-unit-tests: no test_* binaries in $dir" >&2
    exit 1
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
