/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * MPI_Allreduce and MPI_Reduce, every byte checked against MPI's own
 * operations: each rank makes every rank's contribution and reduces them
 * with MPI_Reduce_local in rank order, and the result must equal it byte
 * for byte (the values are integers, so floating point sums are exact in
 * any order).  Sizes 0 B to 16 MiB, several predefined types and
 * operations (the ones coll loom takes), MPI_IN_PLACE, every root of
 * MPI_Reduce, a user operation (which coll loom leaves to the next
 * component), world/dup/split communicators, one made again on
 * the same buffers, and, where the library provides MPI_THREAD_MULTIPLE,
 * two threads reducing on communicators of their own at once.
 * With LOOM_EXPECT_COLL_LOOM=1 the pushes are counted (btl loom's pvars):
 * coll loom must have carried the large reductions.
 */
#include "loom_test_threads.h"
#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char  *name;
    MPI_Datatype type;
    MPI_Op       op;
    size_t       unit;     /* bytes per element */
} kind_t;

typedef struct {
    int value;
    int index;
} int_pair_t;

static const size_t sizes[] = {0, 4096, 65536, 65544, 262152, MIB + 16, 4 * MIB + 8,
                               16 * MIB};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* One place's buffers: the contribution, the result, and the expected. */
typedef struct {
    unsigned char *send;
    unsigned char *recv;
    unsigned char *expect;
    unsigned char *scratch;
} bufs_t;

static kind_t kinds[7];
static size_t nkinds;

static void kinds_init(void)
{
    kind_t k[] = {
        {"int sum", MPI_INT, MPI_SUM, sizeof(int)},
        {"double sum", MPI_DOUBLE, MPI_SUM, sizeof(double)},
        {"long long max", MPI_LONG_LONG, MPI_MAX, sizeof(long long)},
        {"float min", MPI_FLOAT, MPI_MIN, sizeof(float)},
        {"unsigned char bxor", MPI_UNSIGNED_CHAR, MPI_BXOR, 1},
        {"unsigned bor", MPI_UNSIGNED, MPI_BOR, sizeof(unsigned)},
        {"2int maxloc", MPI_2INT, MPI_MAXLOC, sizeof(int_pair_t)},
    };

    nkinds = sizeof(k) / sizeof(k[0]);
    memcpy(kinds, k, sizeof(k));
}

/* rank's contribution of count elements of kind with seed: small integers */
static void contribution(const kind_t *kind, void *buf, size_t count, int rank, unsigned seed)
{
    size_t i;

    for (i = 0; i < count; ++i) {
        int v = (int)((seed * 131u + (unsigned)rank * 7919u + (unsigned)i * 31u) % 2001u) - 1000;
        if (MPI_INT == kind->type) {
            ((int *)buf)[i] = v;
        } else if (MPI_DOUBLE == kind->type) {
            ((double *)buf)[i] = v;
        } else if (MPI_LONG_LONG == kind->type) {
            ((long long *)buf)[i] = (long long)v * 1048576; /* beyond int */
        } else if (MPI_FLOAT == kind->type) {
            ((float *)buf)[i] = (float)v;
        } else if (MPI_UNSIGNED_CHAR == kind->type) {
            ((unsigned char *)buf)[i] = (unsigned char)v;
        } else if (MPI_UNSIGNED == kind->type) {
            ((unsigned *)buf)[i] = 1u << ((unsigned)(v + 1000) % 32u);
        } else {
            ((int_pair_t *)buf)[i].value = v % 97;
            ((int_pair_t *)buf)[i].index = rank;
        }
    }
}

/* What MPI's operation makes of every rank's contribution, in rank order. */
static void expected(const kind_t *kind, bufs_t *b, size_t count, int size, unsigned seed)
{
    int r;

    contribution(kind, b->expect, count, 0, seed);
    for (r = 1; r < size; ++r) {
        contribution(kind, b->scratch, count, r, seed);
        LOOM_CHECK_MPI(MPI_Reduce_local(b->scratch, b->expect, (int)count, kind->type,
                                        kind->op));
    }
}

