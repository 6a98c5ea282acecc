/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * MPI_Bcast, every byte checked: sizes 0 B to 16 MiB, every root, bytes and
 * a contiguous derived type (coll loom's pushes) and a vector type (which
 * coll loom leaves to the next component), on MPI_COMM_WORLD, a duplicate,
 * a split, and a communicator freed and made again on the same buffers.
 * With LOOM_EXPECT_COLL_LOOM=1 the pushes themselves are counted (btl
 * loom's pvars): coll loom must have carried the large broadcasts.  With
 * LOOM_BCAST_FAILURE=1 only failure() runs; with LOOM_BCAST_THREADS=n only
 * threads() does, with n threads.
 */
#include "loom_test_threads.h"
#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const size_t sizes[] = {0, 1, 4096, 65535, 65536, 65537, 262151, MIB,
                               4 * MIB + 3, 16 * MIB};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static unsigned char *buf;
static int expect_loom; /* LOOM_EXPECT_COLL_LOOM=1: coll loom takes the large ones */

/* bytes at b before a broadcast from root: the pattern at the root, poison
 * elsewhere, and a poisoned guard behind them. */
static void bcast_prepare(MPI_Comm comm, unsigned char *b, size_t bytes, int root, unsigned seed)
{
    int rank;

    MPI_Comm_rank(comm, &rank);
    if (rank == root) {
        loom_fill_pattern(b, bytes, seed, root);
    } else {
        memset(b, LOOM_POISON, bytes);
    }
    memset(b + bytes, LOOM_POISON, LOOM_GUARD_SIZE);
}

/* One broadcast of bytes at b from root, checked at every rank. */
static void bcast_into(MPI_Comm comm, unsigned char *b, size_t bytes, int root, unsigned seed,
                       const char *what)
{
    bcast_prepare(comm, b, bytes, root, seed);
    LOOM_CHECK_MPI(MPI_Bcast(b, (int)bytes, MPI_BYTE, root, comm));
    loom_check_recv(b, bytes, seed, root, what);
}

static void bcast_bytes(MPI_Comm comm, size_t bytes, int root, unsigned seed, const char *what)
{
    bcast_into(comm, buf, bytes, root, seed, what);
}

/* Every size from one root; every root at one size. */
static void sweep(MPI_Comm comm, const char *name)
{
    char what[96];
    int size, root;
    size_t i;

    MPI_Comm_size(comm, &size);
    for (i = 0; i < NSIZES; ++i) {
        snprintf(what, sizeof(what), "%s: %zu bytes from rank %d", name, sizes[i], size - 1);
        bcast_bytes(comm, sizes[i], size - 1, (unsigned)(i + 1), what);
    }
    for (root = 0; root < size; ++root) {
        snprintf(what, sizeof(what), "%s: 1 MiB + 5 bytes from rank %d", name, root);
        bcast_bytes(comm, MIB + 5, root, 100u + (unsigned)root, what);
    }
    /* the same buffer again and again (registrations from the cache) */
    for (i = 0; i < 20; ++i) {
        snprintf(what, sizeof(what), "%s: repeated 300000 bytes, call %zu", name, i);
        bcast_bytes(comm, 300000, (int)i % size, 200u + (unsigned)i, what);
    }
}

/* A derived type of 3 ints (contiguous) and a vector of every other int. */
static void datatypes(MPI_Comm comm)
{
    const int count = 200000; /* 800 KB of vector: above coll_loom_bcast_min */
    MPI_Datatype three, every_other;
    unsigned long long fallbacks;
    int rank, *ints = (int *)buf, i;

    MPI_Comm_rank(comm, &rank);
    LOOM_CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &three));
    LOOM_CHECK_MPI(MPI_Type_commit(&three));
    for (i = 0; i < 3 * count; ++i) {
        ints[i] = (0 == rank) ? i * 7 + 1 : -1;
    }
    LOOM_CHECK_MPI(MPI_Bcast(ints, count, three, 0, comm));
    for (i = 0; i < 3 * count; ++i) {
        if (ints[i] != i * 7 + 1) {
            loom_fail("contiguous type: int %d is %d, expected %d", i, ints[i], i * 7 + 1);
        }
    }
    LOOM_CHECK_MPI(MPI_Type_vector(count, 1, 2, MPI_INT, &every_other));
    LOOM_CHECK_MPI(MPI_Type_commit(&every_other));
    for (i = 0; i < 2 * count; ++i) {
        ints[i] = (0 == rank) ? i * 3 + 2 : -1;
    }
    fallbacks = expect_loom ? loom_pvar_counter("coll_loom_fallbacks") : 0;
    LOOM_CHECK_MPI(MPI_Bcast(ints, 1, every_other, 0, comm));
    if (expect_loom && loom_pvar_counter("coll_loom_fallbacks") != fallbacks + 1) {
        loom_fail("vector type: coll loom did not count the broadcast it left to the next "
                  "component");
    }
    for (i = 0; i < 2 * count; ++i) {
        int want = (0 == rank || 0 == i % 2) ? i * 3 + 2 : -1;
        if (ints[i] != want) {
            loom_fail("vector type: int %d is %d, expected %d", i, ints[i], want);
        }
    }
    MPI_Type_free(&three);
    MPI_Type_free(&every_other);
}

