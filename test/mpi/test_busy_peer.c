/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * A peer that computes is not a dead network.  Rank 0 starts large
 * transfers both ways with rank 1 (MPI_Isend and MPI_Irecv of 8 MiB, then
 * the same once more so that rank 1 is mid-transfer), then computes for
 * -t seconds without calling MPI, then waits.  On TCP a put lands only while
 * its target progresses, so no chunk lands on any rail for the whole
 * computation; loom must not take that for dead rails.  Every byte is
 * verified, and no rail may have been taken out of use (the
 * btl_loom_failures pvar, summed over both ranks, is unchanged).
 *
 * Usage: test_busy_peer [-t seconds]   (default 60)
 */

#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SIZE (8 * MIB)
#define TRANSFERS 2

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Burn the CPU for seconds without any MPI call; the result is printed so
 * that the loop is not optimised away. */
static double compute(double seconds)
{
    double end = now_s() + seconds, x = 1.0;

    while (now_s() < end) {
        for (int i = 0; i < 100000; i++) {
            x = x * 1.0000001 + 1e-9;
        }
    }
    return x;
}

static int parse_seconds(int argc, char **argv)
{
    int opt, seconds = 60;

    while (-1 != (opt = getopt(argc, argv, "t:"))) {
        if ('t' != opt || (seconds = atoi(optarg)) <= 0) {
            loom_fail("usage: test_busy_peer [-t seconds], seconds > 0");
        }
    }
    return seconds;
}

static unsigned long long rail_failures(void)
{
    unsigned long long sum = 0;
    int found = 0;

    if (MPI_SUCCESS != loom_pvar_read_sum("btl_loom_failures", &sum, &found)) {
        loom_fail("reading btl_loom_failures through MPI_T failed");
    }
    if (0 == found) {
        loom_fail("loom's pvar btl_loom_failures is missing: is loom loaded "
                  "(--mca btl self,loom)?");
    }
    return sum;
}

int main(int argc, char **argv)
{
    unsigned char *sbuf[TRANSFERS], *rbuf[TRANSFERS];
    MPI_Request reqs[2 * TRANSFERS];
    unsigned long long before, after, total;
    int rank, nprocs, seconds, peer;
    char what[64];

    loom_test_init(&argc, &argv, "test_busy_peer", 2, &rank, &nprocs);
    seconds = parse_seconds(argc, argv);
    before = rail_failures();
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank < 2) {
        peer = 1 - rank;
        for (int i = 0; i < TRANSFERS; i++) {
            sbuf[i] = loom_malloc(SIZE);
            rbuf[i] = loom_malloc(SIZE + LOOM_GUARD_SIZE);
            loom_fill_pattern(sbuf[i], SIZE, (unsigned) i, rank);
            memset(rbuf[i], LOOM_POISON, SIZE + LOOM_GUARD_SIZE);
            LOOM_CHECK_MPI(MPI_Irecv(rbuf[i], (int) SIZE, MPI_BYTE, peer, i,
                                     MPI_COMM_WORLD, &reqs[2 * i]));
            LOOM_CHECK_MPI(MPI_Isend(sbuf[i], (int) SIZE, MPI_BYTE, peer, i,
                                     MPI_COMM_WORLD, &reqs[2 * i + 1]));
        }
        if (0 == rank) {
            /* let the transfers get going, then stop progressing */
            for (int i = 0; i < 100; i++) {
                int flag;

                LOOM_CHECK_MPI(MPI_Testall(2 * TRANSFERS, reqs, &flag, MPI_STATUSES_IGNORE));
            }
            printf("rank 0 computes for %d s without MPI calls\n", seconds);
            fflush(stdout);
            printf("computed %g\n", compute(seconds));
        }
        LOOM_CHECK_MPI(MPI_Waitall(2 * TRANSFERS, reqs, MPI_STATUSES_IGNORE));
        for (int i = 0; i < TRANSFERS; i++) {
            snprintf(what, sizeof(what), "transfer %d (%zu B)", i, (size_t) SIZE);
            loom_check_recv(rbuf[i], SIZE, (unsigned) i, peer, what);
            free(sbuf[i]);
            free(rbuf[i]);
        }
    }
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    after = rail_failures() - before;
    LOOM_CHECK_MPI(MPI_Reduce(&after, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
                              MPI_COMM_WORLD));
    if (0 == rank && 0 != total) {
        loom_fail("%llu rails were taken out of use while rank 0 computed", total);
    }
    loom_test_pass();
}
