#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# A peer that computes is not a dead network: on 2 nodes, rank 0 of
# test_busy_peer computes without MPI calls in the middle of large transfers
# over 2 and then 3 tcp rails: 21 and 16 s, over 2 and 1.6 times the
# keepalive limit (btl_loom_tcp_keepalive, set to 10 s here, half its
# default, for the test command's time: what counts is the ratio); under
# AddressSanitizer, which runs everything again, 13 s on 2 rails only.  Every byte must arrive and no rail may be taken out
# of use.  Skips (77) without root or namespaces.
set -u
src=${LOOM_SRCDIR:?run through make check}
bindir=${LOOM_TEST_BINDIR:?run through make check}
. "$src/test/vcluster-test-lib.sh"
vcluster_test_up 3
fail=0
all_rails="tcp:rail0,tcp:rail1 tcp:rail0,tcp:rail1,tcp:rail2"
[ -n "${LOOM_ASAN_LOGS:-}" ] && all_rails=tcp:rail0,tcp:rail1
for rails in $all_rails; do
    seconds=21
    [[ $rails == *rail2 ]] && seconds=16
    [ -n "${LOOM_ASAN_LOGS:-}" ] && seconds=13
    start=$SECONDS
    out=$(vcluster_mpirun $((seconds + 240)) --mca btl_loom_rails $rails \
          --mca btl_loom_tcp_keepalive 10 \
          "$bindir/test_busy_peer" -t $seconds 2>&1)
    rc=$?
    if [ $rc -eq 0 ] && grep -q '^PASS test_busy_peer' <<<"$out"; then
        echo "PASS test_busy_peer (rank 0 computed $seconds s, rails $rails, $((SECONDS - start)) s)"
    else
        echo "FAIL test_busy_peer (rank 0 computing $seconds s, rails $rails, exit $rc):"
        tail -n 20 <<<"$out" | sed 's/^/    | /'
        fail=1
    fi
done
exit $fail
