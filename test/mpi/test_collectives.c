/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Collectives and communicators beyond test_alltoall, all of them built by
 * Open MPI's coll components on point-to-point messages through loom:
 * Reduce to every root, Reduce_scatter_block, Scan and Exscan, Gatherv,
 * Scatterv and Allgatherv with counts differing per rank (large enough for
 * rendezvous), the nonblocking Ibarrier, Ibcast, Iallreduce and Ialltoall
 * in flight together, Comm_split and Comm_dup with collectives on the new
 * communicators, and an intercommunicator (Intercomm_create, messages
 * across it, Intercomm_merge).  Every element is checked against the value
 * computed locally.
 */
#include "loom_test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG (300 * 1000) /* elements: rendezvous, striped where rails allow */

static int64_t value_of(int rank, size_t i, int salt)
{
    return (int64_t)rank * 1000003 + (int64_t)i * 7 + salt;
}

static void expect_i64(int64_t got, int64_t want, const char *what, size_t i)
{
    if (got != want) {
        loom_fail("%s: element %zu is %lld, expected %lld", what, i, (long long)got,
                  (long long)want);
    }
}

/* sum over ranks lo..hi-1 of value_of(r, i, salt) */
static int64_t sum_of(int lo, int hi, size_t i, int salt)
{
    int64_t sum = 0;
    int r;

    for (r = lo; r < hi; ++r) {
        sum += value_of(r, i, salt);
    }
    return sum;
}

static void test_reduce(MPI_Comm comm, int rank, int nprocs)
{
    int64_t *in = loom_malloc(BIG * sizeof(int64_t)), *out = loom_malloc(BIG * sizeof(int64_t));
    int root;
    size_t i;

    for (root = 0; root < nprocs; ++root) {
        for (i = 0; i < BIG; ++i) {
            in[i]  = value_of(rank, i, root);
            out[i] = -1;
        }
        LOOM_CHECK_MPI(MPI_Reduce(in, out, BIG, MPI_INT64_T, MPI_SUM, root, comm));
        if (rank == root) {
            for (i = 0; i < BIG; ++i) {
                expect_i64(out[i], sum_of(0, nprocs, i, root), "MPI_Reduce", i);
            }
        }
    }
    free(in);
    free(out);
}

static void test_reduce_scatter_scan(MPI_Comm comm, int rank, int nprocs)
{
    size_t block = 40000, i;
    int64_t *in = loom_malloc(block * (size_t)nprocs * sizeof(int64_t));
    int64_t *out = loom_malloc(block * sizeof(int64_t));

    for (i = 0; i < block * (size_t)nprocs; ++i) {
        in[i] = value_of(rank, i, 1);
    }
    LOOM_CHECK_MPI(MPI_Reduce_scatter_block(in, out, (int)block, MPI_INT64_T, MPI_SUM, comm));
    for (i = 0; i < block; ++i) {
        expect_i64(out[i], sum_of(0, nprocs, (size_t)rank * block + i, 1),
                   "MPI_Reduce_scatter_block", i);
    }
    LOOM_CHECK_MPI(MPI_Scan(in, out, (int)block, MPI_INT64_T, MPI_SUM, comm));
    for (i = 0; i < block; ++i) {
        expect_i64(out[i], sum_of(0, rank + 1, i, 1), "MPI_Scan", i);
    }
    LOOM_CHECK_MPI(MPI_Exscan(in, out, (int)block, MPI_INT64_T, MPI_SUM, comm));
    for (i = 0; rank > 0 && i < block; ++i) { /* rank 0's result is undefined */
        expect_i64(out[i], sum_of(0, rank, i, 1), "MPI_Exscan", i);
    }
    free(in);
    free(out);
}

/* rank r contributes count_of(r) elements */
static int count_of(int r)
{
    return 1000 + 37000 * (r % 3) + r;
}

