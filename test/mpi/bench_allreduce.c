/*
 * MPI_Allreduce latency, OSU-style (bench_coll.h): MPI_SUM of doubles, 8 B
 * up to -m max (default 16 MiB); each size's first call is checked at
 * every rank against the exact sum (integer values: any order is exact).
 */
#include "bench_coll.h"
#include "loom_test_util.h"

static double *send, *recv;

static void setup(size_t max_size)
{
    send = loom_malloc(max_size + sizeof(double));
    recv = loom_malloc(max_size + sizeof(double));
}

static void allreduce(size_t size, int check)
{
    int count = (int)(size / sizeof(double)), rank, nprocs, i;

    if (!check) {
        LOOM_CHECK_MPI(MPI_Allreduce(send, recv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        return;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (i = 0; i < count; ++i) {
        send[i] = (double)(i % 1000 + rank);
        recv[i] = -1.0;
    }
    LOOM_CHECK_MPI(MPI_Allreduce(send, recv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    for (i = 0; i < count; ++i) {
        double want = (double)nprocs * (i % 1000) + (double)nprocs * (nprocs - 1) / 2;
        if (recv[i] != want) {
            loom_fail("allreduce of %zu bytes: double %d is %g, expected %g", size, i,
                      recv[i], want);
        }
    }
}

int main(int argc, char **argv)
{
    return loom_bench_coll_run(argc, argv, "bench_allreduce",
                               "loom allreduce benchmark, MPI_SUM of doubles", sizeof(double),
                               16 * MIB, setup, allreduce);
}
