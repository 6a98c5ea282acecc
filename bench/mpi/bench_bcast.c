/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * MPI_Bcast latency, OSU-style (bench_coll.h): sizes 1 B up to -m max
 * (default 16 MiB), from rank 0, each size's first broadcast checked byte
 * for byte at every rank.
 */
#include "bench_coll.h"
#include "loom_test_util.h"

#include <stdio.h>
#include <string.h>

static unsigned char *buf;

static void setup(size_t max_size)
{
    buf = loom_malloc(max_size + LOOM_GUARD_SIZE);
}

static void bcast(size_t size, int check)
{
    char what[64];
    int rank;

    if (!check) {
        LOOM_CHECK_MPI(MPI_Bcast(buf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD));
        return;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
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
    return loom_bench_coll_run(argc, argv, "bench_bcast", "loom broadcast benchmark, root 0",
                               1, 16 * MIB, setup, bcast);
}
