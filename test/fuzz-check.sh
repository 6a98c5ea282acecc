#!/bin/bash
# The wire fuzzer for a bounded time (LOOM_FUZZ_SECONDS, default 30) on the
# committed corpus; skipped (77) without clang and libFuzzer.  make check
# runs it in the build directory.
set -u
exec "${LOOM_SRCDIR:?run through make check}/contrib/fuzz.sh" "${LOOM_FUZZ_SECONDS:-30}" "$PWD"
