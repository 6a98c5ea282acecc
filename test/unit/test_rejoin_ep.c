/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Rails connected endpoint to endpoint that come back (rejoin_ep.c), between
 * two processes on two tcp rails on lo put in UCT's connect-to-ep model (the
 * one rc_verbs always needs), rail 0 carrying the messages:
 * - back: the parent takes rail 0 out of use; fresh endpoints of connection
 *   1 are exchanged and the rail carries messages and a put again, every
 *   byte checked;
 * - both at once: both sides take it out of use together and both announce;
 *   one announcement wins and both end on the same connection;
 * - lost announcement: the child drops the first announcement that reaches
 *   it; the rail comes back on a later one;
 * - lost answer: the parent drops the child's first answer; it announces
 *   again, and the child answers on a fresh wireup endpoint (the one before
 *   may have died with the port);
 * - old incarnation: a CONNECT of an older connection, saying connected, is
 *   refused and changes nothing;
 * - a peer that leaves while its rail is coming back: the child never
 *   answers, the parent keeps announcing (messages go on rail 1
 *   meanwhile), then the child leaves; nothing hangs or leaks.
 */
#include "unit_harness.h"
#include "engine/loom_engine.h" /* the rail state the checks look at */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG 9
#define LEN (256 * 1024)

static void rejoin_configure(loom_engine_config_t *config, bool is_parent)
{
    (void)is_parent;
    config->rails          = "tcp:lo,tcp:lo";
    config->max_rails      = 2;
    config->rails_repeat   = true;
    config->am_rail        = 0;
    config->msg_window     = 64; /* messages kept for re-sending: rails may come back */
    config->rail_rejoin_ms = 300;
}

/* One message each way, checked; returns once both sides got theirs.  The
 * record is cleared before the barrier: the other side's next message may
 * come as soon as it passed it. */
static void exchange(unit_ctx_t *ctx, unsigned round)
{
    char mine[32], theirs[32];

    snprintf(mine, sizeof(mine), "%s %u", ctx->is_parent ? "parent" : "child", round);
    snprintf(theirs, sizeof(theirs), "%s %u", ctx->is_parent ? "child" : "parent", round);
    CHECK_RC(unit_am_send(ctx, ctx->peer, TAG, mine, strlen(mine) + 1), LOOM_OK);
    UNIT_WAIT(ctx, ctx->msg_count >= 1);
    CHECK_UEQ(ctx->msg_count, 1);
    CHECK_UEQ(ctx->msgs[0].length, strlen(theirs) + 1);
    CHECK_MEM(ctx->msgs[0].data, theirs, strlen(theirs) + 1, "a message around a rail's return");
    unit_msgs_clear(ctx);
    unit_barrier(ctx);
}

static loom_peer_rail_t *rail0(unit_ctx_t *ctx)
{
    return &ctx->peer->rails[0];
}

/* Rail 0 in use again on a later connection (on the side that did not
 * take it out, it may not have failed yet). */
static void wait_back(unit_ctx_t *ctx)
{
    UNIT_WAIT(ctx, !rail0(ctx)->failed && rail0(ctx)->usable && rail0(ctx)->rail_epoch >= 1);
}

/* Both sides on the same connection of rail 0, which carries messages and
 * puts again: per-rail counters grow, every byte checked. */
