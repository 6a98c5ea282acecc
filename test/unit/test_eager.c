/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Eager RDMA rings: growth in phases (several at once), order kept between
 * ring and AM messages, both sides growing at once, messages in flight while
 * a ring is replaced, a growth asked for while a shrink is under way, a peer
 * that does not answer in time, malformed and stale requests refused with
 * the connection still working, idle shrink, the memory budget (refusal and
 * least-recently-used shrink), a write into a ring the receiver freed
 * (refused: tcp ring writes are checked writes), a wait about to sleep asking
 * its writer to drop the ring, slots doubling for a stream that finds
 * the ring full and going back once it stops, and a phase change after every message; two
 * of them again with endpoints connected endpoint to endpoint (rc_verbs's
 * way).
 * Every message is checked byte for byte and in order by its receiver.  The
 * races are driven by holding one side's progress while the other acts (a
 * TCP put only lands while its target progresses).
 */
#include "unit_harness.h"
#include "engine/loom_engine.h" /* crafted control messages for the refusal cases */

#include <stdlib.h>
#include <string.h>

#define TAG 7

static unsigned opt_budget_parent, opt_budget_child, opt_idle_ms, opt_start_slots;
static unsigned opt_ack_timeout_ms = 300;
static bool opt_cycle;

static void eager_configure(loom_engine_config_t *config, bool is_parent)
{
    static const loom_eager_phase_t phases[] = {{128, 8, 0}, {1024, 8, 0}, {8192, 4, 0}};

    config->eager_mode             = LOOM_EAGER_ON; /* the unit tests only have tcp */
    config->eager_phase_count      = 3;
    memcpy(config->eager_phases, phases, sizeof(phases));
    config->eager_msgs_before_ring = 4;
    config->eager_idle_ms          = opt_idle_ms;
    config->eager_budget           = is_parent ? opt_budget_parent : opt_budget_child;
    config->eager_ack_timeout_ms   = opt_ack_timeout_ms;
    config->eager_cycle            = opt_cycle;
    config->eager_start_slots      = opt_start_slots;
    config->tcp_seg_size           = 65536; /* as the component sets it: 20000 B messages */
}

/* Thresholds of the phases above: 97, 993 and 8161 bytes. */
static const size_t pattern[] = {8, 50, 97, 98, 500, 993, 994, 4000, 8161, 8162, 20000, 0};
#define PATTERN_LEN (sizeof(pattern) / sizeof(pattern[0]))

static size_t size_of(unsigned stream, unsigned i)
{
    if (4 == stream && i < 6) {
        return 500; /* written into the phase 2 ring by hand */
    }
    if (20 == stream) {
        return 50; /* phase 1 only */
    }
    if (10 == stream) {
        return pattern[i % 6]; /* no larger than phase 2 takes */
    }
    if (stream >= 100) { /* random sizes, the same in both processes */
        uint64_t x = (uint64_t)stream * 6364136223846793005ull + i * 1442695040888963407ull;
        x ^= x >> 29;
        return (size_t)(x % 9000);
    }
    return pattern[(i + stream) % PATTERN_LEN];
}

static void fill_msg(uint8_t *buf, unsigned stream, unsigned i, size_t size)
{
    uint32_t id[2] = {stream, i};

    unit_fill(buf, size, (uint64_t)stream << 32 | i);
    memcpy(buf, id, size < sizeof(id) ? size : sizeof(id));
}

static bool opt_paced = true; /* after each message, progress until no request is under way */

static void send_msgs(unit_ctx_t *ctx, unsigned stream, unsigned first, unsigned count)
{
    uint8_t *buf = unit_alloc(32768);
    unsigned i, spins;

    for (i = first; i < first + count; ++i) {
        size_t size = size_of(stream, i);
        fill_msg(buf, stream, i, size);
        CHECK_RC(unit_am_send(ctx, ctx->peer, TAG, buf, size), LOOM_OK);
        for (spins = 0; opt_paced && ctx->peer->eager.tx.pending && spins < 100000; ++spins) {
            unit_progress(ctx);
        }
    }
    free(buf);
}

