#!/bin/sh
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Runs inside the rxe guest (started by the image's stub init, with the host's
# clone mounted at the same path and the run directory at /run/loom): brings up
# two soft-RoCE devices, rxe0 and rxe1, each on its own veth device and subnet,
# runs the command the host wrote to /run/loom/cmd, and leaves its exit status
# in /run/loom/rc.
run=/run/loom
echo "LOOM-GUEST: kernel $(uname -r), $(nproc) cpus"
ip link set lo up
# Rails must be on separate subnets, or the kernel routes all through one
# device.  Each rail's device is one end of a veth pair of its own, so that a
# test can take one rail's port down (ip link set veth0 down) and leave the
# other's up; the guest's processes reach each other through one device.
for i in 0 1; do
    ip link add veth$i type veth peer name veth${i}p
    ip addr add 10.88.$((i + 1)).1/24 dev veth$i
    ip link set veth${i}p up
    ip link set veth$i up
done
if ! modprobe rdma_rxe; then
    echo "LOOM-GUEST: modprobe rdma_rxe failed"
    echo 1 >"$run/rc"
    exit 1
fi
rdma link add rxe0 type rxe netdev veth0
rdma link add rxe1 type rxe netdev veth1
# Wait until both ports are active.
i=0
while [ $i -lt 50 ]; do
    n=$(ibv_devinfo 2>/dev/null | grep -c PORT_ACTIVE)
    [ "$n" -ge 2 ] && break
    sleep 0.2
    i=$((i + 1))
done
rdma link show
ulimit -l unlimited
# UCX's UD transport drops soft-RoCE packets unless this check is off
# (pml ucx needs it; loom sets it for its own wireup interface itself).
export UCX_UD_ETH_DGID_CHECK=n
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LOOM_IN_GUEST=1
cd "$(cat "$run/cwd")" || exit 1
LOOM_GUEST_BUDGET=$(cat "$run/timeout") timeout "$(cat "$run/timeout")" bash "$run/cmd"
rc=$?
echo "$rc" >"$run/rc"
echo "LOOM-GUEST-RESULT: exit status $rc"
