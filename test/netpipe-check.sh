#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# NetPIPE's integrity check (Debian's netpipe-openmpi, a program nobody
# here wrote) through loom: 2 ranks send each other sizes from 5 B to 6 MiB
# (each power of two and one and a half times it, plus a byte), many times
# each, and check every byte received: eager sends, ob1's rendezvous and
# loom's RDMA.  Once as it comes, then with buffers off alignment (-O 1,3),
# with preposted receives from MPI_ANY_SOURCE (-a -z), with synchronous
# sends (-S), and with eager rings on.  (NetPIPE's -2 sends both ways with blocking sends,
# which hangs through btl tcp too, and fails its own check with -a;
# NPopenmpi2 passes an invalid info object to MPI_Win_create.  Neither is
# run.)  Run by `make check`, which sets the component path; skips without
# NetPIPE (contrib/install-deps.sh installs it).
set -u
src=${LOOM_SRCDIR:?run through make check}
. "$src/test/lib/mpi-stacks-lib.sh"
if ! command -v NPopenmpi >/dev/null; then
    echo "SKIP: NetPIPE (NPopenmpi) is not installed (contrib/install-deps.sh installs it)"
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/loom-netpipe.XXXXXX")
read -r -a run_args <<<"$(mpi_run_args)"
read -r -a loom_args <<<"$(mpi_stack_args loom)"
# the largest size NetPIPE tries below -u 8388608
top=6291457

status=0
n=0
while read -r label args; do
    n=$((n + 1))
    log=$work/$n.log
    start=$SECONDS
    # shellcheck disable=SC2086 # the options are words
    timeout -k 10 300 mpirun "${run_args[@]}" -np 2 "${loom_args[@]}" $args -o "$work/$n.out" \
        </dev/null >"$log" 2>&1
    rc=$?
    tried=$(grep -c ' bytes .* times -->' "$log")
    passed=$(grep -c 'Integrity check passed' "$log")
    largest=$(sed -n 's/^ *[0-9]*: *\([0-9]*\) bytes .*Integrity check passed.*/\1/p' "$log" | tail -n 1)
    if [ $rc -eq 0 ] && [ "$passed" -eq "$tried" ] && [ "${largest:-0}" -eq "$top" ]; then
        echo "PASS netpipe $label: $passed sizes up to $largest B checked, $((SECONDS - start)) s"
    else
        echo "FAIL netpipe $label: exit $rc, $passed of $tried sizes passed, the largest" \
             "${largest:-none} B (of $top), log $log"
        grep -v '^ *$' "$log" | tail -n 15 | sed 's/^/    | /'
        status=1
    fi
done <<EOF
plain NPopenmpi -i -u 8388608
unaligned NPopenmpi -i -u 8388608 -O 1,3
preposted-any-source NPopenmpi -i -u 8388608 -a -z
synchronous NPopenmpi -i -u 8388608 -S
eager-rings --mca btl_loom_eager_rdma on NPopenmpi -i -u 8388608
EOF
if [ $status -eq 0 ]; then
    echo "PASS netpipe-check: every size NetPIPE sent through loom arrived intact, in 5 modes"
    rm -rf "$work"
fi
exit $status
