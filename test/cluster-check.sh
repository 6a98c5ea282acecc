#!/bin/bash
# loom between two virtual nodes (network namespaces) over two TCP rails on
# separate subnets: the MPI correctness programs, data verified, with the
# runtime on the mgmt device, and some of them again with messages spread
# over both rails in turn.  Skips (77) without root or namespaces.
set -u
src=${LOOM_SRCDIR:?run through make check}
bindir=${LOOM_TEST_BINDIR:?run through make check}
. "$src/test/vcluster-test-lib.sh"
vcluster_test_up 2
fail=0
# $1: test, then extra mpirun arguments
run() {
    local t=$1 out rc
    shift
    out=$(timeout 300 "$src/contrib/vcluster-exec.sh" node0 mpirun --allow-run-as-root -np 2 \
          --map-by node --hostfile /run/loom-vcluster/hostfile \
          --mca plm_rsh_agent "$src/contrib/vcluster-rsh.sh" --mca oob_tcp_if_include mgmt \
          --mca pml ob1 --mca btl self,loom --mca btl_loom_rails tcp:rail0,tcp:rail1 "$@" \
          "$bindir/$t" 2>&1)
    rc=$?
    if [ $rc -eq 0 ] && grep -q "^PASS $t" <<<"$out"; then
        echo "PASS $t (2 nodes, rails tcp:rail0,tcp:rail1${*:+, $*})"
    else
        echo "FAIL $t (exit $rc${*:+, $*}):"
        tail -n 20 <<<"$out" | sed 's/^/    | /'
        fail=1
    fi
}
for t in test_sizes test_many_outstanding test_any_source test_alltoall test_pvars test_stripe \
         test_p2p_modes test_collectives test_threads; do
    run $t
done
# every message on the next rail: the receiver puts them back in order
for t in test_sizes test_many_outstanding test_any_source test_threads; do
    run $t --mca btl_loom_am_policy round_robin
done
exit $fail
