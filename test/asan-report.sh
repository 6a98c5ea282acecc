#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Run last under --enable-asan: fails if AddressSanitizer reported an error,
# or a leak whose allocation stack passes through loom's own code.  Leaks of
# Open MPI, PMIx or UCX themselves are listed but do not fail the run.
set -u
logs=${LOOM_ASAN_LOGS:?run through make check with --enable-asan}
shopt -s nullglob
files=("$logs"/asan*)
echo "asan-report: ${#files[@]} report file(s) in $logs"
[ ${#files[@]} -eq 0 ] && exit 0
fail=0
if grep -l "ERROR: AddressSanitizer" "${files[@]}"; then
    echo "asan-report: AddressSanitizer errors above"
    grep -h -A30 "ERROR: AddressSanitizer" "${files[@]}" | head -n 120
    fail=1
fi
# A leak record runs from "Direct/Indirect leak" to the next blank line.
# Memory that Open MPI allocated for itself below one of loom's calls is
# Open MPI's to free: orte_show_help packs each help message (loom's
# errors, through opal_show_help) into a buffer of its own to relay to
# mpirun, which LeakSanitizer found lost (2 KiB, in test_bcast given a bad
# coll loom parameter).
loom_leaks=$(awk '/^(Direct|Indirect) leak/ {rec=$0; keep=1; next}
                  keep && /^$/ {if (rec ~ /(mca_btl_loom|\/transport\/|\/component\/|\/test\/unit\/)/ &&
                                    rec !~ / in orte_show_help/) print rec "\n"; keep=0; next}
                  keep {rec = rec "\n" $0}' "${files[@]}")
if [ -n "$loom_leaks" ]; then
    echo "asan-report: leaks from loom's own code:"
    echo "$loom_leaks" | head -n 200
    fail=1
fi
other=$(cat "${files[@]}" | grep -c "^Direct leak\|^Indirect leak")
echo "asan-report: leak records in all (incl. Open MPI's own): $other"
exit $fail
