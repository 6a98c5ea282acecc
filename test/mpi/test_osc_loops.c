/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Loops of every one-sided operation, as IMB-RMA runs them: each rank
 * locks its right neighbour's window once, then issues one operation after
 * another, LOOPS times, with a flush after every call and again without
 * (one flush at the end).  Put, Get, Accumulate, Get_accumulate,
 * Fetch_and_op and Compare_and_swap, each checked: the target's window
 * holds what the last operation left, every fetched value is the one the
 * operation before it left.  A flush per call makes every operation a
 * round trip of its own; over several rails its request and its reply may
 * travel on different ones (issue 44, item 6: this hung over two rails).
 */
#include "loom_test_util.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define LOOPS 100
#define WORDS 4

typedef enum { OP_PUT, OP_GET, OP_ACC, OP_GET_ACC, OP_FETCH_OP, OP_CAS, OP_COUNT } op_t;

static const char *const op_names[OP_COUNT] = {
    "MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Get_accumulate", "MPI_Fetch_and_op",
    "MPI_Compare_and_swap"};

/* One operation of iteration i on target: origin buffers stay untouched
 * until the flush (value[i], compare[i]), *fetched gets what it read. */
static void issue(MPI_Win win, op_t op, int target, int i, int64_t *fetched,
                  const int64_t *value, const int64_t *compare)
{
    static const int64_t one = 1;

    switch (op) {
    case OP_PUT:
        LOOM_CHECK_MPI(MPI_Put(&value[i], 1, MPI_INT64_T, target, 0, 1, MPI_INT64_T, win));
        break;
    case OP_GET:
        LOOM_CHECK_MPI(MPI_Get(fetched, 1, MPI_INT64_T, target, 1, 1, MPI_INT64_T, win));
        break;
    case OP_ACC:
        LOOM_CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT64_T, target, 0, 1, MPI_INT64_T,
                                      MPI_SUM, win));
        break;
    case OP_GET_ACC:
        LOOM_CHECK_MPI(MPI_Get_accumulate(&one, 1, MPI_INT64_T, fetched, 1, MPI_INT64_T,
                                          target, 0, 1, MPI_INT64_T, MPI_SUM, win));
        break;
    case OP_FETCH_OP:
        LOOM_CHECK_MPI(MPI_Fetch_and_op(&one, fetched, MPI_INT64_T, target, 0, MPI_SUM, win));
        break;
    default:
        LOOM_CHECK_MPI(MPI_Compare_and_swap(&value[i], &compare[i], fetched, MPI_INT64_T,
                                            target, 0, win));
        break;
    }
}

/* What a fetching operation of iteration i must have read (-1: none). */
static int64_t fetched_expected(op_t op, int i)
{
    switch (op) {
    case OP_GET:
        return 0x5a5a; /* word 1, which nobody writes */
    case OP_GET_ACC:
    case OP_FETCH_OP:
    case OP_CAS:
        return i;
    default:
        return -1;
    }
}

static void run_loop(MPI_Win win, int64_t *base, op_t op, bool flush_each, int rank,
                     int size)
{
    int target = (rank + 1) % size;
    int64_t fetched[LOOPS], value[LOOPS], compare[LOOPS];
    int i;

    for (i = 0; i < LOOPS; ++i) {
        value[i]   = (int64_t)i + 1; /* a put's, and a swap's new value */
        compare[i] = i;
    }

    base[0] = 0;
    base[1] = 0x5a5a;
    LOOM_CHECK_MPI(MPI_Win_sync(win));
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    LOOM_CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
    for (i = 0; i < LOOPS; ++i) {
        fetched[i] = -1;
        issue(win, op, target, i, &fetched[i], value, compare);
        /* without a flush per call the accumulating operations still see
         * each other's results (MPI orders them); puts to one word are
         * not ordered, so each is flushed */
        if (flush_each || OP_PUT == op) {
            LOOM_CHECK_MPI(MPI_Win_flush(target, win));
        }
    }
    LOOM_CHECK_MPI(MPI_Win_flush(target, win));
    LOOM_CHECK_MPI(MPI_Win_unlock(target, win));
    for (i = 0; i < LOOPS; ++i) {
        int64_t want = fetched_expected(op, i);

        if (want >= 0 && fetched[i] != want) {
            loom_fail("%s%s: call %d fetched %lld, expected %lld", op_names[op],
                      flush_each ? " with a flush per call" : "", i, (long long)fetched[i],
                      (long long)want);
        }
    }
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    LOOM_CHECK_MPI(MPI_Win_sync(win));
    /* every operation but a get leaves LOOPS in word 0 */
    if (base[0] != ((OP_GET == op) ? 0 : LOOPS)) {
        loom_fail("%s%s: the window holds %lld", op_names[op],
                  flush_each ? " with a flush per call" : "", (long long)base[0]);
    }
    if (base[1] != 0x5a5a) {
        loom_fail("%s: word 1 changed to %lld", op_names[op], (long long)base[1]);
    }
}

int main(int argc, char **argv)
{
    int rank, size, flush_each, op;
    int64_t *base;
    MPI_Win win;

    loom_test_osc_default();
    loom_test_init(&argc, &argv, "test_osc_loops", 2, &rank, &size);
    LOOM_CHECK_MPI(MPI_Win_allocate(WORDS * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                                    MPI_COMM_WORLD, &base, &win));
    for (flush_each = 1; flush_each >= 0; --flush_each) {
        for (op = 0; op < OP_COUNT; ++op) {
            run_loop(win, base, (op_t)op, 1 == flush_each, rank, size);
        }
    }
    LOOM_CHECK_MPI(MPI_Win_free(&win));
    loom_test_pass_msg("(%d operations x %d calls, with and without a flush per call)",
                       OP_COUNT, LOOPS);
}
