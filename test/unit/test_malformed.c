/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Malformed wire messages are refused, counted, and do no harm: the parent
 * sends raw bytes with the engine's internal senders (loom_am_issue with any
 * AM id, loom_ctrl_send as the engine's own control path); after each one it
 * sends a normal message, and the child checks that exactly that normal
 * message arrived and that its refused counter went up by the expected count.
 * Some refusals are answered with a PUSH_DONE for a request the parent never
 * made, which the parent must refuse in turn.  At the end a get and AMs still
 * work both ways.
 */
#include "unit_harness.h"
#include "engine/loom_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARK_TAG   0xa5
#define NAME_LEN   96
#define CASE_END   UINT64_MAX
#define UNKNOWN_PROC 0x7777ull

typedef struct mal_case {
    char     name[NAME_LEN];
    uint8_t  am_id;
    bool     via_ctrl;      /* loom_ctrl_send instead of loom_am_issue */
    size_t   length;
    uint8_t  buf[1024];
    uint64_t recv_refused;  /* expected growth of the child's refused counter */
    uint64_t send_refused;  /* expected growth of the parent's (PUSH_DONE back) */
} mal_case_t;

typedef struct mal_env {
    uint64_t name;          /* the parent's */
    uint32_t epoch;         /* the parent's */
    uint8_t  key[LOOM_OP_MSG_MAX]; /* a valid key of the parent */
    size_t   key_size;
    uint64_t dst_addr;
} mal_env_t;

static void hdr_put(uint8_t *buf, uint8_t version, uint8_t type, uint32_t length)
{
    loom_wire_hdr_t hdr;

    memset(&hdr, 0, sizeof(hdr));
    hdr.version = version;
    hdr.type    = type;
    hdr.length  = loom_le32(length);
    memcpy(buf, &hdr, sizeof(hdr));
}

static void mal_set(mal_case_t *c, const char *name, uint8_t am_id, size_t length,
                    uint64_t recv_refused, uint64_t send_refused)
{
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->am_id        = am_id;
    c->length       = length;
    c->recv_refused = recv_refused;
    c->send_refused = send_refused;
}

/* A SEND message of payload bytes, correct unless the caller changes it. */
static void mal_send(mal_case_t *c, const char *name, size_t payload)
{
    mal_set(c, name, LOOM_WIRE_SEND, sizeof(loom_wire_hdr_t) + payload, 1, 0);
    hdr_put(c->buf, LOOM_WIRE_VERSION, LOOM_WIRE_SEND, (uint32_t)payload);
    memset(c->buf + sizeof(loom_wire_hdr_t), 'x', payload);
}

/* A push request with the parent's valid destination key: refusals come from
 * the changes the caller makes. */
static void mal_push_req(mal_case_t *c, const mal_env_t *env, const char *name,
                         uint64_t request_id)
{
    loom_wire_push_req_t req;
    size_t length = sizeof(req) + env->key_size;

    memset(&req, 0, sizeof(req));
    hdr_put((uint8_t *)&req.hdr, LOOM_WIRE_VERSION, LOOM_WIRE_PUSH_REQ,
            (uint32_t)(length - sizeof(loom_wire_hdr_t)));
    req.request_id    = loom_le64(request_id);
    req.requester     = loom_le64(env->name);
    req.dest_proc     = loom_le64(env->name);
    req.notify_proc   = loom_le64(env->name);
    req.src_addr      = loom_le64(0x1000);
    req.dst_addr      = loom_le64(env->dst_addr);
    req.length        = loom_le64(16);
    req.src_region_id = loom_le64(1);
    req.src_epoch     = 0;
    memcpy(c->buf, &req, sizeof(req));
    memcpy(c->buf + sizeof(req), env->key, env->key_size);
    mal_set(c, name, LOOM_WIRE_PUSH_REQ, length, 1, 0);
}

static void mal_resize(mal_case_t *c, size_t length)
{
    c->length = length;
    hdr_put(c->buf, c->buf[0], c->buf[1], (uint32_t)(length - sizeof(loom_wire_hdr_t)));
}

