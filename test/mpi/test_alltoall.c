/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Collectives over all ranks (meant for -np 4, runs with any -np >= 2):
 * MPI_Alltoall with 1 B .. 4 MiB per peer, MPI_Alltoallv with a different
 * size per (sender, receiver) and gaps between the receive blocks, then
 * MPI_Allreduce and MPI_Bcast of a few sizes.  Everything is verified.
 */

#include "loom_test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* the block sent from src to dst carries pattern (seed ^ dst, src) */
static unsigned block_seed(unsigned seed, int dst)
{
    return seed ^ ((unsigned) dst << 24);
}

static void test_alltoall(size_t size, int rank, int nprocs)
{
    size_t total = size * (size_t) nprocs;
    unsigned char *sbuf = loom_malloc(total);
    unsigned char *rbuf = loom_malloc(total + LOOM_GUARD_SIZE);
    unsigned seed = (unsigned) size;
    char what[96];

    for (int p = 0; p < nprocs; p++) {
        loom_fill_pattern(sbuf + p * size, size, block_seed(seed, p), rank);
    }
    memset(rbuf, LOOM_POISON, total + LOOM_GUARD_SIZE);
    LOOM_CHECK_MPI(MPI_Alltoall(sbuf, (int) size, MPI_BYTE, rbuf, (int) size,
                                MPI_BYTE, MPI_COMM_WORLD));
    for (int p = 0; p < nprocs; p++) {
        snprintf(what, sizeof(what), "Alltoall %zu B per peer, block of %d",
                 size, p);
        if (loom_verify_pattern(rbuf + p * size, size, block_seed(seed, rank),
                                p, what) >= 0) {
            loom_fail("%s is wrong", what);
        }
    }
    if (loom_verify_byte(rbuf + total, LOOM_GUARD_SIZE, LOOM_POISON, -1,
                         "Alltoall guard") >= 0) {
        loom_fail("Alltoall %zu B per peer wrote past the receive buffer",
                  size);
    }
    free(sbuf);
    free(rbuf);
}

/* bytes sent from src to dst in the Alltoallv round of base size */
static int v_count(size_t base, int src, int dst)
{
    return (int) (base + (size_t) (src * 7 + dst * 3) * (base / 16 + 1));
}

#define V_GAP 64    /* poison bytes between two receive blocks */

static void test_alltoallv(size_t base, int rank, int nprocs)
{
    int *scounts = loom_malloc(4 * nprocs * sizeof(int));
    int *sdispls = scounts + nprocs, *rcounts = scounts + 2 * nprocs;
    int *rdispls = scounts + 3 * nprocs;
    size_t stotal = 0, rtotal = 0;
    unsigned seed = (unsigned) base + 1;
    unsigned char *sbuf, *rbuf, *image;
    char what[96];

    for (int p = 0; p < nprocs; p++) {
        scounts[p] = v_count(base, rank, p);
        sdispls[p] = (int) stotal;
        stotal += scounts[p];
        rcounts[p] = v_count(base, p, rank);
        rdispls[p] = (int) rtotal;
        rtotal += rcounts[p] + V_GAP;
    }
    sbuf = loom_malloc(stotal);
    rbuf = loom_malloc(rtotal);
    image = loom_malloc(rtotal);
    memset(rbuf, LOOM_POISON, rtotal);
    memset(image, LOOM_POISON, rtotal);
    for (int p = 0; p < nprocs; p++) {
        loom_fill_pattern(sbuf + sdispls[p], scounts[p], block_seed(seed, p),
                          rank);
        loom_fill_pattern(image + rdispls[p], rcounts[p],
                          block_seed(seed, rank), p);
    }
    LOOM_CHECK_MPI(MPI_Alltoallv(sbuf, scounts, sdispls, MPI_BYTE, rbuf,
                                 rcounts, rdispls, MPI_BYTE, MPI_COMM_WORLD));
    snprintf(what, sizeof(what), "Alltoallv base %zu B", base);
    if (loom_verify_image(rbuf, image, rtotal, -1, what) >= 0) {
        loom_fail("%s: receive buffer wrong (blocks at displs of %d..., "
                  "%d poison bytes after each)", what, rdispls[0], V_GAP);
    }
    free(image);
    free(rbuf);
    free(sbuf);
    free(scounts);
}

static int64_t reduce_value(int rank, size_t i)
{
    return (int64_t) ((i * 2654435761u) % 1000003) * (rank + 1) - (int64_t) i;
}

static void test_allreduce(int count, int rank, int nprocs)
{
    int64_t *in = loom_malloc(count * sizeof(int64_t));
    int64_t *out = loom_malloc(count * sizeof(int64_t));

    for (int i = 0; i < count; i++) {
        in[i] = reduce_value(rank, i);
    }
    LOOM_CHECK_MPI(MPI_Allreduce(in, out, count, MPI_INT64_T, MPI_SUM,
                                 MPI_COMM_WORLD));
    for (int i = 0; i < count; i++) {
        int64_t expected = 0;

        for (int p = 0; p < nprocs; p++) {
            expected += reduce_value(p, i);
        }
        if (out[i] != expected) {
            loom_fail("Allreduce of %d int64: element %d is %lld, expected "
                      "%lld", count, i, (long long) out[i],
                      (long long) expected);
        }
    }
    free(in);
    free(out);
}

static void test_bcast(size_t size, int root, int rank)
{
    unsigned char *buf = loom_malloc(size + LOOM_GUARD_SIZE);
    char what[96];

    snprintf(what, sizeof(what), "Bcast of %zu B from root %d", size, root);
    memset(buf, LOOM_POISON, size + LOOM_GUARD_SIZE);
    if (rank == root) {
        loom_fill_pattern(buf, size, (unsigned) size, root);
    }
    LOOM_CHECK_MPI(MPI_Bcast(buf, (int) size, MPI_BYTE, root, MPI_COMM_WORLD));
    loom_check_recv(buf, size, (unsigned) size, root, what);
    free(buf);
}

int main(int argc, char **argv)
{
    static const size_t a2a_sizes[] = { 1, 7, 64, 1000, 4096, 65536 + 13,
                                        MIB, 4 * MIB };
    static const size_t v_sizes[] = { 0, 5, 4096, 100000, MIB };
    static const int reduce_counts[] = { 1, 100, 65536, 1 << 20 };
    static const size_t bcast_sizes[] = { 1, 4096, MIB + 3, 4 * MIB };
    int rank, nprocs;

    loom_test_init(&argc, &argv, "test_alltoall", 2, &rank, &nprocs);

    for (size_t i = 0; i < NELEMS(a2a_sizes); i++) {
        test_alltoall(a2a_sizes[i], rank, nprocs);
    }
    for (size_t i = 0; i < NELEMS(v_sizes); i++) {
        test_alltoallv(v_sizes[i], rank, nprocs);
    }
    for (size_t i = 0; i < NELEMS(reduce_counts); i++) {
        test_allreduce(reduce_counts[i], rank, nprocs);
    }
    for (size_t i = 0; i < NELEMS(bcast_sizes); i++) {
        test_bcast(bcast_sizes[i], (int) i % nprocs, rank);
    }
    loom_test_pass();
}
