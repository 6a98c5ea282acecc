/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * A stream of broadcasts for -t seconds, every byte verified at every rank,
 * while a script takes a rail down underneath (test/failover-check.sh, with
 * coll loom selected: each broadcast is pushes, served striped over the
 * rails, so chunks on the rail that goes are re-driven on the other).  The
 * root turns with every broadcast.
 *
 * Usage: test_bcast_failover [-t seconds] [-s size]
 * Output lines (rank 0): "stream started" as the first broadcast begins,
 *   then "broadcasts <n>", "stall <longest seconds between two broadcasts
 *   that completed>", "failovers <chunks re-driven, all ranks>", "resent
 *   <messages sent again, all ranks>", "pushes <pushes asked for, all
 *   ranks>".
 */

#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    double seconds = 8, start, last, stall = 0;
    size_t size = 4 * MIB;
    unsigned long long failovers_before[LOOM_TEST_MAX_RAILS], resent_before[LOOM_TEST_MAX_RAILS];
    unsigned long long mine[2], all[2] = {0, 0};
    unsigned long long pushes_before, pushes;
    int rank, nprocs, opt, go = 1, root;
    unsigned char *buf;
    char what[64];
    unsigned n = 0;

    while (-1 != (opt = getopt(argc, argv, "t:s:"))) {
        switch (opt) {
        case 't': seconds = atof(optarg); break;
        case 's': size = (size_t) atol(optarg); break;
        default: fprintf(stderr, "usage: %s [-t seconds] [-s size]\n", argv[0]); return 2;
        }
    }
    loom_test_init(&argc, &argv, "test_bcast_failover", 2, &rank, &nprocs);
    if (loom_pvar_read_rails("failovers", failovers_before) < 2) {
        loom_test_skip("failover needs at least two rails");
    }
    loom_pvar_read_rails("resent", resent_before);
    pushes_before = loom_pushes_requested();
    buf = loom_malloc(size + LOOM_GUARD_SIZE);
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    start = last = MPI_Wtime();
    if (0 == rank) {
        printf("stream started\n");
        fflush(stdout);
    }
    while (go) {
        root = (int)(n % (unsigned)nprocs);
        if (rank == root) {
            loom_fill_pattern(buf, size, n, root);
        } else {
            memset(buf, LOOM_POISON, size + LOOM_GUARD_SIZE);
        }
        LOOM_CHECK_MPI(MPI_Bcast(buf, (int)size, MPI_BYTE, root, MPI_COMM_WORLD));
        if (rank != root) {
            snprintf(what, sizeof(what), "broadcast %u from rank %d", n, root);
            loom_check_recv(buf, size, n, root, what);
        }
        ++n;
        if (0 == rank) {
            double now = MPI_Wtime();

            stall = (now - last > stall) ? now - last : stall;
            last  = now;
            go    = (now - start < seconds);
        }
        LOOM_CHECK_MPI(MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD));
    }
    mine[0] = loom_pvar_rails_total("failovers", failovers_before);
    mine[1] = loom_pvar_rails_total("resent", resent_before);
    LOOM_CHECK_MPI(MPI_Reduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
                              MPI_COMM_WORLD));
    pushes = loom_pushes_requested() - pushes_before;
    if (0 == rank) {
        printf("broadcasts %u\nstall %.3f\nfailovers %llu\nresent %llu\npushes %llu\n", n,
               stall, all[0], all[1], pushes);
    }
    free(buf);
    loom_test_pass_msg("(%u broadcasts of %zu bytes, every byte verified)", n, size);
}
