/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Many outstanding requests between rank pairs (0<->1, 2<->3, ...):
 *  1. 256 Isend and 256 Irecv each way at once, mixed sizes (small,
 *     4 KiB, 64 KiB, 1 MiB), a distinct tag each, one Waitall;
 *  2. unexpected messages: 256 Isend of sizes below 64 KiB, a barrier and
 *     an Iprobe loop so they arrive before any receive is posted, then the
 *     receives, posted in reverse tag order;
 *  3. ordering: 256 messages of mixed sizes on one tag must match the
 *     receives in the order they were sent.
 */

#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NMSG 256

enum { MIXED, UNEXPECTED, ORDERED, NUM_PHASES };

static const char *phase_names[] = { "mixed", "unexpected", "ordered" };

static size_t msg_size(int phase, int i)
{
    switch (i % 4) {
    case 0:
        return (size_t) (i * 7 % 200);              /* small, incl. 0 B */
    case 1:
        return 4 * KIB - (size_t) (i % 3);
    case 2:
        /* eager-ish below 64 KiB when unexpected, else just above */
        return UNEXPECTED == phase ? 64 * KIB - 1 - (size_t) i
                                   : 64 * KIB + (size_t) i;
    default:
        return UNEXPECTED == phase ? 16 * KIB + (size_t) i : MIB;
    }
}

static void run_phase(int phase, int rank, int peer)
{
    unsigned char *sbuf[NMSG], *rbuf[NMSG];
    MPI_Request reqs[2 * NMSG];
    MPI_Status status[2 * NMSG];
    char what[96];

    for (int i = 0; i < NMSG; i++) {
        size_t size = msg_size(phase, i);

        sbuf[i] = loom_malloc(size);
        rbuf[i] = loom_malloc(size + LOOM_GUARD_SIZE);
        memset(rbuf[i], LOOM_POISON, size + LOOM_GUARD_SIZE);
        loom_fill_pattern(sbuf[i], size, (unsigned) (phase * NMSG + i), rank);
    }

    /* receives first for MIXED and ORDERED, after the sends otherwise */
    for (int i = 0; UNEXPECTED != phase && i < NMSG; i++) {
        int tag = ORDERED == phase ? 0 : i;

        LOOM_CHECK_MPI(MPI_Irecv(rbuf[i], (int) msg_size(phase, i), MPI_BYTE,
                                 peer, tag, MPI_COMM_WORLD, &reqs[NMSG + i]));
    }
    for (int i = 0; i < NMSG; i++) {
        int tag = ORDERED == phase ? 0 : i;

        LOOM_CHECK_MPI(MPI_Isend(sbuf[i], (int) msg_size(phase, i), MPI_BYTE,
                                 peer, tag, MPI_COMM_WORLD, &reqs[i]));
    }
    if (UNEXPECTED == phase) {
        int arrived = 0;

        /* wait until the last message (and so all before it, messages
         * being non-overtaking) sits in the unexpected queue */
        LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        while (!arrived) {
            LOOM_CHECK_MPI(MPI_Iprobe(peer, NMSG - 1, MPI_COMM_WORLD,
                                      &arrived, MPI_STATUS_IGNORE));
        }
        for (int i = NMSG - 1; i >= 0; i--) {
            LOOM_CHECK_MPI(MPI_Irecv(rbuf[i], (int) msg_size(phase, i),
                                     MPI_BYTE, peer, i, MPI_COMM_WORLD,
                                     &reqs[NMSG + i]));
        }
    }
    LOOM_CHECK_MPI(MPI_Waitall(2 * NMSG, reqs, status));

    for (int i = 0; i < NMSG; i++) {
        size_t size = msg_size(phase, i);

        snprintf(what, sizeof(what), "%s message %d (size %zu)",
                 phase_names[phase], i, size);
        loom_check_count(&status[NMSG + i], MPI_BYTE, (int) size, peer, what);
        loom_check_recv(rbuf[i], size, (unsigned) (phase * NMSG + i), peer,
                        what);
        free(sbuf[i]);
        free(rbuf[i]);
    }
}

int main(int argc, char **argv)
{
    int rank, nprocs, peer;

    loom_test_init(&argc, &argv, "test_many_outstanding", 2, &rank, &nprocs);
    peer = loom_pair_peer(rank, nprocs);

    for (int phase = 0; phase < NUM_PHASES; phase++) {
        if (peer >= 0) {
            run_phase(phase, rank, peer);
        } else if (UNEXPECTED == phase) {
            /* the odd one out still takes part in the barrier */
            LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        }
    }
    loom_test_pass();
}
