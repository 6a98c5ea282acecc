/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Dynamic processes: loom meets peers that did not exist at MPI_Init.  The
 * job spawns NCHILD copies of this program twice in a row; each time,
 * parent rank r and child rank r exchange messages of every protocol size
 * across the intercommunicator, both ways, then the two groups merge, run
 * a reduction and a broadcast, and disconnect.  Every byte is verified.
 */
#include "loom_test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCHILD 2
#define ROUNDS 2

static const size_t sizes[] = { 1, 4000, 65536, 1048576 + 3, 4 * MIB };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* Messages both ways with the rank of the same number in the other group;
 * the parents' seeds and the children's differ. */
static void exchange(MPI_Comm inter, int rank, int is_child, int round)
{
    unsigned char *sbuf = loom_malloc(4 * MIB), *rbuf = loom_malloc(4 * MIB + LOOM_GUARD_SIZE);
    unsigned my_seed, peer_seed;
    MPI_Status status;
    char what[96];
    size_t i;

    for (i = 0; i < NSIZES; ++i) {
        my_seed   = (unsigned)(round * 100 + i * 2 + is_child);
        peer_seed = (unsigned)(round * 100 + i * 2 + !is_child);
        loom_fill_pattern(sbuf, sizes[i], my_seed, rank);
        memset(rbuf, LOOM_POISON, sizes[i] + LOOM_GUARD_SIZE);
        LOOM_CHECK_MPI(MPI_Sendrecv(sbuf, (int)sizes[i], MPI_BYTE, rank, 3, rbuf,
                                    (int)sizes[i], MPI_BYTE, rank, 3, inter, &status));
        snprintf(what, sizeof(what), "%s of round %d, %zu bytes from its %s",
                 is_child ? "child" : "parent", round, sizes[i], is_child ? "parent" : "child");
        loom_check_count(&status, MPI_BYTE, (int)sizes[i], rank, what);
        loom_check_recv(rbuf, sizes[i], peer_seed, rank, what);
    }
    free(sbuf);
    free(rbuf);
}

/* Both groups as one: a sum over everybody, and a broadcast from the last
 * child. */
static void together(MPI_Comm inter, int is_child, int round)
{
    MPI_Comm merged;
    int64_t mine, sum, want = 0;
    int mrank, msize, r, parents;
    unsigned char *buf = loom_malloc(MIB);

    if (is_child) {
        LOOM_CHECK_MPI(MPI_Comm_remote_size(inter, &parents));
    } else {
        LOOM_CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &parents));
    }
    LOOM_CHECK_MPI(MPI_Intercomm_merge(inter, is_child, &merged));
    LOOM_CHECK_MPI(MPI_Comm_rank(merged, &mrank));
    LOOM_CHECK_MPI(MPI_Comm_size(merged, &msize));
    if (msize != parents + NCHILD) {
        loom_fail("merged communicator of round %d has %d ranks, expected %d", round, msize,
                  parents + NCHILD);
    }
    mine = (int64_t)mrank * 1000 + round;
    for (r = 0; r < msize; ++r) {
        want += (int64_t)r * 1000 + round;
    }
    LOOM_CHECK_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_INT64_T, MPI_SUM, merged));
    if (sum != want) {
        loom_fail("sum over parents and children of round %d is %lld, expected %lld", round,
                  (long long)sum, (long long)want);
    }
    if (mrank == msize - 1) {
        loom_fill_pattern(buf, MIB, (unsigned)round, msize - 1);
    }
    LOOM_CHECK_MPI(MPI_Bcast(buf, (int)MIB, MPI_BYTE, msize - 1, merged));
    if (-1 != loom_verify_pattern(buf, MIB, (unsigned)round, msize - 1,
                                  "broadcast from the last child")) {
        loom_fail("broadcast from the last child of round %d is wrong", round);
    }
    LOOM_CHECK_MPI(MPI_Comm_free(&merged));
    free(buf);
}

static int child_main(MPI_Comm parent, int rank, int round)
{
    int parents;

    LOOM_CHECK_MPI(MPI_Comm_remote_size(parent, &parents));
    if (rank < parents) {
        exchange(parent, rank, 1, round);
    }
    together(parent, 1, round);
    LOOM_CHECK_MPI(MPI_Comm_disconnect(&parent));
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    char *child_argv[3], round_arg[16];
    int rank, nprocs, round, errs[NCHILD], i;
    MPI_Comm parent, inter;

    loom_test_init(&argc, &argv, "test_spawn", 1, &rank, &nprocs);
    LOOM_CHECK_MPI(MPI_Comm_get_parent(&parent));
    if (MPI_COMM_NULL != parent) {
        LOOM_CHECK_MPI(MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN));
        return child_main(parent, rank, argc > 2 ? atoi(argv[2]) : -1);
    }
    for (round = 0; round < ROUNDS; ++round) {
        snprintf(round_arg, sizeof(round_arg), "%d", round);
        child_argv[0] = "child";
        child_argv[1] = round_arg;
        child_argv[2] = NULL;
        LOOM_CHECK_MPI(MPI_Comm_spawn(argv[0], child_argv, NCHILD, MPI_INFO_NULL, 0,
                                      MPI_COMM_WORLD, &inter, errs));
        LOOM_CHECK_MPI(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
        for (i = 0; i < NCHILD; ++i) {
            LOOM_CHECK_MPI(errs[i]);
        }
        if (rank < NCHILD) {
            exchange(inter, rank, 0, round);
        }
        together(inter, 0, round);
        LOOM_CHECK_MPI(MPI_Comm_disconnect(&inter));
    }
    loom_test_pass();
}
