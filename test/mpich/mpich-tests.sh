#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# The MPICH test suite (test/mpi of Debian's mpich source package: a suite
# that nobody here wrote) built against the installed Open MPI and run
# through loom, or through another stack to compare with.
#
# Usage: test/mpich/mpich-tests.sh [options] [DIR ...]
#   --stack S         loom (default): pml ob1, btl self,loom on tcp:lo, osc
#                     pt2pt; loom-rdma: the same with loom's atomics, under
#                     osc rdma; tcp: pml ob1, btl self,tcp, osc pt2pt; ucx:
#                     pml ucx and osc ucx over UCX's tcp
#   --set ci|all      ci (default): each DIR's entries up to --max-np ranks;
#                     all: every entry, whatever its rank count
#   --max-np N        largest rank count the ci set runs (default 4)
#   --expected        run only the entries of test/mpich/expected-failures
#                     (to see that they fail under btl tcp as well)
#   --results DIR     where the TAP files and logs go (default: a new
#                     directory under /tmp)
#   --prepare         fetch and build the suite's DIRs, run nothing
#   DIR               suite directories (default: those listed below)
#
# Environment:
#   LOOM_MPICH_DIR      where the suite is fetched and built, once
#                       (default /var/cache/loom-mpich)
#   LOOM_MPICH_TIMEOUT  seconds per test (default 180)
#   LOOM_MPI_ARGS       more mpirun arguments, e.g. --mca btl_loom_connect_to_ep 1
#
# Entries in test/mpich/expected-failures fail the same way through
# pml ob1 with btl tcp (Open MPI 4.1.4's behaviour or the suite's MPICH
# assumptions, each line says which) and are not run, except with
# --expected; test/mpich/expected-failures.STACK adds those of one stack.  Programs that do not build (MPI-4 functions Open MPI 4.1
# lacks) are counted and named, not run.  MPICH's own tuning variables
# (env=MPIR_CVAR_...) mean nothing to Open MPI: an entry that differs from
# another only in them runs once.  Every run stays on loopback.
#
# Exit: 0 when every entry run passed, 1 when one failed, 77 when the suite
# cannot be fetched or built here.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
stack=loom
set_name=ci
max_np=4
expected_only=0
prepare_only=0
results=
dirs=()
# $1 the option, $2 how many words are left: its value must follow
need_value() {
    [ "$2" -ge 2 ] || { echo "mpich-tests: $1 needs a value (see --help)" >&2; exit 2; }
}
while [ $# -gt 0 ]; do
    case "$1" in
        --stack|--set|--max-np|--results) need_value "$1" $# ;;
    esac
    case "$1" in
        --stack) stack=$2; shift ;;
        --set) set_name=$2; shift ;;
        --max-np) max_np=$2; shift ;;
        --expected) expected_only=1 ;;
        --prepare) prepare_only=1 ;;
        --results) results=$2; shift ;;
        -h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "mpich-tests: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) dirs+=("$1") ;;
    esac
    shift
done
case "$stack" in loom|loom-rdma|tcp|ucx) ;; *) echo "mpich-tests: --stack must be loom, loom-rdma, tcp or ucx, not '$stack'" >&2; exit 2 ;; esac
case "$set_name" in ci|all) ;; *) echo "mpich-tests: --set must be ci or all, not '$set_name'" >&2; exit 2 ;; esac
[[ "$max_np" =~ ^[1-9][0-9]*$ ]] || { echo "mpich-tests: --max-np must be a positive number, not '$max_np'" >&2; exit 2; }
[ ${#dirs[@]} -gt 0 ] || dirs=(pt2pt coll datatype comm group attr topo info init errhan mpi_t rma)
rank_limit="over $max_np ranks"
[ "$set_name" = all ] && max_np=0 rank_limit="over the rank limit (none)"
workdir=${LOOM_MPICH_DIR:-/var/cache/loom-mpich}
timeout_s=${LOOM_MPICH_TIMEOUT:-180}
[[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] ||
    { echo "mpich-tests: LOOM_MPICH_TIMEOUT must be a positive number of seconds, not '$timeout_s'" >&2; exit 2; }

. "$src/test/lib/mpi-stacks-lib.sh"
. "$src/test/mpich/mpich-suite-lib.sh"

suite=$(mpich_suite_ready "$workdir" "${dirs[@]}") || exit 77
[ "$prepare_only" = 1 ] && { echo "mpich-tests: suite ready in $suite"; exit 0; }
results=${results:-$(mktemp -d "${TMPDIR:-/tmp}/loom-mpich.XXXXXX")}
mkdir -p "$results"
expected_file=$results/expected-failures
cat "$src/test/mpich/expected-failures" >"$expected_file"
[ -f "$src/test/mpich/expected-failures.$stack" ] &&
    cat "$src/test/mpich/expected-failures.$stack" >>"$expected_file"

# The mpiexec that runtests calls as `mpiexec -n N ./program args`.
mpiexec=$results/mpiexec-$stack
{
    echo '#!/bin/bash'
    printf 'exec mpirun %s %s %s "$@"\n' "$(mpi_run_args)" "$(mpi_stack_args "$stack")" \
        "${LOOM_MPI_ARGS:-}"
} >"$mpiexec"
chmod +x "$mpiexec"
echo "mpich-tests: suite in $suite, results in $results"
echo "mpich-tests: $(sed -n 2p "$mpiexec")"

total_pass=0 total_fail=0 total_expected=0 total_unbuilt=0 total_over=0
for dir in "${dirs[@]}"; do
    [ -f "$suite/$dir/testlist" ] || { echo "mpich-tests: no directory $dir in the suite" >&2; exit 2; }
    list=$results/$dir.testlist
    mpich_select "$suite/$dir" "$dir" "$expected_file" "$max_np" "$expected_only" >"$list" 2>"$results/$dir.left-out"
    unbuilt=$(grep -c '^not built' "$results/$dir.left-out")
    expected=$(grep -c '^expected' "$results/$dir.left-out")
    over=$(grep -c '^over' "$results/$dir.left-out")
    total_unbuilt=$((total_unbuilt + unbuilt)) total_expected=$((total_expected + expected))
    total_over=$((total_over + over))
    if [ ! -s "$list" ]; then
        echo "=== $dir: nothing to run"
        continue
    fi
    start=$SECONDS
    (cd "$suite/$dir" &&
     MPITEST_TIMEOUT=$timeout_s ../runtests -srcdir=. -tests="$list" -mpiexec="$mpiexec" \
         -tapfile="$results/$dir.tap" >"$results/$dir.out" 2>&1)
    if [ ! -f "$results/$dir.tap" ]; then
        echo "FAIL $dir: the suite's runtests wrote no results (its output: $results/$dir.out)"
        total_fail=$((total_fail + 1))
        continue
    fi
    pass=$(grep -c '^ok ' "$results/$dir.tap")
    fail=$(grep -c '^not ok ' "$results/$dir.tap")
    total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail))
    echo "=== $dir: $pass passed, $fail failed ($((SECONDS - start)) s; left out: $expected expected failures, $unbuilt not built, $over $rank_limit)"
    grep '^not ok ' "$results/$dir.tap" | sed "s| *# time=.*||; s|^not ok  - ./|FAIL $dir/|"
done

echo "mpich-tests ($stack): $total_pass passed, $total_fail failed;" \
     "left out $total_expected expected failures, $total_unbuilt not built," \
     "$total_over $rank_limit; TAP and output in $results"
if [ "$expected_only" = 1 ]; then
    exit 0
fi
[ "$total_fail" -eq 0 ]
