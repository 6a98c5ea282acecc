#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Configure and build loom in a build directory (default: build/ in the
# checkout).  Extra arguments go to configure, e.g. --enable-asan.
# Usage: contrib/build.sh [BUILD_DIR] [configure options...]
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
shift || true
cd "$src"
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt configure ]; then
    autoreconf -fi >/dev/null
fi
mkdir -p "$build"
cd "$build"
"$src/configure" --quiet "$@"
make -j"$(nproc)" >/dev/null
echo "build: loom built in $build"