/* Broadcasts of at most coll_loom_bcast_eager_max bytes land in slots the
 * ranks told the root in the call before (coll_loom_bcast_slot.c): a call
 * is slotted when it fits the slots and comes from the root they were told
 * to.  The rule is kept here too, to count the slotted calls exactly. */
static size_t slot_size; /* as every rank computes it */
static int slot_root = -1;
/* ... and shrinks it, after every SLOT_WINDOW calls that could land in
 * slots, to the largest of them (MCA_COLL_LOOM_SLOT_WINDOW) */
#define SLOT_WINDOW 64
static size_t window_max;
static int window_calls;

static void slots_reset(void)
{
    slot_size    = 0;
    slot_root    = -1;
    window_max   = 0;
    window_calls = 0;
}

static size_t eager_max(void)
{
    const char *value = getenv("OMPI_MCA_coll_loom_bcast_eager_max");

    return (NULL != value) ? (size_t)strtoul(value, NULL, 10) : 262144;
}

/* Whether coll loom's call of bytes from root is slotted; the slots after it. */
static int slotted(size_t bytes, int root)
{
    size_t grown = 4096;
    int is = 0 != slot_size && bytes <= slot_size && root == slot_root;

    if (bytes > eager_max()) {
        return 0;
    }
    while (grown < bytes) {
        grown <<= 1;
    }
    grown = (grown > eager_max()) ? eager_max() : grown;
    slot_size = (grown > slot_size) ? grown : slot_size;
    window_max = (grown > window_max) ? grown : window_max;
    if (SLOT_WINDOW == ++window_calls) {
        slot_size    = window_max;
        window_max   = 0;
        window_calls = 0;
    }
    slot_root = root;
    return is;
}

/* The last rank enters a slotted broadcast from rank 0 late: with 4 ranks
 * or more it is no child of the root's, and the root returns once its own
 * pushes ended, the inner node's forward to the late rank still going (a
 * flight, counted by coll_loom_bcast_flights).  Meanwhile the root and
 * rank 1 exchange messages; the next broadcast ends the flight first. */
static void late_leaf(MPI_Comm comm, unsigned long long *expected)
{
    unsigned long long flights = loom_pvar_counter("coll_loom_bcast_flights");
    int rank, size, token = 0, slotted_call;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (size < 4) {
        return;
    }
    slotted_call = slotted(65536, 0);
    *expected += (unsigned long long)slotted_call;
    if (0 == rank) {
        loom_fill_pattern(buf, 65536, 960u, 0);
    } else {
        memset(buf, LOOM_POISON, 65536);
    }
    if (size - 1 == rank) {
        usleep(1000000); /* not progressing: the forward here cannot end */
    }
    LOOM_CHECK_MPI(MPI_Bcast(buf, 65536, MPI_BYTE, 0, comm));
    if (0 == rank) {
        LOOM_CHECK_MPI(MPI_Send(&token, 1, MPI_INT, 1, 7, comm));
        LOOM_CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, 1, 7, comm, MPI_STATUS_IGNORE));
    } else if (1 == rank) {
        LOOM_CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, 0, 7, comm, MPI_STATUS_IGNORE));
        LOOM_CHECK_MPI(MPI_Send(&token, 1, MPI_INT, 0, 7, comm));
    }
    if (0 != rank) {
        loom_check_recv(buf, 65536, 960u, 0, "slots: a late leaf's broadcast");
    }
    flights = loom_pvar_counter("coll_loom_bcast_flights") - flights;
    /* with the slots' sends rendezvous (a low btl_loom_eager_limit) the root
     * takes the late rank's at its entry only once that rank woke: then
     * everything ended before it returned */
    if (NULL != getenv("OMPI_MCA_btl_loom_eager_limit") &&
        atoi(getenv("OMPI_MCA_btl_loom_eager_limit")) < 1024 && flights <= 1) {
        flights = (0 == rank && slotted_call) ? 1u : 0u;
    }
    if (flights != ((0 == rank && slotted_call) ? 1u : 0u)) {
        loom_fail("slots: %llu flights counted here after a late leaf's %sbroadcast", flights,
                  slotted_call ? "slotted " : "");
    }
    *expected += (unsigned long long)slotted(65536, 0);
    bcast_bytes(comm, 65536, 0, 961u, "slots: the broadcast after a late leaf's");
}

