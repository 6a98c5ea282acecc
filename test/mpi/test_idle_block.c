/*
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
 *     wakes no sleeper: then it must poll, counted by the pvar
 *     btl_loom_eager_ring_polled.  LOOM_EXPECT_RING_POLLED=1 says that such
 *     a ring is there (rc_verbs rails with btl_loom_eager_cycle, which makes
 *     rings at once).
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
#define BLOCKS     "btl_loom_idle_blocks"
#define WAKES      "btl_loom_idle_block_wakes"
#define POLLED     "btl_loom_eager_ring_polled"

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

int main(int argc, char **argv)
{
    unsigned long long before, polling, tight, waiting, wakes, polled;
    const char *mode = getenv("OMPI_MCA_btl_loom_block_when_idle");
    const char *ring = getenv("LOOM_EXPECT_RING_POLLED");
    int ring_expected = NULL != ring && 0 == strcmp(ring, "1");
    unsigned char *buf;
    MPI_Status status;
    int rank, nprocs, tests = 0, tight_tests = 0;

    loom_test_init(&argc, &argv, "test_idle_block", 2, &rank, &nprocs);
    if (NULL == mode || 0 != strcmp(mode, "1")) {
        loom_test_skip("needs OMPI_MCA_btl_loom_block_when_idle=1");
    }
    buf = loom_malloc(MSG_SIZE + LOOM_GUARD_SIZE);
    polling = poll_phase(rank, 1, WORK_US, &tests, buf);
    tight   = poll_phase(rank, 3, TIGHT_US, &tight_tests, buf);
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

    before = loom_pvar_counter(BLOCKS);
    wakes  = loom_pvar_counter(WAKES);
    polled = loom_pvar_counter(POLLED);
    if (0 == rank) {
        send_after(2, WAIT_MS, buf);
    } else if (1 == rank) {
        memset(buf, LOOM_POISON, MSG_SIZE + LOOM_GUARD_SIZE);
        LOOM_CHECK_MPI(MPI_Recv(buf, MSG_SIZE, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &status));
        loom_check_count(&status, MPI_BYTE, MSG_SIZE, 0, "the waited receive");
        loom_check_recv(buf, MSG_SIZE, 2, 0, "the waited receive");
    }
    waiting = loom_pvar_counter(BLOCKS) - before;
    wakes   = loom_pvar_counter(WAKES) - wakes;
    polled  = loom_pvar_counter(POLLED) - polled;

    if (1 == rank) {
        printf("rank 1: %d tests with %d us of work between them, %llu sleeps; "
               "%d tests with %d us between them, %llu sleeps; "
               "waiting %d ms, %llu sleeps (%llu ended by a rail), %llu polls for a ring\n",
               tests, WORK_US, polling, tight_tests, TIGHT_US, tight, WAIT_MS, waiting, wakes,
               polled);
        if (0 != polling) {
            loom_fail("slept %llu times while it worked between MPI_Tests", polling);
        }
        if (0 != tight) {
            loom_fail("slept %llu times in MPI_Test with %d us of work between tests",
                      tight, TIGHT_US);
        }
        if (ring_expected) {
            if (0 == polled || 0 != waiting) {
                loom_fail("a ring written by RDMA: %llu polls for it and %llu sleeps in a "
                          "%d ms wait (expected some and none)", polled, waiting, WAIT_MS);
            }
        } else if (0 == waiting) {
            loom_fail("never slept in a %d ms wait (%llu polls for a ring)", WAIT_MS, polled);
        }
    }
    free(buf);
    loom_test_pass();
}
