#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Failover on the virtual cluster: 2 nodes, 2 rails shaped to 200 mbit.  A
# verified stream of 4 MiB messages runs from node0 to node1 for 16 s, with
# messages on rail1 (btl_loom_am_rail 1); 2 s into it rail1 of node0 goes
# down, and 6 s later it comes back (the kernel's default TCP settings: its
# old connections still hold data, which must not land).  The run must complete with every byte verified, the longest
# stall must stay under 2 s, the pvars must show chunks re-driven or
# messages sent again, and the rail must come back into use: rejoins
# counted, and bytes carried by rail1 in the last 2 s.  The per-rail samples
# are kept for contrib/failover-plot.sh.  The same again with sizes from 1 B
# to 4 MiB and rail0, which carries the messages, failing; the first again
# with the rails connected endpoint to endpoint (as rc_verbs is); and a
# stream of coll loom's broadcasts (striped pushes) losing rail1.  Then a second transfer, of one
# 64 MiB message over rails slowed to 20 mbit, loses both rails: the job
# must fail with loom's error naming the peer and its rails, well before its
# time limit.  Skips (77) without root or namespaces.
set -u
src=${LOOM_SRCDIR:?run through make check}
bindir=${LOOM_TEST_BINDIR:?run through make check}
out=${LOOM_FAILOVER_OUT:-$bindir/failover.out}
. "$src/test/vcluster-test-lib.sh"
vcluster_test_up 2
"$src/contrib/vcluster-shape.sh" 200 200 || exit 1