static void mal_connect(mal_case_t *c, const mal_env_t *env, const char *name,
                        uint16_t dev_len, uint16_t ep_len, size_t body)
{
    loom_wire_connect_t conn;
    size_t length = sizeof(conn) + body;

    memset(&conn, 0, sizeof(conn));
    hdr_put((uint8_t *)&conn.hdr, LOOM_WIRE_VERSION, LOOM_WIRE_CONNECT,
            (uint32_t)(length - sizeof(loom_wire_hdr_t)));
    conn.sender       = loom_le64(env->name);
    conn.sender_epoch = loom_le32(env->epoch);
    conn.rail_index   = 0;
    conn.connected    = 1;
    conn.dev_addr_len = loom_le16(dev_len);
    conn.ep_addr_len  = loom_le16(ep_len);
    memcpy(c->buf, &conn, sizeof(conn));
    memset(c->buf + sizeof(conn), 0x33, body);
    mal_set(c, name, LOOM_WIRE_CONNECT, length, 1, 0);
}

static void key_set16(uint8_t *key, size_t offset, uint16_t value)
{
    value = loom_le16(value);
    memcpy(key + offset, &value, sizeof(value));
}

/* Case i of the list; false past the end. */
static bool mal_build(size_t i, const mal_env_t *env, mal_case_t *c)
{
    size_t H = sizeof(loom_wire_hdr_t), key_at = sizeof(loom_wire_push_req_t);
    loom_wire_push_done_t done;
    uint64_t req_id = 0xdead0000ull + i;

    memset(c, 0, sizeof(*c));
    switch (i) {
    /* -- the common header, on the SEND id -- */
    case 0:  mal_set(c, "empty message", LOOM_WIRE_SEND, 0, 1, 0); break;
    case 1:  mal_send(c, "7 bytes: shorter than the header", 0);
             c->length = H - 1; break;
    case 2:  mal_send(c, "wire version 0", 10); c->buf[0] = 0; break;
    case 3:  mal_send(c, "wire version 2", 10); c->buf[0] = LOOM_WIRE_VERSION + 1; break;
    case 4:  mal_send(c, "wire version 255", 0); c->buf[0] = 0xff; break;
    case 5:  mal_send(c, "type PUSH_REQ on the SEND id", 10);
             c->buf[1] = LOOM_WIRE_PUSH_REQ; break;
    case 6:  mal_send(c, "type 0 on the SEND id", 10); c->buf[1] = 0; break;
    case 7:  mal_send(c, "length field one too big", 10);
             hdr_put(c->buf, LOOM_WIRE_VERSION, LOOM_WIRE_SEND, 11); break;
    case 8:  mal_send(c, "length field one too small", 10);
             hdr_put(c->buf, LOOM_WIRE_VERSION, LOOM_WIRE_SEND, 9); break;
    case 9:  mal_send(c, "length field 0xffffffff", 10);
             hdr_put(c->buf, LOOM_WIRE_VERSION, LOOM_WIRE_SEND, 0xffffffffu); break;
    case 10: mal_send(c, "length field 0 with a payload", 10);
             hdr_put(c->buf, LOOM_WIRE_VERSION, LOOM_WIRE_SEND, 0); break;
    /* -- types on the wrong ids -- */
    case 11: mal_push_req(c, env, "a PUSH_REQ on the PUSH_DONE id", req_id);
             c->am_id = LOOM_WIRE_PUSH_DONE; break;
    case 12: mal_send(c, "a SEND on the PUSH_REQ id", 200);
             c->am_id = LOOM_WIRE_PUSH_REQ; break;
    case 13: mal_send(c, "a SEND on the CONNECT id", 200);
             c->am_id = LOOM_WIRE_CONNECT; break;
    /* -- push requests -- */
    case 14: mal_push_req(c, env, "PUSH_REQ without its key", req_id);
             mal_resize(c, key_at); break;
    case 15: mal_push_req(c, env, "PUSH_REQ with a truncated key", req_id);
             mal_resize(c, key_at + sizeof(loom_wire_key_t));
             c->send_refused = 1; /* refused with a PUSH_DONE we never asked for */
             break;
    case 16: mal_push_req(c, env, "PUSH_REQ whose key misses its last byte", req_id);
             mal_resize(c, c->length - 1);
             c->send_refused = 1; break;
    case 17: mal_push_req(c, env, "PUSH_REQ whose key has rail_count 200", req_id);
             key_set16(c->buf + key_at, offsetof(loom_wire_key_t, rail_count), 200);
             c->send_refused = 1; break;
    case 18: mal_push_req(c, env, "PUSH_REQ whose key has region id 0", req_id);
             memset(c->buf + key_at, 0, sizeof(uint64_t));
             c->send_refused = 1; break;
    case 19: mal_push_req(c, env, "PUSH_REQ naming an unconnected process to notify",
                          req_id);
             {
                 uint64_t who = loom_le64(UNKNOWN_PROC);
                 memcpy(c->buf + offsetof(loom_wire_push_req_t, notify_proc), &who, 8);
             }
             break;
    case 20: mal_push_req(c, env, "PUSH_REQ naming an unconnected destination", req_id);
             {
                 uint64_t who = loom_le64(UNKNOWN_PROC);
                 memcpy(c->buf + offsetof(loom_wire_push_req_t, dest_proc), &who, 8);
             }
             c->send_refused = 1; break;
    case 21: mal_push_req(c, env, "PUSH_REQ with a length field one too big", req_id);
             hdr_put(c->buf, LOOM_WIRE_VERSION, LOOM_WIRE_PUSH_REQ,
                     (uint32_t)(c->length - H + 1));
             break;
    /* -- push completions -- */
    case 22:
    case 23:
        memset(&done, 0, sizeof(done));
        hdr_put((uint8_t *)&done.hdr, LOOM_WIRE_VERSION, LOOM_WIRE_PUSH_DONE,
                sizeof(done) - H);
        done.request_id = loom_le64(req_id);
        done.length     = loom_le64(16);
        done.status     = loom_le32(LOOM_WIRE_OK);
        memcpy(c->buf, &done, sizeof(done));
        if (22 == i) {
            mal_set(c, "PUSH_DONE for an unknown request id (loom_ctrl_send)",
                    LOOM_WIRE_PUSH_DONE, sizeof(done), 1, 0);
            c->via_ctrl = true;
        } else {
            mal_set(c, "PUSH_DONE for an unknown request id, status error",
                    LOOM_WIRE_PUSH_DONE, sizeof(done), 1, 0);
            done.status = loom_le32(LOOM_WIRE_STALE_KEY);
            memcpy(c->buf, &done, sizeof(done));
        }
        break;
    case 24:
        memset(&done, 0, sizeof(done));
        hdr_put((uint8_t *)&done.hdr, LOOM_WIRE_VERSION, LOOM_WIRE_PUSH_DONE, 8);
        memcpy(c->buf, &done, H + 8);
        mal_set(c, "PUSH_DONE shorter than its structure", LOOM_WIRE_PUSH_DONE, H + 8,
                1, 0);
        break;
    /* -- connect messages -- */
    case 25: mal_connect(c, env, "CONNECT shorter than its structure", 0, 0, 0);
             mal_resize(c, sizeof(loom_wire_connect_t) - 4); break;
    case 26: mal_connect(c, env, "CONNECT whose address lengths exceed the message",
                         10, 10, 5); break;
    case 27: mal_connect(c, env, "CONNECT whose address lengths fall short",
                         2, 2, 40); break;
    case 28: mal_connect(c, env, "CONNECT longer than LOOM_OP_MSG_MAX", 300, 300, 600);
             break;
    case 29: mal_connect(c, env, "CONNECT for rail index 200", 4, 4, 8);
             key_set16(c->buf, offsetof(loom_wire_connect_t, rail_index), 200); break;
    case 30: mal_connect(c, env, "CONNECT for rail index 5 (not a rail)", 4, 4, 8);
             key_set16(c->buf, offsetof(loom_wire_connect_t, rail_index), 5); break;
    case 31: mal_connect(c, env, "CONNECT from an earlier incarnation of the peer",
                         4, 4, 8);
             {
                 uint32_t epoch = loom_le32(env->epoch + 1);
                 memcpy(c->buf + offsetof(loom_wire_connect_t, sender_epoch), &epoch, 4);
             }
             break;
    case 32: mal_connect(c, env, "CONNECT for a rail that connects to interfaces",
                         4, 4, 8); break;
    case 33: /* kept for a peer that may connect later: not a refusal */
             mal_connect(c, env, "CONNECT from a process not connected yet", 4, 4, 8);
             {
                 uint64_t who = loom_le64(UNKNOWN_PROC);
                 memcpy(c->buf + offsetof(loom_wire_connect_t, sender), &who, 8);
             }
             c->recv_refused = 0; break;
    case 34: mal_build(33, env, c);
             snprintf(c->name, sizeof(c->name), "the same early CONNECT again");
             break;
    default:
        return false;
    }
    return true;
}

