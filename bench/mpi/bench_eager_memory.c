/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Eager ring memory at scale: registered eager bytes per connected peer
 * (from loom's MPI_T pvars, both directions of every connection) after
 *   1. connecting only,
 *   2. a small-message all-to-all (every peer gets a ring),
 *   3. MPI_Alltoall of 64 B per peer, 20 calls (Open MPI's collective: its
 *      algorithm aggregates blocks into larger messages to a few peers),
 *   4. a burst of 8000-byte messages to 2 peers (their rings grow),
 *   5. idling past the shrink time (rings go back down),
 * next to what stock designs pre-register per peer.  Every message of the
 * burst and of the all-to-alls is verified.  With -c the goals are asserted:
 * at most 16 KiB per peer after the small-message steps, no connection above
 * 64 KiB before the burst (only sustained large-eager traffic may cost
 * more), at most 4 KiB per idle peer, rings used at all, and some
 * connection's rings grown by the burst.
 *
 * usage: bench_eager_memory [-c] [-i idle_ms] [-n rounds]
 *   idle_ms: how long step 4 idles (set it above btl_loom_eager_idle_shrink;
 *   two shrink periods may be needed from the largest phase)
 */
#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BURST_SIZE  8000 /* 8 KiB-class: under the eager limit of every rail (rc_verbs: 8 KiB less headers) */
#define BURST_COUNT 64

static int rank, size;

struct sample {
    double per_peer;      /* registered bytes / connected peers, all ranks */
    double worst_rank;    /* the largest per-rank value of the same */
    double peer_max;      /* the most one connection ever had (high-water mark) */
};

static unsigned long long pvar(const char *name, int required)
{
    unsigned long long v = 0;
    int found = 0;

    LOOM_CHECK_MPI(loom_pvar_read_sum(name, &v, &found));
    if (required && 0 == found) {
        loom_fail("MPI_T performance variable %s* not found: is the loom BTL loaded "
                  "(--mca btl self,loom)?", name);
    }
    return v;
}

static struct sample measure(void)
{
    double mine[2], sum[2], per_rank, worst, peak;
    struct sample s;

    mine[0] = (double)pvar("btl_loom_eager_registered_bytes", 1);
    mine[1] = (double)pvar("btl_loom_eager_rings_phase", 1); /* every connected peer once */
    per_rank = mine[1] > 0 ? mine[0] / mine[1] : 0;
    LOOM_CHECK_MPI(MPI_Allreduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    LOOM_CHECK_MPI(MPI_Allreduce(&per_rank, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    peak = (double)pvar("btl_loom_eager_peer_bytes_max", 1);
    LOOM_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &peak, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    s.peer_max   = peak;
    s.per_peer   = sum[1] > 0 ? sum[0] / sum[1] : 0;
    s.worst_rank = worst;
    return s;
}

static void report(const char *step, struct sample s)
{
    if (0 == rank) {
        printf("%-34s %12.0f %14.0f %14.0f\n", step, s.per_peer, s.worst_rank, s.peer_max);
        fflush(stdout);
    }
}

/* Every rank sends one small message to every other rank, rounds times
 * (point to point: a collective's algorithm may talk to only a few peers). */
static void alltoall_rounds(int rounds)
{
    unsigned long long *out = loom_malloc(sizeof(*out) * (size_t)size);
    unsigned long long *in  = loom_malloc(sizeof(*in) * (size_t)size);
    MPI_Request *reqs = loom_malloc(sizeof(*reqs) * 2 * (size_t)size);
    int r, p, n;

    for (r = 0; r < rounds; ++r) {
        for (p = 0, n = 0; p < size; ++p) {
            if (p == rank) {
                continue;
            }
            out[p] = (unsigned long long)r << 40 | (unsigned long long)rank << 20 | (unsigned)p;
            LOOM_CHECK_MPI(MPI_Irecv(&in[p], 1, MPI_UNSIGNED_LONG_LONG, p, r, MPI_COMM_WORLD,
                                     &reqs[n++]));
            LOOM_CHECK_MPI(MPI_Isend(&out[p], 1, MPI_UNSIGNED_LONG_LONG, p, r, MPI_COMM_WORLD,
                                     &reqs[n++]));
        }
        LOOM_CHECK_MPI(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
        for (p = 0; p < size; ++p) {
            unsigned long long want = (unsigned long long)r << 40 |
                                      (unsigned long long)p << 20 | (unsigned)rank;
            if (p != rank && in[p] != want) {
                loom_fail("all-to-all round %d: got %#llx from rank %d, expected %#llx", r,
                          in[p], p, want);
            }
        }
    }
    free(out);
    free(in);
    free(reqs);
}

#define COLL_BLOCK 64
#define COLL_CALLS 20

/* MPI_Alltoall of COLL_BLOCK bytes per peer, every block checked. */
static void alltoall_collective(void)
{
    size_t bytes = (size_t)size * COLL_BLOCK;
    unsigned char *out = loom_malloc(bytes), *in = loom_malloc(bytes);
    int call, p, i;

    for (call = 0; call < COLL_CALLS; ++call) {
        for (p = 0; p < size; ++p) {
            for (i = 0; i < COLL_BLOCK; ++i) {
                out[(size_t)p * COLL_BLOCK + i] = (unsigned char)(rank * 7 + p * 3 + call + i);
            }
        }
        memset(in, LOOM_POISON, bytes);
        LOOM_CHECK_MPI(MPI_Alltoall(out, COLL_BLOCK, MPI_BYTE, in, COLL_BLOCK, MPI_BYTE,
                                    MPI_COMM_WORLD));
        for (p = 0; p < size; ++p) {
            for (i = 0; i < COLL_BLOCK; ++i) {
                unsigned char want = (unsigned char)(p * 7 + rank * 3 + call + i);
                if (in[(size_t)p * COLL_BLOCK + i] != want) {
                    loom_fail("MPI_Alltoall call %d: byte %d from rank %d is %#x, expected "
                              "%#x", call, i, p, in[(size_t)p * COLL_BLOCK + i], want);
                }
            }
        }
    }
    free(out);
    free(in);
}

/* 8000-byte messages to the next two ranks, from the previous two. */
static void burst(void)
{
    unsigned char *sbuf = loom_malloc(BURST_SIZE);
    unsigned char *rbuf = loom_malloc(2 * BURST_COUNT * (BURST_SIZE + LOOM_GUARD_SIZE));
    MPI_Request reqs[4 * BURST_COUNT];
    int n = 0, i, k;

    memset(rbuf, LOOM_POISON, 2 * BURST_COUNT * (BURST_SIZE + LOOM_GUARD_SIZE));
    loom_fill_pattern(sbuf, BURST_SIZE, 7, rank);
    for (k = 1; k <= 2; ++k) {
        for (i = 0; i < BURST_COUNT; ++i) {
            unsigned char *dst = rbuf + ((size_t)(k - 1) * BURST_COUNT + (size_t)i) *
                                            (BURST_SIZE + LOOM_GUARD_SIZE);
            LOOM_CHECK_MPI(MPI_Irecv(dst, BURST_SIZE, MPI_BYTE, (rank - k + size) % size, i,
                                     MPI_COMM_WORLD, &reqs[n++]));
            LOOM_CHECK_MPI(MPI_Isend(sbuf, BURST_SIZE, MPI_BYTE, (rank + k) % size, i,
                                     MPI_COMM_WORLD, &reqs[n++]));
        }
    }
    LOOM_CHECK_MPI(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
    for (k = 1; k <= 2; ++k) {
        for (i = 0; i < BURST_COUNT; ++i) {
            loom_check_recv(rbuf + ((size_t)(k - 1) * BURST_COUNT + (size_t)i) *
                                       (BURST_SIZE + LOOM_GUARD_SIZE),
                            BURST_SIZE, 7, (rank - k + size) % size, "8000 B burst");
        }
    }
    free(sbuf);
    free(rbuf);
}

/* Keep progressing (loom shrinks rings from its progress) without traffic. */
static void idle(int ms)
{
    int flag, i;

    for (i = 0; i < ms; ++i) {
        LOOM_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag,
                                  MPI_STATUS_IGNORE));
        usleep(1000);
    }
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    struct sample connect, small, coll, big, after;
    int check = 0, idle_ms = 5000, rounds = 40, opt;
    unsigned long long ring_msgs, grown;

    loom_test_init(&argc, &argv, "bench_eager_memory", 4, &rank, &size);
    while ((opt = getopt(argc, argv, "ci:n:")) != -1) {
        switch (opt) {
        case 'c': check = 1; break;
        case 'i': idle_ms = atoi(optarg); break;
        case 'n': rounds = atoi(optarg); break;
        default:
            loom_fail("usage: bench_eager_memory [-c] [-i idle_ms] [-n rounds]");
        }
    }
    (void)pvar("btl_loom_eager_ring_received", 1); /* the counter's baseline */
    if (0 == rank) {
        printf("# loom eager ring memory, %d ranks: registered eager bytes per connected "
               "peer (rings and send slots, both directions)\n", size);
        printf("%-34s %12s %14s %14s\n", "# after", "avg/peer", "worst rank/peer",
               "one peer, max");
    }
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    connect = measure();
    report("connect only", connect);
    alltoall_rounds(rounds);
    idle(50); /* let the last acknowledgements land */
    small = measure();
    report("small-message all-to-all", small);
    alltoall_collective();
    idle(50);
    coll = measure();
    report("MPI_Alltoall, 64 B per peer", coll);
    grown = pvar("btl_loom_eager_enlargements", 1);
    burst();
    idle(50);
    big = measure();
    grown = pvar("btl_loom_eager_enlargements", 1) - grown;
    LOOM_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &grown, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                                 MPI_COMM_WORLD));
    report("8000 B burst to 2 peers", big);
    idle(idle_ms);
    after = measure();
    report("idle past the shrink time", after);
    ring_msgs = pvar("btl_loom_eager_ring_received", 1);
    LOOM_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &ring_msgs, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                                 MPI_COMM_WORLD));
    if (0 == rank) {
        printf("%-34s %12d %14s %14s\n", "openib eager RDMA (17 x 12 KiB)", 17 * 12 * 1024,
               "-", "-");
        printf("%-34s %12d %14s %14s\n", "MVAPICH2 eager RDMA (16 x 4 KiB)", 16 * 4 * 1024,
               "-", "-");
        printf("# messages through rings: %llu; rings grown by the burst: %llu\n", ring_msgs,
               grown);
    }
    if (check) {
        if (0 == ring_msgs) {
            loom_fail("no message went through an eager ring (is btl_loom_eager_rdma off "
                      "for these rails?)");
        }
        if (small.per_peer > 16 * 1024 || coll.per_peer > 16 * 1024) {
            loom_fail("%.0f and %.0f eager bytes per peer after the small-message steps, goal "
                      "at most 16384", small.per_peer, coll.per_peer);
        }
        if (coll.peer_max > 64 * 1024) {
            loom_fail("one connection reached %.0f eager bytes before any large-eager stream, "
                      "goal at most 65536", coll.peer_max);
        }
        if (after.per_peer > 4 * 1024) {
            loom_fail("%.0f eager bytes per idle peer, goal at most 4096", after.per_peer);
        }
        /* counted, not read off the memory: rings may already be shrinking on a
         * slow machine, and the one connection with the most memory may have
         * reached the burst's phase in MPI_Alltoall already */
        if (0 == grown) {
            loom_fail("the 8000 B burst grew no ring (no enlargement acknowledged on any "
                      "rank; one connection's high-water mark %.0f bytes before it, %.0f "
                      "after)", coll.peer_max, big.peer_max);
        }
    }
    loom_test_pass();
}
