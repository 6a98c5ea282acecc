/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * config.force_connect_to_ep: the rail is used in UCT's connect-to-ep model
 * (the one rc_verbs always needs).  tcp can also connect to interfaces, so the
 * endpoint addresses travel in CONNECT messages over an interface endpoint of
 * the same rail; the AM, put and get exchange below must then work, each
 * wait bounded.  A process that has not connected to the sender of a
 * CONNECT connects back on it.  When both first CONNECTs are lost, or the
 * answer that says "connected", CONNECTs are sent again (connect_retry.c)
 * and the rail comes up.
 */
#include "unit_harness.h"
#include "engine/loom_engine.h" /* a crafted CONNECT and the rail state */

#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#define LEN (1 << 20)

/* An AM with an op, tag 4: it may have to wait for the endpoint to be
 * connected; returns once it left. */
static void send_waiting(unit_ctx_t *ctx, const char *text, size_t length)
{
    struct iovec iov = {(void *)text, length};
    unit_op_t uop;
    int rc;

    unit_op_init(&uop);
    rc = loom_am_send(ctx->peer, 4, &iov, 1, &uop.op);
    CHECK_MSG(LOOM_OK == rc || LOOM_INPROGRESS == rc, "loom_am_send: %d (%s)", rc,
              loom_strerror(rc));
    if (LOOM_INPROGRESS == rc) {
        UNIT_WAIT(ctx, uop.calls > 0);
        CHECK_RC(uop.status, LOOM_OK);
    }
}

static void exchange(unit_ctx_t *ctx)
{
    static const size_t sizes[] = {1, 4096, LEN};
    uint8_t *src = unit_alloc(LEN), *dst = unit_alloc(LEN), *expect = unit_alloc(LEN);
    uint64_t other = ctx->is_parent ? UNIT_CHILD_NAME : UNIT_PARENT_NAME;
    const char *hello = ctx->is_parent ? "from parent" : "from child ";
    loom_region_t *src_reg, *dst_reg;
    unit_remote_t remote;
    unit_op_t uop;
    size_t i;

    send_waiting(ctx, hello, 11);
    UNIT_WAIT(ctx, ctx->msg_count >= 1);
    CHECK_EQ(ctx->msgs[0].tag, 4);
    CHECK_MEM(ctx->msgs[0].data, ctx->is_parent ? "from child " : "from parent", 11,
              "AM over a connect-to-ep rail");

    unit_fill(src, LEN, ctx->name);
    unit_fill(expect, LEN, other);
    CHECK_RC(loom_mem_register(ctx->engine, src, LEN, &src_reg), LOOM_OK);
    CHECK_RC(loom_mem_register(ctx->engine, dst, LEN, &dst_reg), LOOM_OK);
    unit_send_region(ctx, dst_reg, dst, LEN);
    unit_recv_region(ctx, &remote);
    unit_barrier(ctx);

    /* puts into the other's dst, checked there */
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        unit_op_init(&uop);
        CHECK_RC(loom_put(ctx->peer, &uop.op, src, src_reg, remote.base, remote.key,
                          remote.key_size, sizes[i]), LOOM_INPROGRESS);
        UNIT_WAIT(ctx, uop.calls > 0);
        CHECK_RC(uop.status, LOOM_OK);
        unit_barrier(ctx);
        CHECK_MEM(dst, expect, sizes[i], "put over a connect-to-ep rail");
        memset(dst, 0, LEN);
        unit_barrier(ctx);
    }
    /* gets of the other's src (registered as dst's neighbour: send it) */
    unit_send_region(ctx, src_reg, src, LEN);
    unit_recv_region(ctx, &remote);
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        unit_op_init(&uop);
        CHECK_RC(loom_get(ctx->peer, &uop.op, dst, dst_reg, remote.base, remote.key,
                          remote.key_size, sizes[i]), LOOM_INPROGRESS);
        UNIT_WAIT(ctx, uop.calls > 0);
        CHECK_RC(uop.status, LOOM_OK);
        CHECK_MEM(dst, expect, sizes[i], "get over a connect-to-ep rail");
        memset(dst, 0, LEN);
    }
    unit_barrier(ctx);
    loom_mem_deregister(src_reg);
    loom_mem_deregister(dst_reg);
    free(src);
    free(dst);
    free(expect);
}

