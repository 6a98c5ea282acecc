#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Inside the rxe guest (test/rxe-guest-suite.sh): rc_verbs rails that fail and
# come back.  A verified stream of mixed sizes (eager through the rings,
# single RDMA, striped) runs from rank 0 to rank 1 over rc_verbs:rxe0:1 and
# rc_verbs:rxe1:1 while the ports go down and up in turn, each for 5 s:
# rail1, rail0, rail1, rail0 (ip link set vethN down: the soft-RoCE port goes
# DOWN, its queue pairs fail).  The stream must complete with every byte
# verified and in order (nothing lost, nothing twice), every rail must come
# back (rejoins counted on both ranks for every flap), both rails must carry
# data and the eager rings messages in the last seconds, and no rail may be
# left out of use.  The stall is printed, not judged: the NICs are emulated.
# Silence must not fail a rail here (btl_loom_rail_timeout 5 s, longer than
# a port stays down): what fails it is what the NIC reports, the queue pairs'
# errors, and the port's state is what tells that it is back.  Ring requests
# wait up to 10 s for their acknowledgement (btl_loom_eager_ack_timeout, as
# in the guest's ring memory check): the emulated guest, with the host busy,
# can take over the default 1 s, and a request that timed out waits ten
# times that before the next, past the stream's end (seen in the test
# command: no ring message in the last 2 s).
set -u
src=${LOOM_SRCDIR:?run through test/rxe-guest-suite.sh}
bindir=${LOOM_TEST_BINDIR:?run through test/rxe-guest-suite.sh}
if [ -z "${LOOM_IN_GUEST:-}" ]; then
    echo "rxe-failover-check: runs inside the guest only (contrib/rxe-guest-run.sh)" >&2
    exit 2
fi
out=${LOOM_RXE_FAILOVER_OUT:-/tmp/loom-rxe-failover.out}
seconds=48
flaps="1 0 1 0" # the rail whose port goes down, in turn
down_for=5
root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)

timeout -k 10 300 mpirun "${root[@]}" -np 2 --bind-to none --mca oob_tcp_if_include lo \
    --mca btl_tcp_if_include lo --mca pml ob1 --mca btl self,loom \
    --mca btl_loom_rails rc_verbs:rxe0:1,rc_verbs:rxe1:1 --mca btl_loom_am_rail 1 \
    --mca btl_loom_rail_rejoin 2000 --mca btl_loom_rail_timeout 5000 \
    --mca btl_loom_eager_ack_timeout 10000 \
    "$bindir/test_failover" -t $seconds -m >"$out" 2>&1 &
job=$!
for i in $(seq 1 1200); do
    grep -q '^stream started' "$out" 2>/dev/null && break
    sleep 0.1
done
sleep 4
for rail in $flaps; do
    ip link set "veth$rail" down
    echo "rail$rail (veth$rail) down at $SECONDS s: $(rdma link show rxe$rail/1 | grep -o 'state [A-Z]*')"
    sleep $down_for
    ip link set "veth$rail" up
    echo "rail$rail (veth$rail) up at $SECONDS s"
    sleep 4
done
wait $job
rc=$?
grep -v '^sample' "$out" | tail -n 25
fail=0
value() { awk -v k="$1" '$1 == k { print $2 }' "$out"; }
rejoins=$(value rejoins)
late0=$(awk '$1 == "late" { print $2 }' "$out")
late1=$(awk '$1 == "late" { print $3 }' "$out")
flap_count=$(echo $flaps | wc -w)
if [ $rc -ne 0 ] || ! grep -q '^PASS test_failover' "$out"; then
    echo "FAIL: the stream did not complete, verified (exit $rc)"
    fail=1
fi
if [ "${rejoins:-0}" -lt $((2 * flap_count)) ]; then
    echo "FAIL: ${rejoins:-0} rejoins on both ranks for $flap_count flaps (want $((2 * flap_count)))"
    fail=1
fi
if [ "${late0:-0}" -eq 0 ] || [ "${late1:-0}" -eq 0 ]; then
    echo "FAIL: a rail carried nothing in the last 2 s (rail0 ${late0:-0} B, rail1 ${late1:-0} B)"
    fail=1
fi
if [ "$(value late_ring)" = 0 ] || [ -z "$(value late_ring)" ]; then
    echo "FAIL: no message went through an eager ring in the last 2 s (rings did not come back)"
    fail=1
fi
if [ "$(value rails_out)" != 0 ]; then
    echo "FAIL: a rail is still out of use at the end (rails_out $(value rails_out))"
    fail=1
fi
[ $fail -eq 0 ] && echo "PASS rxe failover: $flap_count flaps (rails $flaps, ${down_for} s each)," \
    "$(value messages) messages verified, stall $(value stall) s, $(value failovers) chunks" \
    "re-driven, $(value resent) messages sent again, $rejoins rejoins, last 2 s: rail0" \
    "$late0 B, rail1 $late1 B, $(value late_ring) ring messages"
exit $fail
