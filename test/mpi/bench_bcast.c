/*
 * MPI_Bcast latency, OSU-style: for sizes 1 B up to -m max (default 16 MiB),
 * doubling, the time of one broadcast from rank 0, averaged over -i timed
 * calls after -w warm-up calls (defaults 100 / 10, and 20 / 3 from 64 KiB
 * up), the largest of all ranks' averages.  Each size first does one
 * broadcast whose bytes every rank checks.  Which collective component
 * runs it is the command line's choice (--mca coll ...).
 */

#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage = "[-m max_size] [-i iters] [-w warmup]";

static void verified_bcast(unsigned char *buf, size_t size, int rank)
{
    char what[64];

    snprintf(what, sizeof(what), "broadcast of %zu bytes", size);
    memset(buf, LOOM_POISON, size + LOOM_GUARD_SIZE);
    if (0 == rank) {
        loom_fill_pattern(buf, size, (unsigned)size, 0);
    }
    LOOM_CHECK_MPI(MPI_Bcast(buf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD));
    loom_check_recv(buf, size, (unsigned)size, 0, what);
}

int main(int argc, char **argv)
{
    struct loom_bench_opts opts = { 16 * MIB, -1, -1, 0 };
    unsigned char *buf;
    int rank, nprocs;

    loom_test_init(&argc, &argv, "bench_bcast", 2, &rank, &nprocs);
    loom_bench_parse(argc, argv, usage, &opts);
    buf = loom_malloc(opts.max_size + LOOM_GUARD_SIZE);
    if (0 == rank) {
        printf("# loom broadcast benchmark\n");
        printf("# %d ranks, root 0, max size %zu\n", nprocs, opts.max_size);
        printf("# Size  Latency (us)\n");
        fflush(stdout);
    }
    for (size_t size = 1; size <= opts.max_size; size *= 2) {
        int iters = loom_bench_iters(opts.iters, size, 100, 20);
        int warmup = loom_bench_iters(opts.warmup, size, 10, 3);
        double start = 0.0, mine, slowest;

        verified_bcast(buf, size, rank);
        LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < warmup + iters; i++) {
            if (i == warmup) {
                start = MPI_Wtime();
            }
            LOOM_CHECK_MPI(MPI_Bcast(buf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD));
        }
        mine = (MPI_Wtime() - start) * 1e6 / iters;
        LOOM_CHECK_MPI(MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0,
                                  MPI_COMM_WORLD));
        if (0 == rank) {
            printf("%-10zu %14.2f\n", size, slowest);
            fflush(stdout);
        }
        LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    free(buf);
    LOOM_CHECK_MPI(MPI_Finalize());
    return 0;
}
