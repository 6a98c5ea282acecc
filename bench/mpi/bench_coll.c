/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The loop shared by loom's collective benchmarks (bench_coll.h).
 */
#include "bench_coll.h"

#include "loom_test_util.h"

#include <stdio.h>

static const char *usage = "[-s min_size] [-m max_size] [-i iters] [-w warmup] [-b 0|1]";

int loom_bench_coll_run(int argc, char **argv, const char *name, const char *title,
                        size_t first_size, size_t max_default,
                        loom_bench_coll_setup_fn_t setup, loom_bench_coll_fn_t call)
{
    struct loom_bench_opts opts = { max_default, -1, -1, 0, 0, 0 };
    int rank, nprocs;

    loom_test_init(&argc, &argv, name, 2, &rank, &nprocs);
    loom_bench_parse(argc, argv, usage, &opts);
    setup(opts.max_size);
    if (0 == rank) {
        printf("# %s\n", title);
        printf("# %d ranks, max size %zu\n", nprocs, opts.max_size);
        printf("# %s\n", opts.barrier ? "each call timed alone, a barrier between calls (OSU)"
                                       : "calls back to back, the loop's time per call");
        printf("# Size  Latency (us): slowest rank, average of the ranks\n");
        fflush(stdout);
    }
    for (size_t size = (opts.min_size > first_size) ? opts.min_size : first_size;
         size <= opts.max_size; size *= 2) {
        int iters = loom_bench_iters(opts.iters, size, 100, 20);
        int warmup = loom_bench_iters(opts.warmup, size, 10, 3);
        double start = 0.0, mine = 0.0, slowest, sum;

        call(size, 1);
        LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < warmup + iters; i++) {
            if (opts.barrier) {
                /* OSU's way: each call alone, the ranks lined up before it */
                start = MPI_Wtime();
                call(size, 0);
                mine += (i >= warmup) ? MPI_Wtime() - start : 0.0;
                LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
                continue;
            }
            if (i == warmup) {
                start = MPI_Wtime();
            }
            call(size, 0);
        }
        mine = (opts.barrier ? mine : MPI_Wtime() - start) * 1e6 / iters;
        LOOM_CHECK_MPI(MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0,
                                  MPI_COMM_WORLD));
        LOOM_CHECK_MPI(MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
        if (0 == rank) {
            printf("%-10zu %14.2f %14.2f\n", size, slowest, sum / nprocs);
            fflush(stdout);
        }
        LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    LOOM_CHECK_MPI(MPI_Finalize());
    return 0;
}