/* ---- parent: sends ---------------------------------------------------------------- */

static void send_marker(unit_ctx_t *ctx, uint32_t index)
{
    struct iovec iov = {&index, sizeof(index)};
    double deadline = unit_now() + UNIT_TIMEOUT;
    int rc;

    while (LOOM_ERR_AGAIN == (rc = loom_am_send(ctx->peer, MARK_TAG, &iov, 1, NULL))) {
        unit_progress(ctx);
        CHECK(unit_now() < deadline);
    }
    CHECK_RC(rc, LOOM_OK);
}

static void inject(unit_ctx_t *ctx, const mal_case_t *c)
{
    double deadline = unit_now() + UNIT_TIMEOUT;
    struct iovec iov = {(void *)c->buf, c->length};
    int rc;

    if (c->via_ctrl) {
        CHECK_RC(loom_ctrl_send(ctx->peer, ctx->peer->am_rail, c->buf, c->length), LOOM_OK);
        UNIT_WAIT(ctx, 0 == loom_peer_outstanding(ctx->peer));
        return;
    }
    /* Nothing queued to this peer, so sending directly keeps the order. */
    CHECK_UEQ(loom_peer_outstanding(ctx->peer), 0);
    while (LOOM_ERR_AGAIN == (rc = loom_am_issue(ctx->peer, ctx->peer->am_rail, c->am_id,
                                                 NULL, &iov, 1))) {
        unit_progress(ctx);
        CHECK_MSG(unit_now() < deadline, "%s: could not be sent", c->name);
    }
    CHECK_MSG(LOOM_OK == rc, "%s: loom_am_issue returned %d (%s)", c->name, rc,
              loom_strerror(rc));
}