/* The child takes the rail out of use; the parent then sends a CONNECT for
 * it that says "connected" (late, or from someone else): the rail stays
 * failed. */
static void late_connect(unit_ctx_t *ctx)
{
    loom_rail_t *rail = &ctx->engine->rails[0];
    uint8_t msg[LOOM_OP_MSG_MAX];
    loom_wire_connect_t conn;
    size_t length = sizeof(conn) + rail->attr.device_addr_len + rail->attr.ep_addr_len;
    unsigned long refused = rail->stats.refused;

    ctx->log_quiet = true;
    if (!ctx->is_parent) {
        loom_peer_fail_rail(ctx->peer, 0, UCS_ERR_CONNECTION_RESET);
        unit_barrier(ctx);
        UNIT_WAIT(ctx, rail->stats.refused > refused);
        unit_progress_for(ctx, 0.1);
        CHECK(ctx->peer->rails[0].failed);
        CHECK(!ctx->peer->rails[0].usable);
        unit_barrier(ctx);
        return;
    }
    unit_barrier(ctx);
    memset(msg, 0, sizeof(msg));
    memset(&conn, 0, sizeof(conn));
    loom_wire_hdr_fill(&conn.hdr, LOOM_WIRE_CONNECT, 0, length);
    conn.sender       = loom_le64(ctx->name);
    conn.sender_epoch = loom_le32(loom_engine_epoch(ctx->engine));
    conn.connected    = 1;
    conn.dev_addr_len = loom_le16((uint16_t)rail->attr.device_addr_len);
    conn.ep_addr_len  = loom_le16((uint16_t)rail->attr.ep_addr_len);
    memcpy(msg, &conn, sizeof(conn));
    CHECK_RC(loom_connect_msg_send(ctx->peer, 0, true, msg, length), LOOM_OK);
    UNIT_WAIT(ctx, 0 == loom_peer_outstanding(ctx->peer));
    unit_barrier(ctx);
}

static void body(unit_ctx_t *ctx)
{
    const loom_rail_info_t *info = loom_engine_rail_info(ctx->engine, 0);

    CHECK(NULL != info);
    CHECK_MSG(info->connect_to_ep, "force_connect_to_ep did not put rail %s:%s in the "
              "connect-to-ep model", info->tl_name, info->dev_name);

    /* Both ends came to the same result. */
    unit_send_u64(ctx, (uint64_t)(int64_t)ctx->connect_rc);
    CHECK_EQ((int64_t)unit_recv_u64(ctx), ctx->connect_rc);

    CHECK_MSG(LOOM_OK == ctx->connect_rc, "connect-to-ep peer connection failed: %d (%s)",
              ctx->connect_rc, loom_strerror(ctx->connect_rc));
    exchange(ctx);
    late_connect(ctx);
}

/* The parent has not connected to the child (the upper layer connects when
 * it first sends, and the parent only receives): the child's CONNECT must
 * make the parent connect back, or the child's first message never leaves
 * (it waits for the parent's endpoint address).  Then both ways work. */
static void waits_parent(unit_ctx_t *ctx)
{
    CHECK(NULL == ctx->peer);
    UNIT_WAIT(ctx, ctx->msg_count >= 1);
    CHECK_MSG(NULL != ctx->peer && LOOM_OK == ctx->connect_rc, "a message came, yet the "
              "parent is not connected (%d)", ctx->connect_rc);
    CHECK_EQ(ctx->msgs[0].tag, 4);
    CHECK_UEQ(ctx->msgs[0].length, 11);
    CHECK_MEM(ctx->msgs[0].data, "from child ", 11, "the child's first message");
    unit_msgs_clear(ctx);
    CHECK_RC(unit_am_send(ctx, ctx->peer, 4, "from parent", 11), LOOM_OK);
}

