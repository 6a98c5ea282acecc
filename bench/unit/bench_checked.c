/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Bandwidth of checked writes against raw UCT puts on tcp:lo, in the same
 * two processes and on the same connection, in alternating batches so that
 * the load of other processes on the host hits both alike.  Each batch puts
 * (and then gets, by push: the owner's serve is the write) BATCH bytes in
 * messages of one size with WINDOW in flight.  "raw" clears the rail's
 * checked flag on both sides, as btl_loom_tcp_trust_network does at start.
 * Prints MB/s per batch and the median ratio checked/raw per size and op.
 * Not a test: run by hand, build/bench/unit/bench_checked [rounds].
 */
#include "unit_harness.h"
#include "engine/loom_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_LEN   (32u << 20)
#define WINDOW    32
#define MODE_DONE UINT64_MAX
#define MAX_ROUNDS 32

static int rounds = 5;

static void set_checked(unit_ctx_t *ctx, bool checked)
{
    ctx->engine->rails[0].checked = checked;
}

static void owner_body(unit_ctx_t *ctx)
{
    uint8_t *buf = unit_alloc(BUF_LEN);
    loom_region_t *region;
    uint64_t mode;

    CHECK_RC(loom_mem_register(ctx->engine, buf, BUF_LEN, &region), LOOM_OK);
    unit_send_region(ctx, region, buf, BUF_LEN);
    while (MODE_DONE != (mode = unit_recv_u64(ctx))) {
        set_checked(ctx, 0 != mode); /* for the serves of the gets */
        unit_send_u64(ctx, mode);
    }
    unit_barrier(ctx);
    loom_mem_deregister(region);
    free(buf);
}

/* MB/s of one batch: total bytes in messages of size, WINDOW in flight. */
static double batch(unit_ctx_t *ctx, bool put, uint8_t *local, loom_region_t *region,
                    const unit_remote_t *r, size_t size, size_t total)
{
    unit_op_t uops[WINDOW];
    bool used[WINDOW] = {false};
    size_t posted = 0, done = 0, i, slots = BUF_LEN / size;
    double start = unit_now();

    for (i = 0; i < WINDOW; ++i) {
        unit_op_init(&uops[i]);
        uops[i].calls = 1; /* free */
    }
    while (done < total / size) {
        for (i = 0; i < WINDOW; ++i) {
            unit_op_t *u = &uops[i];
            uint64_t off = (posted % slots) * size;

            if (1 != u->calls || posted == total / size) {
                continue;
            }
            if (used[i]) {
                CHECK_RC(u->status, LOOM_OK);
            }
            used[i] = true;
            unit_op_init(u);
            u->calls = 0;
            CHECK_RC(put ? loom_put(ctx->peer, &u->op, local + off, region, r->base + off,
                                    r->key, r->key_size, size)
                         : loom_get(ctx->peer, &u->op, local + off, region, r->base + off,
                                    r->key, r->key_size, size), LOOM_INPROGRESS);
            ++posted;
        }
        unit_progress(ctx);
        for (i = 0, done = posted; i < WINDOW; ++i) {
            done -= (0 == uops[i].calls);
        }
    }
    for (i = 0; i < WINDOW; ++i) {
        CHECK(!used[i] || LOOM_OK == uops[i].status);
    }
    return (double)total / 1e6 / (unit_now() - start);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return (n % 2) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void writer_body(unit_ctx_t *ctx)
{
    static const size_t sizes[] = {65536, 4u << 20};
    static const size_t totals[] = {64u << 20, 256u << 20};
    uint8_t *local = unit_alloc(BUF_LEN);
    double mbs[2][2][2][MAX_ROUNDS]; /* size, put/get, checked/raw, round */
    loom_region_t *region;
    unit_remote_t r;
    int s, op, mode, k;

    CHECK_RC(loom_mem_register(ctx->engine, local, BUF_LEN, &region), LOOM_OK);
    unit_recv_region(ctx, &r);
    for (k = 0; k < rounds; ++k) {
        for (mode = 0; mode < 2; ++mode) { /* 0: checked, 1: raw */
            set_checked(ctx, 0 == mode);
            unit_send_u64(ctx, 0 == mode);
            CHECK_UEQ(unit_recv_u64(ctx), 0 == mode);
            for (s = 0; s < 2; ++s) {
                for (op = 0; op < 2; ++op) {
                    mbs[s][op][mode][k] = batch(ctx, 0 == op, local, region, &r, sizes[s],
                                                totals[s]);
                    printf("round %d %-7s %-3s %7zu B: %8.1f MB/s\n", k,
                           mode ? "raw" : "checked", op ? "get" : "put", sizes[s],
                           mbs[s][op][mode][k]);
                    fflush(stdout);
                }
            }
        }
    }
    unit_send_u64(ctx, MODE_DONE);
    for (s = 0; s < 2; ++s) {
        for (op = 0; op < 2; ++op) {
            double c = median(mbs[s][op][0], rounds), w = median(mbs[s][op][1], rounds);

            printf("median %-3s %7zu B: checked %8.1f MB/s, raw %8.1f MB/s, "
                   "checked/raw %.2f\n", op ? "get" : "put", sizes[s], c, w, c / w);
        }
    }
    unit_barrier(ctx);
    loom_mem_deregister(region);
    free(local);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        rounds = atoi(argv[1]);
    }
    if (rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "rounds: 1-%d\n", MAX_ROUNDS);
        return 1;
    }
    return unit_main("bench_checked", NULL, writer_body, owner_body);
}