static void parent_body(unit_ctx_t *ctx)
{
    loom_rail_stats_t *stats = loom_engine_rail_stats(ctx->engine, 0);
    uint8_t *mem = unit_alloc(4096);
    loom_region_t *region;
    mal_env_t env;
    mal_case_t c;
    size_t i;

    memset(&env, 0, sizeof(env));
    env.name     = ctx->name;
    env.epoch    = loom_engine_epoch(ctx->engine);
    env.key_size = loom_key_size(ctx->engine);
    env.dst_addr = (uint64_t)(uintptr_t)mem;
    CHECK_RC(loom_mem_register(ctx->engine, mem, 4096, &region), LOOM_OK);
    CHECK_RC(loom_key_pack(region, env.key, env.key_size), LOOM_OK);
    ctx->log_quiet = true;

    for (i = 0; mal_build(i, &env, &c); ++i) {
        unsigned long refused = stats->refused;

        unit_send_u64(ctx, i);
        unit_send(ctx, &c, sizeof(c));
        CHECK_UEQ(unit_recv_u64(ctx), i); /* the child took its counters */
        inject(ctx, &c);
        send_marker(ctx, (uint32_t)i);
        CHECK_UEQ(unit_recv_u64(ctx), i); /* the child checked it */
        if (c.send_refused > 0) {
            UNIT_WAIT(ctx, stats->refused >= refused + c.send_refused);
        }
        unit_progress_for(ctx, 0.02);
        CHECK_MSG(stats->refused == refused + c.send_refused, "%s: our refused counter "
                  "went from %lu to %lu, expected +%llu", c.name, refused, stats->refused,
                  (unsigned long long)c.send_refused);
        CHECK_MEM(mem, (uint8_t[4096]){0}, 4096, "memory named in the push requests");
        CHECK_UEQ(ctx->msg_count, 0);
    }
    unit_send_u64(ctx, CASE_END);
    unit_note("%zu malformed messages refused", i);
    ctx->log_quiet = false;
    unit_barrier(ctx);
    loom_mem_deregister(region);
    free(mem);
}

/* ---- child: receives and checks ------------------------------------------------------ */

