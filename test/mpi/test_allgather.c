/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * MPI_Allgather, every byte checked: rank r's block is the pattern of
 * (seed, r), and every rank's result must hold every rank's block in rank
 * order, with the bytes after the result untouched.  Blocks of 0 B to
 * 2 MiB, MPI_IN_PLACE, bytes, ints, a contiguous derived type received for
 * ints sent, a vector type (left to the next component), one rank alone
 * sending with a vector type (every rank must leave that call to the next
 * component alike), 20 calls on the same buffers, world/dup/split
 * communicators and one made again, and, where the library provides
 * MPI_THREAD_MULTIPLE, two threads gathering on communicators of their own
 * at once.  With LOOM_EXPECT_COLL_LOOM=1 coll loom must have carried a
 * 2 MiB allgather (its pvar, and pushes asked for).
 */
#include "loom_test_threads.h"
#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t blocks[] = {0, 1, 13, 4096, 65544, 262152, MIB + 16, 2 * MIB + 8};
#define NBLOCKS (sizeof(blocks) / sizeof(blocks[0]))
#define MAX_BLOCK (2 * MIB + 8)

/* How one call is made. */
typedef enum { AS_BYTES, IN_PLACE, AS_INTS, AS_TRIPLES, AS_VECTOR, ONE_VECTOR } shape_t;

static const char *shape_names[] = {"bytes", "in place", "ints", "3-int type for ints",
                                    "vector type", "one rank's vector type"};

typedef struct {
    unsigned char *send;
    unsigned char *recv; /* nprocs blocks and a guard */
} bufs_t;

static void bufs_init(bufs_t *b, int nprocs)
{
    /* a vector of stride 2 spans twice its data; the block is made after it */
    b->send = loom_malloc(3 * MAX_BLOCK + 16);
    b->recv = loom_malloc(2 * (size_t)nprocs * MAX_BLOCK + LOOM_GUARD_SIZE);
}

static void bufs_free(bufs_t *b)
{
    free(b->send);
    free(b->recv);
}

/* A vector of count ints, each followed by a gap of one int. */
static MPI_Datatype vector_of(int count)
{
    MPI_Datatype t;

    LOOM_CHECK_MPI(MPI_Type_vector(count, 1, 2, MPI_INT, &t));
    LOOM_CHECK_MPI(MPI_Type_commit(&t));
    return t;
}

/* Packs a block into the even ints of buf (the vector's layout). */
static void spread_ints(unsigned char *buf, const unsigned char *block, size_t bytes)
{
    size_t i;

    for (i = 0; i < bytes / sizeof(int); ++i) {
        memcpy(buf + 2 * i * sizeof(int), block + i * sizeof(int), sizeof(int));
    }
}

static void gather_one(MPI_Comm comm, bufs_t *b, size_t block, shape_t shape, unsigned seed,
                       const char *where)
{
    int rank, nprocs, peer, count = (int)block, ints = (int)(block / sizeof(int));
    MPI_Datatype triple, vector = MPI_DATATYPE_NULL;
    unsigned char *mine;
    char what[160];

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    if (AS_BYTES != shape && IN_PLACE != shape) {
        block -= block % (3 * sizeof(int)); /* whole ints, and whole triples */
        ints  = (int)(block / sizeof(int));
    }
    memset(b->recv, LOOM_POISON, 2 * (size_t)nprocs * block + LOOM_GUARD_SIZE);
    if (AS_VECTOR == shape || (ONE_VECTOR == shape && nprocs - 1 == rank)) {
        vector = vector_of(ints);
        loom_fill_pattern(b->send + 2 * MAX_BLOCK, block, seed, rank);
        spread_ints(b->send, b->send + 2 * MAX_BLOCK, block);
    } else {
        mine = (IN_PLACE == shape) ? b->recv + (size_t)rank * block : b->send;
        loom_fill_pattern(mine, block, seed, rank);
    }
    switch (shape) {
    case AS_BYTES:
        LOOM_CHECK_MPI(MPI_Allgather(b->send, count, MPI_BYTE, b->recv, count, MPI_BYTE, comm));
        break;
    case IN_PLACE:
        LOOM_CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b->recv, count,
                                     MPI_BYTE, comm));
        break;
    case AS_INTS:
        LOOM_CHECK_MPI(MPI_Allgather(b->send, ints, MPI_INT, b->recv, ints, MPI_INT, comm));
        break;
    case AS_TRIPLES:
        LOOM_CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &triple));
        LOOM_CHECK_MPI(MPI_Type_commit(&triple));
        LOOM_CHECK_MPI(MPI_Allgather(b->send, ints, MPI_INT, b->recv, ints / 3, triple, comm));
        MPI_Type_free(&triple);
        break;
    case AS_VECTOR:
    case ONE_VECTOR:
        if (MPI_DATATYPE_NULL != vector) {
            LOOM_CHECK_MPI(MPI_Allgather(b->send, 1, vector, b->recv, ints, MPI_INT, comm));
        } else {
            LOOM_CHECK_MPI(MPI_Allgather(b->send, ints, MPI_INT, b->recv, ints, MPI_INT, comm));
        }
        break;
    }
    if (MPI_DATATYPE_NULL != vector) {
        MPI_Type_free(&vector);
    }
    for (peer = 0; peer < nprocs; ++peer) {
        snprintf(what, sizeof(what), "%s: allgather (%s) of %zu-byte blocks, rank %d's block",
                 where, shape_names[shape], block, peer);
        if (loom_verify_pattern(b->recv + (size_t)peer * block, block, seed, peer, what) >= 0) {
            loom_fail("%s is wrong at rank %d", what, rank);
        }
    }
    snprintf(what, sizeof(what), "%s: allgather (%s) of %zu-byte blocks, after the result",
             where, shape_names[shape], block);
    if (loom_verify_byte(b->recv + (size_t)nprocs * block, LOOM_GUARD_SIZE, LOOM_POISON, rank,
                         what) >= 0) {
        loom_fail("%s: written past the result at rank %d", what, rank);
    }
}