static void slots(void)
{
    static const size_t cycle[] = {65536, 100000, 262144, 70000, 65536, 131072, 262144};
    unsigned long long before = loom_pvar_counter("coll_loom_bcast_slots"), expected = 0;
    unsigned long long fallbacks, counters;
    MPI_Datatype every_other;
    const int count = 20000; /* ints: 80000 bytes */
    int rank, size, root, i, is_slotted, *ints = (int *)buf;
    char what[96];
    MPI_Comm comm;

    counters = loom_pvar_counter("btl_loom_push_counters");
    LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    slots_reset();
    /* growing, then fitting; the same root, then another, then back */
    for (i = 0; i < 28; ++i) {
        root = (i < 14) ? 0 : (i < 21) ? size - 1 : 0;
        snprintf(what, sizeof(what), "slots: %zu bytes from rank %d, call %d",
                 cycle[i % 7], root, i);
        expected += slotted(cycle[i % 7], root);
        bcast_bytes(comm, cycle[i % 7], root, 800u + (unsigned)i, what);
    }
    /* a leaf's vector type, its data copied out of its slot where it lands */
    LOOM_CHECK_MPI(MPI_Type_vector(count, 1, 2, MPI_INT, &every_other));
    LOOM_CHECK_MPI(MPI_Type_commit(&every_other));
    for (i = 0; i < 2 * count; ++i) {
        ints[i] = (0 == rank) ? i * 5 + 3 : -1;
    }
    expected += slotted((size_t)count * sizeof(int), 0);
    if (0 == rank) {
        LOOM_CHECK_MPI(MPI_Bcast(ints, count, MPI_INT, 0, comm));
    } else {
        LOOM_CHECK_MPI(MPI_Bcast(ints, 1, every_other, 0, comm));
    }
    for (i = 0; i < 2 * count && 0 != rank; ++i) {
        int want = (0 == i % 2) ? (i / 2) * 5 + 3 : -1;
        if (ints[i] != want) {
            loom_fail("slots: a leaf's vector type: int %d is %d, expected %d", i, ints[i],
                      want);
        }
    }
    /* the root's vector type: packed into the copy its pushes go from when
     * slotted, else every rank goes to the next component */
    fallbacks = loom_pvar_counter("coll_loom_fallbacks");
    for (i = 0; i < 2 * count; ++i) {
        ints[i] = (0 == rank) ? i * 9 + 4 : -1;
    }
    is_slotted = slotted((size_t)count * sizeof(int), 0);
    expected += (unsigned long long)is_slotted;
    if (0 == rank) {
        LOOM_CHECK_MPI(MPI_Bcast(ints, 1, every_other, 0, comm));
    } else {
        LOOM_CHECK_MPI(MPI_Bcast(ints, count, MPI_INT, 0, comm));
    }
    for (i = 0; i < count && 0 != rank; ++i) {
        if (ints[i] != 2 * i * 9 + 4) {
            loom_fail("slots: from the root's vector type: int %d is %d, expected %d", i,
                      ints[i], 2 * i * 9 + 4);
        }
    }
    if (loom_pvar_counter("coll_loom_fallbacks") != fallbacks + !is_slotted) {
        loom_fail("slots: the root's vector type %s to the next component",
                  is_slotted ? "went" : "did not go");
    }
    expected += slotted(65536, 0);
    bcast_bytes(comm, 65536, 0, 900u, "slots: 64 KiB after the root's vector type");
    late_leaf(comm, &expected);
    MPI_Type_free(&every_other);
    MPI_Comm_free(&comm); /* the root takes the slots told in the last call */
    /* made again (Open MPI gives it the freed one's context id): nothing of
     * the freed communicator's slots reaches the new one's */
    LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    slots_reset();
    for (i = 0; i < 3; ++i) {
        expected += slotted(65536, 0);
        bcast_bytes(comm, 65536, 0, 950u + (unsigned)i, "slots: 64 KiB on a communicator "
                    "made again");
    }
    MPI_Comm_free(&comm);
    /* the freed communicators' slots gave their counters back */
    if (loom_pvar_counter("btl_loom_push_counters") != counters) {
        loom_fail("slots: %llu counters here after the communicator was freed, %llu before it "
                  "was made", loom_pvar_counter("btl_loom_push_counters"), counters);
    }
    if (loom_pvar_counter("coll_loom_bcast_slots") - before != expected) {
        loom_fail("slots: %llu broadcasts landed in slots, expected %llu",
                  loom_pvar_counter("coll_loom_bcast_slots") - before, expected);
    }
}

