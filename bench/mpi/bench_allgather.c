/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * MPI_Allgather latency, OSU-style (bench_coll.h): sizes are the whole
 * result (each rank's block is size / ranks bytes), from 512 B up to
 * -m max (default 16 MiB); each size's first call is checked at every rank,
 * every rank's block byte for byte.
 */
#include "bench_coll.h"
#include "loom_test_util.h"

#include <stdio.h>
#include <string.h>

static unsigned char *send, *recv;

static void setup(size_t max_size)
{
    send = loom_malloc(max_size + 8);
    recv = loom_malloc(max_size + 8);
}

static void allgather(size_t size, int check)
{
    int rank, nprocs, peer;
    size_t block;
    char what[96];

    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    block = size / (size_t)nprocs;
    if (!check) {
        LOOM_CHECK_MPI(MPI_Allgather(send, (int)block, MPI_BYTE, recv, (int)block, MPI_BYTE,
                                     MPI_COMM_WORLD));
        return;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    loom_fill_pattern(send, block, (unsigned)size, rank);
    memset(recv, LOOM_POISON, size);
    LOOM_CHECK_MPI(MPI_Allgather(send, (int)block, MPI_BYTE, recv, (int)block, MPI_BYTE,
                                 MPI_COMM_WORLD));
    for (peer = 0; peer < nprocs; ++peer) {
        snprintf(what, sizeof(what), "allgather of %zu bytes, rank %d's block", size, peer);
        if (loom_verify_pattern(recv + (size_t)peer * block, block, (unsigned)size, peer,
                                what) >= 0) {
            loom_fail("%s is wrong at rank %d", what, rank);
        }
    }
}

int main(int argc, char **argv)
{
    return loom_bench_coll_run(argc, argv, "bench_allgather",
                               "loom allgather benchmark, bytes (size: the whole result)", 512,
                               16 * MIB, setup, allgather);
}
