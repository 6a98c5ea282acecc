#!/bin/sh
# Runs inside the rxe guest (started by the image's stub init, with the host's
# clone mounted at the same path and the run directory at /run/loom): brings up
# two soft-RoCE devices, rxe0 and rxe1, each on its own veth device and subnet,
# runs the command the host wrote to /run/loom/cmd, and leaves its exit status
# in /run/loom/rc.
run=/run/loom
echo "LOOM-GUEST: kernel $(uname -r), $(nproc) cpus"
ip link set lo up
# Rails must be on separate subnets, or the kernel routes all through one device.
ip link add veth0 type veth peer name veth1
ip addr add 10.88.1.1/24 dev veth0
ip addr add 10.88.2.1/24 dev veth1
ip link set veth0 up
ip link set veth1 up
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
