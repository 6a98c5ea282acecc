/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * MPI_Allreduce latency, OSU-style (bench_coll.h): MPI_SUM of doubles, 8 B
 * up to -m max (default 16 MiB); each size's first call is checked against
 * the exact sum (integer values: any order is exact) at every rank that
 * gets it.  Built a second time as bench_reduce (LOOM_BENCH_REDUCE):
 * MPI_Reduce to rank 0, the same sums.
 */
#include "bench_coll.h"
#include "loom_test_util.h"

#ifdef LOOM_BENCH_REDUCE
#define BENCH_NAME  "bench_reduce"
#define BENCH_TITLE "loom reduce benchmark, MPI_SUM of doubles to rank 0"
#define BENCH_CALL(_s, _r, _n) MPI_Reduce(_s, _r, _n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD)
#else
#define BENCH_NAME  "bench_allreduce"
#define BENCH_TITLE "loom allreduce benchmark, MPI_SUM of doubles"
#define BENCH_CALL(_s, _r, _n) MPI_Allreduce(_s, _r, _n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)
#endif

static double *send, *recv;

static void setup(size_t max_size)
{
    send = loom_malloc(max_size + sizeof(double));
    recv = loom_malloc(max_size + sizeof(double));
}

static void reduction(size_t size, int check)
{
    int count = (int)(size / sizeof(double)), rank, nprocs, i;

    if (!check) {
        LOOM_CHECK_MPI(BENCH_CALL(send, recv, count));
        return;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (i = 0; i < count; ++i) {
        send[i] = (double)(i % 1000 + rank);
        recv[i] = -1.0;
    }
    LOOM_CHECK_MPI(BENCH_CALL(send, recv, count));
#ifdef LOOM_BENCH_REDUCE
    if (0 != rank) {
        return;
    }
#endif
    for (i = 0; i < count; ++i) {
        double want = (double)nprocs * (i % 1000) + (double)nprocs * (nprocs - 1) / 2;
        if (recv[i] != want) {
            loom_fail("%s of %zu bytes: double %d is %g, expected %g", BENCH_NAME, size, i,
                      recv[i], want);
        }
    }
}

int main(int argc, char **argv)
{
    return loom_bench_coll_run(argc, argv, BENCH_NAME, BENCH_TITLE, sizeof(double), 16 * MIB,
                               setup, reduction);
}
