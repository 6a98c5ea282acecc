#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# The wire fuzzer for a bounded time (LOOM_FUZZ_SECONDS, default 20) on the
# committed corpus: two thirds with the rails wired up through their
# interfaces, as tcp does, one third as rails that connect endpoint to
# endpoint do (FUZZ_CONNECT_TO_EP: the CONNECT exchange and rejoin_ep.c);
# skipped (77) without clang and libFuzzer.  make check runs it in the build
# directory.
set -u
src=${LOOM_SRCDIR:?run through make check}
seconds=${LOOM_FUZZ_SECONDS:-20}
"$src/test/fuzz/fuzz.sh" $((seconds - seconds / 3)) "$PWD" || exit $?
echo "fuzz: the same with endpoint-to-endpoint rails"
FUZZ_CONNECT_TO_EP=1 exec "$src/test/fuzz/fuzz.sh" $((seconds / 3)) "$PWD"
