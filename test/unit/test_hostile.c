/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * A peer, or anyone who can reach our port, sends well-formed messages that
 * lie; the parent plays it with the engine's internal senders, the child
 * checks what its upper layer got and what it kept.
 *
 * - stranger: a SEND naming a process that is not connected is dropped and
 *   counted, never handed up;
 * - conn: SENDs naming the parent with connection ids not its own (message
 *   0 of a "new connection", and one further on) are never handed up and
 *   do not reset the parent's order: the parent's messages before, between
 *   and after arrive once each, in order;
 * - ahead: 2000 SENDs that skip the parent's next sequence number: the child
 *   holds no more than the window, drops and counts the rest, and once the
 *   parent sends its messages for real, each arrives once, in order, byte
 *   for byte;
 * - asks: 1000 acknowledgement requests while the child holds its progress
 *   are answered by a few acknowledgements, not 1000;
 * - refusals: LOOM_REFUSALS_MAX + 500 push requests refused while the child
 *   cannot send queue no more than LOOM_REFUSALS_MAX answers; the rest are
 *   dropped and counted;
 * - padded: conditional push requests with bytes behind the destination's
 *   key are refused, not kept waiting (a peer could make the owner hold
 *   gigabytes); the one well-formed request beside them waits;
 * - probe: a PROBE TRY for the only rail, claiming a newer connection, is
 *   refused as a CONNECT of connect-to-ep rails would be: the rail stays in
 *   use and the parent's messages before and after it arrive;
 * - strangers: CONNECTs from LOOM_EARLY_CONNECTS_MAX processes nobody knows
 *   are kept (a process that connects endpoint to endpoint may send its
 *   CONNECT before we know it), the upper layer is asked about each once,
 *   and then they cost progress nothing: the fastest of many passes is
 *   about as fast as before they came (every pass walked them all: 162 ns
 *   became 22.6 us).
 */
#include "unit_harness.h"
#include "engine/loom_engine.h" /* the engine's senders and the state the checks look at */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG          4
#define MARK_TAG     5
#define WINDOW       16
#define AHEAD        2000
#define ASKS         1000
#define PUSHES       (LOOM_REFUSALS_MAX + 500)
#define MSG_MAX      700
#define UNKNOWN_PROC 0x7777ull

static void hostile_configure(loom_engine_config_t *config, bool is_parent)
{
    (void)is_parent;
    config->msg_window = WINDOW;
    config->verbose    = LOOM_LOG_INFO; /* drops are logged at this level */
}

/* Message n of the parent: its length and bytes follow from n alone. */
static size_t msg_length(unsigned n)
{
    return (n * 131u) % MSG_MAX + 1;
}

static void msg_fill(uint8_t *buf, unsigned n)
{
    unit_fill(buf, msg_length(n), 0x5e0000ull + n);
}

/* Send raw bytes as a message of this AM id on the peer's rail now. */
static void raw_send(unit_ctx_t *ctx, uint8_t am_id, const loom_wire_send_t *hdr,
                     const void *data, size_t length)
{
    struct iovec iov = {(void *)data, length};
    double deadline = unit_now() + UNIT_TIMEOUT;
    int rc;

    while (LOOM_ERR_AGAIN == (rc = loom_am_issue(ctx->peer, ctx->peer->am_rail, am_id, hdr,
                                                 &iov, 1))) {
        unit_progress(ctx);
        CHECK(unit_now() < deadline);
    }
    CHECK_RC(rc, LOOM_OK);
}

/* A SEND as the parent's own would be, but with any sender, seq and conn,
 * carrying message n's bytes. */
static void forged_send(unit_ctx_t *ctx, uint64_t sender, uint32_t seq, uint32_t conn,
                        unsigned n)
{
    uint8_t buf[MSG_MAX];
    loom_wire_send_t hdr;

    memset(&hdr, 0, sizeof(hdr));
    loom_wire_hdr_fill(&hdr.hdr, LOOM_WIRE_SEND, TAG, sizeof(hdr) + msg_length(n));
    hdr.sender = loom_le64(sender);
    hdr.seq    = loom_le32(seq);
    hdr.ack    = loom_le32(ctx->peer->msg.rx_seq);
    hdr.conn   = loom_le32(conn);
    msg_fill(buf, n);
    raw_send(ctx, LOOM_WIRE_SEND, &hdr, buf, msg_length(n));
}

