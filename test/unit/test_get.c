/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * RDMA get (a push request on tcp): sizes 0 and 1 B .. 16 MiB + 1 at various
 * offsets, both directions, checked byte for byte as soon as the callback ran,
 * with the bytes around the range untouched; then many gets in flight at once
 * and a long run of small ones.  The counters: bytes_received and gets grow on
 * the requester by what it got, bytes_sent and pushes_served on the owner.
 * Then more gets at once than the owner takes push requests of one peer:
 * the requester keeps the rest until answers come, all complete, none is
 * refused; and an owner whose bound is reached refuses, counting it.
 * Then both sides at once past the window: each one's held requests must not
 * hold up its serves of the other's (the MPICH suite's rma/test5 under osc
 * rdma hung so, both sides waiting for answers forever).
 * Last, the owner's serve of a get ends while the requester does not
 * progress: it waits on nothing the requester must answer (on tcp an
 * endpoint flush did, a zero-length put of UCT's own).
 */
#include "unit_harness.h"
#include "engine/loom_engine.h" /* the push window, for its bound */

#include <stdlib.h>
#include <string.h>

#define MAX_GET     ((size_t)16 << 20)
#define REGION_LEN  (MAX_GET + 65536)
#define MULTI_COUNT 32
#define SMALL_COUNT 3000
#define SMALL_BATCH 64
#define WINDOW_GETS (LOOM_PUSH_WINDOW + LOOM_PUSH_WINDOW / 2)
#define ALONE_LEN   16384 /* the sockets hold it unread */

typedef struct get_side {
    uint8_t       *src;        /* registered: what the other side gets from us */
    loom_region_t *src_region;
    uint8_t       *dst;        /* registered: where our gets land */
    loom_region_t *dst_region;
    uint8_t       *src_ref;    /* the other side's src, as it filled it */
    uint8_t       *dst_ref;    /* our dst background */
    unit_remote_t  remote;     /* the other side's src region */
} get_side_t;

typedef struct get_totals {
    uint64_t count;
    uint64_t bytes;
} get_totals_t;

static uint64_t src_seed(uint64_t name)
{
    return 0x50c0ull + name;
}

static void get_issue(unit_ctx_t *ctx, get_side_t *side, uint64_t src_off, uint64_t dst_off,
                      size_t length, unit_op_t *uop)
{
    int rc;

    unit_op_init(uop);
    rc = loom_get(ctx->peer, &uop->op, side->dst + dst_off, side->dst_region,
                  side->remote.base + src_off, side->remote.key, side->remote.key_size,
                  length);
    CHECK_MSG(LOOM_OK == rc || LOOM_INPROGRESS == rc, "loom_get of %zu bytes: %d (%s)",
              length, rc, loom_strerror(rc));
    if (LOOM_OK == rc) {
        uop->calls  = 1;
        uop->status = LOOM_OK;
    }
}

/* The landed range is the owner's bytes, the rest is our background; then
 * restore the background. */
static void get_verify(get_side_t *side, uint64_t src_off, uint64_t dst_off, size_t length,
                       const char *what)
{
    uint64_t end = dst_off + length;

    CHECK_MEM(side->dst, side->dst_ref, dst_off, "bytes before the range got");
    CHECK_MEM(side->dst + dst_off, side->src_ref + src_off, length, what);
    CHECK_MEM(side->dst + end, side->dst_ref + end, REGION_LEN - end,
              "bytes after the range got");
    memcpy(side->dst + dst_off, side->dst_ref + dst_off, length);
}

static void get_series(unit_ctx_t *ctx, get_side_t *side, bool requester, get_totals_t *tot)
{
    static const uint64_t offs[] = {0, 1, 5, 4096, 4099, 65535, REGION_LEN};
    size_t sizes[128], n = unit_size_ladder(sizes), i;

    for (i = 0; i < n; ++i) {
        if (requester) {
            uint64_t src_off = unit_clip_offset(offs[i % 7], sizes[i], REGION_LEN);
            uint64_t dst_off = unit_clip_offset(offs[(i + 3) % 7] + i, sizes[i], REGION_LEN);
            unit_op_t uop;

            get_issue(ctx, side, src_off, dst_off, sizes[i], &uop);
            UNIT_WAIT(ctx, uop.calls > 0);
            CHECK_RC(uop.status, LOOM_OK);
            /* landed when the callback ran: check before any more progress */
            get_verify(side, src_off, dst_off, sizes[i], "data got");
            CHECK_EQ(uop.calls, 1);
            unit_send_u64(ctx, i);
            tot->count += 1;
            tot->bytes += sizes[i];
        } else {
            CHECK_UEQ(unit_recv_u64(ctx), i);
        }
    }
    if (requester) {
        unit_note("%zu gets, %llu bytes, each checked", n, (unsigned long long)tot->bytes);
    }
    unit_barrier(ctx);
}

/* Many gets in flight at once, of different sizes, to disjoint ranges. */
static void get_multi(unit_ctx_t *ctx, get_side_t *side, bool requester, get_totals_t *tot)
{
    unit_op_t uop[MULTI_COUNT];
    uint64_t src_off[MULTI_COUNT], dst_off[MULTI_COUNT], len[MULTI_COUNT], off = 0;
    size_t i;

    if (requester) {
        for (i = 0; i < MULTI_COUNT; ++i) {
            len[i]     = ((size_t)1 << (i % 21)) + 7 * i;
            src_off[i] = (i * 977u) % 65536u;
            dst_off[i] = off + i;
            off        = dst_off[i] + len[i];
            CHECK(off <= REGION_LEN);
            get_issue(ctx, side, src_off[i], dst_off[i], len[i], &uop[i]);
        }
        unit_ops_wait_all(ctx, uop, MULTI_COUNT);
        for (i = 0; i < MULTI_COUNT; ++i) {
            CHECK_MEM(side->dst + dst_off[i], side->src_ref + src_off[i], len[i],
                      "one of several concurrent gets");
            memcpy(side->dst + dst_off[i], side->dst_ref + dst_off[i], len[i]);
            tot->count += 1;
            tot->bytes += len[i];
        }
        CHECK_MEM(side->dst, side->dst_ref, REGION_LEN, "local region around the gets");
    }
    unit_barrier(ctx);
}

/* A long run of small gets, SMALL_BATCH in flight at a time. */
static void get_small(unit_ctx_t *ctx, get_side_t *side, bool requester, get_totals_t *tot)
{
    unit_op_t *uop;
    size_t done = 0, i;

    if (requester) {
        uop = calloc(SMALL_BATCH, sizeof(*uop));
        CHECK(NULL != uop);
        while (done < SMALL_COUNT) {
            for (i = 0; i < SMALL_BATCH; ++i) {
                size_t k = done + i;
                get_issue(ctx, side, (k * 61u) % 100000u, i * 128u, 1 + k % 100, &uop[i]);
            }
            for (i = 0; i < SMALL_BATCH; ++i) {
                size_t k = done + i;
                UNIT_WAIT(ctx, uop[i].calls > 0);
                CHECK_RC(uop[i].status, LOOM_OK);
                CHECK_MEM(side->dst + i * 128u, side->src_ref + (k * 61u) % 100000u,
                          1 + k % 100, "small get");
                tot->count += 1;
                tot->bytes += 1 + k % 100;
            }
            for (i = 0; i < SMALL_BATCH; ++i) {
                CHECK_EQ(uop[i].calls, 1);
            }
            done += SMALL_BATCH;
        }
        memcpy(side->dst, side->dst_ref, SMALL_BATCH * 128u);
        free(uop);
    }
    unit_barrier(ctx);
}

static void get_direction(unit_ctx_t *ctx, get_side_t *side, bool requester)
{
    loom_rail_stats_t before = *loom_engine_rail_stats(ctx->engine, 0), *after;
    get_totals_t tot = {0, 0};

    unit_barrier(ctx); /* after taking the counters: then the gets begin */
    get_series(ctx, side, requester, &tot);
    get_multi(ctx, side, requester, &tot);
    get_small(ctx, side, requester, &tot);
    after = loom_engine_rail_stats(ctx->engine, 0);
    if (requester) {
        CHECK_UEQ(after->gets - before.gets, tot.count);
        CHECK_UEQ(after->bytes_received - before.bytes_received, tot.bytes);
        CHECK_UEQ(after->pushes_served, before.pushes_served);
        unit_send(ctx, &tot, sizeof(tot));
    } else {
        unit_recv(ctx, &tot, sizeof(tot));
        /* the requester completes on the data; a serve is counted when the
         * requester's acknowledgement of it comes back */
        UNIT_WAIT(ctx, after->pushes_served - before.pushes_served >= tot.count);
        CHECK_UEQ(after->pushes_served - before.pushes_served, tot.count);
        CHECK_UEQ(after->bytes_sent - before.bytes_sent, tot.bytes);
        CHECK_UEQ(after->gets, before.gets);
        CHECK_UEQ(after->bytes_received, before.bytes_received);
    }
    CHECK_UEQ(after->refused, before.refused);
    unit_barrier(ctx);
}

/* The parent gets WINDOW_GETS ranges of 64 B at once, then one more while
 * the child pretends its bound is reached. */
static void get_window(unit_ctx_t *ctx, get_side_t *side)
{
    unsigned long over = loom_engine_rail_stats(ctx->engine, 0)->over_limit;
    unit_op_t *uop;
    size_t i;

    unit_barrier(ctx);
    if (!ctx->is_parent) {
        unit_barrier(ctx);
        UNIT_WAIT(ctx, 0 == ctx->peer->serves); /* the last serves were told */
        ctx->peer->serves = LOOM_PUSH_WINDOW;  /* as if that many were queued */
        unit_barrier(ctx);
        unit_barrier(ctx);
        CHECK_UEQ(loom_engine_rail_stats(ctx->engine, 0)->over_limit, over + 1);
        ctx->peer->serves = 0;
        unit_barrier(ctx);
        return;
    }
    uop = calloc(WINDOW_GETS, sizeof(*uop));
    CHECK(NULL != uop);
    for (i = 0; i < WINDOW_GETS; ++i) {
        get_issue(ctx, side, i * 61u, i * 64u, 64, &uop[i]);
        CHECK(ctx->peer->push_reqs <= LOOM_PUSH_WINDOW);
    }
    for (i = 0; i < WINDOW_GETS; ++i) {
        UNIT_WAIT(ctx, uop[i].calls > 0);
        CHECK_RC(uop[i].status, LOOM_OK);
        CHECK_MEM(side->dst + i * 64u, side->src_ref + i * 61u, 64, "windowed get");
    }
    memcpy(side->dst, side->dst_ref, WINDOW_GETS * 64u);
    free(uop);
    unit_barrier(ctx);
    unit_barrier(ctx);
    uop = calloc(1, sizeof(*uop));
    CHECK(NULL != uop);
    get_issue(ctx, side, 0, 0, 64, uop);
    UNIT_WAIT(ctx, uop->calls > 0);
    CHECK_RC(uop->status, LOOM_ERR_LIMIT); /* refused: the owner's bound */
    CHECK_MEM(side->dst, side->dst_ref, 64, "refused get");
    free(uop);
    unit_barrier(ctx);
    unit_barrier(ctx);
}

/* Both sides get WINDOW_GETS ranges of 64 B from each other at once. */
static void get_window_both(unit_ctx_t *ctx, get_side_t *side)
{
    unit_op_t *uop = calloc(WINDOW_GETS, sizeof(*uop));
    size_t i;

    CHECK(NULL != uop);
    unit_barrier(ctx);
    for (i = 0; i < WINDOW_GETS; ++i) {
        get_issue(ctx, side, i * 67u, i * 64u, 64, &uop[i]);
    }
    for (i = 0; i < WINDOW_GETS; ++i) {
        UNIT_WAIT(ctx, uop[i].calls > 0);
        CHECK_RC(uop[i].status, LOOM_OK);
        CHECK_MEM(side->dst + i * 64u, side->src_ref + i * 67u, 64, "get past both windows");
    }
    CHECK_UEQ(ctx->peer->push_reqs, 0);
    memcpy(side->dst, side->dst_ref, WINDOW_GETS * 64u);
    free(uop);
    unit_barrier(ctx);
}

/* The parent gets ALONE_LEN bytes and stops progressing once its request
 * left; the child's serve must end meanwhile. */
static void get_served_alone(unit_ctx_t *ctx, get_side_t *side)
{
    const loom_rail_stats_t *stats = loom_engine_rail_stats(ctx->engine, 0);
    unsigned long served = stats->pushes_served;
    unit_op_t uop;

    unit_barrier(ctx);
    if (!ctx->is_parent) {
        unit_wait_other_holds(ctx);
        /* told, and ended: the serve no longer reads our region */
        UNIT_WAIT(ctx, stats->pushes_served > served && 0 == side->src_region->serves);
        unit_send_u64(ctx, 1);
        unit_barrier(ctx);
        return;
    }
    get_issue(ctx, side, 333, 0, ALONE_LEN, &uop);
    UNIT_WAIT(ctx, 1 == ctx->peer->push_reqs); /* the request went */
    unit_hold_progress(ctx);
    UNIT_WAIT(ctx, uop.calls > 0);
    CHECK_RC(uop.status, LOOM_OK);
    CHECK_MEM(side->dst, side->src_ref + 333, ALONE_LEN, "get served while we held");
    memcpy(side->dst, side->dst_ref, ALONE_LEN);
    unit_barrier(ctx);
}

static void get_body(unit_ctx_t *ctx)
{
    uint64_t other = ctx->is_parent ? UNIT_CHILD_NAME : UNIT_PARENT_NAME;
    uint8_t *own_src_ref;
    get_side_t side;

    memset(&side, 0, sizeof(side));
    side.src     = unit_alloc(REGION_LEN);
    side.dst     = unit_alloc(REGION_LEN);
    side.src_ref = unit_alloc(REGION_LEN);
    side.dst_ref = unit_alloc(REGION_LEN);
    own_src_ref  = unit_alloc(REGION_LEN);
    unit_fill(side.src, REGION_LEN, src_seed(ctx->name));
    memcpy(own_src_ref, side.src, REGION_LEN);
    unit_fill(side.src_ref, REGION_LEN, src_seed(other));
    unit_fill(side.dst_ref, REGION_LEN, 0xd57ull + ctx->name);
    memcpy(side.dst, side.dst_ref, REGION_LEN);
    CHECK_RC(loom_mem_register(ctx->engine, side.src, REGION_LEN, &side.src_region), LOOM_OK);
    CHECK_RC(loom_mem_register(ctx->engine, side.dst, REGION_LEN, &side.dst_region), LOOM_OK);
    unit_send_region(ctx, side.src_region, side.src, REGION_LEN);
    unit_recv_region(ctx, &side.remote);
    CHECK(loom_engine_rdma_max(ctx->engine) >= MAX_GET + 1);

    get_direction(ctx, &side, ctx->is_parent);
    get_direction(ctx, &side, !ctx->is_parent);
    get_window(ctx, &side);
    get_window_both(ctx, &side);
    get_served_alone(ctx, &side);

    /* A get reads: the owner's memory is as it was. */
    CHECK_MEM(side.src, own_src_ref, REGION_LEN, "source region after being read");
    CHECK_MEM(side.dst, side.dst_ref, REGION_LEN, "destination region at the end");
    unit_barrier(ctx);
    loom_mem_deregister(side.src_region);
    loom_mem_deregister(side.dst_region);
    free(side.src);
    free(side.dst);
    free(side.src_ref);
    free(side.dst_ref);
    free(own_src_ref);
}

int main(void)
{
    return unit_main("get", NULL, get_body, get_body);
}
