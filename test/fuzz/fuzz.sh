#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Build the wire fuzzer (make fuzz: libFuzzer with ASan and UBSan, clang) and
# run it for a bounded time, starting from the committed corpus
# (test/fuzz/corpus: seeds of every message type, and the inputs of bugs it
# found).  What it learns goes to a scratch corpus, not into the checkout;
# a crash leaves its input in the scratch directory, named on stderr.
# Exit status: 0 clean, 77 (with a SKIP: line) when clang or libFuzzer is
# missing (contrib/install-deps.sh installs them) or the harness cannot set
# up on tcp:lo, else the fuzzer's (1 for a finding: libFuzzer's own 77 would
# read as a skip to make check).
# Usage: test/fuzz/fuzz.sh [SECONDS] [BUILD_DIR] [libFuzzer options...]
#   SECONDS     default 60
#   BUILD_DIR   default build/ in the checkout; configured here if it is not
#   FUZZ_CORPUS=DIR keeps the learnt corpus in DIR across runs
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
build=${2:-$src/build}
shift 2 2>/dev/null || shift $#
fuzz_cc=${FUZZ_CC:-clang}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/loom-fuzz.XXXXXX")
keep_scratch=0
cleanup() { [ "$keep_scratch" = 1 ] || rm -rf "$scratch"; }
trap cleanup EXIT

if ! command -v "$fuzz_cc" >/dev/null 2>&1; then
    echo "SKIP: $fuzz_cc not found (contrib/install-deps.sh installs clang and libfuzzer-14-dev)"
    exit 77
fi
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' \
    >"$scratch/probe.c"
if ! "$fuzz_cc" -fsanitize=fuzzer,address,undefined -o "$scratch/probe" "$scratch/probe.c" \
        >/dev/null 2>&1; then
    echo "SKIP: $fuzz_cc cannot link libFuzzer (contrib/install-deps.sh installs libfuzzer-14-dev)"
    exit 77
fi

if [ ! -f "$build/Makefile" ]; then
    if [ ! -x "$src/configure" ]; then
        (cd "$src" && autoreconf -fi >/dev/null)
    fi
    mkdir -p "$build"
    (cd "$build" && "$src/configure" --quiet)
fi
make -C "$build" --no-print-directory FUZZ_CC="$fuzz_cc" fuzz >/dev/null

corpus=${FUZZ_CORPUS:-$scratch/corpus}
mkdir -p "$corpus"
echo "fuzz: $seconds s of $build/test/fuzz/fuzz_wire from $src/test/fuzz/corpus"
# UCX's own warnings (a peer's tcp socket closing) are not findings
export UCX_LOG_LEVEL=${UCX_LOG_LEVEL:-error}
unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
# The engines are kept from one input to the next, so an input that
# allocates more than it frees is the rule (a fresh pair, a message kept):
# libFuzzer would run each such input again and scan the heap (~10 ms) for
# its first 1000.  Leaks are still looked for when the run ends.
set +e
"$build/test/fuzz/fuzz_wire" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
    -detect_leaks=0 -error_exitcode=1 -print_final_stats=1 -artifact_prefix="$scratch/" \
    "$@" "$corpus" "$src"/test/fuzz/corpus/* 2>"$scratch/fuzz.log"
rc=$?
set -e
grep -E "^stat::number_of_executed_units|^Done|^==.*ERROR|SUMMARY" "$scratch/fuzz.log" || true
if [ "$rc" -eq 77 ]; then
    # only LLVMFuzzerInitialize exits so, its reason on the last line
    echo "SKIP: $(grep '^fuzz: ' "$scratch/fuzz.log" | tail -n 1)"
    exit 77
fi
if [ "$rc" -ne 0 ]; then
    keep_scratch=1
    tail -n 60 "$scratch/fuzz.log"
    echo "fuzz: FAILED (status $rc); log and crashing input in $scratch" >&2
    exit "$rc"
fi
echo "fuzz: clean"
