/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * One-way latency of the engine's own messages: a ping-pong of loom_am_send
 * between the two processes of the unit harness, each progressing its engine
 * in a tight loop, as an MPI rank waiting in MPI_Recv does.  It is the
 * engine's share of an MPI message's latency; contrib/loom-bench.sh --layers
 * sets it beside UCT's own (ucx_perftest am_lat) and the MPI figures of the
 * same minutes, so that what ob1 and the BTL glue add shows apart from what
 * the engine adds.  Each round runs it three times over the same connection:
 * through the engine, then raw (uct_ep_am_short, then uct_ep_am_bcopy as the
 * engine sends, on the rail's endpoint, progressed by uct_worker_progress
 * alone), so that the engine's cost shows against UCT's in the same
 * processes and minutes, with no clock read per message (where
 * the clock is a system call, as in the rxe guest, ucx_perftest's own
 * per-iteration reads weigh on its floor).  Every message is checked byte
 * for byte.
 * Not a test: run by hand,
 *   bench_am_lat [size [iterations [rounds]]]   (default 8 20000 5)
 * LOOM_BENCH_RAILS   the rail (default tcp:lo; rc_verbs:rxe0:1 in the rxe guest)
 * LOOM_BENCH_CORES   the cores of the two processes (default "0,1"; "none"
 *                    leaves them unbound)
 * Prints the one-way latency of each round and their medians, in us.
 */
#define _GNU_SOURCE
#include "unit_harness.h"
#include "engine/loom_engine.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZE   4096
#define MAX_ROUNDS 64
#define WARMUP     1000
#define BENCH_TAG  1
#define RAW_AM_ID  1 /* below loom's own AM ids (loom_wire_type) */

static size_t size = 8, iterations = 20000, rounds = 5;
static volatile size_t received;
/* Messages this side has waited for so far, over every round.  Not the
 * count at a round's start: the barrier before a round progresses, so the
 * other side's first message of the round may already be in. */
static size_t expected;
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

