#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# The engine's layering (transport/layers.map), checked on the objects the
# build made: every call between transport files goes to a file of the same
# layer or a lower one, and the files' calls have no loop.  A new file must
# be given a layer.  Run by `make check`.
set -u
srcdir=${LOOM_SRCDIR:?run through make check}
stage=${LOOM_COMPONENT_STAGE:?run through make check}
objdir=$(dirname "$stage")/transport/.libs
map=$srcdir/transport/layers.map
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

bad() { echo "FAILED: $*"; fail=1; }

grep -v '^#' "$map" | awk 'NF >= 2 {print $1, $2}' > "$tmp/layers"
for src in "$srcdir"/transport/*.c; do
    name=$(basename "$src" .c)
    grep -q "^$name " "$tmp/layers" || bad "transport/$name.c has no layer in transport/layers.map"
    obj=$objdir/libloom_transport_la-$name.o
    if [ ! -f "$obj" ]; then
        bad "no object for transport/$name.c in $objdir (build first)"
        continue
    fi
    nm "$obj" | awk -v f="$name" '$2 ~ /^[TDBR]$/ {print $3, f}' >> "$tmp/defs"
    nm "$obj" | awk -v f="$name" '$1 == "U" {print $2, f}' >> "$tmp/uses"
done
while read -r name _; do
    [ -f "$srcdir/transport/$name.c" ] || bad "transport/layers.map names $name, no such file"
done < "$tmp/layers"

# caller callee symbol, one line per call across files
awk 'NR == FNR {owner[$1] = $2; next}
     ($1 in owner) && owner[$1] != $2 {print $2, owner[$1], $1}' \
    "$tmp/defs" "$tmp/uses" | sort -u > "$tmp/calls"
awk 'NR == FNR {layer[$1] = $2; next}
     ($1 in layer) && ($2 in layer) && layer[$2] > layer[$1] {
         printf "%s (layer %d) calls %s (layer %d): %s\n", $1, layer[$1], $2, layer[$2], $3 }' \
    "$tmp/layers" "$tmp/calls" > "$tmp/up"
while read -r line; do bad "$line"; done < "$tmp/up"
if ! awk '{print $1, $2}' "$tmp/calls" | sort -u | tsort > /dev/null 2> "$tmp/loop"; then
    bad "transport files call each other round a loop:"
    sed 's/^/    /' "$tmp/loop"
fi
echo "$(wc -l < "$tmp/calls") calls between $(wc -l < "$tmp/layers") transport files checked"
[ $fail -eq 0 ] && echo "ok: the engine's layers hold"
exit $fail
