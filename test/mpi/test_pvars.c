/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Proves that loom carried the bytes: rank 0 sends 10 x 1 MiB and
 * 1000 x 8 B to rank 1, and the deltas of loom's MPI_T counters
 * btl_loom_bytes_sent and btl_loom_bytes_received, summed over all ranks,
 * must show the payload moved.  A process counts what it moved itself: both
 * ends count an active message, but only the writer counts a put and only the
 * reader a hardware get (rc_verbs), so the larger of the two sums must be at
 * least the payload (the 1 MiB messages all take one protocol, which alone
 * carries over 99% of it).  Missing pvars are a failure,
 * not a skip: without them nothing shows that loom was used at all.
 */

#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBIG 10
#define BIG_SIZE MIB
#define NSMALL 1000
#define SMALL_SIZE 8

#define SENT_PVAR "btl_loom_bytes_sent"
#define RECV_PVAR "btl_loom_bytes_received"

struct counters {
    unsigned long long sent, received;
};

static void read_counters(struct counters *c)
{
    int found_sent = 0, found_received = 0, rc;

    rc = loom_pvar_read_sum(SENT_PVAR, &c->sent, &found_sent);
    if (MPI_SUCCESS == rc) {
        rc = loom_pvar_read_sum(RECV_PVAR, &c->received, &found_received);
    }
    if (MPI_SUCCESS != rc) {
        loom_fail("reading loom's pvars through MPI_T failed (error %d)", rc);
    }
    if (0 == found_sent || 0 == found_received) {
        loom_fail("loom's pvars are missing: no MPI_T performance variable "
                  "named %s* (found %d) / %s* (found %d); is the loom BTL "
                  "loaded (--mca btl self,loom)?", SENT_PVAR, found_sent,
                  RECV_PVAR, found_received);
    }
}

static void transfer(int rank)
{
    unsigned char *buf = loom_malloc(BIG_SIZE + LOOM_GUARD_SIZE);
    char what[64];
    int ack = 0;

    for (int i = 0; i < NBIG + NSMALL; i++) {
        size_t size = i < NBIG ? BIG_SIZE : SMALL_SIZE;

        if (0 == rank) {
            loom_fill_pattern(buf, size, (unsigned) i, rank);
            LOOM_CHECK_MPI(MPI_Send(buf, (int) size, MPI_BYTE, 1, i,
                                    MPI_COMM_WORLD));
        } else {
            MPI_Status status;

            snprintf(what, sizeof(what), "message %d (%zu B)", i, size);
            memset(buf, LOOM_POISON, size + LOOM_GUARD_SIZE);
            LOOM_CHECK_MPI(MPI_Recv(buf, (int) size, MPI_BYTE, 0, i,
                                    MPI_COMM_WORLD, &status));
            loom_check_count(&status, MPI_BYTE, (int) size, 0, what);
            loom_check_recv(buf, size, (unsigned) i, 0, what);
        }
    }
    /* an ack so that all sends have completed at rank 0 as well */
    if (0 == rank) {
        LOOM_CHECK_MPI(MPI_Recv(&ack, 1, MPI_INT, 1, 0, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
    } else {
        LOOM_CHECK_MPI(MPI_Send(&ack, 1, MPI_INT, 0, 0, MPI_COMM_WORLD));
    }
    free(buf);
}

int main(int argc, char **argv)
{
    const unsigned long long payload =
        (unsigned long long) NBIG * BIG_SIZE + NSMALL * SMALL_SIZE;
    struct counters before, after;
    unsigned long long delta[2], total[2];
    int rank, nprocs;

    loom_test_init(&argc, &argv, "test_pvars", 2, &rank, &nprocs);

    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    read_counters(&before);
    if (rank < 2) {
        transfer(rank);
    }
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    read_counters(&after);

    delta[0] = after.sent - before.sent;
    delta[1] = after.received - before.received;
    LOOM_CHECK_MPI(MPI_Reduce(delta, total, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                              0, MPI_COMM_WORLD));
    if (0 == rank) {
        printf("payload %llu B, %s delta %llu B, %s delta %llu B "
               "(sum over %d ranks)\n", payload, SENT_PVAR, total[0],
               RECV_PVAR, total[1], nprocs);
        if (total[0] < payload && total[1] < payload) {
            loom_fail("loom's counters did not see the payload: bytes sent "
                      "delta %llu, bytes received delta %llu, one must be "
                      ">= %llu", total[0], total[1], payload);
        }
    }
    loom_test_pass();
}
