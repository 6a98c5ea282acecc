/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Tags the upper layer does not take (config.tag_count): the parent sends
 * messages with the largest tag the child takes, with tags past it (the
 * first one past it and 254, the largest an upper layer may use: 255 is
 * loom's own, LOOM_WIRE_TAG_ENGINE, refused at the sender), and valid ones
 * around them; the child gets exactly the valid ones, in order, and counts
 * the others in bad_tags.  Once by active message, once through an eager
 * ring.
 */
#include "unit_harness.h"
#include "engine/loom_engine.h" /* the peer's eager state */

#include <string.h>

#define TAG_COUNT 200

typedef struct tag_case {
    uint8_t     tag;
    const char *text;
} tag_case_t;

static const tag_case_t cases[] = {
    {1, "first"},
    {TAG_COUNT, "one past the last tag"},
    {TAG_COUNT - 1, "the last tag"},
    {254, "the largest tag an upper layer may use"},
    {0, "tag zero"},
    {TAG_COUNT + 1, "two past"},
    {7, "after them all"},
};
#define CASE_COUNT (sizeof(cases) / sizeof(cases[0]))
#define BAD_COUNT  3

static void tags_configure(loom_engine_config_t *config, bool is_parent)
{
    static const loom_eager_phase_t phase = {256, 8, 0};

    (void)is_parent;
    config->tag_count              = TAG_COUNT;
    config->eager_mode             = LOOM_EAGER_ON; /* the unit tests only have tcp */
    config->eager_phase_count      = 1;
    config->eager_phases[0]        = phase;
    config->eager_msgs_before_ring = 1000000; /* a ring only when asked for one */
    config->eager_ack_timeout_ms   = 60000;   /* a busy machine is not a lost request */
}

static void tags_send_all(unit_ctx_t *ctx)
{
    size_t i;

    for (i = 0; i < CASE_COUNT; ++i) {
        CHECK_RC(unit_am_send(ctx, ctx->peer, cases[i].tag, cases[i].text,
                              strlen(cases[i].text)), LOOM_OK);
    }
}

/* The valid messages arrived in order, the others were counted. */
static void tags_check_round(unit_ctx_t *ctx, unsigned long bad_before)
{
    size_t i, got = 0;

    UNIT_WAIT(ctx, ctx->msg_count >= CASE_COUNT - BAD_COUNT);
    for (i = 0; i < CASE_COUNT; ++i) {
        if (cases[i].tag >= TAG_COUNT) {
            continue;
        }
        CHECK_MSG(got < ctx->msg_count, "message '%s' missing", cases[i].text);
        CHECK_EQ(ctx->msgs[got].tag, cases[i].tag);
        CHECK_UEQ(ctx->msgs[got].length, strlen(cases[i].text));
        CHECK_MEM(ctx->msgs[got].data, cases[i].text, ctx->msgs[got].length, cases[i].text);
        ++got;
    }
    /* the last one is valid: every bad one came before it */
    CHECK_UEQ(ctx->msg_count, got);
    CHECK_UEQ(loom_engine_rail_stats(ctx->engine, 0)->bad_tags - bad_before, BAD_COUNT);
    CHECK_UEQ(loom_engine_rail_stats(ctx->engine, 0)->refused, 0);
    unit_msgs_clear(ctx);
}

static void parent_body(unit_ctx_t *ctx)
{
    const loom_eager_stats_t *stats = loom_engine_eager_stats(ctx->engine);
    unsigned long ring_sent;

    tags_send_all(ctx); /* no ring yet: by active message */
    CHECK_UEQ(stats->ring_sent, 0);
    unit_barrier(ctx);

    CHECK_RC(loom_eager_request(ctx->peer, 1), LOOM_OK);
    UNIT_WAIT(ctx, 1 == loom_eager_tx_phase(ctx->peer) && !ctx->peer->eager.tx.pending);
    ring_sent = stats->ring_sent;
    tags_send_all(ctx);
    CHECK_UEQ(stats->ring_sent - ring_sent, CASE_COUNT);
    unit_barrier(ctx);
    /* nothing came back the other way */
    CHECK_UEQ(ctx->msg_count, 0);
    CHECK_UEQ(loom_engine_rail_stats(ctx->engine, 0)->bad_tags, 0);
}

static void child_body(unit_ctx_t *ctx)
{
    const loom_eager_stats_t *stats = loom_engine_eager_stats(ctx->engine);

    tags_check_round(ctx, 0);
    CHECK_UEQ(stats->ring_received, 0);
    unit_barrier(ctx);

    tags_check_round(ctx, BAD_COUNT);
    CHECK_UEQ(stats->ring_received, CASE_COUNT);
    unit_barrier(ctx);
}

int main(void)
{
    unit_options_t options = {.configure = tags_configure};

    return unit_main("tags", &options, parent_body, child_body);
}