/* Wait for count messages of the stream, check them in order, forget them. */
static void check_msgs(unit_ctx_t *ctx, unsigned stream, unsigned first, unsigned count)
{
    uint8_t *expect = unit_alloc(32768);
    unsigned i;

    UNIT_WAIT(ctx, ctx->msg_count >= count);
    CHECK_UEQ(ctx->msg_count, count);
    for (i = 0; i < count; ++i) {
        size_t size = size_of(stream, first + i);
        char what[64];

        fill_msg(expect, stream, first + i, size);
        snprintf(what, sizeof(what), "message %u of stream %u", first + i, stream);
        CHECK_MSG(ctx->msgs[i].tag == TAG, "%s: tag %u", what, ctx->msgs[i].tag);
        CHECK_MSG(ctx->msgs[i].length == size, "%s: %zu bytes, expected %zu (order lost?)",
                  what, ctx->msgs[i].length, size);
        CHECK_MEM(ctx->msgs[i].data, expect, size, what);
    }
    unit_msgs_clear(ctx);
    free(expect);
}

static const loom_eager_stats_t *stats(unit_ctx_t *ctx)
{
    return loom_engine_eager_stats(ctx->engine);
}

static void wait_tx_phase(unit_ctx_t *ctx, unsigned phase)
{
    UNIT_WAIT(ctx, loom_eager_tx_phase(ctx->peer) == phase && !ctx->peer->eager.tx.pending);
}

/* ---- growth, one direction ----------------------------------------------------- */

/* The data-vector rule at phase 3 (threshold 8161) with a 16-byte header. */
static void check_fit(unit_ctx_t *ctx)
{
    static char buf[1];
    struct iovec fits[3]  = {{buf, 100}, {buf, 200}, {buf, 300}};
    struct iovec later[3] = {{buf, 100}, {buf, 200}, {buf, 8000}};
    struct iovec first[2] = {{buf, 9000}, {buf, 10}};

    CHECK_UEQ(loom_eager_fit(ctx->peer, 16, fits, 3), 600);   /* all of it */
    CHECK_UEQ(loom_eager_fit(ctx->peer, 16, later, 3), 300);  /* the prefix that fits */
    CHECK_UEQ(loom_eager_fit(ctx->peer, 16, first, 2), 9010); /* whole: the ring grows */
}

static void grow_parent(unit_ctx_t *ctx)
{
    send_msgs(ctx, 1, 0, 220);
    wait_tx_phase(ctx, 3);
    check_fit(ctx);
    CHECK(stats(ctx)->enlargements >= 1);
    CHECK(stats(ctx)->ring_sent > 0);
    CHECK_UEQ(stats(ctx)->registered_bytes, 4 * 8192); /* our send slots */
    unit_barrier(ctx);
    /* at phase 3 every message that fits goes by the ring */
    send_msgs(ctx, 1, 220, 22);
    unit_barrier(ctx);
}

static void grow_child(unit_ctx_t *ctx)
{
    check_msgs(ctx, 1, 0, 220);
    unit_barrier(ctx);
    CHECK_EQ(loom_eager_rx_phase(ctx->peer), 3);
    CHECK_UEQ(stats(ctx)->registered_bytes, 4 * 8192); /* the ring */
    CHECK_UEQ(stats(ctx)->rings[3], 1);
    check_msgs(ctx, 1, 220, 22);
    CHECK(stats(ctx)->ring_received >= 4); /* at least the 4 slots of phase 3 */
    unit_barrier(ctx);
}

/* ---- both directions growing at once --------------------------------------------- */

static void both_body(unit_ctx_t *ctx)
{
    unsigned mine = ctx->is_parent ? 2 : 3, theirs = ctx->is_parent ? 3 : 2;

    send_msgs(ctx, mine, 0, 300);
    check_msgs(ctx, theirs, 0, 300);
    wait_tx_phase(ctx, 3);
    unit_barrier(ctx);
    CHECK_EQ(loom_eager_rx_phase(ctx->peer), 3);
    CHECK_UEQ(stats(ctx)->registered_bytes, 2 * 4 * 8192);
    unit_barrier(ctx);
}

/* ---- messages in flight while the ring is replaced --------------------------------- */

static void inflight_parent(unit_ctx_t *ctx)
{
    uint8_t buf[600];
    unsigned i;

    opt_paced = false; /* the child does not answer while we write */
    CHECK_RC(loom_eager_request(ctx->peer, 2), LOOM_OK);
    wait_tx_phase(ctx, 2);
    unit_wait_other_holds(ctx);
    /* the child holds its progress: these land in its phase 2 ring later */
    for (i = 0; i < 6; ++i) {
        fill_msg(buf, 4, i, 500);
        CHECK_RC(loom_am_send(ctx->peer, TAG, &(struct iovec){buf, 500}, 1, NULL), LOOM_OK);
    }
    CHECK_UEQ(stats(ctx)->ring_sent, 6);
    CHECK_RC(loom_eager_request(ctx->peer, 3), LOOM_OK);
    /* while the request is under way, messages go by AM, after the ring ones */
    send_msgs(ctx, 4, 6, 20);
    CHECK_UEQ(stats(ctx)->ring_sent, 6);
    unit_progress_for(ctx, 0.05);
    unit_send_u64(ctx, 1); /* the child may progress now */
    wait_tx_phase(ctx, 3);
    send_msgs(ctx, 4, 26, 11);
    unit_barrier(ctx);
}

