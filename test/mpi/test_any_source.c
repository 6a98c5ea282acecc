/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Wildcard receives: every rank but 0 sends NMSG messages of sizes 0 B to
 * 1 MiB to rank 0, which receives them with MPI_ANY_SOURCE/MPI_ANY_TAG and
 * checks source, tag, count, content (pattern of sender and tag) and that
 * each sender's messages match in the order they were sent.  Then the same
 * again, received after MPI_Probe, and after an MPI_Iprobe loop.
 */

#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NMSG 12
#define TAG_BASE 100

enum { RECV_ANY, PROBE, IPROBE, NUM_PHASES };

static const char *phase_names[] = { "MPI_Recv(ANY_SOURCE, ANY_TAG)",
                                     "MPI_Probe + MPI_Recv",
                                     "MPI_Iprobe + MPI_Recv" };

static size_t msg_size(int src, int k)
{
    static const size_t sizes[] = { 0, 1, 100, 4095, 4096, 65535, 65543,
                                    262144, MIB };

    return sizes[(size_t) (k + src) % (sizeof(sizes) / sizeof(sizes[0]))];
}

static unsigned msg_seed(int phase, int tag)
{
    return (unsigned) (phase * 1000 + tag);
}

static void send_all(int phase, int rank)
{
    unsigned char *buf = loom_malloc(MIB);

    for (int k = 0; k < NMSG; k++) {
        size_t size = msg_size(rank, k);

        loom_fill_pattern(buf, size, msg_seed(phase, TAG_BASE + k), rank);
        LOOM_CHECK_MPI(MPI_Send(buf, (int) size, MPI_BYTE, 0, TAG_BASE + k,
                                MPI_COMM_WORLD));
    }
    free(buf);
}

/* find the next message of any source and tag: its status, or none for a
 * plain wildcard receive */
static void probe(int phase, MPI_Status *status)
{
    int flag = 0;

    if (PROBE == phase) {
        LOOM_CHECK_MPI(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                                 status));
    }
    while (IPROBE == phase && !flag) {
        LOOM_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                                  &flag, status));
    }
}

static void recv_all(int phase, int nprocs)
{
    unsigned char *buf = loom_malloc(MIB + LOOM_GUARD_SIZE);
    int *next = loom_malloc((size_t) nprocs * sizeof(int));
    int total = NMSG * (nprocs - 1);
    char what[128];

    memset(next, 0, (size_t) nprocs * sizeof(int));
    for (int n = 0; n < total; n++) {
        MPI_Status probed, status;
        int src = MPI_ANY_SOURCE, tag = MPI_ANY_TAG;
        int count = (int) MIB;

        probe(phase, &probed);
        if (RECV_ANY != phase) {
            src = probed.MPI_SOURCE;
            tag = probed.MPI_TAG;
            LOOM_CHECK_MPI(MPI_Get_count(&probed, MPI_BYTE, &count));
        }
        memset(buf, LOOM_POISON, MIB + LOOM_GUARD_SIZE);
        LOOM_CHECK_MPI(MPI_Recv(buf, count, MPI_BYTE, src, tag,
                                MPI_COMM_WORLD, &status));

        src = status.MPI_SOURCE;
        if (src < 1 || src >= nprocs || next[src] >= NMSG) {
            loom_fail("%s: unexpected source %d (message %d of %d)",
                      phase_names[phase], src, n, total);
        }
        snprintf(what, sizeof(what), "%s: message %d from %d (tag %d)",
                 phase_names[phase], next[src], src, TAG_BASE + next[src]);
        if (TAG_BASE + next[src] != status.MPI_TAG) {
            loom_fail("%s: got tag %d instead (out of order?)", what,
                      status.MPI_TAG);
        }
        if (RECV_ANY != phase && (probed.MPI_SOURCE != src ||
                                  probed.MPI_TAG != status.MPI_TAG)) {
            loom_fail("%s: probe said source %d tag %d", what,
                      probed.MPI_SOURCE, probed.MPI_TAG);
        }
        loom_check_count(&status, MPI_BYTE, (int) msg_size(src, next[src]),
                         src, what);
        loom_check_recv(buf, msg_size(src, next[src]),
                        msg_seed(phase, status.MPI_TAG), src, what);
        next[src]++;
    }
    free(next);
    free(buf);
}

int main(int argc, char **argv)
{
    int rank, nprocs;

    loom_test_init(&argc, &argv, "test_any_source", 2, &rank, &nprocs);

    for (int phase = 0; phase < NUM_PHASES; phase++) {
        if (0 == rank) {
            recv_all(phase, nprocs);
        } else {
            send_all(phase, rank);
        }
        LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    }
    loom_test_pass();
}