static void check_rail0_works(unit_ctx_t *ctx, unsigned round)
{
    const loom_rail_stats_t *stats = loom_engine_rail_stats(ctx->engine, 0);
    uint8_t *src = unit_alloc(LEN), *dst = unit_alloc(LEN), *expect = unit_alloc(LEN);
    uint64_t other = ctx->is_parent ? UNIT_CHILD_NAME : UNIT_PARENT_NAME;
    unsigned long sent = stats->messages_sent, puts = stats->puts;
    loom_region_t *src_reg, *dst_reg;
    unit_remote_t remote;
    unit_op_t uop;

    unit_send_u64(ctx, rail0(ctx)->rail_epoch);
    CHECK_UEQ(unit_recv_u64(ctx), rail0(ctx)->rail_epoch);
    CHECK_EQ(ctx->peer->am_rail, 0);
    exchange(ctx, round);
    CHECK_MSG(stats->messages_sent > sent, "rail 0 carried no message after it came back");

    unit_fill(src, LEN, ctx->name + round);
    unit_fill(expect, LEN, other + round);
    CHECK_RC(loom_mem_register(ctx->engine, src, LEN, &src_reg), LOOM_OK);
    CHECK_RC(loom_mem_register(ctx->engine, dst, LEN, &dst_reg), LOOM_OK);
    unit_send_region(ctx, dst_reg, dst, LEN);
    unit_recv_region(ctx, &remote);
    unit_op_init(&uop);
    CHECK_RC(loom_put(ctx->peer, &uop.op, src, src_reg, remote.base, remote.key,
                      remote.key_size, LEN), LOOM_INPROGRESS);
    UNIT_WAIT(ctx, uop.calls > 0);
    CHECK_RC(uop.status, LOOM_OK);
    CHECK_MSG(stats->puts > puts, "the put did not go on rail 0");
    unit_barrier(ctx);
    CHECK_MEM(dst, expect, LEN, "a put over a rail that came back");
    unit_barrier(ctx);
    loom_mem_deregister(src_reg);
    loom_mem_deregister(dst_reg);
    free(src);
    free(dst);
    free(expect);
}

static void back(unit_ctx_t *ctx)
{
    const loom_rail_stats_t *stats = loom_engine_rail_stats(ctx->engine, 0);
    unsigned long tries;

    ctx->log_quiet = true;
    exchange(ctx, 0);
    if (ctx->is_parent) {
        loom_peer_fail_rail(ctx->peer, 0, UCS_ERR_CONNECTION_RESET);
    }
    exchange(ctx, 1); /* on rail 1 */
    wait_back(ctx);
    /* one announcement does it, unless a loaded machine delayed its answer
     * past the other side's own period; usually the parent's, but the
     * child, told of the failure, may come first on a loaded machine */
    CHECK(rail0(ctx)->rail_epoch >= 1);
    CHECK(stats->rejoins >= 1);
    tries = stats->rejoin_tries;
    unit_send_u64(ctx, tries);
    tries += unit_recv_u64(ctx);
    CHECK_MSG(tries >= 1, "the rail came back with no announcement counted");
    unit_note("%s: back on connection %u after %lu announcements", ctx->role,
              rail0(ctx)->rail_epoch, stats->rejoin_tries);
    check_rail0_works(ctx, 2);
}

/* Rail 0 back on both sides, on the same connection.  A side that answered
 * the other's announcement (in the barrier's progress) before it announced
 * its own uses connection 1 until that announcement of connection 2 reaches
 * the other side, which then uses connection 2 as well. */
static void wait_same_connection(unit_ctx_t *ctx)
{
    uint64_t mine, theirs;

    for (;;) {
        wait_back(ctx);
        mine = rail0(ctx)->rail_epoch;
        unit_send_u64(ctx, mine);
        theirs = unit_recv_u64(ctx);
        if (mine == theirs) {
            return;
        }
        if (mine < theirs) {
            UNIT_WAIT(ctx, rail0(ctx)->rail_epoch >= theirs);
        }
    }
}

/* Both sides take rail 0 out of use and, once both closed it, announce
 * at the same moment (their own clocks held back). */