static void inflight_child(unit_ctx_t *ctx)
{
    UNIT_WAIT(ctx, 2 == loom_eager_rx_phase(ctx->peer));
    unit_hold_progress(ctx); /* the parent writes meanwhile */
    check_msgs(ctx, 4, 0, 37);
    CHECK_EQ(loom_eager_rx_phase(ctx->peer), 3);
    unit_barrier(ctx);
}

/* ---- a growth asked for while a shrink is under way ---------------------------------- */

static void shrink_grow_parent(unit_ctx_t *ctx)
{
    send_msgs(ctx, 5, 0, 44);
    wait_tx_phase(ctx, 3);
    CHECK_RC(loom_eager_request(ctx->peer, 1), LOOM_OK); /* shrink ... */
    opt_paced = false;
    send_msgs(ctx, 5, 44, 11);   /* ... and at once messages phase 1 cannot take */
    opt_paced = true;
    if (ctx->peer->eager.tx.pending) {
        CHECK_RC(loom_eager_request(ctx->peer, 3), LOOM_ERR_AGAIN); /* one at a time */
    }
    wait_tx_phase(ctx, 1);
    CHECK(stats(ctx)->shrinks >= 1);
    send_msgs(ctx, 5, 55, 22);   /* these grow it again */
    wait_tx_phase(ctx, 3);
    unit_barrier(ctx);
}

static void shrink_grow_child(unit_ctx_t *ctx)
{
    check_msgs(ctx, 5, 0, 77);
    unit_barrier(ctx);
    CHECK_EQ(loom_eager_rx_phase(ctx->peer), 3);
}

/* ---- a peer that does not answer ------------------------------------------------------ */

static void timeout_parent(unit_ctx_t *ctx)
{
    size_t warnings = ctx->log_count[LOOM_LOG_WARN];
    int verbose = ctx->engine->config.verbose;

    opt_paced = false; /* the child does not answer while we write */
    send_msgs(ctx, 6, 0, 4);      /* msgs_before_ring: no request yet */
    unit_wait_other_holds(ctx);
    send_msgs(ctx, 6, 4, 5);      /* 500 bytes in there asks for phase 2 */
    CHECK(ctx->peer->eager.tx.pending);
    if (verbose < LOOM_LOG_INFO) {
        ctx->engine->config.verbose = LOOM_LOG_INFO; /* where the give-up is said */
    }
    unit_progress_for(ctx, 0.6);  /* past the 300 ms ack timeout */
    CHECK_UEQ(stats(ctx)->ack_timeouts, 1);
    CHECK(unit_log_contains(ctx, "did not acknowledge"));
    /* a busy peer is no news for the user: counted, not warned about */
    CHECK_UEQ(ctx->log_count[LOOM_LOG_WARN], warnings);
    ctx->engine->config.verbose = verbose;
    CHECK_EQ(loom_eager_tx_phase(ctx->peer), 0);
    send_msgs(ctx, 6, 9, 11);     /* by AM: no new request during the back-off */
    CHECK(!ctx->peer->eager.tx.pending);
    unit_send_u64(ctx, 1);
    /* the late ack arrives; the parent tells the child to drop that ring */
    UNIT_WAIT(ctx, NULL == ctx->peer->eager.tx.box && !ctx->peer->eager.tx.pending);
    unit_barrier(ctx);
    /* asked explicitly, a ring works again */
    CHECK_RC(loom_eager_request(ctx->peer, 1), LOOM_OK);
    wait_tx_phase(ctx, 1);
    opt_paced = true;
    send_msgs(ctx, 6, 20, 3);
    unit_barrier(ctx);
}

static void timeout_child(unit_ctx_t *ctx)
{
    check_msgs(ctx, 6, 0, 4);
    unit_hold_progress(ctx); /* no answer meanwhile */
    check_msgs(ctx, 6, 4, 16);
    UNIT_WAIT(ctx, 0 == loom_eager_rx_phase(ctx->peer) && 0 == stats(ctx)->registered_bytes);
    unit_barrier(ctx);
    check_msgs(ctx, 6, 20, 3);
    CHECK(loom_eager_rx_phase(ctx->peer) >= 1);
    unit_barrier(ctx);
}