static void child_body(unit_ctx_t *ctx)
{
    loom_rail_stats_t *stats = loom_engine_rail_stats(ctx->engine, 0);
    uint64_t i;
    mal_case_t c;

    ctx->log_quiet = true;
    while (CASE_END != (i = unit_recv_u64(ctx))) {
        unsigned long refused, received;
        uint32_t mark;

        unit_recv(ctx, &c, sizeof(c));
        /* Counters before the parent sends the bad message: */
        refused  = stats->refused;
        received = stats->messages_received;
        CHECK_UEQ(ctx->msg_count, 0);
        unit_send_u64(ctx, i);
        UNIT_WAIT(ctx, ctx->msg_count >= 1);
        /* The marker came after the bad message on the same connection. */
        CHECK_MSG(1 == ctx->msg_count && MARK_TAG == ctx->msgs[0].tag &&
                  sizeof(mark) == ctx->msgs[0].length,
                  "%s: %zu messages reached the upper layer, expected only the marker "
                  "(first: tag %#x, %zu bytes)", c.name, ctx->msg_count, ctx->msgs[0].tag,
                  ctx->msgs[0].length);
        memcpy(&mark, ctx->msgs[0].data, sizeof(mark));
        CHECK_UEQ(mark, i);
        CHECK_MSG(stats->refused == refused + c.recv_refused, "%s: refused counter went "
                  "from %lu to %lu, expected +%llu", c.name, refused, stats->refused,
                  (unsigned long long)c.recv_refused);
        CHECK_UEQ(stats->messages_received, received + 1);
        CHECK_UEQ(loom_engine_outstanding(ctx->engine), 0);
        unit_msgs_clear(ctx);
        unit_send_u64(ctx, i);
    }
    CHECK(unit_log_contains(ctx, "refused a message on AM id"));
    CHECK(unit_log_contains(ctx, "refused a push request"));
    CHECK(unit_log_contains(ctx, "refused a connect message"));
    ctx->log_quiet = false;
    unit_barrier(ctx);
}

/* ---- afterwards: both directions still work ---------------------------------------- */

static void still_working(unit_ctx_t *ctx)
{
    uint8_t *src = unit_alloc(100000), *dst = unit_alloc(100000);
    uint8_t *expect = unit_alloc(100000);
    loom_region_t *src_reg, *dst_reg;
    unsigned long refused = loom_engine_rail_stats(ctx->engine, 0)->refused;
    struct iovec iov = {(void *)"still here", 10};
    uint64_t other = ctx->is_parent ? UNIT_CHILD_NAME : UNIT_PARENT_NAME;
    unit_remote_t remote;
    unit_op_t uop;

    unit_fill(src, 100000, ctx->name);
    unit_fill(expect, 100000, other);
    CHECK_RC(loom_mem_register(ctx->engine, src, 100000, &src_reg), LOOM_OK);
    CHECK_RC(loom_mem_register(ctx->engine, dst, 100000, &dst_reg), LOOM_OK);
    unit_send_region(ctx, src_reg, src, 100000);
    unit_recv_region(ctx, &remote);
    unit_op_init(&uop);
    CHECK_RC(loom_get(ctx->peer, &uop.op, dst, dst_reg, remote.base, remote.key,
                      remote.key_size, 100000), LOOM_INPROGRESS);
    UNIT_WAIT(ctx, uop.calls > 0);
    CHECK_RC(uop.status, LOOM_OK);
    CHECK_MEM(dst, expect, 100000, "get after the malformed messages");
    CHECK_RC(unit_am_send(ctx, ctx->peer, 3, iov.iov_base, iov.iov_len), LOOM_OK);
    UNIT_WAIT(ctx, ctx->msg_count >= 1);
    CHECK_EQ(ctx->msgs[0].tag, 3);
    CHECK_MEM(ctx->msgs[0].data, "still here", 10, "AM after the malformed messages");
    CHECK_UEQ(loom_engine_rail_stats(ctx->engine, 0)->refused, refused);
    unit_barrier(ctx);
    loom_mem_deregister(src_reg);
    loom_mem_deregister(dst_reg);
    free(src);
    free(dst);
    free(expect);
}

static void parent_main(unit_ctx_t *ctx)
{
    parent_body(ctx);
    still_working(ctx);
}

static void child_main(unit_ctx_t *ctx)
{
    child_body(ctx);
    still_working(ctx);
}

int main(void)
{
    return unit_main("malformed", NULL, parent_main, child_main);
}
