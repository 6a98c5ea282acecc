#!/bin/bash
# Failover on the virtual cluster: 2 nodes, 2 rails shaped to 200 mbit.  A
# verified stream of 4 MiB messages runs from node0 to node1; 2 s into it
# rail1 goes down.  The run must complete with every byte verified, the longest
# stall must stay under 2 s, and the pvars must show chunks re-driven.  The
# per-rail samples are kept for contrib/failover-plot.sh.  Then a second
# transfer, of one 64 MiB message over rails slowed to 20 mbit, loses both
# rails: the job must fail with loom's error naming the peer and its rails,
# well before its time limit.  Skips (77) without root
# or namespaces.
set -u
src=${LOOM_SRCDIR:?run through make check}
bindir=${LOOM_TEST_BINDIR:?run through make check}
out=${LOOM_FAILOVER_OUT:-$bindir/failover.out}
. "$src/test/vcluster-test-lib.sh"
vcluster_test_up 2
"$src/contrib/vcluster-shape.sh" 200 200 || exit 1

# Messages keep to rail0 here: a message already handed to a TCP stream
# whose link dies is lost, and loom does not re-send messages yet.
stream() {
    timeout "$1" "$src/contrib/vcluster-exec.sh" node0 mpirun --allow-run-as-root -np 2 \
        --map-by node --hostfile /run/loom-vcluster/hostfile \
        --mca plm_rsh_agent "$src/contrib/vcluster-rsh.sh" --mca oob_tcp_if_include mgmt \
        -x OMPI_MCA_mca_base_component_path --mca pml ob1 --mca btl self,loom \
        --mca btl_loom_rails tcp:rail0,tcp:rail1 --mca btl_loom_am_rail 0 \
        "$bindir/test_failover" -t $2
}
# the stream has begun once rank 0 said so (start-up is slow under ASan)
wait_started() {
    local i
    for i in $(seq 1 600); do
        grep -q '^stream started' "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

stream 120 8 >"$out" 2>&1 &
job=$!
wait_started "$out"
sleep 2
ip -n node0 link set rail1 down
echo "down_epoch $(date +%s.%N)" >>"$out.down"
echo "rail1 of node0 went down 2 s into the stream"
wait $job
rc=$?
cat "$out.down" >>"$out" && rm -f "$out.down"
fail=0
grep -v '^sample' "$out" | tail -n 20
if [ $rc -ne 0 ] || ! grep -q '^PASS test_failover' "$out"; then
    echo "FAIL: the stream did not complete (exit $rc)"
    fail=1
fi
stall=$(awk '$1 == "stall" { print $2 }' "$out")
failovers=$(awk '$1 == "failovers" { print $2 }' "$out")
if ! awk -v s="${stall:-99}" 'BEGIN { exit !(s <= 2.0) }'; then
    echo "FAIL: the longest stall was ${stall:-unknown} s, over 2 s"
    fail=1
fi
if [ "${failovers:-0}" -eq 0 ]; then
    echo "FAIL: no chunk was re-driven (btl_loom_rail<N>_failovers stayed 0)"
    fail=1
fi
if [ "$(awk '$1 == "rails_out" { print $2 }' "$out")" != 1 ]; then
    echo "FAIL: btl_loom_rail<N>_failed_peers does not show exactly one rail out of use"
    fail=1
fi
[ $fail -eq 0 ] && echo "PASS failover: stall ${stall} s, ${failovers} chunks re-driven"

# Every rail dies: a clear error and a non-zero exit, not a hang.  One
# 64 MiB message over two 20 mbit rails takes some 14 s, so the rails die
# during the transfer, not while only a message (which loom cannot re-send
# yet) is on its way.
ip -n node0 link set rail1 up
"$src/contrib/vcluster-shape.sh" 20 20 || exit 1
start=$SECONDS
stream 90 "0 -s 67108864" >"$out.all" 2>&1 &
job=$!
wait_started "$out.all"
sleep 3
ip -n node0 link set rail0 down
ip -n node0 link set rail1 down
wait $job
rc=$?
took=$((SECONDS - start))
if [ $rc -eq 0 ] || [ $rc -eq 124 ] || ! grep -q 'every rail to peer .* failed' "$out.all"; then
    echo "FAIL: with every rail down the job did not fail with loom's error (exit $rc, ${took} s):"
    grep -v '^sample' "$out.all" | tail -n 10 | sed 's/^/    | /'
    fail=1
else
    echo "PASS every rail down: exit $rc after ${took} s: $(grep -m1 -o 'every rail to peer .*' "$out.all")"
fi
exit $fail