/* Only the head flag of an ack lands (the rest never does): the request
 * times out all the same. */
static void halfack_parent(unit_ctx_t *ctx)
{
    loom_eager_tx_t *tx = &ctx->peer->eager.tx;
    uint32_t head;

    opt_paced = false;
    send_msgs(ctx, 6, 0, 4);
    unit_wait_other_holds(ctx);
    send_msgs(ctx, 6, 4, 5);
    CHECK(tx->pending);
    head = loom_le32(tx->req_seq);
    memcpy(tx->box->mem, &head, sizeof(head));
    unit_progress_for(ctx, 0.6);  /* past the 300 ms ack timeout */
    CHECK_UEQ(stats(ctx)->ack_timeouts, 1);
    CHECK(!tx->pending);
    CHECK_EQ(loom_eager_tx_phase(ctx->peer), 0);
    send_msgs(ctx, 6, 9, 11);
    unit_send_u64(ctx, 1);
    UNIT_WAIT(ctx, NULL == tx->box && !tx->pending);
    unit_barrier(ctx);
    CHECK_RC(loom_eager_request(ctx->peer, 1), LOOM_OK);
    wait_tx_phase(ctx, 1);
    opt_paced = true;
    send_msgs(ctx, 6, 20, 3);
    unit_barrier(ctx);
}

/* ---- malformed and stale requests ------------------------------------------------------ */

typedef struct bad_req {
    const char *what;
    const char *log;     /* the refusal the child logs */
} bad_req_t;

static const bad_req_t bad_reqs[] = {
    {"slot size not a multiple of 8", "slot size out of range"},
    {"phase out of range", "phase out of range"},
    {"no slots", "slot count out of range"},
    {"ring larger than 64 MiB", "slot count out of range"},
    {"key of an earlier incarnation", "earlier incarnation"},
    {"key length field wrong", "malformed box key"},
    {"box outside its region", "box outside the region"},
    {"unknown sender", "not connected"},
    {"ring of another geometry than our phase 2", "larger than our own phase"},
    {"more slots than our phase 2 has", "larger than our own phase"},
};
#define BAD_COUNT (sizeof(bad_reqs) / sizeof(bad_reqs[0]))

static void send_bad_req(unit_ctx_t *ctx, unsigned which, loom_eager_box_t *box)
{
    size_t key_len = loom_key_size(ctx->engine), length;
    uint8_t msg[LOOM_OP_MSG_MAX];
    loom_wire_eager_req_t req;
    loom_wire_key_t key;

    memset(&req, 0, sizeof(req));
    req.sender     = ctx->name;
    req.req_seq    = 1000 + which;
    req.phase      = 2;
    req.slot_size  = 1024;
    req.slot_count = 8;
    req.box_addr   = (uint64_t)(uintptr_t)box->mem;
    req.key_length = (uint32_t)key_len;
    CHECK_RC(loom_eager_box_key(box, msg + sizeof(req), key_len), LOOM_OK);
    memcpy(&key, msg + sizeof(req), sizeof(key));
    length = sizeof(req) + key_len;
    switch (which) {
    case 0: req.slot_size = 1020; break;
    case 1: req.phase = 9; break;
    case 2: req.slot_count = 0; break;
    case 3: req.slot_size = 1 << 20; req.slot_count = 100; break;
    case 4: key.epoch ^= 0x5a5a; break;
    case 5: req.key_length = (uint32_t)key_len - 4; break;
    case 6: req.box_addr = key.base + key.length - 8; break;
    case 7: req.sender = 0x7777; break;
    case 8: req.slot_size = 8192; break; /* 64 KiB: in range, but not our phase 2 */
    case 9: req.slot_count = 9; break;   /* phase 2 has 8 (fewer are taken: rings grow) */
    }
    memcpy(msg + sizeof(req), &key, sizeof(key));
    loom_wire_hdr_fill(&req.hdr, LOOM_WIRE_EAGER_REQ, 0, length);
    memcpy(msg, &req, sizeof(req));
    CHECK_RC(loom_ctrl_send(ctx->peer, ctx->peer->am_rail, msg, length), LOOM_OK);
}

/* A well-formed request for phase 1 carrying the number of the request
 * before the last one served. */
