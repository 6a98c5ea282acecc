/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Ping-pong latency between rank 0 and rank 1: half the round-trip time
 * for sizes 0, 1, 2, 4, ... up to -m max (default 4 MiB).  Each size
 * first does one verified round trip, then -w warm-up and -i timed
 * iterations (defaults 100 / 1000, and 10 / 100 from 64 KiB up).
 */

#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage = "[-s min_size] [-m max_size] [-i iters] [-w warmup]";

static unsigned char *sbuf, *rbuf;

static void round_trip(size_t size, int rank)
{
    int peer = 1 - rank;

    if (0 == rank) {
        LOOM_CHECK_MPI(MPI_Send(sbuf, (int) size, MPI_BYTE, peer, 1,
                                MPI_COMM_WORLD));
        LOOM_CHECK_MPI(MPI_Recv(rbuf, (int) size, MPI_BYTE, peer, 1,
                                MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        LOOM_CHECK_MPI(MPI_Recv(rbuf, (int) size, MPI_BYTE, peer, 1,
                                MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        LOOM_CHECK_MPI(MPI_Send(sbuf, (int) size, MPI_BYTE, peer, 1,
                                MPI_COMM_WORLD));
    }
}

/* one round trip whose data is checked on both sides */
static void verified_round_trip(size_t size, int rank)
{
    char what[64];

    snprintf(what, sizeof(what), "latency size %zu", size);
    loom_fill_pattern(sbuf, size, (unsigned) size, rank);
    memset(rbuf, LOOM_POISON, size + LOOM_GUARD_SIZE);
    round_trip(size, rank);
    loom_check_recv(rbuf, size, (unsigned) size, 1 - rank, what);
}

int main(int argc, char **argv)
{
    struct loom_bench_opts opts = { 4 * MIB, -1, -1, 0, 0, -1 };
    int rank, nprocs;

    loom_test_init(&argc, &argv, "bench_latency", 2, &rank, &nprocs);
    loom_bench_parse(argc, argv, usage, &opts);
    sbuf = loom_malloc(opts.max_size);
    rbuf = loom_malloc(opts.max_size + LOOM_GUARD_SIZE);

    if (0 == rank) {
        printf("# loom latency benchmark\n");
        printf("# ranks 0 <-> 1 of %d, max size %zu\n", nprocs, opts.max_size);
        printf("# Size  Latency (us)\n");
        fflush(stdout);
    }
    for (size_t size = opts.min_size; size <= opts.max_size && rank < 2;
         size = size ? size * 2 : 1) {
        int iters = loom_bench_iters(opts.iters, size, 1000, 100);
        int warmup = loom_bench_iters(opts.warmup, size, 100, 10);
        double start = 0.0;

        verified_round_trip(size, rank);
        for (int i = 0; i < warmup + iters; i++) {
            if (i == warmup) {
                start = MPI_Wtime();
            }
            round_trip(size, rank);
        }
        if (0 == rank && iters > 0) {
            double latency = (MPI_Wtime() - start) * 1e6 / (2.0 * iters);

            printf("%-10zu %14.2f\n", size, latency);
            fflush(stdout);
        }
    }
    free(sbuf);
    free(rbuf);
    LOOM_CHECK_MPI(MPI_Finalize());
    return 0;
}
