/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * loom's registration cache under ob1 (issue 12): rank 0 sends to rank 1
 * (other ranks wait) messages large enough for the RDMA rendezvous, where
 * ob1 registers both buffers for every message.
 *
 * - the same buffers, 20 times, other contents each time: every message
 *   arrives byte for byte and the cache is hit (btl_loom_rcache_hits);
 * - buffers malloc'ed and freed in turn (the heap hands the same addresses
 *   back with other contents);
 * - buffers unmapped and mapped again at the same address, on both sides:
 *   the new contents arrive, never the old registration's
 *   (btl_loom_rcache_invalidations counts the unmapped entries).
 * With btl_loom_rcache_size 0 the data checks run and the counters must
 * stay 0.
 */
#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define SAME_LEN   MIB
#define SAME_ITERS 20
#define CHURN      30
#define MAP_LEN    (2 * MIB)

static int rank;

static unsigned long long counter(const char *name)
{
    unsigned long long value = 0, total = 0;
    int found = 0;

    if (MPI_SUCCESS != loom_pvar_read_sum(name, &value, &found) || 0 == found) {
        loom_fail("MPI_T performance variable %s missing", name);
    }
    LOOM_CHECK_MPI(MPI_Allreduce(&value, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                                 MPI_COMM_WORLD));
    return total;
}

/* rank 0 sends buf (seed), rank 1 receives into its buf and checks it */
static void transfer(void *buf, size_t len, unsigned seed, const char *what)
{
    if (0 == rank) {
        loom_fill_pattern(buf, len, seed, 0);
        LOOM_CHECK_MPI(MPI_Send(buf, (int)len, MPI_BYTE, 1, 7, MPI_COMM_WORLD));
    } else if (1 == rank) {
        memset(buf, LOOM_POISON, len);
        LOOM_CHECK_MPI(MPI_Recv(buf, (int)len, MPI_BYTE, 0, 7, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
        if (loom_verify_pattern(buf, len, seed, 0, what) >= 0) {
            loom_fail("%s: message %u arrived wrong", what, seed);
        }
    }
}

static void *map_at(void *hint, size_t len)
{
    void *mem = mmap(hint, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (MAP_FAILED == mem) {
        loom_fail("mmap of %zu bytes failed", len);
    }
    return mem;
}

int main(int argc, char **argv)
{
    unsigned long long hits0, invalid0, misses0, hits, invalid, misses;
    int size, i, cache_on, moved = 0;
    const char *env = getenv("OMPI_MCA_btl_loom_rcache_size");
    void *buf, *first;

    loom_test_init(&argc, &argv, "test_rcache", 2, &rank, &size);
    cache_on = (NULL == env || 0 != atoi(env));
    hits0    = counter("btl_loom_rcache_hits");
    invalid0 = counter("btl_loom_rcache_invalidations");
    misses0  = counter("btl_loom_rcache_misses");

    buf = loom_malloc(SAME_LEN);
    for (i = 0; i < SAME_ITERS; ++i) {
        transfer(buf, SAME_LEN, (unsigned)i + 1, "the same buffer again");
    }
    free(buf);
    hits = counter("btl_loom_rcache_hits") - hits0;

    for (i = 0; i < CHURN; ++i) {
        size_t len = 256 * KIB + (size_t)i * 28 * KIB;

        buf = malloc(len);
        if (NULL == buf) {
            loom_fail("malloc of %zu bytes failed", len);
        }
        transfer(buf, len, 100u + (unsigned)i, "a buffer malloc'ed after a free");
        free(buf);
    }

    first = map_at(NULL, MAP_LEN);
    transfer(first, MAP_LEN, 200, "a mapped buffer");
    munmap(first, MAP_LEN);
    buf = map_at(first, MAP_LEN); /* the kernel gives the hint back when it is free */
    moved = (buf != first);
    transfer(buf, MAP_LEN, 201, "a buffer mapped again at the same address");
    transfer(buf, MAP_LEN, 202, "a buffer mapped again at the same address");
    munmap(buf, MAP_LEN);
    LOOM_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));

    invalid = counter("btl_loom_rcache_invalidations") - invalid0;
    misses  = counter("btl_loom_rcache_misses") - misses0;
    if (0 == rank) {
        printf("test_rcache: cache %s: %llu hits over %d sends of one buffer, %llu "
               "invalidations, %llu misses\n", cache_on ? "on" : "off", hits, SAME_ITERS,
               invalid, misses);
    }
    if (cache_on && hits < SAME_ITERS - 1) {
        loom_fail("%llu registration cache hits for %d sends of the same 1 MiB buffer",
                  hits, SAME_ITERS);
    }
    if (cache_on && !moved && 0 == invalid) {
        loom_fail("buffers unmapped under cached registrations, and no invalidation");
    }
    if (!cache_on && (0 != hits || 0 != invalid)) {
        loom_fail("btl_loom_rcache_size 0, yet %llu hits and %llu invalidations", hits,
                  invalid);
    }
    loom_test_pass();
}