static void both_at_once(unit_ctx_t *ctx)
{
    const loom_rail_stats_t *stats = loom_engine_rail_stats(ctx->engine, 0);

    ctx->log_quiet = true;
    exchange(ctx, 0);
    ctx->engine->config.rail_rejoin_ms = 1000000;
    loom_peer_fail_rail(ctx->peer, 0, UCS_ERR_CONNECTION_RESET);
    UNIT_WAIT(ctx, NULL == rail0(ctx)->ep && 0 == ctx->peer->fail_pending);
    unit_barrier(ctx);
    loom_rejoin_ep_start(ctx->peer, 0);
    CHECK_UEQ(stats->rejoin_tries, 1);
    wait_same_connection(ctx);
    /* connection 1 when the announcements crossed; 2 when one side had
     * already answered the other's before it announced its own */
    CHECK(rail0(ctx)->rail_epoch >= 1 && rail0(ctx)->rail_epoch <= 2);
    CHECK(stats->rejoins >= 1);
    unit_note("%s: back on connection %u", ctx->role, rail0(ctx)->rail_epoch);
    check_rail0_works(ctx, 1);
}

/* The CONNECTs of a later connection that reach rail 0's wireup interface
 * and say connected as drop_connected does (answers) or not
 * (announcements) are dropped: the first only, or all with drop_all. */
static bool drop_connected, drop_all;
static unsigned connects_dropped;

static ucs_status_t drop_connects(void *arg, void *data, size_t length, unsigned flags)
{
    loom_rail_t *rail = arg;
    loom_wire_connect_t conn;

    memcpy(&conn, data, sizeof(conn));
    if (0 == loom_from_le32(conn.rail_epoch) || drop_connected != !!conn.connected) {
        return loom_connect_recv(arg, data, length, flags);
    }
    ++connects_dropped;
    if (!drop_all) {
        CHECK(UCS_OK == uct_iface_set_am_handler(rail->boot_iface, LOOM_WIRE_CONNECT,
                                                 loom_connect_recv, rail, 0));
    }
    return UCS_OK;
}

static void drop_connects_set(loom_rail_t *rail, bool connected, bool all)
{
    drop_connected   = connected;
    drop_all         = all;
    connects_dropped = 0;
    CHECK(UCS_OK == uct_iface_set_am_handler(rail->boot_iface, LOOM_WIRE_CONNECT,
                                             drop_connects, rail, 0));
}

static void lost_announcement(unit_ctx_t *ctx)
{
    loom_rail_t *rail = &ctx->engine->rails[0];
    unsigned long tries;

    ctx->log_quiet = true;
    exchange(ctx, 0);
    if (!ctx->is_parent) {
        drop_connects_set(rail, false, false); /* the child loses the first announcement */
        /* only the parent announces */
        ctx->engine->config.rail_rejoin_ms = 1000000;
    }
    unit_barrier(ctx);
    if (ctx->is_parent) {
        loom_peer_fail_rail(ctx->peer, 0, UCS_ERR_CONNECTION_RESET);
    }
    wait_back(ctx);
    if (!ctx->is_parent) {
        CHECK_UEQ(connects_dropped, 1);
    }
    /* the lost one, and the one that brought it back */
    tries = rail->stats.rejoin_tries;
    unit_send_u64(ctx, tries);
    tries += unit_recv_u64(ctx);
    CHECK_MSG(tries >= 2, "the rail came back on the lost announcement (%lu sent)", tries);
    check_rail0_works(ctx, 1);
}

static void lost_answer(unit_ctx_t *ctx)
{
    loom_rail_t *rail = &ctx->engine->rails[0];
    uct_ep_h boot_ep = rail0(ctx)->boot_ep;

    ctx->log_quiet = true;
    exchange(ctx, 0);
    if (ctx->is_parent) {
        drop_connects_set(rail, true, false); /* the parent loses the child's first answer */
    } else {
        ctx->engine->config.rail_rejoin_ms = 1000000; /* only the parent announces */
    }
    unit_barrier(ctx);
    if (ctx->is_parent) {
        loom_peer_fail_rail(ctx->peer, 0, UCS_ERR_CONNECTION_RESET);
    }
    wait_back(ctx);
    if (ctx->is_parent) {
        CHECK_UEQ(connects_dropped, 1);
        CHECK(rail->stats.rejoin_tries >= 2);
    } else {
        CHECK_MSG(NULL != boot_ep && rail0(ctx)->boot_ep != boot_ep,
                  "the answer after the lost one went on the same wireup endpoint");
    }
    check_rail0_works(ctx, 1);
}

