#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# The help files and the code that shows them agree: every topic a
# LOOM_HELP_SHOW names is in its component's help file, with the same
# printf conversions in the same order as the one-line fallback beside it
# (which the compiler checks against the arguments), and every topic of the
# files is shown somewhere.  No MPI needed: part of the quick tier.
set -u
src=${LOOM_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src" || exit 1
perl -e '
use strict;
my %topics;    # "file/topic" => conversions of its text
my %shown;
my $fail = 0;
my $conv = qr/%(?:[-+ #0-9.]*(?:zu|lu|llu|ld|lld|zd|hu|[dusxXcp]))/;
for my $kind ("btl", "coll") {
    my $file = "component/$kind/help-mpi-$kind-loom.txt";
    open(my $fh, "<", $file) or die "cannot read $file\n";
    my $cur;
    while (my $line = <$fh>) {
        next if $line =~ /^#/;
        if ($line =~ /^\[(.+)\]\s*$/) {
            $cur = "$kind/$1";
            $topics{$cur} = "";
            next;
        }
        $topics{$cur} .= $line if defined $cur;
    }
    close($fh);
}
my $code = "";
for my $c (glob("component/btl/*.c component/coll/*.c component/common/*.c")) {
    open(my $fh, "<", $c) or die "cannot read $c\n";
    local $/;
    $code .= <$fh>;
    close($fh);
}
while ($code =~ /LOOM_HELP_SHOW\(&mca_(btl|coll)_loom_help,\s*"([^"]+)",\s*((?:"(?:[^"\\]|\\.)*"\s*)+)/g) {
    my ($kind, $topic, $fallback) = ($1, $2, $3);
    my $key = "$kind/$topic";
    my $format = join("", $fallback =~ /"((?:[^"\\]|\\.)*)"/g);
    $shown{$key} = 1;
    if (!exists $topics{$key}) {
        print "FAILED: topic [$topic] is not in help-mpi-$kind-loom.txt\n";
        $fail = 1;
        next;
    }
    my $want = join(" ", $format =~ /$conv/g);
    my $have = join(" ", $topics{$key} =~ /$conv/g);
    if ($want ne $have) {
        print "FAILED: [$topic] of help-mpi-$kind-loom.txt takes ($have), its call gives ($want)\n";
        $fail = 1;
    } else {
        print "ok: [$topic] of help-mpi-$kind-loom.txt ($want)\n";
    }
}
for my $key (sort keys %topics) {
    next if $shown{$key};
    print "FAILED: topic $key of the help files is shown nowhere\n";
    $fail = 1;
}
if (!%shown) {
    print "FAILED: no LOOM_HELP_SHOW found\n";
    $fail = 1;
}
exit $fail;
'
