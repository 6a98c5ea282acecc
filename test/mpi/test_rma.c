/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * One-sided communication through whatever osc component Open MPI picks on
 * top of ob1 and loom: MPI_Put and MPI_Get between neighbours under fences,
 * MPI_Accumulate from every rank into rank 0 under a passive-target lock,
 * every byte (and every sum) verified, the rest of the window untouched.
 */
#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIN_SIZE (4 * MIB + 4096)
#define NACC     4096

static const size_t sizes[] = { 1, 7, 4096, 65537, 1048576, 4 * MIB };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static void put_get_round(MPI_Win win, unsigned char *base, unsigned char *local, int rank,
                          int size, size_t len, unsigned seed)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    char what[96];

    /* put our pattern at offset 1 of the next rank's window */
    memset(base, LOOM_POISON, WIN_SIZE);
    loom_fill_pattern(local, len, seed, rank);
    LOOM_CHECK_MPI(MPI_Win_fence(0, win));
    LOOM_CHECK_MPI(MPI_Put(local, (int)len, MPI_BYTE, next, 1, (int)len, MPI_BYTE, win));
    LOOM_CHECK_MPI(MPI_Win_fence(0, win));
    snprintf(what, sizeof(what), "MPI_Put of %zu bytes from rank %d", len, prev);
    if (loom_verify_byte(base, 1, LOOM_POISON, prev, what) >= 0 ||
        loom_verify_pattern(base + 1, len, seed, prev, what) >= 0 ||
        loom_verify_byte(base + 1 + len, WIN_SIZE - 1 - len, LOOM_POISON, prev, what) >= 0) {
        loom_fail("%s: window content wrong", what);
    }

    /* get it back from the previous rank's window: the pattern we put there... */
    memset(local, 0, len);
    LOOM_CHECK_MPI(MPI_Win_fence(0, win));
    LOOM_CHECK_MPI(MPI_Get(local, (int)len, MPI_BYTE, prev, 1, (int)len, MPI_BYTE, win));
    LOOM_CHECK_MPI(MPI_Win_fence(0, win));
    /* ...which holds what prev's own predecessor put, i.e. rank prev-1's pattern */
    snprintf(what, sizeof(what), "MPI_Get of %zu bytes from rank %d", len, prev);
    if (loom_verify_pattern(local, len, seed, (prev + size - 1) % size, what) >= 0) {
        loom_fail("%s: data wrong", what);
    }
}

static void accumulate_round(MPI_Win win, int *acc_base, int rank, int size)
{
    int contrib[NACC], i, r;

    for (i = 0; i < NACC; ++i) {
        contrib[i] = (rank + 1) * (i + 1);
    }
    if (0 == rank) {
        memset(acc_base, 0, NACC * sizeof(int));
    }
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    LOOM_CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    LOOM_CHECK_MPI(MPI_Accumulate(contrib, NACC, MPI_INT, 0, 0, NACC, MPI_INT, MPI_SUM, win));
    LOOM_CHECK_MPI(MPI_Win_unlock(0, win));
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (0 == rank) {
        int factor = 0;
        for (r = 0; r < size; ++r) {
            factor += r + 1;
        }
        LOOM_CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        for (i = 0; i < NACC; ++i) {
            if (acc_base[i] != factor * (i + 1)) {
                loom_fail("MPI_Accumulate: element %d is %d, expected %d", i, acc_base[i],
                          factor * (i + 1));
            }
        }
        LOOM_CHECK_MPI(MPI_Win_unlock(0, win));
    }
}

int main(int argc, char **argv)
{
    unsigned char *base, *local;
    int rank, size;
    size_t i;
    MPI_Win win;

    loom_test_osc_default();
    loom_test_init(&argc, &argv, "test_rma", 2, &rank, &size);
    local = loom_malloc(WIN_SIZE);
    LOOM_CHECK_MPI(MPI_Alloc_mem(WIN_SIZE, MPI_INFO_NULL, &base));
    LOOM_CHECK_MPI(MPI_Win_create(base, WIN_SIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (i = 0; i < NSIZES; ++i) {
        put_get_round(win, base, local, rank, size, sizes[i], (unsigned)(500 + i));
    }
    LOOM_CHECK_MPI(MPI_Win_fence(0, win));
    accumulate_round(win, (int *)base, rank, size);
    LOOM_CHECK_MPI(MPI_Win_free(&win));
    LOOM_CHECK_MPI(MPI_Free_mem(base));
    free(local);
    loom_test_pass();
}