/* The bytes this process holds in slots and the root's copies
 * (coll_loom_bcast_slot_bytes), against what it held at base. */
static long long slot_bytes_since(unsigned long long base)
{
    return (long long)(loom_pvar_counter("coll_loom_bcast_slot_bytes") - base);
}

/* Slots follow the calls: 256 KiB broadcasts grow every rank's two slots
 * (the root's two copies) to 256 KiB; after two windows of calls of
 * 64 KiB they hold 64 KiB each, every call still slotted and every byte
 * checked; freeing the communicator frees them. */
static void slots_shrink(void)
{
    unsigned long long base = loom_pvar_counter("coll_loom_bcast_slot_bytes");
    unsigned long long landed = loom_pvar_counter("coll_loom_bcast_slots"), expected = 0;
    long long held;
    char what[96];
    MPI_Comm comm;
    int i;

    if (eager_max() < 262144) {
        return;
    }
    LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    slots_reset();
    for (i = 0; i < 4; ++i) {
        expected += (unsigned long long)slotted(262144, 0);
        bcast_bytes(comm, 262144, 0, 1000u + (unsigned)i, "slots shrink: 256 KiB");
    }
    if ((held = slot_bytes_since(base)) != 2 * 262144) {
        loom_fail("slots shrink: %lld bytes held after broadcasts of 256 KiB, expected %d",
                  held, 2 * 262144);
    }
    for (i = 0; i < 3 * SLOT_WINDOW - 4; ++i) {
        snprintf(what, sizeof(what), "slots shrink: 64 KiB, call %d", i + 5);
        expected += (unsigned long long)slotted(65536, 0);
        bcast_bytes(comm, 65536, 0, 1100u + (unsigned)i, what);
    }
    if ((held = slot_bytes_since(base)) != 2 * 65536) {
        loom_fail("slots shrink: %lld bytes held after two windows of 64 KiB, expected %d",
                  held, 2 * 65536);
    }
    if (loom_pvar_counter("coll_loom_bcast_slots") - landed != expected) {
        loom_fail("slots shrink: %llu broadcasts landed in slots, expected %llu",
                  loom_pvar_counter("coll_loom_bcast_slots") - landed, expected);
    }
    MPI_Comm_free(&comm);
    if ((held = slot_bytes_since(base)) != 0) {
        loom_fail("slots shrink: %lld bytes still held after MPI_Comm_free", held);
    }
}

/* One broadcast of 16 MiB from rank 0 that the inner nodes' bound on
 * waiting pushes makes fail: the root returns an error (and counts it);
 * any other rank returns an error or every byte. */