static void waits_child(unit_ctx_t *ctx)
{
    send_waiting(ctx, "from child ", 11);
    UNIT_WAIT(ctx, ctx->msg_count >= 1);
    CHECK_MEM(ctx->msgs[0].data, "from parent", 11, "the parent's answer");
}

/* A side loses the first CONNECT that reaches it (with drop_answer: the
 * first that says its sender connected); its handler passes the others to
 * loom's and, having dropped that one, puts loom's back. */
static unsigned connects_dropped;
static bool drop_answer;

static ucs_status_t drop_connect(void *arg, void *data, size_t length, unsigned flags)
{
    loom_rail_t *rail = arg;
    loom_wire_connect_t conn;

    memcpy(&conn, data, sizeof(conn)); /* a CONNECT is longer than its header */
    if (drop_answer && !conn.connected) {
        return loom_connect_recv(arg, data, length, flags);
    }
    ++connects_dropped;
    CHECK(UCS_OK == uct_iface_set_am_handler(rail->boot_iface, LOOM_WIRE_CONNECT,
                                             loom_connect_recv, rail, 0));
    return UCS_OK;
}

static void drop_connect_install(unit_ctx_t *ctx, bool answer)
{
    loom_rail_t *rail = &ctx->engine->rails[0];

    drop_answer      = answer;
    connects_dropped = 0;
    CHECK(UCS_OK == uct_iface_set_am_handler(rail->boot_iface, LOOM_WIRE_CONNECT,
                                             drop_connect, rail, 0));
}

/* Both sides lose the first CONNECT: neither hears of the other. */
static void lose_first_connect(unit_ctx_t *ctx)
{
    drop_connect_install(ctx, false);
}

/* The child loses the parent's answer that says it connected, after which
 * the parent, connected and having told so, has nothing more to say unless
 * asked again.  (Not simply the second CONNECT: both of a side's may wait
 * in its queue, and the later one, queued in front, leaves first.) */
static void lose_answer(unit_ctx_t *ctx)
{
    drop_answer      = true;
    connects_dropped = 0; /* the parent drops none */
    if (!ctx->is_parent) {
        drop_connect_install(ctx, true);
    }
}

static void lost_connects(unit_ctx_t *ctx)
{
    unsigned long retries;

    CHECK_MSG(LOOM_OK == ctx->connect_rc, "connect-to-ep peer connection failed: %d (%s)",
              ctx->connect_rc, loom_strerror(ctx->connect_rc));
    send_waiting(ctx, ctx->is_parent ? "from parent" : "from child ", 11);
    UNIT_WAIT(ctx, ctx->msg_count >= 1);
    CHECK_MEM(ctx->msgs[0].data, ctx->is_parent ? "from child " : "from parent", 11,
              "a message once the CONNECTs were sent again");
    CHECK_UEQ(connects_dropped, ((ctx->is_parent && drop_answer) ? 0u : 1u));
    /* whichever side sends again first gets the answer that connects both */
    retries = ctx->engine->rails[0].stats.connect_retries;
    unit_send_u64(ctx, retries);
    retries += unit_recv_u64(ctx);
    CHECK_MSG(retries >= 1, "the rail came up without a CONNECT sent again");
    unit_note("%s lost; up after %lu sent again",
              drop_answer ? "the answer that says connected" : "the first CONNECT", retries);
    unit_barrier(ctx);
}

/* A control-channel barrier that runs no progress meanwhile. */
static void barrier_noprogress(unit_ctx_t *ctx)
{
    uint64_t token;

    unit_send_u64(ctx, 1);
    unit_recv_noprogress(ctx, &token, sizeof(token));
}

/* The port a tcp interface listens on: UCT 1.13's tcp interface address. */
static unsigned iface_port(unit_ctx_t *ctx)
{
    uint16_t port;

    memcpy(&port, ctx->engine->rails[0].iface_addr, sizeof(port));
    return ntohs(port);
}