static void send_stale_req(unit_ctx_t *ctx, loom_eager_box_t *box)
{
    size_t key_len = loom_key_size(ctx->engine), length = sizeof(loom_wire_eager_req_t) + key_len;
    uint8_t msg[LOOM_OP_MSG_MAX];
    loom_wire_eager_req_t req;

    memset(&req, 0, sizeof(req));
    loom_wire_hdr_fill(&req.hdr, LOOM_WIRE_EAGER_REQ, 0, length);
    req.sender     = ctx->name;
    req.req_seq    = ctx->peer->eager.tx.req_seq - 1;
    req.phase      = 1;
    req.slot_size  = 128;
    req.slot_count = 8;
    req.box_addr   = (uint64_t)(uintptr_t)box->mem;
    req.key_length = (uint32_t)key_len;
    memcpy(msg, &req, sizeof(req));
    CHECK_RC(loom_eager_box_key(box, msg + sizeof(req), key_len), LOOM_OK);
    CHECK_RC(loom_ctrl_send(ctx->peer, ctx->peer->am_rail, msg, length), LOOM_OK);
}

static void malformed_parent(unit_ctx_t *ctx)
{
    loom_eager_box_t *box = loom_eager_box_get(ctx->engine);
    unsigned i;

    CHECK(NULL != box);
    for (i = 0; i < BAD_COUNT; ++i) {
        send_bad_req(ctx, i, box);
        unit_progress_for(ctx, 0.01);
    }
    /* a short request and a short note */
    {
        uint8_t junk[16] = {LOOM_WIRE_VERSION, LOOM_WIRE_EAGER_REQ, 0, 0, 8, 0, 0, 0};
        CHECK_RC(loom_ctrl_send(ctx->peer, ctx->peer->am_rail, junk, sizeof(junk)), LOOM_OK);
        junk[1] = LOOM_WIRE_EAGER_NOTE;
        CHECK_RC(loom_ctrl_send(ctx->peer, ctx->peer->am_rail, junk, sizeof(junk)), LOOM_OK);
    }
    unit_barrier(ctx);
    unit_barrier(ctx); /* the child has counted the refusals */
    CHECK_EQ(loom_eager_tx_phase(ctx->peer), 0);
    loom_eager_box_put(ctx->engine, box);
    /* and the connection works: messages, then a real growth */
    send_msgs(ctx, 7, 0, 44);
    wait_tx_phase(ctx, 3);
    send_msgs(ctx, 7, 44, 11);
    unit_barrier(ctx);
    /* a request older than the one served (as if it had waited in a queue):
     * refused, no ack, and the ring stays */
    box = loom_eager_box_get(ctx->engine);
    CHECK(NULL != box);
    send_stale_req(ctx, box);
    unit_barrier(ctx);
    unit_barrier(ctx);
    CHECK_UEQ(*(uint32_t *)box->mem, 0); /* nothing was written into its box */
    loom_eager_box_put(ctx->engine, box);
    CHECK_EQ(loom_eager_tx_phase(ctx->peer), 3);
}

static void malformed_child(unit_ctx_t *ctx)
{
    unsigned i;

    ctx->log_quiet = true;
    unit_barrier(ctx);
    UNIT_WAIT(ctx, stats(ctx)->refused >= BAD_COUNT + 2); /* the barrier is not ordered with them */
    unit_progress_for(ctx, 0.05);
    CHECK_UEQ(stats(ctx)->refused, BAD_COUNT + 2);
    for (i = 0; i < BAD_COUNT; ++i) {
        CHECK_MSG(unit_log_contains(ctx, bad_reqs[i].log), "no refusal logged for a request "
                  "with %s (expected \"%s\")", bad_reqs[i].what, bad_reqs[i].log);
    }
    CHECK_EQ(loom_eager_rx_phase(ctx->peer), 0);
    CHECK_UEQ(stats(ctx)->registered_bytes, 0);
    unit_barrier(ctx);
    check_msgs(ctx, 7, 0, 55);
    CHECK_EQ(loom_eager_rx_phase(ctx->peer), 3);
    unit_barrier(ctx);
    unit_barrier(ctx);
    UNIT_WAIT(ctx, unit_log_contains(ctx, "request older than one already served"));
    unit_progress_for(ctx, 0.05);
    CHECK_EQ(loom_eager_rx_phase(ctx->peer), 3);
    unit_barrier(ctx);
}

/* ---- idle shrink ------------------------------------------------------------------------ */

/* A writer that goes on writing into a ring after the receiver freed it (a
 * late write, or one that ignores ring_before): on tcp the receiver checks
 * the write against its regions, the ring's is gone, so nothing is placed. */