/* One reduction: all (MPI_Allreduce) or to root, in place or not, checked. */
static void reduce_one(MPI_Comm comm, bufs_t *b, const kind_t *kind, size_t bytes, int root,
                       int in_place, unsigned seed, const char *where)
{
    size_t count = bytes / kind->unit;
    int rank, size, receives;
    char what[160];
    long long bad;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    receives = root < 0 || rank == root;
    in_place = in_place && receives; /* Reduce: the root's choice alone */
    snprintf(what, sizeof(what), "%s: %s %s of %zu bytes%s (root %d)", where,
             root < 0 ? "allreduce" : "reduce", kind->name, bytes,
             in_place ? " in place" : "", root);
    contribution(kind, in_place ? b->recv : b->send, count, rank, seed);
    if (!in_place) {
        memset(b->recv, LOOM_POISON, bytes);
    }
    memset(b->recv + bytes, LOOM_POISON, LOOM_GUARD_SIZE);
    if (root < 0) {
        LOOM_CHECK_MPI(MPI_Allreduce(in_place ? MPI_IN_PLACE : b->send, b->recv, (int)count,
                                     kind->type, kind->op, comm));
    } else {
        LOOM_CHECK_MPI(MPI_Reduce(in_place ? MPI_IN_PLACE : b->send, b->recv,
                                  (int)count, kind->type, kind->op, root, comm));
    }
    if (!in_place) {
        /* the contribution is only read */
        contribution(kind, b->scratch, count, rank, seed);
        bad = loom_verify_image(b->send, b->scratch, bytes, root, what);
        if (bad >= 0) {
            loom_fail("%s: the send buffer changed at byte %lld", what, bad);
        }
    }
    if (receives) {
        expected(kind, b, count, size, seed);
        bad = loom_verify_image(b->recv, b->expect, bytes, root, what);
        if (bad >= 0) {
            loom_fail("%s: the result differs from MPI_Reduce_local's at byte %lld", what, bad);
        }
    } else if (!in_place) {
        bad = loom_verify_byte(b->recv, bytes, LOOM_POISON, root, what);
        if (bad >= 0) {
            loom_fail("%s: a rank that is not the root had its receive buffer written", what);
        }
    }
    bad = loom_verify_byte(b->recv + bytes, LOOM_GUARD_SIZE, LOOM_POISON, root, what);
    if (bad >= 0) {
        loom_fail("%s: written past the end of the result", what);
    }
}

/* Every kind and size as Allreduce (16 MiB: the first kind only), in
 * place too from 1 MiB; Reduce, every size from one root, 1 MiB from every
 * root; then the same buffers again and again.  A lighter sweep (dup,
 * split) takes the first two kinds only, up to 4 MiB. */
static void sweep(MPI_Comm comm, bufs_t *b, const char *where, size_t kinds_swept)
{
    unsigned seed = 1;
    size_t k, i;
    int size, root;

    MPI_Comm_size(comm, &size);
    for (k = 0; k < kinds_swept; ++k) {
        for (i = 0; i < NSIZES; ++i) {
            size_t bytes = sizes[i] / kinds[k].unit * kinds[k].unit;
            if (sizes[i] > 4 * MIB + 8 && (k > 0 || kinds_swept < nkinds)) {
                continue;
            }
            reduce_one(comm, b, &kinds[k], bytes, -1, 0, seed++, where);
            if (sizes[i] >= MIB) {
                reduce_one(comm, b, &kinds[k], bytes, -1, 1, seed++, where);
            }
        }
    }
    for (i = 0; i < NSIZES; ++i) {
        reduce_one(comm, b, &kinds[0], sizes[i], size - 1, 0, seed++, where);
    }
    for (root = 0; root < size; ++root) {
        reduce_one(comm, b, &kinds[1], MIB + 8, root, root % 2, seed++, where);
    }
    /* the same buffers again and again (registrations from the cache) */
    for (i = 0; i < 20; ++i) {
        reduce_one(comm, b, &kinds[i % nkinds], 300000 / 8 * 8, (i % 3) ? -1 : (int)i % size,
                   0, seed++, where);
    }
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int i;

    (void)type;
    for (i = 0; i < *len; ++i) {
        ((int *)inout)[i] += ((int *)in)[i];
    }
}

/* A user operation, which coll loom leaves to the next component (derived
 * types reach a collective component only with user operations: Open MPI
 * refuses predefined operations on them with MPI_ERR_OP). */