/* Every block size in every shape, then 20 calls on the same buffers. */
static void sweep(MPI_Comm comm, bufs_t *b, const char *where, size_t max_block)
{
    shape_t shape;
    size_t i;
    int n;

    for (i = 0; i < NBLOCKS && blocks[i] <= max_block; ++i) {
        for (shape = AS_BYTES; shape <= ONE_VECTOR; ++shape) {
            gather_one(comm, b, blocks[i], shape, 11u * (unsigned)i + (unsigned)shape, where);
        }
    }
    for (n = 0; n < 20; ++n) {
        gather_one(comm, b, (n % 2) ? MIB : 262144 + 8, (n % 3) ? AS_BYTES : IN_PLACE,
                   300u + (unsigned)n, where);
    }
}

static void *gatherer(void *p)
{
    loom_thread_arg_t *arg = p;
    char where[32];
    bufs_t b;
    int i, nprocs;

    MPI_Comm_size(arg->comm, &nprocs);
    bufs_init(&b, nprocs);
    snprintf(where, sizeof(where), "thread %d", arg->id);
    for (i = 0; i < 10; ++i) {
        gather_one(arg->comm, &b, MIB + 8 * (size_t)arg->id, (i % 2) ? IN_PLACE : AS_BYTES,
                   500u + (unsigned)(i * 2 + arg->id), where);
    }
    bufs_free(&b);
    return NULL;
}

/* A 2 MiB allgather carried by coll loom at this rank: counted and pushed;
 * one with a rank's vector type left to the next component at every rank. */
static void expect_coll_loom(bufs_t *b, int nprocs)
{
    unsigned long long before = loom_pushes_requested();
    unsigned long long carried = loom_pvar_counter("coll_loom_allgathers");
    unsigned long long fallbacks = loom_pvar_counter("coll_loom_fallbacks");
    size_t block = 2 * MIB / (size_t)nprocs;

    gather_one(MPI_COMM_WORLD, b, block, AS_BYTES, 900u, "expected on coll loom");
    if (loom_pushes_requested() == before) {
        loom_fail("coll loom was expected to carry an allgather of 2 MiB, but no push was "
                  "asked for");
    }
    if (loom_pvar_counter("coll_loom_allgathers") != carried + 1) {
        loom_fail("an allgather of 2 MiB: coll_loom_allgathers went from %llu to %llu, "
                  "expected one more", carried, loom_pvar_counter("coll_loom_allgathers"));
    }
    gather_one(MPI_COMM_WORLD, b, block, ONE_VECTOR, 901u, "one vector type");
    if (loom_pvar_counter("coll_loom_fallbacks") != fallbacks + 1) {
        loom_fail("an allgather where one rank sends a vector type: coll_loom_fallbacks went "
                  "from %llu to %llu, expected one more", fallbacks,
                  loom_pvar_counter("coll_loom_fallbacks"));
    }
}

int main(int argc, char **argv)
{
    const char *expect = getenv("LOOM_EXPECT_COLL_LOOM");
    unsigned long long before, after;
    int rank, size, provided = 0, i;
    MPI_Comm dup, half;
    bufs_t b;

    loom_test_init_thread_level(&argc, &argv, "test_allgather", 2, MPI_THREAD_MULTIPLE,
                                &provided, &rank, &size);
    bufs_init(&b, size);
    before = loom_pushes_requested();
    sweep(MPI_COMM_WORLD, &b, "world", MAX_BLOCK);
    LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    sweep(dup, &b, "dup", MIB + 16);
    LOOM_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half));
    sweep(half, &b, "split", MIB + 16);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    for (i = 0; i < 2; ++i) {
        LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        gather_one(dup, &b, MIB, AS_BYTES, 700u + (unsigned)i, "a communicator made again");
        MPI_Comm_free(&dup);
    }
    if (MPI_THREAD_MULTIPLE == provided) {
        loom_run_threads(2, gatherer);
    }
    after = loom_pushes_requested();
    if (NULL != expect && 0 == strcmp(expect, "1")) {
        expect_coll_loom(&b, size);
    }
    bufs_free(&b);
    loom_test_pass_msg("(%llu pushes%s)", after - before,
                       MPI_THREAD_MULTIPLE == provided ? ", two threads at once" :
                       ", no MPI_THREAD_MULTIPLE: no threads");
}
