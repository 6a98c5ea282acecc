#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Every relative link of README.md and docs/**/*.md, [text](path) or
# [text](path#anchor), names a file or folder that exists (anchors are not
# checked; links to http(s) and mailto, and links inside ``` blocks, are
# left alone).  Needs no build: runs from the source tree, or through make
# check (LOOM_SRCDIR).
set -u
srcdir=${LOOM_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
fail=0 links=0

mapfile -t files < <(cd "$srcdir" && { [ -f README.md ] && echo README.md; \
    [ -d docs ] && find docs -name '*.md' | sort; })
for file in "${files[@]}"; do
    dir=$(dirname "$srcdir/$file")
    # drop fenced code blocks, then take every ](target) of what is left
    targets=$(awk '/^```/ {fence = !fence; next} !fence' "$srcdir/$file" |
        grep -oE '\]\([^) ]+\)' | sed -E 's/^\]\(//; s/\)$//')
    for target in $targets; do
        case $target in
        http://*|https://*|mailto:*|'#'*) continue ;;
        esac
        links=$((links + 1))
        path=${target%%#*}
        if [ ! -e "$dir/$path" ]; then
            echo "FAILED: $file links to $target, which does not exist"
            fail=1
        fi
    done
done
[ "$fail" = 0 ] && echo "PASS: docs links (${#files[@]} files, $links relative links, all resolve)"
exit "$fail"
