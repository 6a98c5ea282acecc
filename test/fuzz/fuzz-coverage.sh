#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Which lines of the engine (transport/) the wire fuzzer reaches: builds the
# harness with clang's source coverage (make fuzz-cov), runs it for a fixed
# number of inputs from the committed corpus (test/fuzz/corpus), and prints
# llvm-cov's line coverage per file of transport/ and in total, then the
# wire handlers and serve paths it never entered.  It runs twice, with the
# rails wired up through their interfaces (as tcp is) and endpoint to
# endpoint (FUZZ_CONNECT_TO_EP, as rc_verbs is), and counts both; with
# FUZZ_COV_RXE=SECONDS a third way runs that long in the rxe guest over
# rc_verbs (contrib/rxe-guest-run.sh), whose serves are zero-copy puts
# where tcp's are checked writes, and is counted too.  The docs quote its
# output.
# Usage: test/fuzz/fuzz-coverage.sh [RUNS] [BUILD_DIR]
#   RUNS        inputs to run in each way, default 200000 (the corpus first)
#   BUILD_DIR   default build/ in the checkout (configured already; inside
#               the checkout for the rxe way: the guest sees only that)
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-200000}
build=${2:-$src/build}
fuzz_cc=${FUZZ_CC:-clang}
llvm_ver=$("$fuzz_cc" --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -n 1)
profdata=$(command -v "llvm-profdata-$llvm_ver" || command -v llvm-profdata || true)
cov=$(command -v "llvm-cov-$llvm_ver" || command -v llvm-cov || true)
if [ -z "$profdata" ] || [ -z "$cov" ]; then
    echo "SKIP: llvm-profdata or llvm-cov not found (package llvm-$llvm_ver)"
    exit 77
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/loom-fuzz-cov.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
make -C "$build" --no-print-directory FUZZ_CC="$fuzz_cc" fuzz-cov >/dev/null
export UCX_LOG_LEVEL=${UCX_LOG_LEVEL:-error}
for way in iface ep; do
    mkdir -p "$scratch/corpus-$way"
    ( [ "$way" = ep ] && export FUZZ_CONNECT_TO_EP=1
      LLVM_PROFILE_FILE="$scratch/fuzz-$way.profraw" "$build/test/fuzz/fuzz_wire_cov" \
          -runs="$runs" -seed=1 -timeout=20 -rss_limit_mb=2048 -detect_leaks=0 \
          "$scratch/corpus-$way" "$src"/test/fuzz/corpus/* 2>"$scratch/fuzz-$way.log" ) || {
        tail -n 30 "$scratch/fuzz-$way.log"
        echo "fuzz-coverage: the fuzzer failed ($way)" >&2
        exit 1
    }
done
if [ -n "${FUZZ_COV_RXE:-}" ]; then
    # the guest writes only inside the checkout
    guest=$(mktemp -d "$build/fuzz-cov-rxe.XXXXXX")
    trap 'rm -rf "$scratch" "$guest"' EXIT
    mkdir -p "$guest/corpus"
    rc=0
    ( cd "$src" && contrib/rxe-guest-run.sh -t $((FUZZ_COV_RXE + 120)) \
          env FUZZ_RAILS_LIST=rc_verbs:rxe0:1,rc_verbs:rxe1:1 \
          LLVM_PROFILE_FILE="$guest/fuzz-rxe.profraw" "$build/test/fuzz/fuzz_wire_cov" \
          -max_total_time="$FUZZ_COV_RXE" -seed=1 -timeout=20 -rss_limit_mb=4096 \
          -detect_leaks=0 -artifact_prefix="$guest/" "$guest/corpus" "$src"/test/fuzz/corpus/* \
          >"$scratch/fuzz-rxe.log" 2>&1 ) || rc=$?
    if [ $rc -eq 77 ]; then
        echo "fuzz-coverage: no rxe way: $(grep -m 1 SKIP "$scratch/fuzz-rxe.log")"
    elif [ $rc -ne 0 ] || [ ! -s "$guest/fuzz-rxe.profraw" ]; then
        grep -v 'Uses:' "$scratch/fuzz-rxe.log" | tail -n 30
        echo "fuzz-coverage: the fuzzer failed in the rxe guest" >&2
        exit 1
    else
        cp "$guest/fuzz-rxe.profraw" "$scratch/"
        grep -E '^Done [0-9]+ runs' "$scratch/fuzz-rxe.log" | sed 's/^/fuzz-coverage: rxe way: /'
    fi
fi
"$profdata" merge -sparse -o "$scratch/fuzz.profdata" "$scratch"/fuzz-*.profraw
# lcov's records, whatever paths the binary holds: per file (SF) its lines
# (DA: line,hits) and functions (FNDA: hits,name)
"$cov" export -format=lcov "$build/test/fuzz/fuzz_wire_cov" \
    -instr-profile="$scratch/fuzz.profdata" >"$scratch/fuzz.lcov"
echo "fuzz-coverage: $runs inputs in each way from $src/test/fuzz/corpus, $(date -u +%Y-%m-%d)"
engine_records() {
    awk -F'[:,]' -v want="$1" '
        /^SF:/ { file = $2; sub(/.*\/transport\//, "", file)
                 engine = ($2 ~ /(^|\/)transport\/([a-z_]+\/)?[a-z_]+\.c$/) }
        !engine { next }
        want == "lines" && /^DA:/ { lines[file]++; if ($3 > 0) hit[file]++ }
        want == "never" && /^FNDA:0,/ { print "  " substr($0, 8) }
        END { if (want == "lines") for (f in lines) print f, hit[f] + 0, lines[f] }
    ' "$scratch/fuzz.lcov"
}
printf "%-28s %14s %8s\n" "transport/" "lines reached" "share"
engine_records lines | sort | awk '
    { printf "%-28s %6d of %5d %7.2f%%\n", $1, $2, $3, 100 * $2 / $3; got += $2; all += $3 }
    END { if (all > 0) printf "%-28s %6d of %5d %7.2f%%\n", "total", got, all, 100 * got / all }'
echo "never entered (wire handlers and serve paths):"
engine_records never | grep -E '_recv|serve|_reply|_notice|counter_add' | sort || true
