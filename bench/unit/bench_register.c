/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * What a fresh key for a buffer already in the registration cache costs:
 * loom_mem_register_cached, loom_key_pack and loom_mem_deregister of one
 * range, over and over (coll loom does this once per call and rank,
 * instead of keeping a key valid from one call to the next).  Prints the
 * median over rounds of the time per cycle, per range size.
 * Not a test: run by hand, build/bench/unit/bench_register [rounds].
 */
#include "loom/transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CYCLES     100000
#define MAX_ROUNDS 32

static double seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Microseconds per register, pack and deregister cycle of [buf, buf + len). */
static double cycle_us(loom_engine_t *engine, void *buf, size_t len)
{
    const unsigned access = LOOM_ACCESS_LOCAL_WRITE | LOOM_ACCESS_REMOTE_WRITE |
                            LOOM_ACCESS_REMOTE_READ;
    size_t key_size = loom_key_size(engine);
    unsigned char key[LOOM_OP_MSG_MAX];
    loom_region_t *region;
    double start = seconds();
    int i;

    for (i = 0; i < CYCLES; ++i) {
        if (LOOM_OK != loom_mem_register_cached(engine, buf, len, access, &region) ||
            LOOM_OK != loom_key_pack(region, key, key_size)) {
            fprintf(stderr, "bench_register: registering %zu bytes failed\n", len);
            exit(1);
        }
        loom_mem_deregister(region);
    }
    return (seconds() - start) * 1e6 / CYCLES;
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {65536, 1u << 20, 16u << 20};
    int rounds = (argc > 1) ? atoi(argv[1]) : 5, r;
    double samples[MAX_ROUNDS];
    loom_engine_config_t config;
    loom_engine_t *engine;
    size_t i;

    if (rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: %s [rounds, 1-%d]\n", argv[0], MAX_ROUNDS);
        return 2;
    }
    memset(&config, 0, sizeof(config));
    config.rails              = "tcp:lo";
    config.max_rails          = 1;
    config.name               = 0x10c0ffee;
    config.rcache_max_bytes   = 256u << 20;
    config.rcache_max_regions = 1024;
    if (LOOM_OK != loom_engine_create(&config, &engine)) {
        fprintf(stderr, "bench_register: no engine on tcp:lo\n");
        return 1;
    }
    printf("# register (cached) + pack + deregister, us per cycle, median of %d rounds of %d\n",
           rounds, CYCLES);
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        void *buf = aligned_alloc(4096, sizes[i]);

        memset(buf, 1, sizes[i]);
        for (r = 0; r < rounds; ++r) {
            samples[r] = cycle_us(engine, buf, sizes[i]);
        }
        qsort(samples, (size_t)rounds, sizeof(samples[0]), by_value);
        printf("%10zu %8.3f  (key %zu B)\n", sizes[i], samples[rounds / 2],
               loom_key_size(engine));
        free(buf);
    }
    loom_engine_destroy(engine);
    return 0;
}
