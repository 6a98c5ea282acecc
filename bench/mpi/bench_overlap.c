/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Overlap of communication with computation, rank 0 sending to rank 1, for
 * sizes 64 KiB up to -m max (default 4 MiB).  For each size: the transfer
 * alone (post, then wait) takes t; then one side posts, computes for t
 * without calling MPI, and waits, taking total.  Overlap is
 * (t + t - total) / t: 1 when the transfer went on entirely during the
 * computation, 0 when it only started in the wait.  Reported for the
 * sender computing and for the receiver computing; medians of -i runs
 * (default 20).  Each size first sends once with its data verified.
 */

#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *usage = "[-m max_size] [-i iters]";

static unsigned char *buf;

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Busy for us microseconds without calling MPI. */
static void compute(double us)
{
    double end = now_us() + us;
    volatile double x = 1.0;

    while (now_us() < end) {
        for (int i = 0; i < 1000; ++i) {
            x = x * 1.0000001 + 1e-9;
        }
    }
}

/* One transfer; the rank that is `busy` computes for busy_us between post
 * and wait.  Returns this rank's time from post to completion. */
static double transfer(size_t size, int rank, int busy, double busy_us)
{
    MPI_Request req;
    double start;

    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    start = now_us();
    if (0 == rank) {
        LOOM_CHECK_MPI(MPI_Isend(buf, (int)size, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &req));
    } else {
        LOOM_CHECK_MPI(MPI_Irecv(buf, (int)size, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &req));
    }
    if (rank == busy) {
        compute(busy_us);
    }
    LOOM_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    return now_us() - start;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Median over iters of this rank's transfer time, as seen by `who`. */
static double median_transfer(size_t size, int rank, int busy, double busy_us, int iters,
                              int who)
{
    double *t = calloc((size_t)iters, sizeof(*t)), mine, m;

    if (NULL == t) {
        loom_fail("out of memory");
    }
    for (int i = 0; i < iters; ++i) {
        mine = transfer(size, rank, busy, busy_us);
        LOOM_CHECK_MPI(MPI_Bcast(&mine, 1, MPI_DOUBLE, who, MPI_COMM_WORLD));
        t[i] = mine;
    }
    qsort(t, (size_t)iters, sizeof(*t), cmp_double);
    m = t[iters / 2];
    free(t);
    return m;
}

static double overlap(double alone, double total)
{
    return (2.0 * alone - total) / alone;
}

int main(int argc, char **argv)
{
    struct loom_bench_opts opts = { 4 * MIB, 20, 0, 0, LOOM_BENCH_NO_MIN, -1 };
    int rank, nprocs;

    loom_test_init(&argc, &argv, "bench_overlap", 2, &rank, &nprocs);
    loom_bench_parse(argc, argv, usage, &opts);
    buf = loom_malloc(opts.max_size + LOOM_GUARD_SIZE);
    if (0 == rank) {
        printf("# loom overlap benchmark: compute as long as the transfer, between post and "
               "wait\n");
        printf("# %-10s %12s %12s %8s %12s %8s\n", "Size", "alone (us)", "send+comp",
               "overlap", "recv+comp", "overlap");
        fflush(stdout);
    }
    for (size_t size = 64 * 1024; size <= opts.max_size && rank < 2; size *= 2) {
        double alone_s, alone_r, sender, receiver;
        char what[64];

        snprintf(what, sizeof(what), "overlap size %zu", size);
        if (0 == rank) {
            loom_fill_pattern(buf, size, (unsigned)size, 0);
        } else {
            memset(buf, LOOM_POISON, size + LOOM_GUARD_SIZE);
        }
        (void)transfer(size, rank, -1, 0);
        if (1 == rank) {
            loom_check_recv(buf, size, (unsigned)size, 0, what);
        }
        alone_s  = median_transfer(size, rank, -1, 0, opts.iters, 0);
        alone_r  = median_transfer(size, rank, -1, 0, opts.iters, 1);
        sender   = median_transfer(size, rank, 0, alone_s, opts.iters, 0);
        receiver = median_transfer(size, rank, 1, alone_r, opts.iters, 1);
        if (0 == rank) {
            printf("  %-10zu %12.1f %12.1f %8.2f %12.1f %8.2f\n", size, alone_s, sender,
                   overlap(alone_s, sender), receiver, overlap(alone_r, receiver));
            fflush(stdout);
        }
    }
    free(buf);
    LOOM_CHECK_MPI(MPI_Finalize());
    return 0;
}