static void write_stale_ring(unit_ctx_t *ctx, const loom_eager_tx_t *old)
{
    static uint8_t slot[64];
    ucs_status_t st;

    unit_fill(slot, sizeof(slot), 0xdead);
    do {
        st = loom_checked_write_post(ctx->peer, old->rail, slot, NULL, sizeof(slot),
                                     old->remote_region, old->remote_epoch, old->remote_addr,
                                     NULL);
        unit_progress(ctx);
    } while (UCS_ERR_NO_RESOURCE == st);
    CHECK_MSG(UCS_OK == st || UCS_INPROGRESS == st, "writing the stale ring: %s",
              ucs_status_string(st));
}

static void idle_parent(unit_ctx_t *ctx)
{
    loom_eager_tx_t old;

    send_msgs(ctx, 8, 0, 44);
    wait_tx_phase(ctx, 3);
    old = ctx->peer->eager.tx; /* where the phase 3 ring was */
    unit_barrier(ctx);
    /* nothing to send for longer than the 200 ms idle time: back to no ring */
    UNIT_WAIT(ctx, 0 == loom_eager_tx_phase(ctx->peer) && !ctx->peer->eager.tx.pending);
    CHECK(stats(ctx)->shrinks >= 1);
    CHECK_UEQ(stats(ctx)->registered_bytes, 0);
    CHECK_UEQ(stats(ctx)->peer_bytes_max, 4 * 8192);
    unit_barrier(ctx);
    write_stale_ring(ctx, &old);
    unit_barrier(ctx);
    send_msgs(ctx, 8, 44, 22);  /* and it grows again */
    wait_tx_phase(ctx, 3);
    unit_barrier(ctx);
}

static void idle_child(unit_ctx_t *ctx)
{
    const loom_rail_stats_t *rail = loom_engine_rail_stats(ctx->engine, 0);
    unsigned long refused;

    check_msgs(ctx, 8, 0, 44);
    /* tcp has no memory protection: every ring message was a checked write */
    CHECK_MSG(rail->writes_checked >= stats(ctx)->ring_received && stats(ctx)->ring_received > 0,
              "%lu checked writes for %lu ring messages", rail->writes_checked,
              stats(ctx)->ring_received);
    unit_barrier(ctx);
    UNIT_WAIT(ctx, 0 == loom_eager_rx_phase(ctx->peer));
    CHECK_UEQ(stats(ctx)->registered_bytes, 0);
    CHECK_UEQ(stats(ctx)->rings[0], 1);
    refused = rail->writes_refused;
    unit_barrier(ctx);
    UNIT_WAIT(ctx, rail->writes_refused == refused + 1); /* the write into the freed ring */
    CHECK(unit_log_contains(ctx, "refused a write"));
    unit_barrier(ctx);
    check_msgs(ctx, 8, 44, 22);
    unit_barrier(ctx);
}

/* ---- a wait that would sleep drops the ring written into it --------------------------- */

/* On RDMA rails a ring write wakes no sleeper, so a rank about to sleep in
 * a wait asks its writer to drop the ring (loom_engine_arm with
 * LOOM_ARM_WAIT; the per-peer step is called here, as tcp rails need none).
 * The writer goes to no ring, its next messages come by AM, and it earns a
 * ring again as a new connection does, after msgs_before_ring (4) of them. */
static void wait_shrink_parent(unit_ctx_t *ctx)
{
    loom_wire_eager_note_t note;
    unsigned long ring_sent;

    send_msgs(ctx, 12, 0, 44);
    wait_tx_phase(ctx, 3);
    unit_barrier(ctx); /* the child asks meanwhile */
    wait_tx_phase(ctx, 0);
    ring_sent = stats(ctx)->ring_sent;
    send_msgs(ctx, 12, 44, 3);
    CHECK_MSG(!ctx->peer->eager.tx.pending && 0 == loom_eager_tx_phase(ctx->peer),
              "a ring asked for after %u messages since the drop (msgs_before_ring 4)", 3);
    CHECK_UEQ(stats(ctx)->ring_sent, ring_sent);
    send_msgs(ctx, 12, 47, 19); /* these earn it again */
    wait_tx_phase(ctx, 3);
    CHECK(stats(ctx)->ring_sent > ring_sent);
    unit_barrier(ctx); /* the child looks at its new ring */
    unit_barrier(ctx);
    /* a note asking for no ring while a request of ours is under way (as
     * when its ack is in our box already, behind the note): the ask waits
     * for the answer, then takes us to no ring */
    CHECK_RC(loom_eager_request(ctx->peer, 2), LOOM_OK);
    memset(&note, 0, sizeof(note));
    loom_wire_hdr_fill(&note.hdr, LOOM_WIRE_EAGER_NOTE, 0, sizeof(note));
    note.sender    = loom_le64(ctx->peer->name);
    note.shrink_to = 0;
    CHECK(UCS_OK == loom_eager_note_recv(&ctx->engine->rails[0], &note, sizeof(note), 0));
    CHECK(ctx->peer->eager.tx.pending && ctx->peer->eager.tx.shrink_asked);
    wait_tx_phase(ctx, 0);
    unit_barrier(ctx);
}