static void send_msgs(unit_ctx_t *ctx, unsigned first, unsigned count)
{
    uint8_t buf[MSG_MAX];
    unsigned n;

    for (n = first; n < first + count; ++n) {
        msg_fill(buf, n);
        CHECK_RC(unit_am_send(ctx, ctx->peer, TAG, buf, msg_length(n)), LOOM_OK);
    }
}

/* The upper layer got exactly messages 0 .. count - 1, in order, and no
 * more comes. */
static void check_msgs(unit_ctx_t *ctx, unsigned count)
{
    uint8_t expect[MSG_MAX];
    char what[64];
    unsigned n;

    UNIT_WAIT(ctx, ctx->msg_count >= count);
    unit_progress_for(ctx, 0.1);
    CHECK_UEQ(ctx->msg_count, count);
    for (n = 0; n < count; ++n) {
        msg_fill(expect, n);
        snprintf(what, sizeof(what), "message %u", n);
        CHECK_EQ(ctx->msgs[n].tag, TAG);
        CHECK_UEQ(ctx->msgs[n].length, msg_length(n));
        CHECK_MEM(ctx->msgs[n].data, expect, msg_length(n), what);
    }
}

static loom_rail_stats_t *rail_stats(unit_ctx_t *ctx)
{
    return loom_engine_rail_stats(ctx->engine, 0);
}

/* ---- stranger and conn ----------------------------------------------------------- */

static void forged_parent(unit_ctx_t *ctx)
{
    uint32_t conn = ctx->peer->msg.tx_conn;

    ctx->log_quiet = true;
    send_msgs(ctx, 0, 2);
    forged_send(ctx, UNKNOWN_PROC, 0, 0x1234, 100);
    send_msgs(ctx, 2, 1);
    /* another connection's message 0, then one further on */
    forged_send(ctx, ctx->name, 0, conn ^ 0x5a5a5a5a, 101);
    send_msgs(ctx, 3, 1);
    forged_send(ctx, ctx->name, ctx->peer->msg.tx_seq + 1, conn ^ 0x0f0f0f0f, 102);
    send_msgs(ctx, 4, 3);
    unit_barrier(ctx);
}

static void forged_child(unit_ctx_t *ctx)
{
    ctx->log_quiet = true;
    check_msgs(ctx, 7);
    /* the stranger, the claim found false once the parent answered, the other one */
    UNIT_WAIT(ctx, rail_stats(ctx)->refused >= 3);
    unit_progress_for(ctx, 0.1);
    CHECK_UEQ(rail_stats(ctx)->refused, 3);
    CHECK_UEQ(ctx->peer->msg.new_count, 0);
    CHECK(unit_log_contains(ctx, "not connected"));
    CHECK(unit_log_contains(ctx, "not the one the peer uses"));
    unit_barrier(ctx);
}

/* ---- ahead ------------------------------------------------------------------------- */

static void ahead_parent(unit_ctx_t *ctx)
{
    uint32_t first;
    unsigned i;

    send_msgs(ctx, 0, 1);
    unit_barrier(ctx);
    /* messages 2 .. AHEAD + 1, before message 1 */
    first = ctx->peer->msg.tx_seq;
    for (i = 1; i <= AHEAD; ++i) {
        forged_send(ctx, ctx->name, first + i, ctx->peer->msg.tx_conn, 1 + i);
    }
    unit_barrier(ctx);
    unit_barrier(ctx); /* the child has looked at what it holds */
    send_msgs(ctx, 1, AHEAD + 1);
    unit_barrier(ctx);
}

static void ahead_child(unit_ctx_t *ctx)
{
    unsigned long dropped = rail_stats(ctx)->over_limit;

    ctx->log_quiet = true;
    check_msgs(ctx, 1);
    unit_barrier(ctx);
    unit_barrier(ctx);
    UNIT_WAIT(ctx, ctx->peer->msg.held_count + (rail_stats(ctx)->over_limit - dropped) >= AHEAD);
    CHECK_MSG(ctx->peer->msg.held_count <= WINDOW + 1, "%u messages held, the window is %u",
              ctx->peer->msg.held_count, WINDOW);
    CHECK_UEQ(rail_stats(ctx)->over_limit - dropped, AHEAD - ctx->peer->msg.held_count);
    CHECK(unit_log_contains(ctx, "too far ahead of order"));
    unit_barrier(ctx);
    check_msgs(ctx, AHEAD + 2);
    CHECK_UEQ(ctx->peer->msg.held_count, 0);
    unit_barrier(ctx);
}

