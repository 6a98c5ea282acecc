#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# The Open MPI 5.0 stage of the test command: loom configured and built
# against the Open MPI 5.0 that contrib/ompi5-build.sh keeps in its cache,
# then `make check-ompi5` (Makefile.am says what it runs), its output kept in
# BUILD_DIR/check-ompi5.out (contrib/run-tests.sh reports it).
# Exits 77 (skipped, saying why) when there is no complete cache: the test
# command starts that build in the background, and the next run uses it.
# A loom that does not build against it, or a test that fails, fails.
# Usage: test/ompi5-stage.sh [BUILD_DIR]   (default: build-ompi5 in the checkout)
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build-ompi5}

set -o pipefail # a failed --check must not pass for an empty prefix
if ! prefix=$("$src/contrib/ompi5-build.sh" --check 2>/dev/null | tail -n 1) ||
   [ ! -x "$prefix/bin/mpirun" ]; then
    echo "SKIP: no Open MPI 5.0 built yet ($("$src/contrib/ompi5-build.sh" --check 2>&1 | head -n 1))"
    exit 77
fi
echo "=== Open MPI 5.0 stage: loom against $prefix"
rm -f "$build/check-ompi5.out"
if ! "$src/contrib/build.sh" "$build" --with-ompi="$prefix" ||
   ! make -C "$build" -s check TESTS= >/dev/null; then
    echo "FAIL: loom does not build against Open MPI 5.0 at $prefix"
    exit 1
fi
# Open MPI 5.0's runtime (PRRTE) leaves loopback out where any other
# interface exists, and loom's tests keep to loopback: mpirun runs in a
# network namespace with nothing but lo (contrib/ompi5-mpirun.sh).  The
# cluster check brings its own namespaces and runs 5.0's mpirun there.
if ! "$src/contrib/ompi5-mpirun.sh" --version >/dev/null 2>&1; then
    echo "SKIP: Open MPI 5.0's mpirun keeps to loopback only in a network namespace of its own, which needs root"
    exit 77
fi
LOOM_CLUSTER_MPIRUN=$prefix/bin/mpirun LOOM_MPIRUN=$src/contrib/ompi5-mpirun.sh \
    make -C "$build" check-ompi5 MPIRUN="$src/contrib/ompi5-mpirun.sh" >"$build/check-ompi5.out" 2>&1
rc=$?
echo "=== Open MPI 5.0 stage: make check-ompi5 exited $rc ($build/check-ompi5.out, the logs in $build/test)"
exit $rc