/* After a return, the parent sends CONNECTs of the connection before: the
 * child refuses them, and rail 0 stays as it is. */
static void old_incarnation(unit_ctx_t *ctx)
{
    loom_rail_t *rail = &ctx->engine->rails[0];
    unsigned long refused;
    uint8_t msg[LOOM_OP_MSG_MAX];
    loom_wire_connect_t conn;
    size_t length;
    uint32_t epoch;
    int connected;

    ctx->log_quiet = true;
    exchange(ctx, 0);
    if (ctx->is_parent) {
        loom_peer_fail_rail(ctx->peer, 0, UCS_ERR_CONNECTION_RESET);
    }
    wait_back(ctx);
    /* the child counts from before the parent sends: a barrier would
     * progress, and could take the refusals before the count */
    epoch   = rail0(ctx)->rail_epoch;
    refused = rail->stats.refused;
    CHECK(epoch >= 1);
    if (ctx->is_parent) {
        epoch = (uint32_t)unit_recv_u64(ctx); /* old to the child, whatever ours */
        CHECK(epoch >= 1);
        for (connected = 0; connected < 2; ++connected) {
            length = loom_connect_fill(ctx->peer, 0, 0, msg, sizeof(msg));
            CHECK(length > sizeof(conn));
            memcpy(&conn, msg, sizeof(conn));
            conn.rail_epoch = loom_le32(epoch - 1);
            conn.connected  = (uint8_t)connected;
            memcpy(msg, &conn, sizeof(conn));
            CHECK_RC(loom_connect_msg_send(ctx->peer, 0, true, msg, length), LOOM_OK);
        }
        UNIT_WAIT(ctx, 0 == loom_peer_outstanding(ctx->peer));
    } else {
        unit_send_u64(ctx, epoch);
        UNIT_WAIT(ctx, rail->stats.refused >= refused + 2);
    }
    unit_barrier(ctx);
    CHECK(!rail0(ctx)->failed && rail0(ctx)->usable);
    CHECK_UEQ(rail0(ctx)->rail_epoch, epoch);
    check_rail0_works(ctx, 1);
}

static void leaves_meanwhile(unit_ctx_t *ctx)
{
    loom_rail_t *rail = &ctx->engine->rails[0];

    ctx->log_quiet = true;
    exchange(ctx, 0);
    if (!ctx->is_parent) {
        drop_connects_set(rail, false, true); /* the child drops every announcement */
        /* and never starts one itself */
        ctx->engine->config.rail_rejoin_ms = 1000000;
    }
    unit_barrier(ctx);
    if (ctx->is_parent) {
        loom_peer_fail_rail(ctx->peer, 0, UCS_ERR_CONNECTION_RESET);
        UNIT_WAIT(ctx, rail->stats.rejoin_tries >= 3);
    }
    exchange(ctx, 1); /* rail 1 carries the messages meanwhile */
    CHECK(rail0(ctx)->failed);
    if (!ctx->is_parent) {
        CHECK_MSG(connects_dropped >= 2, "%u announcements reached the child",
                  connects_dropped);
    }
    /* the harness's teardown: the child leaves, the parent lets it go */
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        unit_body_t body;
    } cases[] = {
        {"rejoin_ep back", back},
        {"rejoin_ep both at once", both_at_once},
        {"rejoin_ep lost announcement", lost_announcement},
        {"rejoin_ep lost answer", lost_answer},
        {"rejoin_ep old incarnation", old_incarnation},
        {"rejoin_ep a peer that leaves while its rail comes back", leaves_meanwhile},
    };
    unit_options_t options = {.force_connect_to_ep = true, .configure = rejoin_configure};
    size_t i;
    int rc = 0;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        /* one case by its number, to run it alone */
        if (argc < 2 || (size_t)atoi(argv[1]) == i) {
            rc |= unit_main(cases[i].name, &options, cases[i].body, cases[i].body);
        }
    }
    return rc;
}
