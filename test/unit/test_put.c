/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * RDMA put: sizes 0 and 1 B .. 16 MiB + 1 (powers of two and +-1) at various
 * offsets into the peer's registered region, both directions.  The callback
 * must mean "visible at the target": after it, the initiator tells the target
 * over the socketpair and the target checks the bytes at once, and checks
 * that nothing outside the written range changed.  Then several puts at once.
 */
#include "unit_harness.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PUT     ((size_t)16 << 20)
#define REGION_LEN  (MAX_PUT + 65536)
#define BG_SEED     0xb6b6ull
#define MULTI_COUNT 16

typedef struct put_side {
    uint8_t       *src;     /* registered source of our puts, REGION_LEN bytes */
    loom_region_t *src_region;
    uint8_t       *mem;     /* registered target of the other's puts, REGION_LEN */
    uint8_t       *ref;     /* target: what mem must hold outside a written range */
    uint8_t       *scratch; /* target: expected bytes of a range */
    loom_region_t *region;
    unit_remote_t  remote;  /* the other process's region */
} put_side_t;

/* One put as both processes see it. */
typedef struct put_round {
    uint64_t src_off;
    uint64_t dst_off;
    uint64_t length;
    uint64_t seed;
} put_round_t;

static void put_round_make(put_round_t *r, size_t i, size_t length, uint64_t seed_base)
{
    static const uint64_t dst[] = {0, 1, 3, 8, 4095, 4097, 65541, REGION_LEN};

    r->length  = length;
    r->dst_off = unit_clip_offset(dst[i % (sizeof(dst) / sizeof(dst[0]))], length, REGION_LEN);
    r->src_off = unit_clip_offset((i * 13u) % 4096u, length, REGION_LEN);
    r->seed    = seed_base + i;
}

/* Target: the range holds the round's bytes, everything else is untouched;
 * then put the background back. */
static void put_target_verify(put_side_t *side, const put_round_t *r)
{
    uint64_t end = r->dst_off + r->length;

    CHECK_MEM(side->mem, side->ref, r->dst_off, "target bytes before the written range");
    unit_fill(side->scratch, r->length, r->seed);
    CHECK_MEM(side->mem + r->dst_off, side->scratch, r->length, "put data at the target");
    CHECK_MEM(side->mem + end, side->ref + end, REGION_LEN - end,
              "target bytes after the written range");
    memcpy(side->mem + r->dst_off, side->ref + r->dst_off, r->length);
}

static void put_issue(unit_ctx_t *ctx, put_side_t *side, const put_round_t *r,
                      unit_op_t *uop)
{
    int rc;

    unit_fill(side->src + r->src_off, r->length, r->seed);
    unit_op_init(uop);
    rc = loom_put(ctx->peer, &uop->op, side->src + r->src_off, side->src_region,
                  side->remote.base + r->dst_off, side->remote.key, side->remote.key_size,
                  r->length);
    CHECK_MSG(LOOM_OK == rc || LOOM_INPROGRESS == rc, "loom_put of %llu bytes: %d (%s)",
              (unsigned long long)r->length, rc, loom_strerror(rc));
    if (LOOM_OK == rc) {
        /* done at once: no callback may follow */
        uop->calls  = 1;
        uop->status = LOOM_OK;
    }
}

/* Sequential puts from the initiator, each checked by the target. */
static void put_series(unit_ctx_t *ctx, put_side_t *side, bool initiator, uint64_t seed_base)
{
    size_t sizes[128], n = unit_size_ladder(sizes), i;
    loom_rail_stats_t before = *loom_engine_rail_stats(ctx->engine, 0);
    unsigned long bytes = 0;

    for (i = 0; i < n; ++i) {
        put_round_t r;

        if (initiator) {
            unit_op_t uop;

            put_round_make(&r, i, sizes[i], seed_base);
            put_issue(ctx, side, &r, &uop);
            UNIT_WAIT(ctx, uop.calls > 0);
            CHECK_EQ(uop.calls, 1);
            CHECK_RC(uop.status, LOOM_OK);
            /* The target looks right now: no further progress of ours needed. */
            unit_send(ctx, &r, sizeof(r));
            CHECK_UEQ(unit_recv_u64(ctx), i);
            CHECK_EQ(uop.calls, 1);
            bytes += r.length;
        } else {
            unit_recv(ctx, &r, sizeof(r));
            put_target_verify(side, &r);
            unit_send_u64(ctx, i);
        }
    }
    if (initiator) {
        loom_rail_stats_t *after = loom_engine_rail_stats(ctx->engine, 0);
        CHECK_UEQ(after->puts - before.puts, n);
        CHECK_UEQ(after->bytes_sent - before.bytes_sent, bytes);
        unit_note("%zu puts, %lu bytes, each checked at the target", n, bytes);
    }
    unit_barrier(ctx);
}