/* ---- asks -------------------------------------------------------------------------- */

static unsigned replies_seen;

static ucs_status_t count_acks(void *arg, void *data, size_t length, unsigned flags)
{
    loom_wire_msg_ack_t ack;

    if (length >= sizeof(ack)) {
        memcpy(&ack, data, sizeof(ack));
        replies_seen += !!(ack.hdr.flags & LOOM_WIRE_FLAG_ACK_REPLY);
    }
    return loom_msg_ack_recv(arg, data, length, flags);
}

static void asks_parent(unit_ctx_t *ctx)
{
    loom_rail_t *rail = &ctx->engine->rails[0];
    loom_wire_msg_ack_t ask;
    unsigned i;

    CHECK(UCS_OK == uct_iface_set_am_handler(rail->iface, LOOM_WIRE_MSG_ACK, count_acks,
                                             rail, 0));
    send_msgs(ctx, 0, 1);
    unit_wait_other_holds(ctx);
    memset(&ask, 0, sizeof(ask));
    loom_wire_hdr_fill(&ask.hdr, LOOM_WIRE_MSG_ACK, 0, sizeof(ask));
    ask.hdr.flags = LOOM_WIRE_FLAG_ACK_ASK;
    ask.sender    = loom_le64(ctx->name);
    ask.ack       = loom_le32(ctx->peer->msg.rx_seq);
    ask.conn      = loom_le32(ctx->peer->msg.tx_conn);
    for (i = 0; i < ASKS; ++i) {
        raw_send(ctx, LOOM_WIRE_MSG_ACK, NULL, &ask, sizeof(ask));
    }
    send_msgs(ctx, 1, 1); /* behind them on the connection */
    unit_send_u64(ctx, 1);
    /* the child's mark leaves after every answer it queued */
    UNIT_WAIT(ctx, 1 == ctx->msg_count);
    CHECK_EQ(ctx->msgs[0].tag, MARK_TAG);
    unit_note("%u acknowledgement requests answered by %u answers", ASKS, replies_seen);
    CHECK(replies_seen >= 1);
    CHECK_MSG(replies_seen <= ASKS / 10, "%u answers to %u requests", replies_seen, ASKS);
    unit_barrier(ctx);
}

static void asks_child(unit_ctx_t *ctx)
{
    check_msgs(ctx, 1);
    unit_hold_progress(ctx);
    check_msgs(ctx, 2);
    UNIT_WAIT(ctx, 0 == loom_engine_outstanding(ctx->engine));
    CHECK_RC(unit_am_send(ctx, ctx->peer, MARK_TAG, "mark", 4), LOOM_OK);
    unit_barrier(ctx);
}

/* ---- refusals ------------------------------------------------------------------------ */

static void refusals_parent(unit_ctx_t *ctx)
{
    size_t key_size = loom_key_size(ctx->engine);
    uint8_t msg[LOOM_OP_MSG_MAX], *mem = unit_alloc(4096);
    unsigned long refused = rail_stats(ctx)->refused;
    loom_wire_push_req_t req;
    loom_region_t *region;
    unsigned i;

    CHECK_RC(loom_mem_register(ctx->engine, mem, 4096, &region), LOOM_OK);
    ctx->log_quiet = true;
    memset(&req, 0, sizeof(req));
    loom_wire_hdr_fill(&req.hdr, LOOM_WIRE_PUSH_REQ, 0, sizeof(req) + key_size);
    req.requester     = loom_le64(ctx->name);
    req.dest_proc     = loom_le64(ctx->name);
    req.notify_proc   = loom_le64(ctx->name);
    req.dst_addr      = loom_le64((uint64_t)(uintptr_t)mem);
    req.length        = loom_le64(16);
    req.src_region_id = loom_le64(0xbad0000ull); /* no such region: refused */
    CHECK_RC(loom_key_pack(region, msg + sizeof(req), key_size), LOOM_OK);
    unit_barrier(ctx); /* the child's answers cannot leave now */
    for (i = 0; i < PUSHES; ++i) {
        req.request_id = loom_le64(0xfeed0000ull + i);
        memcpy(msg, &req, sizeof(req));
        raw_send(ctx, LOOM_WIRE_PUSH_REQ, NULL, msg, sizeof(req) + key_size);
    }
    send_msgs(ctx, 0, 1);
    unit_barrier(ctx);
    /* the answers that were kept come, refused here (we asked for none) */
    UNIT_WAIT(ctx, rail_stats(ctx)->refused - refused >= LOOM_REFUSALS_MAX);
    unit_barrier(ctx);
    unit_progress_for(ctx, 0.1);
    CHECK_UEQ(rail_stats(ctx)->refused - refused, LOOM_REFUSALS_MAX);
    loom_mem_deregister(region);
    free(mem);
}