static void wait_shrink_child(unit_ctx_t *ctx)
{
    check_msgs(ctx, 12, 0, 44);
    UNIT_WAIT(ctx, 3 == loom_eager_rx_phase(ctx->peer)); /* the last growth served */
    CHECK_MSG(loom_eager_rx_quiet_peer(ctx->peer), "no drop asked for a ring of phase %u",
              loom_eager_rx_phase(ctx->peer));
    CHECK_MSG(!loom_eager_rx_quiet_peer(ctx->peer), "asked twice for the same ring");
    unit_barrier(ctx);
    UNIT_WAIT(ctx, 0 == loom_eager_rx_phase(ctx->peer));
    CHECK_UEQ(stats(ctx)->rings[0], 1);
    check_msgs(ctx, 12, 44, 22); /* in order across the drop and the new ring */
    unit_barrier(ctx); /* the parent has the ring, and asks nothing more until the next */
    CHECK_EQ(loom_eager_rx_phase(ctx->peer), 3);
    CHECK(!ctx->peer->eager.rx.hinted); /* a new ring may be asked to go again */
    unit_barrier(ctx);
    UNIT_WAIT(ctx, 0 == loom_eager_rx_phase(ctx->peer)); /* the note the parent took */
    unit_barrier(ctx);
}

/* ---- memory budget ----------------------------------------------------------------------- */

/* The child's budget (9 KiB) takes the parent's phase 2 ring (8 KiB) and its
 * own phase 1 send slots, but not a phase 3 ring: that growth is refused.
 * When the child's own sending then wants phase 2 send slots, there is no
 * room: the least recently used ring, the parent's, is asked to go down,
 * and the child's slots grow on a later try. */
static void budget_parent(unit_ctx_t *ctx)
{
    send_msgs(ctx, 9, 0, 44);
    UNIT_WAIT(ctx, stats(ctx)->refused >= 1);
    CHECK_EQ(loom_eager_tx_phase(ctx->peer), 2);
    unit_barrier(ctx);
    check_msgs(ctx, 10, 0, 41);
    UNIT_WAIT(ctx, 1 == loom_eager_tx_phase(ctx->peer) && !ctx->peer->eager.tx.pending);
    unit_barrier(ctx);
}

static void budget_child(unit_ctx_t *ctx)
{
    check_msgs(ctx, 9, 0, 44);
    unit_barrier(ctx);
    CHECK_EQ(loom_eager_rx_phase(ctx->peer), 2);
    send_msgs(ctx, 10, 0, 30);
    unit_progress_for(ctx, 0.1);
    send_msgs(ctx, 10, 30, 11);
    UNIT_WAIT(ctx, 2 == loom_eager_tx_phase(ctx->peer) && 1 == loom_eager_rx_phase(ctx->peer));
    CHECK_UEQ(stats(ctx)->registered_bytes, 9 * 1024);
    unit_barrier(ctx);
}

/* ---- slots growing with a stream, and going back ----------------------------------------- */

#define SLOTS_BURST 40
#define SLOTS_PACED 30

/* Rings start with 2 of phase 1's 8 slots.  While the child holds its
 * progress, a burst finds the ring full: it doubles its slots (twice: 2, 4,
 * 8), every message delivered in order; paced messages afterwards never
 * find it full, and the idle window takes it back to 2 slots. */
