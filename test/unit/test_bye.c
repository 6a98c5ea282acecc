/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * A peer that leaves is not a failure (issue 10, item 12), on two tcp rails
 * on lo (rails_repeat), messages round robin over both.
 *
 * Both sides exchange messages, so that both rails are connected; then the
 * parent keeps puts in flight to the child while the child disconnects and
 * destroys its engine.  The child says goodbye on both rails first: the
 * parent must recognise the peer as closing, log no error (no "rail ...
 * failed", no "every rail ... failed"), count its endpoints' errors as
 * closings, not as failed rails, and see every op it had in flight
 * complete.  The child, which leaves, logs no error either.
 */
#include "unit_harness.h"
#include "engine/loom_engine.h" /* the peer's closing state */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG       5
#define MSGS      8
#define PUT_LEN   ((size_t)8 << 20)
#define GONE      0x90e

static void bye_configure(loom_engine_config_t *config, bool is_parent)
{
    (void)is_parent;
    config->rails          = "tcp:lo,tcp:lo";
    config->max_rails      = 2;
    config->rails_repeat   = true;
    config->am_round_robin = true;
    config->msg_window     = 16;
    config->rail_rejoin_ms = 100; /* a rail of a process that left is not probed */
}

/* Messages both ways, round robin: every rail carries some. */
static void exchange(unit_ctx_t *ctx)
{
    uint8_t buf[64];
    int i;

    for (i = 0; i < MSGS; ++i) {
        unit_fill(buf, sizeof(buf), i);
        CHECK_RC(unit_am_send(ctx, ctx->peer, TAG, buf, sizeof(buf)), LOOM_OK);
    }
    UNIT_WAIT(ctx, ctx->msg_count >= MSGS);
    CHECK(ctx->peer->rails[0].usable && ctx->peer->rails[1].usable);
}

static unsigned long closings(unit_ctx_t *ctx)
{
    return loom_engine_rail_stats(ctx->engine, 0)->closings +
           loom_engine_rail_stats(ctx->engine, 1)->closings;
}

static void stayer_body(unit_ctx_t *ctx)
{
    uint8_t *src = unit_alloc(PUT_LEN);
    loom_region_t *region;
    unit_remote_t remote;
    unit_op_t put;
    unsigned puts = 0, failed = 0;
    double end;

    CHECK_RC(loom_mem_register(ctx->engine, src, PUT_LEN, &region), LOOM_OK);
    unit_recv_region(ctx, &remote);
    exchange(ctx);
    unit_barrier(ctx);

    /* puts in flight until the child is gone, and a while after */
    unit_op_init(&put);
    put.calls  = 1;
    put.status = LOOM_OK;
    end = unit_now() + UNIT_TIMEOUT;
    while (failed < 2) {
        if (put.calls > 0) {
            failed += (LOOM_OK != put.status);
            unit_op_init(&put);
            ++puts;
            if (loom_put(ctx->peer, &put.op, src, region, remote.base, remote.key,
                         remote.key_size, PUT_LEN) < 0) {
                put.calls = 1;
                put.status = LOOM_ERR_UNREACH;
            }
        }
        unit_progress(ctx);
        CHECK_MSG(unit_now() < end, "puts to the child kept succeeding after it left");
    }
    CHECK_UEQ(unit_recv_u64(ctx), GONE);
    unit_progress_for(ctx, 0.5); /* the endpoints' errors come now, if not yet */
    UNIT_WAIT(ctx, put.calls > 0);
    unit_note("%u puts, the last %u of them failed: the child had left", puts, failed);

    CHECK_MSG(0 == ctx->log_count[LOOM_LOG_ERROR], "errors logged for a peer that left:\n%s",
              ctx->log_text);
    CHECK(!unit_log_contains(ctx, "failed"));
    CHECK(ctx->peer->said_bye);
    CHECK(closings(ctx) > 0);
    CHECK_UEQ(loom_engine_rail_failed_peers(ctx->engine, 0), 0);
    CHECK_UEQ(loom_engine_rail_failed_peers(ctx->engine, 1), 0);
    CHECK_UEQ(loom_peer_outstanding(ctx->peer), 0);

    unit_barrier(ctx);
    loom_mem_deregister(region);
    free(src);
}

static void leaver_body(unit_ctx_t *ctx)
{
    uint8_t *dst = unit_alloc(PUT_LEN);
    loom_region_t *region;

    CHECK_RC(loom_mem_register(ctx->engine, dst, PUT_LEN, &region), LOOM_OK);
    unit_send_region(ctx, region, dst, PUT_LEN);
    exchange(ctx);
    unit_barrier(ctx);
    unit_progress_for(ctx, 0.2); /* puts land meanwhile */

    loom_peer_disconnect(ctx->peer);
    ctx->peer = NULL;
    loom_engine_destroy(ctx->engine); /* region included */
    ctx->engine = NULL;
    CHECK_MSG(0 == ctx->log_count[LOOM_LOG_ERROR], "errors logged while leaving:\n%s",
              ctx->log_text);
    unit_send_u64(ctx, GONE);

    /* the parent's checks, then its teardown's wait for both sides idle */
    unit_barrier(ctx);
    unit_side_idle(ctx);
    free(dst);
    close(ctx->sock);
    exit(0);
}

int main(void)
{
    unit_options_t options = {.configure = bye_configure};

    return unit_main("bye", &options, stayer_body, leaver_body);
}