static void refusals_child(unit_ctx_t *ctx)
{
    loom_peer_rail_t *prail = &ctx->peer->rails[ctx->peer->am_rail];
    unsigned long dropped = rail_stats(ctx)->over_limit;

    ctx->log_quiet = true;
    prail->usable = false; /* as a rail not connected both ways yet: nothing leaves */
    unit_barrier(ctx);
    check_msgs(ctx, 1);
    CHECK_MSG(loom_peer_outstanding(ctx->peer) <= LOOM_REFUSALS_MAX, "%zu answers queued "
              "to the peer", loom_peer_outstanding(ctx->peer));
    CHECK_UEQ(rail_stats(ctx)->over_limit - dropped, PUSHES - LOOM_REFUSALS_MAX);
    CHECK(unit_log_contains(ctx, "refusal of a push request"));
    prail->usable = true;
    loom_peer_mark_busy(ctx->peer);
    UNIT_WAIT(ctx, 0 == loom_peer_outstanding(ctx->peer));
    unit_barrier(ctx);
    unit_barrier(ctx);
}

/* ---- forged push requests --------------------------------------------------------------- */

/* The child's memory without remote read; the parent asks the child to push
 * it to the parent, naming the child as the requester (whose own memory it
 * may read) or as the process to answer: both refused, nothing lands. */
static void forged_push_parent(unit_ctx_t *ctx)
{
    size_t key_size = loom_key_size(ctx->engine);
    uint8_t msg[LOOM_OP_MSG_MAX], *mem = unit_alloc(4096), zero[4096] = {0};
    loom_wire_push_req_t req;
    unit_remote_t secret;
    loom_region_t *region;
    loom_wire_key_t fields;
    int i;

    CHECK_RC(loom_mem_register(ctx->engine, mem, 4096, &region), LOOM_OK);
    unit_recv_region(ctx, &secret);
    fields = loom_key_fields(secret.key);
    for (i = 0; i < 2; ++i) {
        memset(&req, 0, sizeof(req));
        loom_wire_hdr_fill(&req.hdr, LOOM_WIRE_PUSH_REQ, 0, sizeof(req) + key_size);
        req.request_id    = loom_le64(0xf00d + i);
        req.requester     = loom_le64(0 == i ? UNIT_CHILD_NAME : ctx->name);
        req.dest_proc     = loom_le64(ctx->name);
        req.notify_proc   = loom_le64(0 == i ? ctx->name : UNIT_CHILD_NAME);
        req.src_addr      = loom_le64(secret.base);
        req.dst_addr      = loom_le64((uint64_t)(uintptr_t)mem);
        req.length        = loom_le64(4096);
        req.src_region_id = fields.region_id;
        req.src_epoch     = fields.epoch;
        memcpy(msg, &req, sizeof(req));
        CHECK_RC(loom_key_pack(region, msg + sizeof(req), key_size), LOOM_OK);
        raw_send(ctx, LOOM_WIRE_PUSH_REQ, NULL, msg, sizeof(req) + key_size);
    }
    unit_barrier(ctx); /* the child saw both */
    unit_progress_for(ctx, 0.2);
    CHECK_MEM(mem, zero, sizeof(zero), "memory a forged push request would have read");
    loom_mem_deregister(region);
    free(mem);
}