static void test_vector_collectives(MPI_Comm comm, int rank, int nprocs)
{
    int *counts = loom_malloc((size_t)nprocs * sizeof(int));
    int *displs = loom_malloc((size_t)nprocs * sizeof(int));
    int64_t *mine, *all;
    int r, total = 0, root = nprocs - 1;
    size_t i;
    char what[64];

    for (r = 0; r < nprocs; ++r) {
        counts[r] = count_of(r);
        displs[r] = total;
        total    += counts[r] + 1; /* a gap of one element after each block */
    }
    mine = loom_malloc((size_t)counts[rank] * sizeof(int64_t));
    all  = loom_malloc((size_t)total * sizeof(int64_t));
    for (i = 0; i < (size_t)counts[rank]; ++i) {
        mine[i] = value_of(rank, i, 2);
    }

    /* Allgatherv: every block in place, the gaps untouched */
    for (i = 0; i < (size_t)total; ++i) {
        all[i] = -7;
    }
    LOOM_CHECK_MPI(MPI_Allgatherv(mine, counts[rank], MPI_INT64_T, all, counts, displs,
                                  MPI_INT64_T, comm));
    for (r = 0; r < nprocs; ++r) {
        snprintf(what, sizeof(what), "MPI_Allgatherv block of rank %d", r);
        for (i = 0; i < (size_t)counts[r]; ++i) {
            expect_i64(all[displs[r] + i], value_of(r, i, 2), what, i);
        }
        expect_i64(all[displs[r] + counts[r]], -7, "MPI_Allgatherv gap", (size_t)r);
    }

    /* Gatherv to the last rank */
    for (i = 0; i < (size_t)total; ++i) {
        all[i] = -7;
    }
    LOOM_CHECK_MPI(MPI_Gatherv(mine, counts[rank], MPI_INT64_T, all, counts, displs,
                               MPI_INT64_T, root, comm));
    for (r = 0; rank == root && r < nprocs; ++r) {
        snprintf(what, sizeof(what), "MPI_Gatherv block of rank %d", r);
        for (i = 0; i < (size_t)counts[r]; ++i) {
            expect_i64(all[displs[r] + i], value_of(r, i, 2), what, i);
        }
    }

    /* Scatterv back from it, with other values */
    if (rank == root) {
        for (r = 0; r < nprocs; ++r) {
            for (i = 0; i < (size_t)counts[r]; ++i) {
                all[displs[r] + i] = value_of(r, i, 3);
            }
        }
    }
    memset(mine, 0, (size_t)counts[rank] * sizeof(int64_t));
    LOOM_CHECK_MPI(MPI_Scatterv(all, counts, displs, MPI_INT64_T, mine, counts[rank],
                                MPI_INT64_T, root, comm));
    for (i = 0; i < (size_t)counts[rank]; ++i) {
        expect_i64(mine[i], value_of(rank, i, 3), "MPI_Scatterv", i);
    }
    free(counts);
    free(displs);
    free(mine);
    free(all);
}

/* Four nonblocking collectives in flight at once, completed together. */
static void test_nonblocking(MPI_Comm comm, int rank, int nprocs)
{
    size_t n = 100000, per = 5000, i;
    int64_t *bc = loom_malloc(n * sizeof(int64_t)), *red = loom_malloc(n * sizeof(int64_t));
    int64_t *sum = loom_malloc(n * sizeof(int64_t));
    int64_t *a2a_in = loom_malloc(per * (size_t)nprocs * sizeof(int64_t));
    int64_t *a2a_out = loom_malloc(per * (size_t)nprocs * sizeof(int64_t));
    MPI_Request reqs[4];
    int r, root = nprocs / 2;

    for (i = 0; i < n; ++i) {
        bc[i]  = (rank == root) ? value_of(root, i, 4) : -1;
        red[i] = value_of(rank, i, 5);
    }
    for (r = 0; r < nprocs; ++r) {
        for (i = 0; i < per; ++i) {
            a2a_in[(size_t)r * per + i] = value_of(rank, (size_t)r * per + i, 6);
        }
    }
    LOOM_CHECK_MPI(MPI_Ibarrier(comm, &reqs[0]));
    LOOM_CHECK_MPI(MPI_Ibcast(bc, (int)n, MPI_INT64_T, root, comm, &reqs[1]));
    LOOM_CHECK_MPI(MPI_Iallreduce(red, sum, (int)n, MPI_INT64_T, MPI_SUM, comm, &reqs[2]));
    LOOM_CHECK_MPI(MPI_Ialltoall(a2a_in, (int)per, MPI_INT64_T, a2a_out, (int)per, MPI_INT64_T,
                                 comm, &reqs[3]));
    LOOM_CHECK_MPI(MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE));
    for (i = 0; i < n; ++i) {
        expect_i64(bc[i], value_of(root, i, 4), "MPI_Ibcast", i);
        expect_i64(sum[i], sum_of(0, nprocs, i, 5), "MPI_Iallreduce", i);
    }
    for (r = 0; r < nprocs; ++r) {
        for (i = 0; i < per; ++i) {
            /* block r came from rank r: its block for us */
            expect_i64(a2a_out[(size_t)r * per + i], value_of(r, (size_t)rank * per + i, 6),
                       "MPI_Ialltoall", (size_t)r * per + i);
        }
    }
    free(bc);
    free(red);
    free(sum);
    free(a2a_in);
    free(a2a_out);
}

