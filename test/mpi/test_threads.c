/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * MPI_THREAD_MULTIPLE: NTHREADS threads in every rank call MPI at once.
 * Each thread exchanges messages of every protocol size with the same
 * thread of the paired rank, on tags of its own, and runs reductions on a
 * communicator of its own (a dup of MPI_COMM_WORLD per thread, as MPI
 * requires for collectives from several threads).  Every byte is verified.
 * Peers are added lazily, on first contact (mpi_add_procs_cutoff 0, as in
 * jobs above 32 ranks): then ob1 adds a peer under its own lock, from a
 * sending thread or from a receive callback inside loom's progress, while
 * other threads are in loom.  Skips when the library does not provide
 * MPI_THREAD_MULTIPLE.
 */
#include "loom_test_util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 4
#define ROUNDS   8

static const size_t sizes[] = { 1, 200, 4000, 20000, 300000, 2 * MIB + 5 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

struct thread_ctx {
    int       index;
    int       rank;
    int       nprocs;
    int       peer;
    MPI_Comm  comm;
    pthread_t thread;
};

static unsigned seed_of(int thread, int round, size_t i)
{
    return (unsigned)(thread * 100000 + round * 100 + (int)i);
}

static void exchange(const struct thread_ctx *ctx, int round, unsigned char *sbuf,
                     unsigned char *rbuf)
{
    MPI_Request reqs[2];
    MPI_Status statuses[2];
    char what[96];
    size_t i;
    int tag;

    for (i = 0; i < NSIZES; ++i) {
        tag = ctx->index * 100 + (int)i;
        loom_fill_pattern(sbuf, sizes[i], seed_of(ctx->index, round, i), ctx->rank);
        memset(rbuf, LOOM_POISON, sizes[i] + LOOM_GUARD_SIZE);
        LOOM_CHECK_MPI(MPI_Irecv(rbuf, (int)sizes[i], MPI_BYTE, ctx->peer, tag, MPI_COMM_WORLD,
                                 &reqs[0]));
        LOOM_CHECK_MPI(MPI_Isend(sbuf, (int)sizes[i], MPI_BYTE, ctx->peer, tag, MPI_COMM_WORLD,
                                 &reqs[1]));
        LOOM_CHECK_MPI(MPI_Waitall(2, reqs, statuses));
        snprintf(what, sizeof(what), "thread %d, round %d, %zu bytes", ctx->index, round,
                 sizes[i]);
        loom_check_count(&statuses[0], MPI_BYTE, (int)sizes[i], ctx->peer, what);
        loom_check_recv(rbuf, sizes[i], seed_of(ctx->index, round, i), ctx->peer, what);
    }
}

static void reduce(const struct thread_ctx *ctx, int round)
{
    enum { COUNT = 5000 };
    int64_t *in = loom_malloc(COUNT * sizeof(int64_t)), *out = loom_malloc(COUNT * sizeof(int64_t));
    int64_t want;
    size_t i;
    int r;

    for (i = 0; i < COUNT; ++i) {
        in[i] = (int64_t)ctx->rank * 7919 + (int64_t)i * ctx->index + round;
    }
    LOOM_CHECK_MPI(MPI_Allreduce(in, out, COUNT, MPI_INT64_T, MPI_SUM, ctx->comm));
    for (i = 0; i < COUNT; ++i) {
        for (want = 0, r = 0; r < ctx->nprocs; ++r) {
            want += (int64_t)r * 7919 + (int64_t)i * ctx->index + round;
        }
        if (out[i] != want) {
            loom_fail("thread %d, round %d: allreduce element %zu is %lld, expected %lld",
                      ctx->index, round, i, (long long)out[i], (long long)want);
        }
    }
    free(in);
    free(out);
}

static void *thread_main(void *arg)
{
    struct thread_ctx *ctx = arg;
    unsigned char *sbuf = loom_malloc(sizes[NSIZES - 1]);
    unsigned char *rbuf = loom_malloc(sizes[NSIZES - 1] + LOOM_GUARD_SIZE);
    int round;

    for (round = 0; round < ROUNDS; ++round) {
        if (ctx->peer >= 0) {
            exchange(ctx, round, sbuf, rbuf);
        }
        reduce(ctx, round);
    }
    free(sbuf);
    free(rbuf);
    return NULL;
}

int main(int argc, char **argv)
{
    struct thread_ctx ctx[NTHREADS];
    int rank, nprocs, t;

    setenv("OMPI_MCA_mpi_add_procs_cutoff", "0", 0);
    loom_test_init_thread(&argc, &argv, "test_threads", 2, MPI_THREAD_MULTIPLE, &rank, &nprocs);
    for (t = 0; t < NTHREADS; ++t) {
        ctx[t].index  = t;
        ctx[t].rank   = rank;
        ctx[t].nprocs = nprocs;
        ctx[t].peer   = loom_pair_peer(rank, nprocs);
        LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &ctx[t].comm));
    }
    for (t = 0; t < NTHREADS; ++t) {
        if (0 != pthread_create(&ctx[t].thread, NULL, thread_main, &ctx[t])) {
            loom_fail("cannot start thread %d", t);
        }
    }
    for (t = 0; t < NTHREADS; ++t) {
        pthread_join(ctx[t].thread, NULL);
        LOOM_CHECK_MPI(MPI_Comm_free(&ctx[t].comm));
    }
    loom_test_pass();
}
