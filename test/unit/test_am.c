/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Active messages: sizes from 0 to loom_engine_am_max(), several tags, split
 * over several iovecs, in order and byte for byte; oversize sends refused;
 * thousands of sends queued with an op each (some must queue), each callback
 * run exactly once, order kept across the queue, the larger ones sent from
 * the sender's memory (zero-copy); loom_peer_flush; the only rail failing
 * under zero-copy messages in flight: each completes once, nothing read
 * after, the receiver gets a whole, ordered prefix.
 */
#include "unit_harness.h"
#include "engine/loom_engine.h" /* the engine's UCT worker, for queued_send_behind() */

#include <stdlib.h>
#include <string.h>

#define QUEUED_COUNT 10000
#define BEHIND_COUNT 200
#define QUEUED_TOTAL (QUEUED_COUNT + BEHIND_COUNT)
#define FLUSH_COUNT  3000
#define POOL_SEED    0x5eedull
#define END_TAG      0x55
/* the tag of queued message seq: every one an upper layer may use (not 255) */
#define QUEUED_TAG(_seq) ((uint8_t)((_seq) % 255))

/* ---- phase 1: sizes and tags, both directions at once ---------------------- */

typedef struct am_case {
    size_t   length;
    uint8_t  tag;
    uint64_t seed;
} am_case_t;

static size_t am_cases(const unit_ctx_t *ctx, bool from_parent, am_case_t *cases)
{
    static const uint8_t tags[] = {0, 0xfe, 1, 0x80, 0x7f, 42, 0xfd}; /* 0xff: loom's */
    size_t sizes[] = {0, 1, 7, 8, 100, 4096, loom_engine_am_max(ctx->engine)};
    size_t count = 0, s, t;

    for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
        for (t = 0; t < 2; ++t) {
            cases[count].length = sizes[s];
            cases[count].tag    = tags[(s * 2 + t) % sizeof(tags)];
            cases[count].seed   = (from_parent ? 1000 : 2000) + count;
            ++count;
        }
    }
    return count;
}

/* Send one message, split over 1-3 iovecs, retrying while loom says AGAIN. */
static void am_send_retry(unit_ctx_t *ctx, uint8_t tag, const uint8_t *data, size_t length,
                          int pieces)
{
    struct iovec iov[3];
    double deadline = unit_now() + UNIT_TIMEOUT;
    size_t done = 0;
    int i, rc;

    for (i = 0; i < pieces; ++i) {
        size_t part = (i == pieces - 1) ? length - done : length / (size_t)pieces;
        iov[i].iov_base = (void *)(data + done);
        iov[i].iov_len  = part;
        done += part;
    }
    while (LOOM_ERR_AGAIN == (rc = loom_am_send(ctx->peer, tag, iov, pieces, NULL))) {
        unit_progress(ctx);
        CHECK_MSG(unit_now() < deadline, "loom_am_send of %zu bytes kept returning "
                  "LOOM_ERR_AGAIN for %g s", length, UNIT_TIMEOUT);
    }
    CHECK_RC(rc, LOOM_OK);
}

