/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * A rank that waits sleeps; a rank that works between MPI calls does not.
 * Run with btl_loom_block_when_idle 1 (the default only on oversubscribed
 * nodes).  Counted with the pvar btl_loom_idle_blocks:
 *
 *  1. Rank 1 posts a receive and, while rank 0 computes, polls it with
 *     MPI_Test and 200 us of work (CPU time) between two tests: loom must
 *     not sleep once, for each sleep there would stall the work up to 1 ms
 *     (progress calls with that much work between them are not a wait,
 *     whatever loom found).
 *  2. The same with 2 us of work between two tests, as HPCC's
 *     MPIRandomAccess does: its calls come as close as a wait's, and only
 *     their being MPI_Tests tells loom that the rank works.  No sleep.
 *  3. Rank 1 waits in MPI_Recv while rank 0 computes 300 ms: it must sleep,
 *     unless rank 0 may write into an eager ring of rank 1 by RDMA, which
 *     wakes no sleeper: then it must poll (until rank 0 takes in its ask to
 *     drop the ring, when it is done computing), counted by the pvar
 *     btl_loom_eager_ring_polled.  LOOM_EXPECT_RING_POLLED=1 says that such
 *     a ring is there (rc_verbs rails, where rings are on; rank 0 first
 *     sends the messages that earn one) and that rank 0 runs no progress
 *     thread (which would take the ask in while rank 0 computes).
 *  4. Rank 1 waits in MPI_Recv while rank 0 makes progress without sending
 *     (MPI_Iprobe and work) for 300 ms: it must sleep in every mode.  Where
 *     a ring of rank 1's was written by RDMA, rank 1 sleeps only once rank 0
 *     dropped it, asked by this wait (btl_loom_eager_wait_shrinks) or by the
 *     one before.
 *  5. Rank 1 waits in MPI_Win_fence while rank 0 computes 300 ms, then
 *     puts into rank 1's window and fences: no sleep.  What ends a
 *     one-sided synchronization is often osc pt2pt's own progress
 *     callback, which a sleep of loom's would hold up, so loom only yields
 *     there.
 *
 * Each message is verified byte for byte.  Ranks beyond 2 only take part in
 * the barriers.
 */

#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MSG_SIZE   4096
#define WORK_US    200   /* between two MPI_Tests: far above the 20 us of a wait */
#define TIGHT_US   2     /* and well below it */
#define POLL_MS    100   /* rank 0 computes this long while rank 1 polls */
#define WAIT_MS    300   /* and this long while rank 1 waits */
#define RING_MSGS  32    /* sent before a wait, to make a ring where rings are on */
#define BLOCKS     "btl_loom_idle_blocks"
#define WAKES      "btl_loom_idle_block_wakes"
#define POLLED     "btl_loom_eager_ring_polled"
#define SHRINKS    "btl_loom_eager_wait_shrinks"

