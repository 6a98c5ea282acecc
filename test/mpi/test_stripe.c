/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Striping across rails: ranks 0 and 1 exchange large messages both ways at
 * once, several in flight (sizes on and off chunk boundaries), every byte
 * verified.  Then every rail must have carried chunks (loom's
 * btl_loom_rail<N>_chunks pvars, summed over both ranks).  Needs two ranks
 * and at least two rails; skips with one rail.
 */

#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 4

static const size_t sizes[] = {4 * MIB, 4 * MIB + 13, MIB + 1, 300000, 16 * MIB - 1, 2 * MIB};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define ROUNDS 3

static void exchange(int rank)
{
    int peer = 1 - rank;
    unsigned char *sbuf[WINDOW], *rbuf[WINDOW];
    MPI_Request reqs[2 * WINDOW];
    char what[96];

    for (int w = 0; w < WINDOW; w++) {
        sbuf[w] = loom_malloc(16 * MIB + LOOM_GUARD_SIZE);
        rbuf[w] = loom_malloc(16 * MIB + LOOM_GUARD_SIZE);
    }
    for (int round = 0; round < ROUNDS; round++) {
        for (size_t first = 0; first < NSIZES; first += WINDOW) {
            int n = 0;

            for (size_t i = first; i < first + WINDOW && i < NSIZES; i++, n++) {
                unsigned seed = (unsigned) (round * 100 + i);

                loom_fill_pattern(sbuf[n], sizes[i], seed, rank);
                memset(rbuf[n], LOOM_POISON, sizes[i] + LOOM_GUARD_SIZE);
                LOOM_CHECK_MPI(MPI_Irecv(rbuf[n], (int) sizes[i], MPI_BYTE, peer, (int) i,
                                         MPI_COMM_WORLD, &reqs[2 * n]));
                LOOM_CHECK_MPI(MPI_Isend(sbuf[n], (int) sizes[i], MPI_BYTE, peer, (int) i,
                                         MPI_COMM_WORLD, &reqs[2 * n + 1]));
            }
            LOOM_CHECK_MPI(MPI_Waitall(2 * n, reqs, MPI_STATUSES_IGNORE));
            n = 0;
            for (size_t i = first; i < first + WINDOW && i < NSIZES; i++, n++) {
                snprintf(what, sizeof(what), "round %d message %zu (%zu B)", round, i,
                         sizes[i]);
                loom_check_recv(rbuf[n], sizes[i], (unsigned) (round * 100 + i), peer, what);
            }
        }
    }
    for (int w = 0; w < WINDOW; w++) {
        free(sbuf[w]);
        free(rbuf[w]);
    }
}

int main(int argc, char **argv)
{
    unsigned long long before[LOOM_TEST_MAX_RAILS], after[LOOM_TEST_MAX_RAILS];
    unsigned long long delta[LOOM_TEST_MAX_RAILS], total[LOOM_TEST_MAX_RAILS];
    int rank, nprocs, rails;

    loom_test_init(&argc, &argv, "test_stripe", 2, &rank, &nprocs);
    rails = loom_pvar_read_rails("chunks", before);
    if (0 == rails) {
        loom_fail("loom's pvars btl_loom_rail<N>_chunks are missing: is loom loaded "
                  "(--mca btl self,loom)?");
    }
    if (rails < 2) {
        loom_test_skip("striping needs at least two rails (btl_loom_rails names one)");
    }
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank < 2) {
        exchange(rank);
    }
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    loom_pvar_read_rails("chunks", after);
    for (int r = 0; r < LOOM_TEST_MAX_RAILS; r++) {
        delta[r] = after[r] - before[r];
    }
    LOOM_CHECK_MPI(MPI_Reduce(delta, total, LOOM_TEST_MAX_RAILS, MPI_UNSIGNED_LONG_LONG,
                              MPI_SUM, 0, MPI_COMM_WORLD));
    if (0 == rank) {
        for (int r = 0; r < rails; r++) {
            char name[64];
            unsigned long long rate = 0;
            int found = 0;

            snprintf(name, sizeof(name), "btl_loom_rail%d_rate", r);
            (void) loom_pvar_read_sum(name, &rate, &found);
            printf("rail %d: %llu chunks, rate at rank 0 %.1f MB/s\n", r, total[r],
                   rate / 1e6);
        }
        for (int r = 0; r < rails; r++) {
            if (0 == total[r]) {
                loom_fail("rail %d carried no striped chunk", r);
            }
        }
    }
    loom_test_pass();
}