static void slots_parent(unit_ctx_t *ctx)
{
    unsigned first = 0, round;
    uint32_t want[] = {4, 8};

    send_msgs(ctx, 20, first, 6);
    first += 6;
    wait_tx_phase(ctx, 1);
    CHECK_UEQ(ctx->peer->eager.tx.mem.slot_count, 2);
    unit_barrier(ctx);
    for (round = 0; round < 2; ++round) {
        unit_wait_other_holds(ctx);
        opt_paced = false;
        send_msgs(ctx, 20, first, SLOTS_BURST);
        opt_paced = true;
        first += SLOTS_BURST;
        CHECK(ctx->peer->eager.tx.pending); /* the ring found full asked for more slots */
        unit_send_u64(ctx, 1);
        UNIT_WAIT(ctx, !ctx->peer->eager.tx.pending);
        CHECK_UEQ(ctx->peer->eager.tx.phase, 1);
        CHECK_UEQ(ctx->peer->eager.tx.mem.slot_count, want[round]);
        unit_barrier(ctx);
    }
    CHECK_UEQ(stats(ctx)->slot_growths, 2);
    for (round = 0; round < SLOTS_PACED; ++round) {
        send_msgs(ctx, 20, first++, 1);
        unit_progress_for(ctx, 0.025);
    }
    UNIT_WAIT(ctx, 2 == ctx->peer->eager.tx.mem.slot_count && !ctx->peer->eager.tx.pending);
    CHECK_UEQ(ctx->peer->eager.tx.phase, 1);
    unit_barrier(ctx);
}

static void slots_child(unit_ctx_t *ctx)
{
    unsigned first = 0, round;

    check_msgs(ctx, 20, first, 6);
    first += 6;
    unit_barrier(ctx);
    for (round = 0; round < 2; ++round) {
        unit_hold_progress(ctx);
        check_msgs(ctx, 20, first, SLOTS_BURST);
        first += SLOTS_BURST;
        unit_barrier(ctx);
    }
    check_msgs(ctx, 20, first, SLOTS_PACED);
    unit_barrier(ctx);
}

/* ---- a phase change after every message -------------------------------------------------- */

static void cycle_body(unit_ctx_t *ctx)
{
    unsigned mine = ctx->is_parent ? 101 : 102, theirs = ctx->is_parent ? 102 : 101;

    send_msgs(ctx, mine, 0, 400);
    check_msgs(ctx, theirs, 0, 400);
    unit_barrier(ctx);
    CHECK_MSG(stats(ctx)->enlargements + stats(ctx)->shrinks >= 40, "only %lu phase changes "
              "in 400 messages", stats(ctx)->enlargements + stats(ctx)->shrinks);
    CHECK(stats(ctx)->ring_sent > 0 && stats(ctx)->ring_received > 0);
    unit_barrier(ctx);
}

int main(int argc, char **argv)
{
    unit_options_t options = {.configure = eager_configure};
    int rc = 0;

    /* test_eager [case]: run one case only */
#define RUN(_name, _opts, _p, _c) \
    ((argc < 2 || NULL != strstr(_name, argv[1])) ? (opt_paced = true, \
                                                      unit_main(_name, _opts, _p, _c)) : 0)

    rc |= RUN("test_eager grow", &options, grow_parent, grow_child);
    rc |= RUN("test_eager both", &options, both_body, both_body);
    /* the path connect-to-ep transports (rc_verbs) take, on tcp */
    options.force_connect_to_ep = true;
    rc |= RUN("test_eager both connect-to-ep", &options, both_body, both_body);
    rc |= RUN("test_eager inflight connect-to-ep", &options, inflight_parent, inflight_child);
    options.force_connect_to_ep = false;
    rc |= RUN("test_eager inflight", &options, inflight_parent, inflight_child);
    rc |= RUN("test_eager shrink-grow", &options, shrink_grow_parent, shrink_grow_child);
    rc |= RUN("test_eager timeout", &options, timeout_parent, timeout_child);
    rc |= RUN("test_eager halfack", &options, halfack_parent, timeout_child);
    rc |= RUN("test_eager malformed", &options, malformed_parent, malformed_child);
    rc |= RUN("test_eager wait-shrink", &options, wait_shrink_parent, wait_shrink_child);
    opt_idle_ms = 200;
    rc |= RUN("test_eager idle", &options, idle_parent, idle_child);
    opt_idle_ms = 0;
    opt_budget_child = 9 * 1024;
    rc |= RUN("test_eager budget", &options, budget_parent, budget_child);
    opt_budget_child = 0;
    opt_start_slots = 2;
    opt_idle_ms = 200;
    /* the child holds its progress while a burst fills the ring on purpose:
     * under ASan on a loaded machine that outlasted 300 ms, and the ring
     * request for more slots gave up (test_eager timeout tests giving up) */
    opt_ack_timeout_ms = 10000;
    rc |= RUN("test_eager slots", &options, slots_parent, slots_child);
    opt_ack_timeout_ms = 300;
    opt_idle_ms = 0;
    opt_start_slots = 0;
    opt_cycle = true;
    rc |= RUN("test_eager cycle", &options, cycle_body, cycle_body);
    return rc;
}