static int failed_bcast(MPI_Comm comm, unsigned seed, const char *what)
{
    unsigned long long failures = loom_pvar_counter("coll_loom_failures");
    int rank, rc;

    MPI_Comm_rank(comm, &rank);
    if (0 == rank) {
        loom_fill_pattern(buf, 16 * MIB, seed, 0);
    } else {
        memset(buf, LOOM_POISON, 16 * MIB);
    }
    rc = MPI_Bcast(buf, (int)(16 * MIB), MPI_BYTE, 0, comm);
    if (MPI_SUCCESS == rc && 0 == rank) {
        loom_fail("%s: a broadcast beyond btl_loom_push_waiting succeeded at its root", what);
    }
    if (MPI_SUCCESS == rc) {
        loom_check_recv(buf, 16 * MIB, seed, 0, what); /* success means every byte */
    } else if (loom_pvar_counter("coll_loom_failures") != failures + 1) {
        loom_fail("%s: the broadcast returned %d, but coll_loom_failures did not count it",
                  what, rc);
    }
    return MPI_SUCCESS != rc;
}

/* LOOM_BCAST_FAILURE=1, run with a low btl_loom_push_waiting and small
 * segments: broadcasts whose forwarding pushes the inner nodes refuse fail,
 * and nothing they leave behind reaches a later call: a broadcast on a
 * communicator made where a failed one was freed (Open MPI gives it the
 * same context id) and broadcasts after many failed ones on the same
 * communicator hold every byte; once all ended, no rank keeps a counter or
 * a waiting push. */
/* LOOM_BCAST_SLOTTED_FAILURE=1, with coll_loom_bcast_eager_max 4 MiB: 4 MiB
 * broadcasts from rank 0, all but the first slotted, whose inner nodes
 * refuse the forwards (64 segments per child, over btl_loom_push_waiting):
 * the root may return before (its own pushes ended; the flight tells the
 * ranks), every rank returns an error or every byte, an error somewhere
 * in each call, and the next broadcasts hold every byte. */
static void slotted_failure(MPI_Comm comm)
{
    int rank, round, rc, failed, any;
    char what[96];

    MPI_Comm_rank(comm, &rank);
    for (round = 0; round < 4; ++round) {
        bcast_prepare(comm, buf, 4 * MIB, 0, 770u + (unsigned)round);
        rc = MPI_Bcast(buf, (int)(4 * MIB), MPI_BYTE, 0, comm);
        snprintf(what, sizeof(what), "a slotted 4 MiB broadcast refused, call %d", round);
        if (MPI_SUCCESS == rc && 0 != rank) {
            loom_check_recv(buf, 4 * MIB, 770u + (unsigned)round, 0, what);
        }
        failed = (MPI_SUCCESS != rc);
        LOOM_CHECK_MPI(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm));
        if (!any) {
            loom_fail("%s: no rank returned an error (btl_loom_push_waiting not reached?)",
                      what);
        }
    }
    for (round = 0; round < 3; ++round) {
        snprintf(what, sizeof(what), "128 KiB from rank 0 after refused slotted ones, call %d",
                 round);
        bcast_bytes(comm, 128 * KIB, 0, 780u + (unsigned)round, what);
    }
}

