#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
#
# Finalize on several rails is quiet: MPI programs on two tcp rails on lo
# (btl_loom_rails_repeat lets lo carry both), messages round robin, must
# pass and print nothing on stderr with "failed" or "error" in it (issue 10,
# item 12: "rail ... failed: Endpoint timeout" after the output, while peers
# finalize).  Environment as run-mpi-tests.sh (LOOM_MPIRUN, LOOM_TEST_BINDIR,
# LOOM_TEST_LOGDIR, LOOM_TEST_TIMEOUT).

set -eu

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
read -r -a mpirun <<< "${LOOM_MPIRUN:-mpirun}"
bindir=${LOOM_TEST_BINDIR:-$script_dir}
logdir=${LOOM_TEST_LOGDIR:-$(mktemp -d "${TMPDIR:-/tmp}/loom-close-check.XXXXXX")}
run_timeout=${LOOM_TEST_TIMEOUT:-300}

args=(--oversubscribe --mca oob_tcp_if_include lo --mca btl_tcp_if_include lo
      --mca pml ob1 --mca btl self,loom --mca btl_loom_rails tcp:lo,tcp:lo
      --mca btl_loom_rails_repeat 1 --mca btl_loom_am_policy round_robin)
if [ "$(id -u)" -eq 0 ]; then
    args=(--allow-run-as-root "${args[@]}")
fi

mkdir -p "$logdir"
failed=0
for name in test_collectives test_p2p_modes; do
    out="$logdir/$name.close.out" err="$logdir/$name.close.err" rc=0
    timeout -k 10 "$run_timeout" "${mpirun[@]}" "${args[@]}" -np 4 "$bindir/$name" \
        > "$out" 2> "$err" || rc=$?
    if [ "$rc" -ne 0 ] || ! grep -q "^PASS $name\$" "$out"; then
        echo "FAIL $name (2 rails, round robin, np=4): exit code $rc, logs $out $err"
        failed=1
    elif grep -qiE "failed|error" "$err"; then
        echo "FAIL $name (2 rails, round robin, np=4): stderr says:"
        grep -iE "failed|error" "$err" | head -n 5 | sed 's/^/    | /'
        failed=1
    else
        echo "PASS $name (2 rails, round robin, np=4): nothing on stderr"
    fi
done
exit $failed
