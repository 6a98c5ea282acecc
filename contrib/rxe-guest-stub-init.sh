#!/bin/sh
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# PID 1 of the rxe guest (baked into the image): mount the basics and the
# host's clone (9p tag "host0", at the path given as loom.dir= on the kernel
# command line, the same path as on the host so build trees work unchanged),
# then run the clone's contrib/rxe-guest-init.sh.  Powers off whatever happens.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
# (the initramfs may have moved some of these over already)
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmp /dev/shm
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
hostname loom-guest
dir=$(sed -n 's/.*loom\.dir=\([^ ]*\).*/\1/p' /proc/cmdline)
modprobe 9pnet_virtio && modprobe 9p
mkdir -p "$dir" /run/loom
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 host0 "$dir" &&
   mount -t 9p -o trans=virtio,version=9p2000.L run0 /run/loom; then
    sh "$dir/contrib/rxe-guest-init.sh"
else
    echo "LOOM-GUEST: cannot mount the host's clone at '$dir'"
fi
sync
echo 1 >/proc/sys/kernel/sysrq
echo o >/proc/sysrq-trigger
sleep 10