static void am_phase_sizes(unit_ctx_t *ctx)
{
    am_case_t mine[32], theirs[32];
    size_t n_mine = am_cases(ctx, ctx->is_parent, mine);
    size_t n_theirs = am_cases(ctx, !ctx->is_parent, theirs);
    size_t am_max = loom_engine_am_max(ctx->engine), i;
    loom_rail_stats_t before = *loom_engine_rail_stats(ctx->engine, 0), *after;
    unsigned long sent_bytes = 0, recv_bytes = 0;
    uint8_t *buf = unit_alloc(am_max + 2), *expect = unit_alloc(am_max + 2);
    struct iovec iov[2];
    unit_op_t uop;

    CHECK(am_max >= 4096 && am_max < (1u << 20));
    /* Counters taken before the barrier: past it the other side is sending. */
    unit_barrier(ctx);
    for (i = 0; i < n_mine; ++i) {
        unit_fill(buf, mine[i].length, mine[i].seed);
        am_send_retry(ctx, mine[i].tag, buf, mine[i].length, 1 + (int)(i % 3));
        sent_bytes += mine[i].length;
    }

    /* More than am_max is refused, with or without an op, whole or split. */
    unit_op_init(&uop);
    iov[0].iov_base = buf;
    iov[0].iov_len  = am_max + 1;
    CHECK_RC(loom_am_send(ctx->peer, 9, iov, 1, NULL), LOOM_ERR_INVALID);
    CHECK_RC(loom_am_send(ctx->peer, 9, iov, 1, &uop.op), LOOM_ERR_INVALID);
    iov[0].iov_len  = am_max;
    iov[1].iov_base = buf;
    iov[1].iov_len  = 1;
    CHECK_RC(loom_am_send(ctx->peer, 9, iov, 2, &uop.op), LOOM_ERR_INVALID);
    CHECK_UEQ(loom_engine_outstanding(ctx->engine), 0);

    memcpy(buf, "end", 3);
    am_send_retry(ctx, END_TAG, buf, 3, 1);
    sent_bytes += 3;

    /* The other side's messages, in order, then its end marker and nothing else. */
    UNIT_WAIT(ctx, ctx->msg_count >= n_theirs + 1);
    unit_progress_for(ctx, 0.1);
    CHECK_UEQ(ctx->msg_count, n_theirs + 1);
    for (i = 0; i < n_theirs; ++i) {
        const unit_msg_t *msg = &ctx->msgs[i];

        CHECK_MSG(msg->tag == theirs[i].tag && msg->length == theirs[i].length,
                  "message %zu: tag %u length %zu, expected tag %u length %zu", i,
                  msg->tag, msg->length, theirs[i].tag, theirs[i].length);
        unit_fill(expect, theirs[i].length, theirs[i].seed);
        CHECK_MEM(msg->data, expect, msg->length, "AM payload");
        recv_bytes += msg->length;
    }
    CHECK_EQ(ctx->msgs[n_theirs].tag, END_TAG);
    CHECK_UEQ(ctx->msgs[n_theirs].length, 3);
    CHECK_MEM(ctx->msgs[n_theirs].data, "end", 3, "end marker");
    recv_bytes += 3;
    CHECK_EQ(uop.calls, 0);

    after = loom_engine_rail_stats(ctx->engine, 0);
    CHECK_UEQ(after->messages_sent - before.messages_sent, n_mine + 1);
    CHECK_UEQ(after->bytes_sent - before.bytes_sent, sent_bytes);
    CHECK_UEQ(after->messages_received - before.messages_received, n_theirs + 1);
    CHECK_UEQ(after->bytes_received - before.bytes_received, recv_bytes);
    CHECK_UEQ(after->refused, before.refused);
    unit_msgs_clear(ctx);
    free(buf);
    free(expect);
    unit_barrier(ctx);
}

/* ---- phase 2: many queued sends, parent to child ------------------------------- */

static size_t queued_payload(size_t i, size_t am_max)
{
    return (i * 7919u) % (am_max - sizeof(uint32_t) + 1);
}

static size_t queued_offset(size_t i)
{
    return (i * 131u) % 8192u;
}

static int queued_calls_total;

static void queued_cb(loom_op_t *op, int status)
{
    unit_op_t *uop = op->user;

    ++uop->calls;
    uop->status = status;
    ++queued_calls_total;
}

typedef struct queued_state {
    unit_op_t    ops[QUEUED_TOTAL];
    uint32_t     seqs[QUEUED_TOTAL];
    struct iovec iovs[QUEUED_TOTAL][2];
    bool         queued[QUEUED_TOTAL];
    size_t       n_queued;
} queued_state_t;

/* Send message i (sequence number seq) with its own op. */
static void queued_one(unit_ctx_t *ctx, queued_state_t *st, size_t i, uint8_t *pool,
                       size_t seq)
{
    size_t am_max = loom_engine_am_max(ctx->engine);
    int rc;

    unit_op_init(&st->ops[i]);
    st->ops[i].op.cb        = queued_cb;
    st->seqs[i]             = (uint32_t)seq;
    st->iovs[i][0].iov_base = &st->seqs[i];
    st->iovs[i][0].iov_len  = sizeof(uint32_t);
    st->iovs[i][1].iov_base = pool + queued_offset(seq);
    st->iovs[i][1].iov_len  = queued_payload(seq, am_max);
    rc = loom_am_send(ctx->peer, QUEUED_TAG(seq), st->iovs[i], 2, &st->ops[i].op);
    if (LOOM_OK == rc) {
        /* Once one message waits, every later one must wait behind it. */
        CHECK_MSG(0 == st->n_queued, "message %zu went out at once while %zu earlier "
                  "ones were still queued: order broken", seq, st->n_queued);
        st->queued[i] = false;
    } else {
        CHECK_RC(rc, LOOM_INPROGRESS);
        st->queued[i] = true;
        ++st->n_queued;
    }
}