static void forged_push_child(unit_ctx_t *ctx)
{
    uint8_t *secret = unit_alloc(4096);
    unsigned long refused = rail_stats(ctx)->refused;
    loom_region_t *region;

    ctx->log_quiet = true;
    memset(secret, 0x5e, 4096);
    CHECK_RC(loom_mem_register_access(ctx->engine, secret, 4096, LOOM_ACCESS_LOCAL_WRITE,
                                      &region), LOOM_OK);
    unit_send_region(ctx, region, secret, 4096);
    UNIT_WAIT(ctx, rail_stats(ctx)->refused - refused >= 2);
    CHECK(unit_log_contains(ctx, "names this process as its requester"));
    CHECK_UEQ(loom_engine_push_stats(ctx->engine)->served, 0);
    unit_barrier(ctx);
    loom_mem_deregister(region);
    free(secret);
}

/* ---- padded push requests --------------------------------------------------------------- */

#define PADDED     40
#define PADDING    1000
#define PAD_COUNTER 0x77

static void padded_parent(unit_ctx_t *ctx)
{
    size_t key_size = loom_key_size(ctx->engine);
    uint8_t msg[LOOM_OP_MSG_MAX + PADDING], *mem = unit_alloc(4096);
    loom_wire_push_req_t req;
    loom_region_t *region;
    size_t length;
    unsigned i;

    CHECK_RC(loom_mem_register(ctx->engine, mem, 4096, &region), LOOM_OK);
    ctx->log_quiet = true; /* the child's refusals answer requests we never made */
    memset(msg, 0xab, sizeof(msg));
    unit_barrier(ctx); /* the child counts from here */
    for (i = 0; i <= PADDED; ++i) {
        length = sizeof(req) + key_size + ((i < PADDED) ? PADDING : 0);
        memset(&req, 0, sizeof(req));
        loom_wire_hdr_fill(&req.hdr, LOOM_WIRE_PUSH_REQ, 0, length);
        req.request_id     = loom_le64(0xbeef0000ull + i);
        req.requester      = loom_le64(ctx->name);
        req.dest_proc      = loom_le64(ctx->name);
        req.notify_proc    = loom_le64(ctx->name);
        req.dst_addr       = loom_le64((uint64_t)(uintptr_t)mem);
        req.length         = loom_le64(16);
        req.src_region_id  = loom_le64(0xbad0000ull);
        req.cond_counter   = loom_le64(PAD_COUNTER);
        req.cond_threshold = loom_le64(1);
        memcpy(msg, &req, sizeof(req));
        CHECK_RC(loom_key_pack(region, msg + sizeof(req), key_size), LOOM_OK);
        raw_send(ctx, LOOM_WIRE_PUSH_REQ, NULL, msg, length);
    }
    unit_barrier(ctx);
    loom_mem_deregister(region);
    free(mem);
}

static void padded_child(unit_ctx_t *ctx)
{
    const loom_push_stats_t *stats = loom_engine_push_stats(ctx->engine);
    unsigned long refused = rail_stats(ctx)->refused;

    ctx->log_quiet = true;
    /* the count starts before the requests come: on a loaded machine the
     * set-up's progress took some in before a count taken later */
    unit_barrier(ctx);
    UNIT_WAIT(ctx, rail_stats(ctx)->refused - refused >= PADDED && 1 == stats->waiting);
    unit_progress_for(ctx, 0.1);
    CHECK_UEQ(rail_stats(ctx)->refused - refused, PADDED);
    CHECK_UEQ(stats->waiting, 1);
    CHECK(unit_log_contains(ctx, "does not hold what its notices and destination key need"));
    CHECK_UEQ(loom_counter_release(ctx->engine, PAD_COUNTER), 1);
    unit_barrier(ctx);
}

/* ---- a probe of the only rail ----------------------------------------------------------- */

static void probe_parent(unit_ctx_t *ctx)
{
    loom_wire_probe_t probe;

    ctx->log_quiet = true;
    send_msgs(ctx, 0, 3);
    memset(&probe, 0, sizeof(probe));
    loom_wire_hdr_fill(&probe.hdr, LOOM_WIRE_PROBE, 0, sizeof(probe));
    probe.sender       = loom_le64(ctx->name);
    probe.sender_epoch = loom_le32(ctx->engine->epoch);
    probe.rail_epoch   = loom_le32(ctx->peer->rails[0].rail_epoch + 1);
    probe.rail_index   = loom_le16(0);
    probe.kind         = LOOM_WIRE_PROBE_TRY;
    raw_send(ctx, LOOM_WIRE_PROBE, NULL, &probe, sizeof(probe));
    send_msgs(ctx, 3, 5);
    unit_barrier(ctx);
}