/* Several puts in flight at once to disjoint ranges. */
static void put_multi(unit_ctx_t *ctx, put_side_t *side, bool initiator)
{
    put_round_t r[MULTI_COUNT];
    unit_op_t uop[MULTI_COUNT];
    uint64_t off = 0;
    size_t i;

    for (i = 0; i < MULTI_COUNT; ++i) {
        r[i].length  = ((size_t)1 << (i % 20)) + i * 3;
        r[i].src_off = off;
        r[i].dst_off = off + 1 + i;
        r[i].seed    = 9000 + i;
        off = r[i].dst_off + r[i].length;
        CHECK(off <= REGION_LEN);
    }
    if (initiator) {
        for (i = 0; i < MULTI_COUNT; ++i) {
            put_issue(ctx, side, &r[i], &uop[i]);
        }
        unit_ops_wait_all(ctx, uop, MULTI_COUNT);
        unit_send_u64(ctx, MULTI_COUNT);
    } else {
        CHECK_UEQ(unit_recv_u64(ctx), MULTI_COUNT);
        /* all ranges at once; restore each after its check */
        for (i = 0; i < MULTI_COUNT; ++i) {
            unit_fill(side->scratch, r[i].length, r[i].seed);
            CHECK_MEM(side->mem + r[i].dst_off, side->scratch, r[i].length,
                      "one of several concurrent puts");
            memcpy(side->mem + r[i].dst_off, side->ref + r[i].dst_off, r[i].length);
        }
        CHECK_MEM(side->mem, side->ref, REGION_LEN, "target region after restoring");
    }
    unit_barrier(ctx);
}

static void put_body(unit_ctx_t *ctx)
{
    put_side_t side;
    uint64_t peer_key_size;

    memset(&side, 0, sizeof(side));
    side.src     = unit_alloc(REGION_LEN);
    side.mem     = unit_alloc(REGION_LEN);
    side.ref     = unit_alloc(REGION_LEN);
    side.scratch = unit_alloc(REGION_LEN);
    unit_fill(side.ref, REGION_LEN, BG_SEED + ctx->name);
    memcpy(side.mem, side.ref, REGION_LEN);
    CHECK_RC(loom_mem_register(ctx->engine, side.mem, REGION_LEN, &side.region), LOOM_OK);
    CHECK(NULL != side.region);
    CHECK_RC(loom_mem_register(ctx->engine, side.src, REGION_LEN, &side.src_region),
             LOOM_OK);
    CHECK(loom_region_id(side.src_region) != loom_region_id(side.region));
    CHECK(0 != loom_region_id(side.region));

    /* Both sides must agree on the key size; then swap region descriptions. */
    unit_send_u64(ctx, loom_key_size(ctx->engine));
    peer_key_size = unit_recv_u64(ctx);
    CHECK_UEQ(peer_key_size, loom_key_size(ctx->engine));
    unit_send_region(ctx, side.region, side.mem, REGION_LEN);
    unit_recv_region(ctx, &side.remote);
    CHECK_UEQ(side.remote.length, REGION_LEN);
    CHECK(loom_engine_rdma_max(ctx->engine) >= MAX_PUT + 1);

    put_series(ctx, &side, ctx->is_parent, 100);
    put_series(ctx, &side, !ctx->is_parent, 500);
    put_multi(ctx, &side, ctx->is_parent);
    put_multi(ctx, &side, !ctx->is_parent);

    /* Our region as the other side left it: all background again. */
    CHECK_MEM(side.mem, side.ref, REGION_LEN, "region at the end");
    unit_barrier(ctx);
    loom_mem_deregister(side.region);
    loom_mem_deregister(side.src_region);
    free(side.src);
    free(side.mem);
    free(side.ref);
    free(side.scratch);
}

int main(void)
{
    return unit_main("put", NULL, put_body, put_body);
}
