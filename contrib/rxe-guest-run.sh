#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Boot the rxe guest (building it first if needed) and run one command in it,
# from the current directory, with this clone mounted at the same path.  The
# guest has soft-RoCE devices rxe0 (10.88.1.1) and rxe1 (10.88.2.1) and no
# network card: nothing leaves it.  Prints the command's output and exits with
# its status; 77 when the guest cannot run here (not root, no qemu).
#
# Usage: contrib/rxe-guest-run.sh [-t seconds] command [args...]
#   -t  time limit for the command inside the guest (default 1200)
# Environment: LOOM_GUEST_ACCEL=kvm|tcg, LOOM_GUEST_MEM (MiB, default 4096),
#              LOOM_GUEST_CACHE (default /var/cache/loom-guest)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
. "$src/contrib/rxe-guest-lib.sh"

limit=1200
if [ "${1:-}" = "-t" ]; then
    limit=$2
    shift 2
fi
[ $# -gt 0 ] || { echo "usage: $0 [-t seconds] command [args...]" >&2; exit 2; }
case "$PWD/" in
    "$src"/*) ;;
    *) echo "rxe-guest-run: run it from inside the clone ($src): only that is shared" >&2; exit 2 ;;
esac

set +e -o pipefail
cache=$("$src/contrib/rxe-guest-build.sh" | tail -n 1)
rc=$?
set -e
[ $rc -eq 0 ] || exit $rc
# images of earlier versions of the build scripts are not needed any more
for old in "$(dirname "$cache")"/*/ready; do
    old=${old%/ready}
    [ "$old" = "$cache" ] || rm -rf "$old" "$old.lock"
done

run=$(mktemp -d /tmp/loom-guest.XXXXXX)
trap 'rm -rf "$run"' EXIT
# loom's and Open MPI's settings travel with the command
while IFS= read -r var; do
    printf 'export %s=%q\n' "$var" "${!var}"
done < <(compgen -e | grep -E '^(LOOM|OMPI_MCA|UCX)_') >"$run/cmd"
printf '%q ' "$@" >>"$run/cmd"
echo >>"$run/cmd"
echo "$PWD" >"$run/cwd"
echo "$limit" >"$run/timeout"

accel=$(guest_accel)
cpu=max
[ "$accel" = kvm ] && cpu=host
echo "rxe-guest-run: booting ($accel) to run: $*" >&2
# -cpu max/host: the host's binaries may use instructions qemu64 lacks (cmpxchg16b).
timeout $((limit + 300)) qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -smp 2 \
    -m "${LOOM_GUEST_MEM:-4096}" -display none -vga none -serial stdio -monitor none \
    -no-reboot -nic none \
    -kernel "$cache/vmlinuz" -initrd "$cache/initrd.img" \
    -append "root=/dev/vda rw console=ttyS0 quiet loglevel=3 panic=-1 init=/sbin/loom-init loom.dir=$src" \
    -drive "file=$cache/root.img,format=raw,if=virtio,snapshot=on" \
    -virtfs "local,path=$src,mount_tag=host0,security_model=none,id=host0" \
    -virtfs "local,path=$run,mount_tag=run0,security_model=none,id=run0" </dev/null || true
if [ ! -f "$run/rc" ]; then
    echo "rxe-guest-run: the guest ended without a result (crash or time limit)" >&2
    exit 1
fi
exit "$(cat "$run/rc")"