static double clock_us(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

/* computes for us microseconds of this thread's CPU time (on a loaded
 * machine its wall time is longer), calling no MPI */
static void work_us(double us)
{
    double end = clock_us(CLOCK_THREAD_CPUTIME_ID) + us;

    while (clock_us(CLOCK_THREAD_CPUTIME_ID) < end) {
    }
}

/* the same in wall time: rank 0 stands for a peer that computes a while */
static void compute_ms(double ms)
{
    double end = clock_us(CLOCK_MONOTONIC) + ms * 1000.0;

    while (clock_us(CLOCK_MONOTONIC) < end) {
    }
}

static void send_after(int seed, double ms, unsigned char *buf)
{
    compute_ms(ms);
    loom_fill_pattern(buf, MSG_SIZE, (unsigned)seed, 0);
    LOOM_CHECK_MPI(MPI_Send(buf, MSG_SIZE, MPI_BYTE, 1, seed, MPI_COMM_WORLD));
}

/* Rank 1 polls the receive of message seed with MPI_Test, work us of work
 * between two tests, while rank 0 computes POLL_MS; the sleeps meanwhile. */
static unsigned long long poll_phase(int rank, int seed, double work, int *tests,
                                     unsigned char *buf)
{
    unsigned long long before;
    MPI_Request req;
    MPI_Status status;
    int done = 0;

    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    before = loom_pvar_counter(BLOCKS); /* not the barrier's own wait */
    *tests = 0;
    if (0 == rank) {
        send_after(seed, POLL_MS, buf);
    } else if (1 == rank) {
        memset(buf, LOOM_POISON, MSG_SIZE + LOOM_GUARD_SIZE);
        LOOM_CHECK_MPI(MPI_Irecv(buf, MSG_SIZE, MPI_BYTE, 0, seed, MPI_COMM_WORLD, &req));
        while (!done) {
            LOOM_CHECK_MPI(MPI_Test(&req, &done, &status));
            ++*tests;
            if (!done) {
                work_us(work);
            }
        }
        loom_check_count(&status, MPI_BYTE, MSG_SIZE, 0, "the polled receive");
        loom_check_recv(buf, MSG_SIZE, (unsigned)seed, 0, "the polled receive");
    }
    return loom_pvar_counter(BLOCKS) - before;
}

/* Rank 1 waits in MPI_Recv for message seed from rank 0 and verifies it. */
static void recv_checked(int seed, unsigned char *buf, const char *what)
{
    MPI_Status status;

    memset(buf, LOOM_POISON, MSG_SIZE + LOOM_GUARD_SIZE);
    LOOM_CHECK_MPI(MPI_Recv(buf, MSG_SIZE, MPI_BYTE, 0, seed, MPI_COMM_WORLD, &status));
    loom_check_count(&status, MPI_BYTE, MSG_SIZE, 0, what);
    loom_check_recv(buf, MSG_SIZE, (unsigned)seed, 0, what);
}

/* Rank 0 sends rank 1 enough messages for a ring where rings are on
 * (btl_loom_eager_msgs_before_ring, 16 by default), each verified. */
static void grow_ring(int rank, int seed, unsigned char *buf)
{
    int i;

    for (i = 0; i < RING_MSGS; ++i) {
        if (0 == rank) {
            send_after(seed + i, 0, buf);
        } else if (1 == rank) {
            recv_checked(seed + i, buf, "a message for the ring");
        }
    }
}

/* Receive rings of this rank in use now (phase 1 and up). */
static unsigned long long rings_in_use(void)
{
    unsigned long long sum = 0;
    char name[64];
    int phase;

    for (phase = 1; phase <= 4; ++phase) {
        snprintf(name, sizeof(name), "btl_loom_eager_rings_phase%d", phase);
        sum += loom_pvar_counter(name);
    }
    return sum;
}

/* Rank 0 keeps progressing, sending nothing, for WAIT_MS while rank 1
 * waits for message seed; rank 1's sleeps meanwhile, its rings in use at
 * the start, the drops it asked for and its polls for a ring. */
static unsigned long long progress_phase(int rank, int seed, unsigned char *buf,
                                         unsigned long long *rings, unsigned long long *shrinks,
                                         unsigned long long *polled)
{
    unsigned long long before;
    int flag;

    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    before   = loom_pvar_counter(BLOCKS);
    *shrinks = loom_pvar_counter(SHRINKS);
    *polled  = loom_pvar_counter(POLLED);
    *rings   = rings_in_use();
    if (0 == rank) {
        double end = clock_us(CLOCK_MONOTONIC) + WAIT_MS * 1000.0;

        while (clock_us(CLOCK_MONOTONIC) < end) {
            LOOM_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag,
                                      MPI_STATUS_IGNORE));
            if (flag) {
                loom_fail("MPI_Iprobe found a message nobody sent");
            }
            work_us(50);
        }
        send_after(seed, 0, buf);
    } else if (1 == rank) {
        recv_checked(seed, buf, "the receive from a progressing peer");
    }
    *shrinks = loom_pvar_counter(SHRINKS) - *shrinks;
    *polled  = loom_pvar_counter(POLLED) - *polled;
    return loom_pvar_counter(BLOCKS) - before;
}

/* Rank 1 waits in MPI_Win_fence for rank 0, which computes WAIT_MS, then
 * puts message seed into rank 1's window; rank 1 verifies what came and
 * returns its sleeps in the fence. */