/* The raw ping-pong's messages: an 8-byte AM header, then the payload. */
static ucs_status_t raw_recv(void *arg, void *data, size_t length, unsigned flags)
{
    (void)arg;
    (void)flags;
    CHECK_UEQ(length, sizeof(uint64_t) + size);
    CHECK_MEM((uint8_t *)data + sizeof(uint64_t), pattern, size, "raw ping-pong message");
    ++received;
    return UCS_OK;
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

/* One way of sending and progressing: through the engine, or raw UCT. */
typedef struct bench_path {
    const char *name;
    const char *label;          /* in the median's line (bench-layers.sh reads it) */
    void      (*send)(unit_ctx_t *ctx);
    void      (*progress)(unit_ctx_t *ctx);
} bench_path_t;

static void engine_progress(unit_ctx_t *ctx)
{
    loom_engine_progress(ctx->engine);
}

static void engine_send(unit_ctx_t *ctx)
{
    struct iovec iov = {pattern, size};
    int rc;

    while (LOOM_ERR_AGAIN == (rc = loom_am_send(ctx->peer, BENCH_TAG, &iov, 1, NULL))) {
        engine_progress(ctx);
    }
    CHECK_RC(rc, LOOM_OK);
}

static void raw_progress(unit_ctx_t *ctx)
{
    uct_worker_progress(ctx->engine->worker);
}

static void raw_send(unit_ctx_t *ctx)
{
    ucs_status_t status;

    while (UCS_ERR_NO_RESOURCE ==
           (status = uct_ep_am_short(ctx->peer->rails[0].ep, RAW_AM_ID, 0, pattern,
                                     (unsigned)size))) {
        raw_progress(ctx);
    }
    CHECK_MSG(UCS_OK == status, "uct_ep_am_short: %s", ucs_status_string(status));
}

/* The same message by copy, as the engine sends (uct_ep_am_bcopy). */
static size_t raw_pack(void *dest, void *arg)
{
    uint64_t header = 0;

    (void)arg;
    memcpy(dest, &header, sizeof(header));
    memcpy((uint8_t *)dest + sizeof(header), pattern, size);
    return sizeof(header) + size;
}

static void raw_bcopy_send(unit_ctx_t *ctx)
{
    ssize_t packed;

    while (UCS_ERR_NO_RESOURCE ==
           (packed = uct_ep_am_bcopy(ctx->peer->rails[0].ep, RAW_AM_ID, raw_pack, NULL, 0))) {
        raw_progress(ctx);
    }
    CHECK_MSG(packed >= 0, "uct_ep_am_bcopy: %s", ucs_status_string((ucs_status_t)packed));
}

static const bench_path_t paths[] = {
    {"engine", "", engine_send, engine_progress},
    {"raw UCT am_short", "raw UCT ", raw_send, raw_progress},
    {"raw UCT am_bcopy", "raw UCT by copy ", raw_bcopy_send, raw_progress},
};
#define PATH_COUNT (sizeof(paths) / sizeof(paths[0]))

/* Raw messages need a handler of their own on the rail, on both sides, and
 * must fit UCT's short messages. */
static size_t bench_path_count(unit_ctx_t *ctx)
{
    loom_rail_t *rail = &ctx->engine->rails[0];

    if (size + sizeof(uint64_t) > rail->attr.cap.am.max_short) {
        return 1;
    }
    CHECK(UCS_OK == uct_iface_set_am_handler(rail->iface, RAW_AM_ID, raw_recv, NULL, 0));
    return PATH_COUNT;
}

/* Progress until the count-th message arrived; fail after UNIT_TIMEOUT. */
static void bench_wait(unit_ctx_t *ctx, const bench_path_t *path, size_t count)
{
    unsigned spins = 0;
    double start = 0;

    while (received < count) {
        path->progress(ctx);
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
static double bench_ping(unit_ctx_t *ctx, const bench_path_t *path, size_t n)
{
    size_t i;
    double start = unit_now();

    for (i = 0; i < n; ++i) {
        path->send(ctx);
        bench_wait(ctx, path, ++expected);
    }
    return (unit_now() - start) * 1e6 / (2.0 * (double)n);
}

static void bench_pong(unit_ctx_t *ctx, const bench_path_t *path, size_t n)
{
    size_t i;

    for (i = 0; i < n; ++i) {
        bench_wait(ctx, path, ++expected);
        path->send(ctx);
    }
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* One side's part of n round trips: the parent pings and returns the
 * one-way latency in us, the child answers. */
static double bench_run(unit_ctx_t *ctx, const bench_path_t *path, size_t n)
{
    if (ctx->is_parent) {
        return bench_ping(ctx, path, n);
    }
    bench_pong(ctx, path, n);
    return 0;
}

/* The medians, for people and for contrib/bench-layers.sh, which reads
 * these lines. */
static void bench_report(double lat[][MAX_ROUNDS], size_t count)
{
    size_t p;

    for (p = 0; p < count; ++p) {
        qsort(lat[p], rounds, sizeof(lat[p][0]), compare_double);
        printf("bench_am_lat: %zu B %sone-way %.2f us (median of %zu rounds of %zu round "
               "trips)\n", size, paths[p].label, lat[p][rounds / 2], rounds, iterations);
    }
    fflush(stdout);
}

static void bench_body(unit_ctx_t *ctx)
{
    double lat[PATH_COUNT][MAX_ROUNDS];
    size_t r, p, count;

    bench_bind(ctx->is_parent ? 0 : 1);
    count = bench_path_count(ctx);
    unit_barrier(ctx);
    for (p = 0; p < count; ++p) {
        unit_barrier(ctx);
        (void)bench_run(ctx, &paths[p], WARMUP);
    }
    for (r = 0; r < rounds; ++r) {
        for (p = 0; p < count; ++p) {
            unit_barrier(ctx);
            lat[p][r] = bench_run(ctx, &paths[p], iterations);
            if (ctx->is_parent) {
                printf("round %zu: %zu B %s %.2f us\n", r + 1, size, paths[p].name,
                       lat[p][r]);
            }
        }
    }
    if (ctx->is_parent) {
        bench_report(lat, count);
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
    return unit_main("bench_am_lat", &options, bench_body, bench_body);
}