/* Send count messages back to back without progress; returns how many queued. */
static size_t queued_send(unit_ctx_t *ctx, queued_state_t *st, size_t count, uint8_t *pool,
                          uint32_t first_seq)
{
    size_t i;

    queued_calls_total = 0;
    st->n_queued       = 0;
    for (i = 0; i < count; ++i) {
        queued_one(ctx, st, i, pool, first_seq + i);
    }
    return st->n_queued;
}

/*
 * More sends while loom's queue still holds messages, with only UCT making
 * progress in between (the receiver drains meanwhile): the transport has room
 * again, but the new messages must still queue behind the waiting ones.
 */
static void queued_send_behind(unit_ctx_t *ctx, queued_state_t *st, size_t first,
                               size_t count, uint8_t *pool, uint32_t first_seq)
{
    size_t j;

    for (j = 0; j < count; ++j) {
        double until = unit_now() + 0.002;

        while (unit_now() < until) {
            uct_worker_progress(ctx->engine->worker);
        }
        CHECK(loom_peer_outstanding(ctx->peer) > 0);
        queued_one(ctx, st, first + j, pool, first_seq + j);
    }
}

static void queued_check_callbacks(unit_ctx_t *ctx, queued_state_t *st, size_t count)
{
    size_t i;

    for (i = 0; i < count; ++i) {
        if (st->queued[i]) {
            CHECK_MSG(1 == st->ops[i].calls, "queued message %zu: callback ran %d times",
                      i, st->ops[i].calls);
            CHECK_RC(st->ops[i].status, LOOM_OK);
        } else {
            CHECK_MSG(0 == st->ops[i].calls, "message %zu was sent at once (LOOM_OK) but "
                      "its callback ran %d times", i, st->ops[i].calls);
        }
    }
    CHECK_UEQ(loom_engine_outstanding(ctx->engine), 0);
    CHECK_UEQ(loom_peer_outstanding(ctx->peer), 0);
}

static void queued_verify(unit_ctx_t *ctx, size_t count, const uint8_t *pool, uint32_t first)
{
    size_t am_max = loom_engine_am_max(ctx->engine), i;

    CHECK_UEQ(ctx->msg_count, count);
    for (i = 0; i < count; ++i) {
        const unit_msg_t *msg = &ctx->msgs[i];
        size_t seq = first + i, payload = queued_payload(seq, am_max);
        uint32_t got;

        CHECK_MSG(msg->length == sizeof(uint32_t) + payload, "message %zu: %zu bytes, "
                  "expected %zu", seq, msg->length, sizeof(uint32_t) + payload);
        memcpy(&got, msg->data, sizeof(got));
        CHECK_MSG(got == seq && msg->tag == QUEUED_TAG(seq), "message %zu arrived in place "
                  "of message %u (tag %u): order broken", seq, got, msg->tag);
        CHECK_MEM(msg->data + sizeof(uint32_t), pool + queued_offset(seq), payload,
                  "queued AM payload");
    }
}

