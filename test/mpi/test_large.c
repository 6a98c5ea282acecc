/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * A message larger than 2 GiB (more bytes than an int counts, and more
 * than a 31-bit length field holds), sent with a derived datatype from rank
 * 0 to rank 1: every byte verified.  One way only: the way back took as
 * long again and moved the same sizes by the same protocol.  Other ranks
 * take no part.  Skips where the machine has not the memory for the two
 * buffers.
 */
#include "loom_test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK  4096
#define BLOCKS (512 * 1024 + 3) /* 2 GiB + 12 KiB */

/* MemAvailable of /proc/meminfo in bytes, 0 if unknown. */
static size_t mem_available(void)
{
    unsigned long long kib = 0;
    char line[128];
    FILE *f = fopen("/proc/meminfo", "r");

    while (NULL != f && NULL != fgets(line, sizeof(line), f)) {
        if (1 == sscanf(line, "MemAvailable: %llu kB", &kib)) {
            break;
        }
    }
    if (NULL != f) {
        fclose(f);
    }
    return (size_t)kib * 1024;
}

/* A cheap pattern over gigabytes: the 64-bit word at word index w. */
static uint64_t word_at(size_t w, unsigned seed)
{
    uint64_t x = (uint64_t)w * 0x9e3779b97f4a7c15ull + seed;

    x ^= x >> 29;
    return x * 0xbf58476d1ce4e5b9ull;
}

static void fill(uint64_t *buf, size_t words, unsigned seed)
{
    size_t w;

    for (w = 0; w < words; ++w) {
        buf[w] = word_at(w, seed);
    }
}

static void verify(const uint64_t *buf, size_t words, unsigned seed, const char *what)
{
    size_t w;

    for (w = 0; w < words; ++w) {
        if (buf[w] != word_at(w, seed)) {
            loom_fail("%s: byte offset %zu of %zu is wrong (got %#llx, expected %#llx)", what,
                      w * sizeof(uint64_t), words * sizeof(uint64_t),
                      (unsigned long long)buf[w], (unsigned long long)word_at(w, seed));
        }
    }
}

int main(int argc, char **argv)
{
    size_t bytes = (size_t)BLOCK * BLOCKS, words = bytes / sizeof(uint64_t);
    uint64_t *out = NULL, *in = NULL;
    MPI_Datatype block;
    MPI_Status status;
    int rank, nprocs, count;

    loom_test_init(&argc, &argv, "test_large", 2, &rank, &nprocs);
    {
        /* the ranks may share a node: rank 0 decides for both */
        unsigned long long avail = mem_available();
        char reason[128];

        LOOM_CHECK_MPI(MPI_Bcast(&avail, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD));
        if (avail < 2 * bytes + bytes / 2) {
            snprintf(reason, sizeof(reason), "test_large needs %zu MiB of free memory, the "
                     "machine has %llu MiB", (2 * bytes + bytes / 2) >> 20, avail >> 20);
            loom_test_skip(reason);
        }
    }
    LOOM_CHECK_MPI(MPI_Type_contiguous(BLOCK, MPI_BYTE, &block));
    LOOM_CHECK_MPI(MPI_Type_commit(&block));
    if (0 == rank) {
        out = loom_malloc(bytes);
        fill(out, words, 1);
        LOOM_CHECK_MPI(MPI_Send(out, BLOCKS, block, 1, 1, MPI_COMM_WORLD));
    } else if (1 == rank) {
        in = loom_malloc(bytes);
        memset(in, LOOM_POISON, bytes);
        LOOM_CHECK_MPI(MPI_Recv(in, BLOCKS, block, 0, 1, MPI_COMM_WORLD, &status));
        LOOM_CHECK_MPI(MPI_Get_count(&status, block, &count));
        if (BLOCKS != count) {
            loom_fail("the message from rank 0 has %d blocks of %d bytes, expected %d", count,
                      BLOCK, BLOCKS);
        }
        verify(in, words, 1, "rank 1: the 2 GiB message from rank 0");
    }
    free(out);
    free(in);
    LOOM_CHECK_MPI(MPI_Type_free(&block));
    loom_test_pass();
}
