/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Uni-directional bandwidth from rank 0 to rank 1: per iteration rank 0
 * posts a window of -W (default 64) Isends, rank 1 as many Irecvs into
 * distinct buffers, then rank 1 sends a small ack back.  Sizes 1 B to
 * -m max (default 4 MiB); -w warm-up and -i timed iterations (defaults
 * 10 / 100, and 2 / 20 from 64 KiB up).  The first iteration of each size
 * is verified.  MB/s = bytes / 1e6 / seconds.
 */

#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage = "[-s min_size] [-m max_size] [-i iters] [-w warmup] [-W window]";

static unsigned char *sbuf, *rbuf;
static MPI_Request *reqs;

static void window(size_t size, int nwin, int rank)
{
    int ack = 0;

    for (int w = 0; w < nwin; w++) {
        if (0 == rank) {
            LOOM_CHECK_MPI(MPI_Isend(sbuf, (int) size, MPI_BYTE, 1, w,
                                     MPI_COMM_WORLD, &reqs[w]));
        } else {
            LOOM_CHECK_MPI(MPI_Irecv(rbuf + w * size, (int) size, MPI_BYTE, 0,
                                     w, MPI_COMM_WORLD, &reqs[w]));
        }
    }
    LOOM_CHECK_MPI(MPI_Waitall(nwin, reqs, MPI_STATUSES_IGNORE));
    if (0 == rank) {
        LOOM_CHECK_MPI(MPI_Recv(&ack, 1, MPI_INT, 1, nwin, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
    } else {
        LOOM_CHECK_MPI(MPI_Send(&ack, 1, MPI_INT, 0, nwin, MPI_COMM_WORLD));
    }
}

/* one window whose every receive buffer is checked */
static void verified_window(size_t size, int nwin, int rank)
{
    char what[64];

    if (0 == rank) {
        loom_fill_pattern(sbuf, size, (unsigned) size, rank);
    } else {
        memset(rbuf, LOOM_POISON, size * nwin);
    }
    window(size, nwin, rank);
    for (int w = 0; 1 == rank && w < nwin; w++) {
        snprintf(what, sizeof(what), "bandwidth size %zu window slot %d",
                 size, w);
        if (loom_verify_pattern(rbuf + w * size, size, (unsigned) size, 0,
                                what) >= 0) {
            loom_fail("%s: data from rank 0 is wrong", what);
        }
    }
}

int main(int argc, char **argv)
{
    struct loom_bench_opts opts = { 4 * MIB, -1, -1, 64, 0, -1 };
    int rank, nprocs;

    loom_test_init(&argc, &argv, "bench_bw", 2, &rank, &nprocs);
    loom_bench_parse(argc, argv, usage, &opts);
    sbuf = loom_malloc(opts.max_size);
    rbuf = loom_malloc(opts.max_size * opts.window);
    reqs = loom_malloc(opts.window * sizeof(MPI_Request));

    if (0 == rank) {
        printf("# loom bw benchmark\n");
        printf("# rank 0 -> 1 of %d, window %d, max size %zu\n", nprocs,
               opts.window, opts.max_size);
        printf("# Size  Bandwidth (MB/s)\n");
        fflush(stdout);
    }
    for (size_t size = opts.min_size > 0 ? opts.min_size : 1; size <= opts.max_size && rank < 2; size *= 2) {
        int iters = loom_bench_iters(opts.iters, size, 100, 20);
        int warmup = loom_bench_iters(opts.warmup, size, 10, 2);
        double start = 0.0;

        verified_window(size, opts.window, rank);
        for (int i = 0; i < warmup + iters; i++) {
            if (i == warmup) {
                start = MPI_Wtime();
            }
            window(size, opts.window, rank);
        }
        if (0 == rank) {
            double seconds = MPI_Wtime() - start;
            double bytes = (double) size * opts.window * iters;

            printf("%-10zu %16.2f\n", size, bytes / 1e6 / seconds);
            fflush(stdout);
        }
    }
    free(reqs);
    free(sbuf);
    free(rbuf);
    LOOM_CHECK_MPI(MPI_Finalize());
    return 0;
}