/*
 * Both sides renew their wireup endpoints at once, each connecting before
 * it heard of the other, and only the listener then runs progress.  The
 * listener's interface address being the higher one, UCT moves the
 * listener's endpoint onto the connection the renewer made (a simultaneous
 * connection) while the renewer's own endpoint still waits for its answer.
 * The renewer renews again, which closes that connection under the
 * listener's endpoint.  The listener's next CONNECT finds its wireup
 * endpoint failed: that fails no rail, and the CONNECT after it goes on a
 * fresh one (the fresh-clone CI saw a CONNECT sent again under load reset
 * the peer's wireup endpoint, whose failure then failed the only rail).
 */
static void wireup_reset(unit_ctx_t *ctx)
{
    loom_peer_rail_t *prail;
    unsigned port = iface_port(ctx), other;
    bool renewer;

    CHECK_MSG(LOOM_OK == ctx->connect_rc, "connect-to-ep peer connection failed: %d (%s)",
              ctx->connect_rc, loom_strerror(ctx->connect_rc));
    CHECK(0 == strcmp(ctx->engine->rails[0].info.tl_name, "tcp"));
    send_waiting(ctx, ctx->is_parent ? "from parent" : "from child ", 11);
    UNIT_WAIT(ctx, ctx->msg_count >= 1);
    unit_msgs_clear(ctx);
    prail = &ctx->peer->rails[0];
    unit_send_u64(ctx, port);
    other = (unsigned)unit_recv_u64(ctx);
    CHECK(port != other);
    renewer = port < other;

    loom_peer_boot_ep_renew(ctx->peer, 0);
    barrier_noprogress(ctx);
    if (!renewer) {
        unit_progress_for(ctx, 0.3);
    }
    barrier_noprogress(ctx);
    if (renewer) {
        loom_peer_boot_ep_renew(ctx->peer, 0);
    }
    unit_barrier(ctx);
    if (!renewer) {
        unit_progress_for(ctx, 0.2);
        CHECK_RC(loom_connect_send(ctx->peer, 0, true), LOOM_OK);
        UNIT_WAIT(ctx, 0 == loom_peer_outstanding(ctx->peer));
        CHECK_UEQ(ctx->engine->rails[0].stats.wireup_failures, 1);
        CHECK_RC(loom_connect_send(ctx->peer, 0, true), LOOM_OK);
        UNIT_WAIT(ctx, 0 == loom_peer_outstanding(ctx->peer));
        CHECK_UEQ(ctx->engine->rails[0].stats.wireup_failures, 1);
    }
    unit_barrier(ctx);
    CHECK_MSG(!prail->failed && prail->usable, "the rail failed with its wireup endpoint");
    send_waiting(ctx, ctx->is_parent ? "from parent" : "from child ", 11);
    UNIT_WAIT(ctx, ctx->msg_count >= 1);
    CHECK_MEM(ctx->msgs[0].data, ctx->is_parent ? "from child " : "from parent", 11,
              "a message after the wireup endpoint was reset");
    unit_barrier(ctx);
}

int main(void)
{
    unit_options_t options = {.force_connect_to_ep = true};
    unit_options_t waits = {.force_connect_to_ep = true, .parent_waits = true};
    unit_options_t lossy = {.force_connect_to_ep = true, .created = lose_first_connect};
    unit_options_t no_answer = {.force_connect_to_ep = true, .created = lose_answer};
    int rc = unit_main("connect_ep", &options, body, body);

    rc |= unit_main("connect_ep parent connects on the child's CONNECT", &waits,
                    waits_parent, waits_child);
    rc |= unit_main("connect_ep both first CONNECTs lost", &lossy, lost_connects,
                    lost_connects);
    rc |= unit_main("connect_ep the answer that says connected lost", &no_answer,
                    lost_connects, lost_connects);
    return rc | unit_main("connect_ep a wireup endpoint reset by the peer", &options,
                          wireup_reset, wireup_reset);
}
