#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# The engine's layering, checked on the objects the build made: one folder
# of transport/ per layer (transport/layers.map gives each folder its layer
# and lists every file), and a file's layer is its folder's.  Every call
# between transport files goes to a file of the same layer or a lower one,
# and the files' calls have no loop.  A new file must be listed, in a
# folder that has a layer.  Run by `make check`.
set -u
srcdir=${LOOM_SRCDIR:?run through make check}
stage=${LOOM_COMPONENT_STAGE:?run through make check}
objroot=$(dirname "$stage")/transport
map=$srcdir/transport/layers.map
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

bad() { echo "FAILED: $*"; fail=1; }

# folder layer; folder/file
grep -v '^#' "$map" | awk 'NF >= 2 && $1 !~ /\// && $2 ~ /^[0-9]+$/ {print $1, $2}' \
    > "$tmp/folders"
grep -v '^#' "$map" | awk '$1 ~ /\// {print $1}' > "$tmp/listed"
for src in "$srcdir"/transport/*.c; do
    [ -e "$src" ] && bad "transport/$(basename "$src") is in no layer's folder"
done
for dir in "$srcdir"/transport/*/; do
    folder=$(basename "$dir")
    grep -q "^$folder " "$tmp/folders" || bad "transport/$folder/ has no layer in transport/layers.map"
done
while read -r folder layer; do
    [ -d "$srcdir/transport/$folder" ] || bad "transport/layers.map names folder $folder, no such folder"
    for src in "$srcdir/transport/$folder"/*.c; do
        [ -e "$src" ] || continue
        name=$(basename "$src" .c)
        grep -qx "$folder/$name" "$tmp/listed" ||
            bad "transport/$folder/$name.c is not listed in transport/layers.map"
        obj=$objroot/$folder/.libs/libloom_transport_la-$name.o
        if [ ! -f "$obj" ]; then
            bad "no object for transport/$folder/$name.c in $objroot/$folder/.libs (build first)"
            continue
        fi
        echo "$folder/$name $layer" >> "$tmp/layers"
        nm "$obj" | awk -v f="$folder/$name" '$2 ~ /^[TDBR]$/ {print $3, f}' >> "$tmp/defs"
        nm "$obj" | awk -v f="$folder/$name" '$1 == "U" {print $2, f}' >> "$tmp/uses"
    done
done < "$tmp/folders"
while read -r file; do
    [ -f "$srcdir/transport/$file.c" ] || bad "transport/layers.map lists $file, no such file"
done < "$tmp/listed"
touch "$tmp/layers" "$tmp/defs" "$tmp/uses"

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
echo "$(wc -l < "$tmp/calls") calls between $(wc -l < "$tmp/layers") transport files" \
     "in $(wc -l < "$tmp/folders") layer folders checked"
[ $fail -eq 0 ] && echo "ok: the engine's layers hold"
exit $fail
