/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Deregistering memory that a push request reads (issue 10, item 4).
 *
 * The child owns two regions, a large one and a small one; the parent gets
 * both by push request (tcp has no get), then stops progressing, so that
 * the child's put of the large region stays half sent and the serve of the
 * small one waits in the rail queue behind it.
 *
 * - queued: the child deregisters the small region while its serve waits,
 *   then overwrites the memory (as a reuse would; under ASan the memory is
 *   also poisoned): the parent's get must be refused (UNKNOWN_KEY), its
 *   destination untouched, never filled with the reused bytes;
 * - in flight: the child lets the parent go and deregisters the large
 *   region while its put is still being sent: deregistration waits for it,
 *   and the parent gets the original bytes, not the ones written after.
 */
#include "unit_harness.h"
#include "engine/loom_engine.h" /* the rail queue the serve waits in */

#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define DEREG_POISON(_p, _n)   ASAN_POISON_MEMORY_REGION(_p, _n)
#define DEREG_UNPOISON(_p, _n) ASAN_UNPOISON_MEMORY_REGION(_p, _n)
#else
#define DEREG_POISON(_p, _n)   ((void)(_p), (void)(_n))
#define DEREG_UNPOISON(_p, _n) ((void)(_p), (void)(_n))
#endif

#define BIG_LEN   ((size_t)32 << 20)  /* more than lo's socket buffers hold */
#define SMALL_LEN ((size_t)32 << 10)
#define REUSED    0xee                /* what the memory holds once reused */

static uint64_t big_seed   = 0xb16;
static uint64_t small_seed = 0x5a11;

/* A serve of the child that reads addr waits in the rail queue, not issued. */
static bool serve_waiting(unit_ctx_t *ctx, const void *addr)
{
    loom_op_t *op;

    ucs_list_for_each(op, &ctx->peer->rails[0].rail_queue, queue_link) {
        if (LOOM_OP_SERVE == op->kind && op->local == addr &&
            LOOM_STAGE_ISSUE == op->stage) {
            return true;
        }
    }
    return false;
}

/* No byte of buf holds the reused pattern where the original had another. */
static void check_not_reused(const uint8_t *buf, const uint8_t *orig, size_t length,
                             const char *what)
{
    size_t i;

    for (i = 0; i < length; ++i) {
        CHECK_MSG(!(REUSED == buf[i] && REUSED != orig[i]), "%s: byte %zu holds what the "
                  "owner wrote after deregistering", what, i);
    }
}

static void owner_body(unit_ctx_t *ctx)
{
    uint8_t *big = unit_alloc(BIG_LEN), *small = unit_alloc(SMALL_LEN);
    loom_region_t *big_region, *small_region;

    unit_fill(big, BIG_LEN, big_seed);
    unit_fill(small, SMALL_LEN, small_seed);
    CHECK_RC(loom_mem_register(ctx->engine, big, BIG_LEN, &big_region), LOOM_OK);
    CHECK_RC(loom_mem_register(ctx->engine, small, SMALL_LEN, &small_region), LOOM_OK);
    unit_send_region(ctx, big_region, big, BIG_LEN);
    unit_send_region(ctx, small_region, small, SMALL_LEN);

    unit_wait_other_holds(ctx);
    UNIT_WAIT(ctx, serve_waiting(ctx, small));
    loom_mem_deregister(small_region);
    memset(small, REUSED, SMALL_LEN);
    DEREG_POISON(small, SMALL_LEN);

    unit_send_u64(ctx, 1); /* the requester progresses again */
    loom_mem_deregister(big_region);
    memset(big, REUSED, BIG_LEN);
    DEREG_POISON(big, BIG_LEN);

    unit_barrier(ctx); /* the requester checked what it got */
    DEREG_UNPOISON(small, SMALL_LEN);
    DEREG_UNPOISON(big, BIG_LEN);
    free(small);
    free(big);
}

static void requester_body(unit_ctx_t *ctx)
{
    uint8_t *big = unit_alloc(BIG_LEN), *small = unit_alloc(SMALL_LEN);
    uint8_t *big_ref = unit_alloc(BIG_LEN), *small_bg = unit_alloc(SMALL_LEN);
    loom_region_t *big_region, *small_region;
    unit_remote_t big_remote, small_remote;
    unit_op_t big_get, small_get;
    int rc;

    CHECK(loom_engine_rdma_max(ctx->engine) >= BIG_LEN);
    unit_fill(big_ref, BIG_LEN, big_seed);
    unit_fill(small_bg, SMALL_LEN, 0xb9);
    memcpy(small, small_bg, SMALL_LEN);
    CHECK_RC(loom_mem_register(ctx->engine, big, BIG_LEN, &big_region), LOOM_OK);
    CHECK_RC(loom_mem_register(ctx->engine, small, SMALL_LEN, &small_region), LOOM_OK);
    unit_recv_region(ctx, &big_remote);
    unit_recv_region(ctx, &small_remote);

    unit_op_init(&big_get);
    unit_op_init(&small_get);
    rc = loom_get(ctx->peer, &big_get.op, big, big_region, big_remote.base,
                  big_remote.key, big_remote.key_size, BIG_LEN);
    CHECK_RC(rc, LOOM_INPROGRESS);
    rc = loom_get(ctx->peer, &small_get.op, small, small_region, small_remote.base,
                  small_remote.key, small_remote.key_size, SMALL_LEN);
    CHECK_RC(rc, LOOM_INPROGRESS);
    /* both requests left: the owner has them while we hold */
    UNIT_WAIT(ctx, LOOM_STAGE_WAIT == big_get.op.stage && LOOM_STAGE_WAIT == small_get.op.stage);
    unit_hold_progress(ctx);

    UNIT_WAIT(ctx, big_get.calls > 0 && small_get.calls > 0);
    CHECK_RC(small_get.status, LOOM_ERR_STALE_KEY); /* UNKNOWN_KEY on the wire */
    check_not_reused(small, small_bg, SMALL_LEN, "refused get");
    CHECK_MEM(small, small_bg, SMALL_LEN, "destination of the refused get");
    CHECK_RC(big_get.status, LOOM_OK);
    check_not_reused(big, big_ref, BIG_LEN, "get in flight at deregistration");
    CHECK_MEM(big, big_ref, BIG_LEN, "get in flight at deregistration");
    unit_progress_for(ctx, 0.1); /* a second completion would show here */
    CHECK_EQ(big_get.calls, 1);
    CHECK_EQ(small_get.calls, 1);
    unit_barrier(ctx);

    loom_mem_deregister(big_region);
    loom_mem_deregister(small_region);
    free(big);
    free(small);
    free(big_ref);
    free(small_bg);
}

int main(void)
{
    return unit_main("dereg", NULL, requester_body, owner_body);
}