static unsigned long long fence_phase(int rank, int seed, unsigned char *buf)
{
    unsigned long long before, slept;
    unsigned char *winbuf;
    MPI_Win win;

    LOOM_CHECK_MPI(MPI_Alloc_mem(MSG_SIZE + LOOM_GUARD_SIZE, MPI_INFO_NULL, &winbuf));
    memset(winbuf, LOOM_POISON, MSG_SIZE + LOOM_GUARD_SIZE); /* the guard is past the window */
    LOOM_CHECK_MPI(MPI_Win_create(winbuf, MSG_SIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    LOOM_CHECK_MPI(MPI_Win_fence(0, win));
    if (0 == rank) {
        compute_ms(WAIT_MS);
        loom_fill_pattern(buf, MSG_SIZE, (unsigned)seed, 0);
        LOOM_CHECK_MPI(MPI_Put(buf, MSG_SIZE, MPI_BYTE, 1, 0, MSG_SIZE, MPI_BYTE, win));
    }
    before = loom_pvar_counter(BLOCKS);
    LOOM_CHECK_MPI(MPI_Win_fence(0, win));
    slept = loom_pvar_counter(BLOCKS) - before;
    if (1 == rank) {
        loom_check_recv(winbuf, MSG_SIZE, (unsigned)seed, 0, "the put into the window");
    }
    LOOM_CHECK_MPI(MPI_Win_free(&win));
    LOOM_CHECK_MPI(MPI_Free_mem(winbuf));
    return slept;
}

int main(int argc, char **argv)
{
    unsigned long long before, polling, tight, waiting, wakes, polled, beside, rings, shrinks;
    unsigned long long polled_beside, fenced;
    const char *mode = getenv("OMPI_MCA_btl_loom_block_when_idle");
    const char *ring = getenv("LOOM_EXPECT_RING_POLLED");
    int ring_expected = NULL != ring && 0 == strcmp(ring, "1");
    unsigned char *buf;
    int rank, nprocs, tests = 0, tight_tests = 0;

    loom_test_osc_default();
    loom_test_init(&argc, &argv, "test_idle_block", 2, &rank, &nprocs);
    if (NULL == mode || 0 != strcmp(mode, "1")) {
        loom_test_skip("needs OMPI_MCA_btl_loom_block_when_idle=1");
    }
    buf = loom_malloc(MSG_SIZE + LOOM_GUARD_SIZE);
    polling = poll_phase(rank, 1, WORK_US, &tests, buf);
    tight   = poll_phase(rank, 3, TIGHT_US, &tight_tests, buf);
    grow_ring(rank, 100, buf);
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    before = loom_pvar_counter(BLOCKS);
    wakes  = loom_pvar_counter(WAKES);
    polled = loom_pvar_counter(POLLED);
    if (0 == rank) {
        send_after(2, WAIT_MS, buf);
    } else if (1 == rank) {
        recv_checked(2, buf, "the waited receive");
    }
    waiting = loom_pvar_counter(BLOCKS) - before;
    wakes   = loom_pvar_counter(WAKES) - wakes;
    polled  = loom_pvar_counter(POLLED) - polled;
    grow_ring(rank, 200, buf); /* the wait above may have dropped it */
    beside  = progress_phase(rank, 4, buf, &rings, &shrinks, &polled_beside);
    fenced  = fence_phase(rank, 5, buf);

    if (1 == rank) {
        printf("rank 1: %d tests with %d us of work between them, %llu sleeps; "
               "%d tests with %d us between them, %llu sleeps; "
               "waiting %d ms, %llu sleeps (%llu ended by a rail), %llu polls for a ring\n",
               tests, WORK_US, polling, tight_tests, TIGHT_US, tight, WAIT_MS, waiting, wakes,
               polled);
        printf("rank 1: waiting %d ms for a peer that progresses, %llu sleeps; %llu rings in "
               "use at the start, %llu asked to go, %llu polls for a ring\n", WAIT_MS, beside,
               rings, shrinks, polled_beside);
        printf("rank 1: waiting %d ms in MPI_Win_fence, %llu sleeps\n", WAIT_MS, fenced);
        if (0 != polling) {
            loom_fail("slept %llu times while it worked between MPI_Tests", polling);
        }
        if (0 != tight) {
            loom_fail("slept %llu times in MPI_Test with %d us of work between tests",
                      tight, TIGHT_US);
        }
        if (ring_expected) {
            /* the ring goes only when rank 0, done computing, takes in
             * rank 1's ask: a few sleeps may follow, where a free wait
             * sleeps on most of its 300 ms (150-270 times measured) */
            if (0 == polled || waiting > WAIT_MS / 10) {
                loom_fail("a ring written by RDMA: %llu polls for it and %llu sleeps in a "
                          "%d ms wait (expected some and at most %d)", polled, waiting,
                          WAIT_MS, WAIT_MS / 10);
            }
        } else if (0 == waiting) {
            loom_fail("never slept in a %d ms wait (%llu polls for a ring)", WAIT_MS, polled);
        }
        if (0 == beside) {
            loom_fail("never slept in a %d ms wait for a peer that progresses (%llu rings in "
                      "use at the start, %llu asked to go)", WAIT_MS, rings, shrinks);
        }
        if (0 != fenced) {
            loom_fail("slept %llu times in MPI_Win_fence, where osc's own progress moves "
                      "the wait", fenced);
        }
    }
    free(buf);
    loom_test_pass();
}