static void left_to_others(MPI_Comm comm, bufs_t *b)
{
    const int count = 400000;
    MPI_Op sum;
    int rank, size, i, *send = (int *)b->send, *recv = (int *)b->recv;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (i = 0; i < count; ++i) {
        send[i] = i + rank;
        recv[i] = -1;
    }
    LOOM_CHECK_MPI(MPI_Op_create(user_sum, 1, &sum));
    LOOM_CHECK_MPI(MPI_Allreduce(send, recv, count, MPI_INT, sum, comm));
    for (i = 0; i < count; ++i) {
        if (recv[i] != size * i + size * (size - 1) / 2) {
            loom_fail("user operation: int %d is %d", i, recv[i]);
        }
    }
    MPI_Op_free(&sum);
}

static void bufs_init(bufs_t *b, size_t bytes)
{
    b->send    = loom_malloc(bytes + LOOM_GUARD_SIZE);
    b->recv    = loom_malloc(bytes + LOOM_GUARD_SIZE);
    b->expect  = loom_malloc(bytes);
    b->scratch = loom_malloc(bytes);
}

static void bufs_free(bufs_t *b)
{
    free(b->send);
    free(b->recv);
    free(b->expect);
    free(b->scratch);
}

/* Each thread: its own communicator, Allreduce and Reduce at 1 MiB. */
static void *reducer(void *p)
{
    loom_thread_arg_t *arg = p;
    char where[32];
    bufs_t b;
    int i;

    bufs_init(&b, 2 * MIB);
    snprintf(where, sizeof(where), "thread %d", arg->id);
    for (i = 0; i < 10; ++i) {
        reduce_one(arg->comm, &b, &kinds[(size_t)(i + arg->id) % nkinds], MIB, i % 2 ? 0 : -1,
                   0, 500u + (unsigned)(i * 2 + arg->id), where);
    }
    bufs_free(&b);
    return NULL;
}

/* One 2 MiB reduction (all: root -1) must have asked for pushes, and coll
 * loom must have counted it as carried at this rank. */
static void expect_pushes(bufs_t *b, int root, const char *what, const char *pvar)
{
    unsigned long long before = loom_pushes_requested(), counted = loom_pvar_counter(pvar);

    reduce_one(MPI_COMM_WORLD, b, &kinds[0], 2 * MIB, root, 0, 900u, what);
    if (loom_pushes_requested() == before) {
        loom_fail("coll loom was expected to carry %s of 2 MiB, but no push was asked for",
                  what);
    }
    if (loom_pvar_counter(pvar) != counted + 1) {
        loom_fail("%s of 2 MiB: %s went from %llu to %llu, expected one more", what, pvar,
                  counted, loom_pvar_counter(pvar));
    }
}

int main(int argc, char **argv)
{
    const char *expect = getenv("LOOM_EXPECT_COLL_LOOM");
    unsigned long long before, after;
    int rank, size, provided = 0, i;
    MPI_Comm dup, half;
    bufs_t b;

    /* MPI_THREAD_MULTIPLE where the library has it; the rest runs anyway */
    loom_test_init_thread_level(&argc, &argv, "test_allreduce", 2, MPI_THREAD_MULTIPLE,
                                &provided, &rank, &size);
    kinds_init();
    bufs_init(&b, 16 * MIB + 64);
    before = loom_pushes_requested();
    sweep(MPI_COMM_WORLD, &b, "world", nkinds);
    left_to_others(MPI_COMM_WORLD, &b);
    LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    sweep(dup, &b, "dup", 2);
    LOOM_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half));
    sweep(half, &b, "split", 2);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    for (i = 0; i < 2; ++i) {
        LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        reduce_one(dup, &b, &kinds[0], 2 * MIB, -1, 0, 700u + (unsigned)i,
                   "a communicator made again");
        MPI_Comm_free(&dup);
    }
    if (MPI_THREAD_MULTIPLE == provided) {
        loom_run_threads(2, reducer);
    }
    after = loom_pushes_requested();
    if (NULL != expect && 0 == strcmp(expect, "1")) {
        /* each of the two carried by coll loom, not only the run's total */
        unsigned long long fallbacks = loom_pvar_counter("coll_loom_fallbacks");

        expect_pushes(&b, -1, "MPI_Allreduce", "coll_loom_allreduces");
        expect_pushes(&b, size - 1, "MPI_Reduce", "coll_loom_reduces");
        if (loom_pvar_counter("coll_loom_fallbacks") != fallbacks) {
            loom_fail("coll loom counted a fallback in reductions it could take");
        }
    }
    bufs_free(&b);
    loom_test_pass_msg("(%llu pushes%s)", after - before,
                       MPI_THREAD_MULTIPLE == provided ? ", two threads at once" :
                       ", no MPI_THREAD_MULTIPLE: no threads");
}
