# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Shared by the rxe guest scripts (sourced, not run).

# Root, and the tools to build and boot the guest (installed when missing).
guest_need_root_and_tools() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "SKIP: the soft-RoCE guest needs root to build and boot" >&2
        return 1
    fi
    if ! "$src/contrib/install-deps.sh" --rxe >&2; then
        echo "SKIP: the soft-RoCE guest needs qemu and debootstrap, which could not be installed" >&2
        return 1
    fi
    return 0
}

# The cache directory, keyed by everything that goes into the image.
guest_cache_dir() {
    local key
    key=$(cat "$src/contrib/rxe-guest-build.sh" "$src/contrib/rxe-guest-stub-init.sh" |
          sha256sum | cut -c1-16)
    echo "${LOOM_GUEST_CACHE:-/var/cache/loom-guest}/$key"
}

# The Debian mirror this machine's apt uses for bookworm main (never written
# into the repository: each machine says its own).
guest_apt_mirror() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk 'BEGIN { RS = ""; FS = "\n" }
             {
                 uri = ""; suites = ""; comps = ""; enabled = 1
                 for (i = 1; i <= NF; i++) {
                     if ($i ~ /^URIs:/)       { uri = $i; sub(/^URIs:[ \t]*/, "", uri); sub(/[ \t].*/, "", uri) }
                     if ($i ~ /^Suites:/)     suites = " " $i " "
                     if ($i ~ /^Components:/) comps = " " $i " "
                     if ($i ~ /^Enabled:[ \t]*no/) enabled = 0
                 }
                 if (enabled && uri != "" && suites ~ / bookworm / && comps ~ / main /) { print uri; exit }
             }' "$f"
    done | head -n 1 | grep . && return 0
    [ -f /etc/apt/sources.list ] &&
        awk '$1 == "deb" && $3 == "bookworm" && / main/ { print $2; exit }' /etc/apt/sources.list |
        grep .
}

# KVM only where it really works: a hardware-virtualisation CPU flag and the
# vendor's module.  Elsewhere (e.g. a kvm_pvm device, on which stock kernels
# hang at boot) fall back to TCG.  LOOM_GUEST_ACCEL=kvm|tcg overrides.
guest_accel() {
    if [ -n "${LOOM_GUEST_ACCEL:-}" ]; then
        echo "$LOOM_GUEST_ACCEL"
    elif [ -c /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo &&
         [ -d /sys/module/kvm_intel -o -d /sys/module/kvm_amd ]; then
        echo kvm
    else
        echo tcg
    fi
}