static void failure(void)
{
    int rank, size, round, failed = 0, all_failed = 0;
    unsigned long long counters, waiting, slots_before;
    char what[96];
    MPI_Comm comm;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (round = 0; round < 6; ++round) {
        LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
        snprintf(what, sizeof(what), "failed broadcast of round %d", round);
        failed += failed_bcast(comm, 400u + (unsigned)round, what);
        MPI_Comm_free(&comm);
        LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
        snprintf(what, sizeof(what), "round %d: 128 KiB on a new communicator", round);
        bcast_bytes(comm, 128 * KIB, round % size, 500u + (unsigned)round, what);
        MPI_Comm_free(&comm);
    }
    LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    for (round = 0; round < 20; ++round) {
        snprintf(what, sizeof(what), "failed broadcast %d on one communicator", round);
        failed += failed_bcast(comm, 600u + (unsigned)round, what);
    }
    for (round = 0; round < 2 * size; ++round) {
        snprintf(what, sizeof(what), "128 KiB from rank %d after 20 failed", round % size);
        bcast_bytes(comm, 128 * KIB, round % size, 700u + (unsigned)round, what);
    }
    /* from one root: into the slots of the call before (the first of them
     * tells the slots to rank 0) */
    slots_before = loom_pvar_counter("coll_loom_bcast_slots");
    for (round = 0; round < 4; ++round) {
        snprintf(what, sizeof(what), "128 KiB from rank 0 after 20 failed, call %d", round);
        bcast_bytes(comm, 128 * KIB, 0, 750u + (unsigned)round, what);
    }
    if (loom_pvar_counter("coll_loom_bcast_slots") - slots_before != 3) {
        loom_fail("after 20 failed broadcasts %llu of 3 from one root landed in slots",
                  loom_pvar_counter("coll_loom_bcast_slots") - slots_before);
    }
    if (NULL != getenv("LOOM_BCAST_SLOTTED_FAILURE")) {
        slotted_failure(comm);
    }
    MPI_Comm_free(&comm);
    LOOM_CHECK_MPI(MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    counters = loom_pvar_counter("btl_loom_push_counters");
    waiting  = loom_pvar_counter("btl_loom_push_waiting");
    if (0 != counters || 0 != waiting) {
        loom_fail("after every broadcast ended %llu counters and %llu waiting pushes are left "
                  "here", counters, waiting);
    }
    if (0 == rank) {
        printf("%d of %d ranks' returns from the 26 failing broadcasts were errors; every "
               "success held every byte\n", all_failed, 26 * size);
    }
}

static int thread_errors; /* broadcasts of the threads that returned an error here */

/* Each thread: 1 MiB broadcasts on its own communicator, roots taking turns;
 * one may fail where the pushes of all the threads' calls pass a bound of a
 * rank (waiting pushes), and then every rank goes on to the next. */
/* One broadcast of a thread on its communicator: every byte, or an error
 * (counted). */
static void thread_bcast(MPI_Comm comm, unsigned char *mine, size_t bytes, int root,
                         unsigned seed, const char *what)
{
    int rc;

    bcast_prepare(comm, mine, bytes, root, seed);
    rc = MPI_Bcast(mine, (int)bytes, MPI_BYTE, root, comm);
    if (MPI_SUCCESS == rc) {
        loom_check_recv(mine, bytes, seed, root, what);
    } else {
        __atomic_add_fetch(&thread_errors, 1, __ATOMIC_RELAXED);
    }
}

static void *broadcaster(void *p)
{
    loom_thread_arg_t *arg = p;
    unsigned char *mine = loom_malloc(MIB + LOOM_GUARD_SIZE);
    int size, i;
    char what[64];

    MPI_Comm_size(arg->comm, &size);
    for (i = 0; i < 4; ++i) {
        snprintf(what, sizeof(what), "thread %d: 1 MiB, call %d", arg->id, i);
        thread_bcast(arg->comm, mine, MIB, (i + arg->id) % size,
                     800u + (unsigned)(i * 64 + arg->id), what);
    }
    /* small ones from one root: from the second on, into the slots told */
    for (i = 0; i < 4; ++i) {
        snprintf(what, sizeof(what), "thread %d: 64 KiB, call %d", arg->id, i);
        thread_bcast(arg->comm, mine, 64 * KIB, arg->id % size,
                     1100u + (unsigned)(i * 64 + arg->id), what);
    }
    free(mine);
    return NULL;
}

/* LOOM_BCAST_THREADS=n, run with small segments: n broadcasts at once need
 * more counters and waiting pushes than a rank keeps.  Those that find no
 * room for their counters step aside (coll_loom_fallbacks); those whose
 * pushes a bound refuses return an error (counted, coll_loom_failures);
 * none waits for ever, every success holds every byte, no counter is left
 * behind, and the broadcast after them works.  At 2 ranks nothing waits at
 * the one receiver: none may fail. */
static void threads(int n, int provided)
{
    unsigned long long fallbacks = loom_pvar_counter("coll_loom_fallbacks");
    unsigned long long failures = loom_pvar_counter("coll_loom_failures");
    unsigned long long slotted = loom_pvar_counter("coll_loom_bcast_slots");
    unsigned long long counters;
    int size;

    if (MPI_THREAD_MULTIPLE != provided) {
        loom_test_skip("no MPI_THREAD_MULTIPLE");
    }
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    loom_run_threads(n, broadcaster);
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    counters = loom_pvar_counter("btl_loom_push_counters");
    if (0 != counters) {
        loom_fail("%llu counters are left after every broadcast ended", counters);
    }
    if (loom_pvar_counter("coll_loom_failures") - failures != (unsigned long long)thread_errors) {
        loom_fail("%d broadcasts returned an error, coll loom counted %llu failures",
                  thread_errors, loom_pvar_counter("coll_loom_failures") - failures);
    }
    if (2 == size && 0 != thread_errors) {
        loom_fail("%d broadcasts failed at 2 ranks, where nothing waits on a counter",
                  thread_errors);
    }
    slotted = loom_pvar_counter("coll_loom_bcast_slots") - slotted;
    if (2 == size && loom_pvar_counter("coll_loom_fallbacks") == fallbacks &&
        slotted != 3ull * (unsigned long long)n) {
        loom_fail("%llu of the threads' 64 KiB broadcasts landed in slots, expected %d (3 of "
                  "4 each)", slotted, 3 * n);
    }
    printf("%d threads: %llu broadcasts stepped aside here, %d returned an error, %llu landed "
           "in slots\n", n, loom_pvar_counter("coll_loom_fallbacks") - fallbacks, thread_errors,
           slotted);
    bcast_bytes(MPI_COMM_WORLD, MIB, size - 1, 900, "the broadcast after the threads'");
}

/* The last rank was given another coll_loom_bcast_segment
 * (LOOM_TEST_LAST_RANK_ENV): were the ranks to take coll loom's paths, the
 * last would wait for segments that never come.  Every collective must go
 * to the next component, and verify. */
static void params_differ(void)
{
    unsigned long long carried = loom_pvar_counter("coll_loom_bcasts"),
                       pushes = loom_pushes_requested();
    long sum = 0, all = 0;
    int rank, size;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sweep(MPI_COMM_WORLD, "ranks with other parameters");
    sum = rank + 1;
    LOOM_CHECK_MPI(MPI_Allreduce(&sum, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (all != (long)size * (size + 1) / 2) {
        loom_fail("the allreduce of ranks with other parameters gave %ld, expected %ld", all,
                  (long)size * (size + 1) / 2);
    }
    if (loom_pvar_counter("coll_loom_bcasts") != carried || loom_pushes_requested() != pushes) {
        loom_fail("coll loom carried %llu broadcasts (%llu pushes) for ranks given different "
                  "coll_loom_bcast_segment", loom_pvar_counter("coll_loom_bcasts") - carried,
                  loom_pushes_requested() - pushes);
    }
}

int main(int argc, char **argv)
{
    const char *expect = getenv("LOOM_EXPECT_COLL_LOOM");
    unsigned long long before, after;
    MPI_Comm dup, half;
    int rank, size, i;

    const char *nthreads = getenv("LOOM_BCAST_THREADS");
    int provided = 0;

    loom_test_init_thread_level(&argc, &argv, "test_bcast", 2,
                                (NULL != nthreads) ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                                &provided, &rank, &size);
    expect_loom = NULL != expect && 0 == strcmp(expect, "1");
    buf = loom_malloc(16 * MIB + 4096 + LOOM_GUARD_SIZE);
    before = loom_pushes_requested();
    if (NULL != nthreads) {
        threads(atoi(nthreads), provided);
        free(buf);
        loom_test_pass_msg("(%s threads broadcasting at once)", nthreads);
    }
    if (NULL != getenv("LOOM_BCAST_PARAMS_DIFFER")) {
        params_differ();
        free(buf);
        loom_test_pass_msg("(ranks given different coll_loom parameters: all to the next "
                           "component)");
    }
    if (NULL != getenv("LOOM_BCAST_FAILURE")) {
        failure();
        free(buf);
        loom_test_pass_msg("(failed broadcasts, then every byte of the next ones)");
    }
    sweep(MPI_COMM_WORLD, "world");
    datatypes(MPI_COMM_WORLD);
    if (expect_loom) {
        slots();
        slots_shrink();
    }
    LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    sweep(dup, "dup");
    LOOM_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half));
    sweep(half, "split");
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    /* made again on the same buffers */
    for (i = 0; i < 2; ++i) {
        LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        bcast_bytes(dup, 2 * MIB, size / 2, 300u + (unsigned)i, "a communicator made again");
        MPI_Comm_free(&dup);
    }
    after = loom_pushes_requested();
    if (NULL != expect && 0 == strcmp(expect, "1") && after == before) {
        loom_fail("coll loom was expected to carry the broadcasts, but no push was asked for");
    }
    free(buf);
    loom_test_pass_msg("(%llu pushes)", after - before);
}
