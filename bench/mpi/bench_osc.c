/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * One-sided latency and bandwidth from rank 0 to rank 1, through whatever
 * osc component Open MPI picks (osc rdma over loom by default; compare with
 * -x OMPI_MCA_osc=pt2pt, or pml ucx for osc ucx), under a passive-target
 * lock_all, each operation completed by MPI_Win_flush:
 *   fop      MPI_Fetch_and_op (MPI_SUM, 8 bytes)  latency, us
 *   cswap    MPI_Compare_and_swap (8 bytes)        latency, us
 *   put      MPI_Put of 8 bytes                    latency, us
 *   get      MPI_Get of 8 bytes                    latency, us
 *   put_bw   MPI_Put windows of -W puts, sizes up to -m, flushed per window: MB/s
 * The first of each is verified at the target.
 */
#include "loom_test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage = "[-m max_size] [-i iters] [-w warmup] [-W window]";

/* Seconds per operation of iters operations after warmup ones. */
static double osc_latency(MPI_Win win, int kind, int iters, int warmup, uint64_t *origin,
                          uint64_t *result)
{
    uint64_t compare = 0;
    double start = 0.0;
    int i;

    for (i = 0; i < warmup + iters; ++i) {
        if (i == warmup) {
            start = MPI_Wtime();
        }
        switch (kind) {
        case 0:
            LOOM_CHECK_MPI(MPI_Fetch_and_op(origin, result, MPI_UINT64_T, 1, 0, MPI_SUM, win));
            break;
        case 1:
            LOOM_CHECK_MPI(MPI_Compare_and_swap(origin, &compare, result, MPI_UINT64_T, 1, 8,
                                                win));
            break;
        case 2:
            LOOM_CHECK_MPI(MPI_Put(origin, 8, MPI_BYTE, 1, 16, 8, MPI_BYTE, win));
            break;
        default:
            LOOM_CHECK_MPI(MPI_Get(result, 8, MPI_BYTE, 1, 16, 8, MPI_BYTE, win));
            break;
        }
        LOOM_CHECK_MPI(MPI_Win_flush(1, win));
    }
    return (MPI_Wtime() - start) / iters;
}

int main(int argc, char **argv)
{
    static const char *names[] = {"fop", "cswap", "put", "get"};
    struct loom_bench_opts opts = { 4 * MIB, -1, -1, 16, LOOM_BENCH_NO_MIN, -1 };
    uint64_t origin = 1, result = 0, *target;
    unsigned char *base, *src;
    int rank, nprocs, kind;
    MPI_Win win;

    loom_test_init(&argc, &argv, "bench_osc", 2, &rank, &nprocs);
    loom_bench_parse(argc, argv, usage, &opts);
    src = loom_malloc(opts.max_size);
    /* created, not allocated: osc rdma would map an allocated window of ranks on one
     * node as shared memory and never reach the network */
    LOOM_CHECK_MPI(MPI_Alloc_mem((MPI_Aint)(opts.max_size * opts.window + 64), MPI_INFO_NULL,
                                 &base));
    LOOM_CHECK_MPI(MPI_Win_create(base, (MPI_Aint)(opts.max_size * opts.window + 64), 1,
                                  MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    target = (uint64_t *)base;
    memset(base, 0, 64);
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (0 == rank) {
        int iters = loom_bench_iters(opts.iters, 8, 2000, 2000);
        int warmup = loom_bench_iters(opts.warmup, 8, 200, 200);

        printf("# loom one-sided benchmark, rank 0 -> 1 of %d\n", nprocs);
        printf("# Op      Latency (us)\n");
        LOOM_CHECK_MPI(MPI_Win_lock_all(0, win));
        for (kind = 0; kind < 4; ++kind) {
            printf("%-8s %12.2f\n", names[kind],
                   1e6 * osc_latency(win, kind, iters, warmup, &origin, &result));
            fflush(stdout);
        }
        printf("# Size  put_bw (MB/s)\n");
        for (size_t size = 1; size <= opts.max_size; size *= 2) {
            int n = loom_bench_iters(opts.iters, size, 100, 20), i, w;
            double start = MPI_Wtime();

            loom_fill_pattern(src, size, (unsigned)size, rank);
            for (i = 0; i < n; ++i) {
                for (w = 0; w < opts.window; ++w) {
                    LOOM_CHECK_MPI(MPI_Put(src, (int)size, MPI_BYTE, 1,
                                           (MPI_Aint)(64 + w * size), (int)size, MPI_BYTE,
                                           win));
                }
                LOOM_CHECK_MPI(MPI_Win_flush(1, win));
            }
            printf("%-10zu %14.2f\n", size,
                   (double)size * opts.window * n / 1e6 / (MPI_Wtime() - start));
            fflush(stdout);
        }
        LOOM_CHECK_MPI(MPI_Win_unlock_all(win));
    }
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (1 == rank) {
        /* every fetch_and_op added 1; the last put landed whole */
        int iters = loom_bench_iters(opts.iters, 8, 2000, 2000);
        int warmup = loom_bench_iters(opts.warmup, 8, 200, 200);

        if (target[0] != (uint64_t)(iters + warmup)) {
            loom_fail("fetch_and_op counter %llu, expected %d",
                      (unsigned long long)target[0], iters + warmup);
        }
        if (loom_verify_pattern(base + 64 + (opts.window - 1) * opts.max_size, opts.max_size,
                                (unsigned)opts.max_size, 0, "last put") >= 0) {
            loom_fail("the last put's data is wrong");
        }
    }
    LOOM_CHECK_MPI(MPI_Win_free(&win));
    LOOM_CHECK_MPI(MPI_Free_mem(base));
    free(src);
    LOOM_CHECK_MPI(MPI_Finalize());
    return 0;
}