static void probe_child(unit_ctx_t *ctx)
{
    ctx->log_quiet = true;
    check_msgs(ctx, 8);
    CHECK(ctx->peer->rails[0].usable);
    CHECK_UEQ(loom_engine_rail_failed_peers(ctx->engine, 0), 0);
    CHECK(unit_log_contains(ctx, "refused a rail probe"));
    CHECK(!unit_log_contains(ctx, "failed"));
    unit_barrier(ctx);
}

/* ---- strangers' CONNECTs ---------------------------------------------------------------- */

#define STRANGER_NAME   0x5000000000ull
#define PASSES          4000
#define PASS_SLACK_NS   5000 /* a pass with them may take this much longer */

static void strangers_parent(unit_ctx_t *ctx)
{
    loom_wire_connect_t conn;
    unsigned i;

    ctx->log_quiet = true;
    unit_barrier(ctx); /* the child timed its passes */
    for (i = 0; i < LOOM_EARLY_CONNECTS_MAX; ++i) {
        memset(&conn, 0, sizeof(conn));
        loom_wire_hdr_fill(&conn.hdr, LOOM_WIRE_CONNECT, 0, sizeof(conn));
        conn.sender = loom_le64(STRANGER_NAME + i);
        raw_send(ctx, LOOM_WIRE_CONNECT, NULL, &conn, sizeof(conn));
    }
    unit_barrier(ctx);
    unit_barrier(ctx);
}

/* The fastest of PASSES progress passes: what a pass costs the engine
 * itself, whatever else the machine does. */
static uint64_t fastest_pass_ns(unit_ctx_t *ctx)
{
    uint64_t best = UINT64_MAX, start, took;
    int i;

    for (i = 0; i < PASSES; ++i) {
        start = loom_now_ns();
        (void)loom_engine_progress(ctx->engine);
        took = loom_now_ns() - start;
        best = (took < best) ? took : best;
    }
    return best;
}

static void strangers_child(unit_ctx_t *ctx)
{
    uint64_t before, after;

    ctx->log_quiet = true;
    before = fastest_pass_ns(ctx);
    unit_barrier(ctx);
    UNIT_WAIT(ctx, LOOM_EARLY_CONNECTS_MAX == loom_hash_count(&ctx->engine->early_connects) &&
                   0 == ctx->engine->early_unasked);
    unit_barrier(ctx);
    after = fastest_pass_ns(ctx);
    unit_note("%d strangers' CONNECTs kept; the fastest of %d progress passes took %llu ns, "
              "%llu ns before they came", LOOM_EARLY_CONNECTS_MAX, PASSES,
              (unsigned long long)after, (unsigned long long)before);
    CHECK_MSG(after <= 2 * before + PASS_SLACK_NS, "progress passes slowed from %llu to %llu "
              "ns by strangers' CONNECTs", (unsigned long long)before,
              (unsigned long long)after);
    unit_barrier(ctx);
}

int main(int argc, char **argv)
{
    unit_options_t options = {.configure = hostile_configure};
    int rc = 0;

#define RUN(_name, _p, _c) \
    ((argc < 2 || NULL != strstr(_name, argv[1])) ? unit_main(_name, &options, _p, _c) : 0)

    rc |= RUN("test_hostile forged", forged_parent, forged_child);
    rc |= RUN("test_hostile ahead", ahead_parent, ahead_child);
    rc |= RUN("test_hostile asks", asks_parent, asks_child);
    rc |= RUN("test_hostile refusals", refusals_parent, refusals_child);
    rc |= RUN("test_hostile forged push", forged_push_parent, forged_push_child);
    rc |= RUN("test_hostile padded push", padded_parent, padded_child);
    rc |= RUN("test_hostile probe", probe_parent, probe_child);
    rc |= RUN("test_hostile strangers", strangers_parent, strangers_child);
    return rc;
}
