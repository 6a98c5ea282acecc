/*
 * One-way latency of the engine's own messages: a ping-pong of loom_am_send
 * between the two processes of the unit harness, each progressing its engine
 * in a tight loop, as an MPI rank waiting in MPI_Recv does.  It is the
 * engine's share of an MPI message's latency; contrib/latency-floor.sh sets
 * it beside UCT's own (ucx_perftest am_lat) and the MPI figures of the same
 * minutes, so that what ob1 and the BTL glue add shows apart from what the
 * engine adds.  Every message is checked byte for byte.
 * Not a test: run by hand,
 *   bench_am_lat [size [iterations [rounds]]]   (default 8 20000 5)
 * LOOM_BENCH_RAILS   the rail (default tcp:lo; rc_verbs:rxe0:1 in the rxe guest)
 * LOOM_BENCH_CORES   the cores of the two processes (default "0,1"; "none"
 *                    leaves them unbound)
 * Prints the one-way latency of each round and their median, in us.
 */
#define _GNU_SOURCE
#include "unit_harness.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZE   4096
#define MAX_ROUNDS 64
#define WARMUP     1000
#define BENCH_TAG  1

static size_t size = 8, iterations = 20000, rounds = 5;
static volatile size_t received;
static uint8_t pattern[MAX_SIZE];

/* Counts the ping-pong's messages; anything else is a failure. */
static void bench_recv_cb(void *ctx, uint8_t tag, const void *data, size_t length)
{
    (void)ctx;
    CHECK_EQ(tag, BENCH_TAG);
    CHECK_UEQ(length, size);
    CHECK_MEM(data, pattern, length, "ping-pong message");
    ++received;
}

static void bench_configure(loom_engine_config_t *config, bool is_parent)
{
    const char *rails = getenv("LOOM_BENCH_RAILS");

    (void)is_parent;
    config->recv_cb = bench_recv_cb;
    if (NULL != rails && '\0' != rails[0]) {
        config->rails = rails;
    }
}

/* Bind this process to the core-th entry of LOOM_BENCH_CORES. */
static void bench_bind(int index)
{
    const char *cores = getenv("LOOM_BENCH_CORES");
    int core[2] = {0, 1};
    cpu_set_t set;

    if (NULL != cores && 0 == strcmp(cores, "none")) {
        return;
    }
    if (NULL != cores && 2 != sscanf(cores, "%d,%d", &core[0], &core[1])) {
        unit_fail(__FILE__, __LINE__, "LOOM_BENCH_CORES=%s: expected two cores, as 0,1, "
                  "or none", cores);
    }
    CPU_ZERO(&set);
    CPU_SET(core[index], &set);
    CHECK_MSG(0 == sched_setaffinity(0, sizeof(set), &set),
              "cannot bind to core %d", core[index]);
}

static void bench_send(unit_ctx_t *ctx)
{
    struct iovec iov = {pattern, size};
    int rc;

    while (LOOM_ERR_AGAIN == (rc = loom_am_send(ctx->peer, BENCH_TAG, &iov, 1, NULL))) {
        loom_engine_progress(ctx->engine);
    }
    CHECK_RC(rc, LOOM_OK);
}

/* Progress until the count-th message arrived; fail after UNIT_TIMEOUT. */
static void bench_wait(unit_ctx_t *ctx, size_t count)
{
    unsigned spins = 0;
    double start = 0;

    while (received < count) {
        loom_engine_progress(ctx->engine);
        if (0 == (++spins & 0xfffff)) {
            if (0 == start) {
                start = unit_now();
            } else if (unit_now() - start > UNIT_TIMEOUT) {
                unit_fail(__FILE__, __LINE__, "message %zu did not arrive", count);
            }
        }
    }
}

/* The parent pings: returns the one-way latency of n round trips, in us. */
static double bench_ping(unit_ctx_t *ctx, size_t n)
{
    size_t i, base = received;
    double start = unit_now();

    for (i = 1; i <= n; ++i) {
        bench_send(ctx);
        bench_wait(ctx, base + i);
    }
    return (unit_now() - start) * 1e6 / (2.0 * (double)n);
}

static void bench_pong(unit_ctx_t *ctx, size_t n)
{
    size_t i, base = received;

    for (i = 1; i <= n; ++i) {
        bench_wait(ctx, base + i);
        bench_send(ctx);
    }
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static void parent_body(unit_ctx_t *ctx)
{
    double lat[MAX_ROUNDS];
    size_t r;

    bench_bind(0);
    unit_barrier(ctx);
    (void)bench_ping(ctx, WARMUP);
    for (r = 0; r < rounds; ++r) {
        unit_barrier(ctx);
        lat[r] = bench_ping(ctx, iterations);
        printf("round %zu: %zu B %.2f us\n", r + 1, size, lat[r]);
    }
    qsort(lat, rounds, sizeof(lat[0]), compare_double);
    printf("bench_am_lat: %zu B one-way %.2f us (median of %zu rounds of %zu round trips)\n",
           size, lat[rounds / 2], rounds, iterations);
    fflush(stdout);
    unit_barrier(ctx);
}

static void child_body(unit_ctx_t *ctx)
{
    size_t r;

    bench_bind(1);
    unit_barrier(ctx);
    bench_pong(ctx, WARMUP);
    for (r = 0; r < rounds; ++r) {
        unit_barrier(ctx);
        bench_pong(ctx, iterations);
    }
    unit_barrier(ctx);
}

static size_t parse_arg(const char *arg, const char *what, size_t max)
{
    char *end;
    unsigned long long value = strtoull(arg, &end, 0);

    if ('\0' == arg[0] || '\0' != *end || 0 == value || value > max) {
        fprintf(stderr, "bench_am_lat: %s '%s' must be a number from 1 to %zu\n",
                what, arg, max);
        exit(2);
    }
    return (size_t)value;
}

int main(int argc, char **argv)
{
    unit_options_t options = {.configure = bench_configure};
    size_t i;

    if (argc > 4) {
        fprintf(stderr, "usage: bench_am_lat [size [iterations [rounds]]]\n");
        return 2;
    }
    if (argc > 1) {
        size = parse_arg(argv[1], "size", MAX_SIZE);
    }
    if (argc > 2) {
        iterations = parse_arg(argv[2], "iterations", 100000000);
    }
    if (argc > 3) {
        rounds = parse_arg(argv[3], "rounds", MAX_ROUNDS);
    }
    for (i = 0; i < size; ++i) {
        pattern[i] = (uint8_t)(i * 7 + 3);
    }
    return unit_main("bench_am_lat", &options, parent_body, child_body);
}
