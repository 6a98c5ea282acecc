/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * For oversubscribed nodes (more ranks than cores): the time of -i
 * MPI_Alltoall of 1 KiB per peer among all ranks (default 200), then of -i
 * 8-byte ping-pongs between ranks 0 and 1 while every other rank waits in
 * MPI_Barrier.  Ranks that wait by polling take the cores the working ranks
 * need; with btl_loom_block_when_idle they sleep on the rails instead.
 * The alltoall's data is checked once.
 */

#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage = "[-i iters]";

#define BLOCK 1024

int main(int argc, char **argv)
{
    struct loom_bench_opts opts = { 0, 200, 0, 0, LOOM_BENCH_NO_MIN, -1 };
    unsigned char *sbuf, *rbuf;
    double start, alltoall, pingpong;
    int rank, nprocs, i, p;
    char byte[8] = {0};

    loom_test_init(&argc, &argv, "bench_oversub", 2, &rank, &nprocs);
    loom_bench_parse(argc, argv, usage, &opts);
    sbuf = loom_malloc((size_t)BLOCK * nprocs);
    rbuf = loom_malloc((size_t)BLOCK * nprocs);
    for (p = 0; p < nprocs; ++p) {
        memset(sbuf + (size_t)p * BLOCK, (rank * 31 + p) & 0xff, BLOCK);
    }
    LOOM_CHECK_MPI(MPI_Alltoall(sbuf, BLOCK, MPI_BYTE, rbuf, BLOCK, MPI_BYTE, MPI_COMM_WORLD));
    for (p = 0; p < nprocs; ++p) {
        for (i = 0; i < BLOCK; ++i) {
            if (rbuf[(size_t)p * BLOCK + i] != ((p * 31 + rank) & 0xff)) {
                loom_fail("alltoall: byte %d from rank %d wrong", i, p);
            }
        }
    }
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    start = MPI_Wtime();
    for (i = 0; i < opts.iters; ++i) {
        LOOM_CHECK_MPI(MPI_Alltoall(sbuf, BLOCK, MPI_BYTE, rbuf, BLOCK, MPI_BYTE,
                                    MPI_COMM_WORLD));
    }
    alltoall = (MPI_Wtime() - start) * 1e6 / opts.iters;
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    start = MPI_Wtime();
    for (i = 0; i < opts.iters * 5 && rank < 2; ++i) {
        if (0 == rank) {
            LOOM_CHECK_MPI(MPI_Send(byte, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
            LOOM_CHECK_MPI(MPI_Recv(byte, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD,
                                    MPI_STATUS_IGNORE));
        } else {
            LOOM_CHECK_MPI(MPI_Recv(byte, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
                                    MPI_STATUS_IGNORE));
            LOOM_CHECK_MPI(MPI_Send(byte, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD));
        }
    }
    pingpong = (MPI_Wtime() - start) * 1e6 / (2.0 * opts.iters * 5);
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (0 == rank) {
        printf("# %d ranks: MPI_Alltoall of %d B per peer, then 8 B ping-pong 0<->1\n",
               nprocs, BLOCK);
        printf("alltoall_us %.1f\npingpong_half_rtt_us %.1f\n", alltoall, pingpong);
    }
    free(sbuf);
    free(rbuf);
    LOOM_CHECK_MPI(MPI_Finalize());
    return 0;
}