static void am_phase_queued(unit_ctx_t *ctx)
{
    size_t pool_len = loom_engine_am_max(ctx->engine) + 8192;
    uint8_t *pool = unit_alloc(pool_len);
    queued_state_t *st = NULL;
    uint64_t sent_now, n_queued;
    loom_rail_stats_t before = *loom_engine_rail_stats(ctx->engine, 0);

    unit_fill(pool, pool_len, POOL_SEED);
    unit_barrier(ctx); /* after taking the counters */
    if (ctx->is_parent) {
        struct iovec iov = {pool, 1};

        st = calloc(1, sizeof(*st));
        CHECK(NULL != st);
        /* The child does not progress meanwhile, so the socket fills up. */
        n_queued = queued_send(ctx, st, QUEUED_COUNT, pool, 0);
        sent_now = QUEUED_COUNT - n_queued;
        unit_note("%zu messages: %llu sent at once, %llu queued (then %d more behind "
                  "them)", (size_t)QUEUED_COUNT,
                  (unsigned long long)sent_now, (unsigned long long)n_queued, BEHIND_COUNT);
        CHECK_MSG(n_queued > 0, "no message of %d was queued: the test did not reach "
                  "the queueing path", QUEUED_COUNT);
        CHECK_EQ(queued_calls_total, 0); /* no callback from inside loom_am_send */
        /* With messages queued, a send without op must not overtake them. */
        CHECK_RC(loom_am_send(ctx->peer, 1, &iov, 1, NULL), LOOM_ERR_AGAIN);
        CHECK_UEQ(loom_engine_outstanding(ctx->engine), n_queued);
        unit_send_u64(ctx, n_queued);
        queued_send_behind(ctx, st, QUEUED_COUNT, BEHIND_COUNT, pool, QUEUED_COUNT);
        n_queued = st->n_queued;
        UNIT_WAIT(ctx, queued_calls_total >= (int)n_queued);
        unit_progress_for(ctx, 0.2); /* no second callback may follow */
        CHECK_EQ(queued_calls_total, n_queued);
        queued_check_callbacks(ctx, st, QUEUED_TOTAL);
        CHECK_UEQ(loom_engine_rail_stats(ctx->engine, 0)->messages_sent -
                  before.messages_sent, QUEUED_TOTAL);
        CHECK_MSG(loom_engine_rail_stats(ctx->engine, 0)->messages_zcopy >
                  before.messages_zcopy, "no message left from the sender's memory: the "
                  "test did not reach the zero-copy path");

        /* Again, but wait with loom_peer_flush. */
        unit_barrier(ctx);
        memset(st, 0, sizeof(*st));
        n_queued = queued_send(ctx, st, FLUSH_COUNT, pool, QUEUED_TOTAL);
        unit_send_u64(ctx, n_queued);
        CHECK_RC(loom_peer_flush(ctx->peer), LOOM_OK);
        CHECK_EQ(queued_calls_total, n_queued);
        queued_check_callbacks(ctx, st, FLUSH_COUNT);
        free(st);
    } else {
        /* Wait without progress: the parent's sends must run out of room.
         * (Messages are cleared before barriers only: past one, the parent
         * may already be sending.) */
        unit_recv_noprogress(ctx, &n_queued, sizeof(n_queued));
        UNIT_WAIT(ctx, ctx->msg_count >= QUEUED_TOTAL);
        unit_progress_for(ctx, 0.1);
        queued_verify(ctx, QUEUED_TOTAL, pool, 0);
        CHECK_UEQ(loom_engine_rail_stats(ctx->engine, 0)->messages_received -
                  before.messages_received, QUEUED_TOTAL);
        unit_msgs_clear(ctx);

        unit_barrier(ctx);
        unit_recv_noprogress(ctx, &n_queued, sizeof(n_queued));
        UNIT_WAIT(ctx, ctx->msg_count >= FLUSH_COUNT);
        unit_progress_for(ctx, 0.1);
        queued_verify(ctx, FLUSH_COUNT, pool, QUEUED_TOTAL);
        unit_msgs_clear(ctx);
    }
    CHECK_UEQ(loom_engine_rail_stats(ctx->engine, 0)->refused, before.refused);
    free(pool);
    unit_barrier(ctx);
}

/* ---- phase 3: the rail fails under zero-copy messages in flight ----------------- */

#define FAIL_TAG     0x31
#define FAIL_LENGTH  4096
#define FAIL_MAX     4000
#define FAIL_SEED    0xfa11ull
#define FAIL_QUEUED  10 /* behind the one on the wire */

/* Message i of the phase: its number, then FAIL_LENGTH bytes of the pool. */
static void fail_message(uint8_t *pool, uint32_t *seq, size_t i, struct iovec *iov)
{
    *seq            = (uint32_t)i;
    iov[0].iov_base = seq;
    iov[0].iov_len  = sizeof(*seq);
    iov[1].iov_base = pool + queued_offset(i);
    iov[1].iov_len  = FAIL_LENGTH;
}

/* Sender: messages pile up against a receiver that does not progress, the
 * one on the wire left from the pool (zero-copy), more queued behind it,
 * when the only rail fails.
 * Every message waiting completes once, with an error unless UCT had sent
 * it whole; the pool is freed at once (under ASan, a read of UCT's after
 * that is an error).  No callback comes twice, nothing stays in flight. */