/* Even and odd ranks apart; the halves talk over an intercommunicator. */
static void test_communicators(int rank, int nprocs)
{
    MPI_Comm half, dup, inter, merged;
    int color = rank % 2, hrank, hsize, rsize, mrank, msize, peer;
    int64_t mine = value_of(rank, 0, 8), got, want;
    MPI_Status status;

    LOOM_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, -rank, &half)); /* reversed order */
    LOOM_CHECK_MPI(MPI_Comm_rank(half, &hrank));
    LOOM_CHECK_MPI(MPI_Comm_size(half, &hsize));
    LOOM_CHECK_MPI(MPI_Comm_dup(half, &dup));
    test_reduce_scatter_scan(dup, hrank, hsize);
    LOOM_CHECK_MPI(MPI_Allreduce(&mine, &got, 1, MPI_INT64_T, MPI_SUM, dup));
    for (want = 0, peer = color; peer < nprocs; peer += 2) {
        want += value_of(peer, 0, 8);
    }
    expect_i64(got, want, "MPI_Allreduce on a split communicator", 0);

    /* leaders: world ranks 0 (even half) and 1 (odd half), the highest
     * rank of each half since the split reversed the order */
    LOOM_CHECK_MPI(MPI_Intercomm_create(half, hsize - 1, MPI_COMM_WORLD, 1 - color, 77,
                                        &inter));
    LOOM_CHECK_MPI(MPI_Comm_remote_size(inter, &rsize));
    if (hrank < rsize) { /* pairs across: the same rank in the other half */
        int64_t *buf = loom_malloc(BIG / 10 * sizeof(int64_t));
        size_t i;

        for (i = 0; i < BIG / 10; ++i) {
            buf[i] = value_of(rank, i, 9);
        }
        LOOM_CHECK_MPI(MPI_Sendrecv_replace(buf, BIG / 10, MPI_INT64_T, hrank, 5, hrank, 5,
                                            inter, &status));
        peer = status.MPI_SOURCE; /* rank in the remote group */
        for (i = 0; i < BIG / 10; ++i) {
            /* remote rank peer of the other half is world rank: */
            int world = 1 - color + 2 * ((rsize - 1) - peer);
            expect_i64(buf[i], value_of(world, i, 9), "message across an intercommunicator", i);
        }
        free(buf);
    }
    LOOM_CHECK_MPI(MPI_Intercomm_merge(inter, color, &merged));
    LOOM_CHECK_MPI(MPI_Comm_rank(merged, &mrank));
    LOOM_CHECK_MPI(MPI_Comm_size(merged, &msize));
    if (msize != nprocs) {
        loom_fail("merged intercommunicator has %d ranks, expected %d", msize, nprocs);
    }
    test_reduce(merged, mrank, msize);
    LOOM_CHECK_MPI(MPI_Comm_free(&merged));
    LOOM_CHECK_MPI(MPI_Comm_free(&inter));
    LOOM_CHECK_MPI(MPI_Comm_free(&dup));
    LOOM_CHECK_MPI(MPI_Comm_free(&half));
}

int main(int argc, char **argv)
{
    int rank, nprocs;

    loom_test_init(&argc, &argv, "test_collectives", 2, &rank, &nprocs);
    test_reduce(MPI_COMM_WORLD, rank, nprocs);
    test_reduce_scatter_scan(MPI_COMM_WORLD, rank, nprocs);
    test_vector_collectives(MPI_COMM_WORLD, rank, nprocs);
    test_nonblocking(MPI_COMM_WORLD, rank, nprocs);
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    test_communicators(rank, nprocs);
    loom_test_pass();
}
