#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Build (once) a Debian 12 guest that can run soft-RoCE (rdma_rxe), for
# running loom over real rc_verbs where the host kernel has no InfiniBand.
# The result lives outside the clone, in $LOOM_GUEST_CACHE (default
# /var/cache/loom-guest/<key>), and is reused while this script, the guest
# stub init and the package list stay the same.
#
# Usage: contrib/rxe-guest-build.sh      prints the cache directory on stdout
# Exit 77 (skip) when not root or when debootstrap/qemu are missing and cannot
# be installed; anything else non-zero is a real failure.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
. "$src/contrib/rxe-guest-lib.sh"

guest_need_root_and_tools || exit 77

cache=$(guest_cache_dir)
mkdir -p "$(dirname "$cache")"
# One build at a time; a second caller waits and then finds the image ready.
exec 9>"$cache.lock"
flock 9
if [ -f "$cache/ready" ]; then
    echo "$cache"
    exit 0
fi

mirror=$(guest_apt_mirror) || {
    echo "rxe-guest-build: no bookworm 'main' source in this machine's apt configuration" >&2
    exit 1
}
work="$cache.tmp"
rm -rf "$work"
mkdir -p "$work"
root="$work/root"

# automake must be named: libltdl-dev's virtual dependency defeats
# debootstrap's resolver otherwise.
packages=linux-image-amd64,initramfs-tools,kmod,iproute2,procps,openmpi-bin,libopenmpi-dev,automake
packages+=,libucx0,ucx-utils,rdma-core,ibverbs-providers,ibverbs-utils,perftest,gdb-minimal
echo "rxe-guest-build: debootstrap bookworm from $mirror into $root (a few minutes)" >&2
if ! debootstrap --variant=minbase --include="$packages" bookworm "$root" "$mirror" \
        >"$work/debootstrap.log" 2>&1; then
    tail -n 30 "$work/debootstrap.log" >&2
    echo "rxe-guest-build: debootstrap failed (log: $work/debootstrap.log)" >&2
    exit 1
fi

# A small initrd: the guest only needs its virtio disk and ext4 to find root.
cat >"$root/etc/initramfs-tools/conf.d/loom" <<'EOF'
MODULES=list
COMPRESS=gzip
EOF
printf '%s\n' virtio_pci virtio_blk ext4 >"$root/etc/initramfs-tools/modules"
chroot "$root" update-initramfs -u -k all >"$work/initramfs.log" 2>&1 || {
    cat "$work/initramfs.log" >&2
    exit 1
}
cp "$root"/boot/vmlinuz-* "$work/vmlinuz"
cp "$root"/boot/initrd.img-* "$work/initrd.img"

# The stub init: mounts the basics and the host's clone, then hands over to
# the clone's own guest init, so changing that script needs no rebuild.
install -m 0755 "$src/contrib/rxe-guest-stub-init.sh" "$root/sbin/loom-init"
echo loom-guest >"$root/etc/hostname"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/boot/*

size_mb=$(( $(du -sm "$root" | cut -f1) + 512 ))
mkfs.ext4 -q -L loomroot -d "$root" "$work/root.img" "${size_mb}M" >&2
rm -rf "$root"
touch "$work/ready"
rm -rf "$cache"
mv "$work" "$cache"
echo "rxe-guest-build: guest ready in $cache" >&2
echo "$cache"