static void fail_send(unit_ctx_t *ctx, unit_op_t *ops, uint32_t *seqs, size_t *count)
{
    uint8_t *pool = unit_alloc(FAIL_LENGTH + 8192);
    struct iovec iov[FAIL_MAX][2];
    bool waiting[FAIL_MAX];
    size_t i, n_waiting = 0, failed = 0;
    int rc;

    unit_fill(pool, FAIL_LENGTH + 8192, FAIL_SEED);
    unit_wait_other_holds(ctx);
    for (i = 0; i < FAIL_MAX && n_waiting < 1 + FAIL_QUEUED; ++i) {
        unit_op_init(&ops[i]);
        fail_message(pool, &seqs[i], i, iov[i]);
        rc = loom_am_send(ctx->peer, FAIL_TAG, iov[i], 2, &ops[i].op);
        waiting[i] = (LOOM_INPROGRESS == rc);
        CHECK_MSG(LOOM_OK == rc || waiting[i], "message %zu: %s", i, loom_strerror(rc));
        n_waiting += waiting[i];
    }
    *count = i;
    CHECK_MSG(n_waiting > 0, "%zu messages of %d bytes all left at once: nothing was in "
              "flight when the rail failed", i, FAIL_LENGTH);
    CHECK_MSG(!ucs_list_is_empty(&ctx->peer->rails[0].wire_ops), "no zero-copy message "
              "was in flight (sent from the pool, not yet done) when the rail failed");
    loom_peer_fail_rail(ctx->peer, 0, UCS_ERR_CONNECTION_RESET);
    for (i = 0; i < *count; ++i) {
        UNIT_WAIT(ctx, !waiting[i] || ops[i].calls > 0);
    }
    free(pool); /* nobody may read it any more */
    unit_progress_for(ctx, 0.2); /* no second callback may follow */
    for (i = 0; i < *count; ++i) {
        CHECK_MSG(ops[i].calls == (waiting[i] ? 1 : 0), "message %zu (%s): callback ran %d "
                  "times", i, waiting[i] ? "waiting" : "sent at once", ops[i].calls);
        failed += (waiting[i] && LOOM_OK != ops[i].status);
    }
    CHECK_MSG(failed > 0, "the rail failed, yet every message completed without error");
    CHECK(ucs_list_is_empty(&ctx->peer->rails[0].wire_ops));
    unit_note("rail failed under %zu messages: %zu waiting, %zu of them failed", *count,
              n_waiting, failed);
    unit_send_u64(ctx, 1); /* the receiver may progress again */
}

/* Receiver: what arrives of the stream (the sender's socket may still hand
 * over what it took before its endpoint closed) is a prefix of it, each
 * message whole, in order, byte for byte. */
static void fail_receive(unit_ctx_t *ctx)
{
    uint8_t *pool = unit_alloc(FAIL_LENGTH + 8192);
    size_t i;

    unit_fill(pool, FAIL_LENGTH + 8192, FAIL_SEED);
    unit_hold_progress(ctx);
    unit_progress_for(ctx, 1.0);
    for (i = 0; i < ctx->msg_count; ++i) {
        const unit_msg_t *msg = &ctx->msgs[i];
        uint32_t seq;

        CHECK_UEQ(msg->tag, FAIL_TAG);
        CHECK_UEQ(msg->length, sizeof(seq) + FAIL_LENGTH);
        memcpy(&seq, msg->data, sizeof(seq));
        CHECK_MSG(seq == i, "message %u arrived in place of message %zu", seq, i);
        CHECK_MEM(msg->data + sizeof(seq), pool + queued_offset(i), FAIL_LENGTH,
                  "message of a failed rail");
    }
    unit_note("%zu messages arrived before the rail failed", ctx->msg_count);
    unit_msgs_clear(ctx);
    free(pool);
}

static void am_phase_rail_fails(unit_ctx_t *ctx)
{
    if (ctx->is_parent) {
        unit_op_t *ops = calloc(FAIL_MAX, sizeof(*ops));
        uint32_t *seqs = calloc(FAIL_MAX, sizeof(*seqs));
        size_t count;

        CHECK(NULL != ops && NULL != seqs);
        fail_send(ctx, ops, seqs, &count);
        free(seqs);
        free(ops);
    } else {
        fail_receive(ctx);
    }
    unit_barrier(ctx);
}

static void am_body(unit_ctx_t *ctx)
{
    am_phase_sizes(ctx);
    am_phase_queued(ctx);
    am_phase_rail_fails(ctx); /* last: the peer has no rail left */
}

/* Sends with an op of at least 512 bytes leave from the sender's memory
 * (zero-copy AM, tcp needs no registration for it); smaller ones and those
 * without an op are copied out: phase 2 mixes both in one ordered stream. */
static void am_configure(loom_engine_config_t *config, bool is_parent)
{
    (void)is_parent;
    config->am_zcopy_min = 512;
}

int main(void)
{
    unit_options_t options = {.configure = am_configure};

    return unit_main("am", &options, am_body, am_body);
}