# $1: time limit, $2: test_failover's arguments, $3: the rail for messages,
# then more mpirun arguments
stream() {
    local limit=$1 args=$2 am_rail=$3
    shift 3
    vcluster_mpirun "$limit" --mca btl_loom_rails tcp:rail0,tcp:rail1 --mca btl_loom_am_rail $am_rail \
        "$@" "$bindir/test_failover" -t $args
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

# A rail of node0 goes down 2 s into a stream and comes back 6 s later (the
# kernel's TCP settings: its old connections may still deliver what they had
# queued, which loom must refuse): the stream must complete, verified,
# stall under 2 s, re-drive or re-send, and use the rail again.
# $1: output file, $2: the rail, $3: test_failover's arguments, $4: message
# rail, then more mpirun arguments
flap() {
    local out=$1 rail=$2 args=$3 am_rail=$4 job rc stall failovers resent rejoins late ok=0
    shift 4
    stream 120 "$args" "$am_rail" "$@" >"$out" 2>&1 &
    job=$!
    wait_started "$out"
    sleep 2
    ip -n node0 link set "$rail" down
    echo "down_epoch $(date +%s.%N)" >>"$out.down"
    echo "$rail of node0 went down 2 s into the stream (test_failover -t $args, messages on rail $am_rail${*:+, $*})"
    sleep 6
    ip -n node0 link set "$rail" up
    echo "up_epoch $(date +%s.%N)" >>"$out.down"
    echo "$rail of node0 came back 6 s later"
    wait $job
    rc=$?
    cat "$out.down" >>"$out" && rm -f "$out.down"
    grep -v '^sample' "$out" | tail -n 20
    if [ $rc -ne 0 ] || ! grep -q '^PASS test_failover' "$out"; then
        echo "FAIL: the stream did not complete (exit $rc)"
        ok=1
    fi
    stall=$(awk '$1 == "stall" { print $2 }' "$out")
    failovers=$(awk '$1 == "failovers" { print $2 }' "$out")
    resent=$(awk '$1 == "resent" { print $2 }' "$out")
    rejoins=$(awk '$1 == "rejoins" { print $2 }' "$out")
    late=$(awk -v c=$((${rail#rail} + 2)) '$1 == "late" { print $c }' "$out")
    if ! awk -v s="${stall:-99}" 'BEGIN { exit !(s <= 2.0) }'; then
        echo "FAIL: the longest stall was ${stall:-unknown} s, over 2 s"
        ok=1
    fi
    if [ "${failovers:-0}" -eq 0 ] && [ "${resent:-0}" -eq 0 ]; then
        echo "FAIL: nothing was re-driven or sent again (btl_loom_rail<N>_failovers and _resent stayed 0)"
        ok=1
    fi
    if [ "${rejoins:-0}" -eq 0 ] || [ "${late:-0}" -eq 0 ]; then
        echo "FAIL: $rail did not come back into use (rejoins ${rejoins:-0}, bytes in the last 2 s ${late:-0})"
        ok=1
    fi
    if [ "$(awk '$1 == "rails_out" { print $2 }' "$out")" != 0 ]; then
        echo "FAIL: btl_loom_rail<N>_failed_peers shows a rail still out of use at the end"
        ok=1
    fi
    [ $ok -eq 0 ] && echo "PASS failover ($rail, test_failover -t $args${*:+, $*}): stall ${stall} s," \
        "${failovers} chunks re-driven, ${resent} messages sent again, rail back (${rejoins}" \
        "rejoins, ${late} B in the last 2 s)"
    return $ok
}

# Broadcasts of coll loom, the root turning: each is a push served striped
# over both rails.  rail1 of node0 goes down 2 s into the stream and comes
# back 4 s later: every broadcast verified, pushes asked for, rail1 taken
# out of use, chunks re-driven (the pushes' chunks: nothing else is striped
# here).  Messages stay on rail0: were one on rail1 as it went, every rank
# would wait for that one message, no chunk would be on the rail, and it
# would be sent again instead (seen once under load in CI).  Segments of
# 256 KiB, each push cut into chunks over both rails: a push below the
# stripe threshold goes whole on the rail expected to finish it first.
# Whether a chunk is on rail1 when loom reads its link down is still
# chance: the link is read whenever anything is owed, a message on rail0
# too, and between two pushes rail1 carries nothing (under ASan one stream
# in four had no chunk on it).  So a stream that passed every other check
# without a re-drive runs again, three streams at most.  $1: output file;
# returns 0 (passed, chunks re-driven), 2 (passed, none on the rail), 1
bcast_flap_once() {
    local out=$1 job rc failovers resent pushes
    vcluster_mpirun 120 --mca btl_loom_rails tcp:rail0,tcp:rail1 \
        --mca btl_loom_am_rail 0 --mca coll loom,tuned,basic,libnbc,self \
        --mca coll_loom_bcast_min_procs 2 --mca coll_loom_bcast_min 65536 --mca coll_loom_select 0 \
        --mca coll_loom_bcast_segment 262144 \
        "$bindir/test_bcast_failover" -t 10 >"$out" 2>&1 &
    job=$!
    wait_started "$out"
    sleep 2
    ip -n node0 link set rail1 down
    sleep 4
    ip -n node0 link set rail1 up
    wait $job
    rc=$?
    tail -n 8 "$out"
    failovers=$(awk '$1 == "failovers" { print $2 }' "$out")
    resent=$(awk '$1 == "resent" { print $2 }' "$out")
    pushes=$(awk '$1 == "pushes" { print $2 }' "$out")
    if [ $rc -ne 0 ] || ! grep -q '^PASS test_bcast_failover' "$out"; then
        echo "FAIL: the broadcast stream did not complete (exit $rc)"
        return 1
    elif [ "${pushes:-0}" -eq 0 ]; then
        echo "FAIL: no broadcast went by pushes (coll loom not selected?)"
        return 1
    elif ! grep -q 'rail tcp:rail1 to peer .*\(the link is down\|failed\)' "$out"; then
        echo "FAIL: loom did not take rail1 out of use while it was down"
        return 1
    elif [ "${failovers:-0}" -eq 0 ]; then
        echo "rail1 left use with no chunk of a push on it: the stream runs again"
        return 2
    fi
    echo "PASS broadcast failover (rail1, test_bcast_failover -t 10):" \
        "${failovers} chunks re-driven, ${resent} messages sent again, ${pushes} pushes"
    return 0
}

bcast_flap() {
    local attempt rc
    for attempt in 1 2 3; do
        bcast_flap_once "$1.$attempt"
        rc=$?
        [ $rc -ne 2 ] && return $rc
    done
    echo "FAIL: no chunk of a striped push was re-driven in 3 streams losing rail1"
    return 1
}

fail=0
flap "$out" rail1 16 1 || fail=1
# sizes from 1 B to 4 MiB (eager, single RDMA, striped), messages on the rail that dies
flap "$out.mixed" rail0 "14 -m" 0 || fail=1
# rails connected endpoint to endpoint (the model of rc_verbs) come back by
# exchanging fresh endpoint addresses
flap "$out.ep" rail1 16 1 --mca btl_loom_connect_to_ep 1 || fail=1
bcast_flap "$out.bcast" || fail=1

# Every rail dies: a clear error and a non-zero exit, not a hang.  One
# 64 MiB message over two 20 mbit rails takes some 14 s, so the rails die
# during the transfer (see docs/user/failover.md: every rail dying while nothing is owed to
# the peer is not detected).
"$src/contrib/vcluster-shape.sh" 20 20 || exit 1
# With data unacknowledged on every rail the only signal is the sender
# kernel's retransmission give-up: about 15 minutes by default, 3 s after
# 3 retransmissions (docs/user/failover.md, Not handled yet: how to make it sooner).
for node in node0 node1; do
    ip netns exec $node sysctl -q -w net.ipv4.tcp_retries2=3
done
start=$SECONDS
stream 90 "0 -s 67108864" -1 >"$out.all" 2>&1 &
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
