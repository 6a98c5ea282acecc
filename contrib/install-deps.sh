#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Install what loom needs to build and test on Debian 12, from the machine's
# own apt sources.  Needs root; does nothing when everything is present.
# Usage: contrib/install-deps.sh [--rxe]
#   --rxe   only what the soft-RoCE guest needs (qemu, debootstrap, mkfs.ext4)
#   --plot  only what contrib/failover-plot.sh needs (gnuplot)
#   --ompi5 only what contrib/ompi5-build.sh needs to build Open MPI 5.0
set -eu

packages=(build-essential autoconf automake libtool pkg-config
          openmpi-bin libopenmpi-dev libucx-dev ucx-utils libhwloc-dev python3
          clang libfuzzer-14-dev gdb hpcc netpipe-openmpi scalapack-mpi-test)
case "${1:-}" in
    --rxe) packages=(qemu-system-x86 debootstrap e2fsprogs) ;;
    --plot) packages=(gnuplot-nox) ;;
    --ompi5) packages=(build-essential autoconf automake libtool flex perl
                       libhwloc-dev libevent-dev libucx-dev zlib1g-dev) ;;
esac

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all packages present"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages ${missing[*]}; run as root to install them" >&2
    exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
