#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Build Open MPI 5.0 from the source archive beside the checkout
# (../shared/third-party/openmpi-5.0.9-loom-src.tar.xz, or $LOOM_OMPI5_SRC)
# into a cache outside the clone, once per machine: only what loom's tests
# need (C bindings, ob1, osc rdma and ucx, btl self/tcp/sm, pml ucx; no Fortran,
# ROMIO or OpenSHMEM). Reused while the archive's sha256 and the configure
# options below stay the same (what is done after the install, such as the
# headers copied in, does not change the key: remove the cache by hand when
# that changes). Prints the installed prefix on its last line.
# Usage: contrib/ompi5-build.sh [--check]
#   --check  build nothing: print the prefix and exit 0 if the cache is
#            complete, exit 2 if it is absent (or incomplete), 3 while
#            another process builds it
# Environment: LOOM_OMPI5_CACHE (default /var/cache/loom-ompi5),
#              LOOM_OMPI5_SRC (the archive), LOOM_OMPI5_JOBS (default: cores),
#              LOOM_OMPI5_WAIT (set: wait for another process's build
#              instead of exiting 3)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
archive=${LOOM_OMPI5_SRC:-$src/../shared/third-party/openmpi-5.0.9-loom-src.tar.xz}
want_sha=03216551a47919566e3f3fd159a1d9b1ccd673d6cfa278b631c85810478d589a
jobs=${LOOM_OMPI5_JOBS:-$(nproc)}

# Debian 12's own hwloc, libevent and UCX; PMIx and PRRTE from the tree;
# Open MPI's internal headers installed (a component builds against them)
# (Debian's PMIx 4.2.2 is older than the bundled PRRTE accepts).
configure_options=(--with-hwloc=external --with-libevent=external
    --with-pmix=internal --with-prrte=internal
    --with-ucx --with-devel-headers --disable-mpi-fortran --disable-io-romio
    --disable-oshmem --enable-mca-no-build=btl-uct,btl-usnic
    --disable-man-pages --disable-sphinx)
# The cache key: the archive's checksum and the options it was configured with.
key=$(echo "${configure_options[*]}" | sha256sum | cut -c1-12)
cache=${LOOM_OMPI5_CACHE:-/var/cache/loom-ompi5}/${want_sha:0:12}-$key
prefix=$cache/install

complete() {
    [ -f "$cache/complete" ] && [ -x "$prefix/bin/mpicc" ]
}
# asking takes no lock: "complete" is written last
if [ "${1:-}" = "--check" ] && ! complete; then
    if [ -d "$cache" ] && ! flock -n "$(dirname "$cache")/.lock" true 2>/dev/null; then
        echo "ompi5-build: another process is building Open MPI 5.0 into $cache" >&2
        exit 3
    fi
    echo "ompi5-build: no complete build in $cache" >&2
    exit 2
fi
mkdir -p "$(dirname "$cache")"
# one build at a time (the test command leaves one running in the background)
exec 9>"$(dirname "$cache")/.lock"
if ! complete && ! flock -n 9; then
    if [ -z "${LOOM_OMPI5_WAIT:-}" ]; then
        echo "ompi5-build: another process is building Open MPI 5.0 into $cache" >&2
        exit 3
    fi
    flock 9
fi
if complete; then
    echo "ompi5-build: Open MPI $("$prefix/bin/ompi_info" --version 2>/dev/null |
        sed -n 's/^Open MPI v//p' | head -n 1) cached in $cache"
    echo "$prefix"
    exit 0
fi
if [ ! -f "$archive" ]; then
    echo "ompi5-build: the source archive $archive is not there" >&2
    exit 2
fi
have_sha=$(sha256sum "$archive" | cut -d' ' -f1)
if [ "$have_sha" != "$want_sha" ]; then
    echo "ompi5-build: $archive has sha256 $have_sha, expected $want_sha" >&2
    exit 1
fi
"$src/contrib/install-deps.sh" --ompi5 >&2

rm -rf "$cache"
mkdir -p "$cache"
log=$cache/build.log
echo "ompi5-build: building into $prefix (log $log)" >&2
start=$SECONDS
# set -e does not hold in a subshell whose status is tested: its status is
# taken apart, with the script's set -e off around it
set +e
(
    set -e
    cd "$cache"
    tar -xJf "$archive"
    tree=$(find . -mindepth 1 -maxdepth 1 -type d | head -n 1)
    cd "$tree"
    ./autogen.pl --no-3rdparty libevent,hwloc
    ./configure --prefix="$prefix" "${configure_options[@]}"
    make -j"$jobs"
    make install
    # the installed threads headers include the chosen implementation's,
    # which Open MPI does not install (noinst): a component needs them
    mkdir -p "$prefix/include/openmpi/opal/mca/threads/pthreads"
    cp opal/mca/threads/pthreads/*.h "$prefix/include/openmpi/opal/mca/threads/pthreads/"
) >"$log" 2>&1
rc=$?
set -e
if [ $rc -ne 0 ]; then
    echo "ompi5-build: the build failed; the end of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
fi
# The build tree is not needed once installed (about 1 GiB).
find "$cache" -mindepth 1 -maxdepth 1 -type d ! -name install -exec rm -rf {} +
echo "$((SECONDS - start))" >"$cache/build-seconds"
touch "$cache/complete"
echo "ompi5-build: built in $((SECONDS - start)) s" >&2
echo "$prefix"
