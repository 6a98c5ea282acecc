/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Checked writes on tcp, a rail whose NIC checks no keys.  The child is the
 * target of the parent's puts:
 *  - a put outside the key's region is refused by loom_put at once; with a
 *    key changed to claim the child's unregistered static array, it reaches
 *    the child, which refuses it: the array is unchanged byte for byte, the
 *    refusal counted, the put completes with LOOM_ERR_RANGE;
 *  - a put with a changed epoch, or into a deregistered region, completes
 *    with LOOM_ERR_STALE_KEY and writes nothing;
 *  - a write message of an earlier connection of the rail (rail epoch) is
 *    refused;
 *  - a forged push request (sent by the parent as its own) asks the child to
 *    write into the parent's unregistered static array: the parent refuses
 *    the write, its array unchanged;
 *  - valid puts of 0, 1, AM size - 1, AM size, AM size + 1 and several MiB
 *    land byte-exact, and nothing else in the region changes;
 *  - a push's write that counts as it lands (LOOM_WIRE_FLAG_COUNT) adds one
 *    to the target's counter; the same push written again with other bytes
 *    (its chunk re-driven after a rail failed) is neither placed nor
 *    counted: the memory may be its owner's again by then; the push's
 *    notice adds nothing, and a copy that comes after it neither; nor is a
 *    copy that comes once the target released that memory refused.
 */
#include "unit_harness.h"
#include "engine/loom_engine.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define REG_LEN    65536
#define VICTIM_LEN (200 * 1024) /* several AM segments */
#define BIG_LEN    (8u << 20)
#define STEP_DONE  UINT64_MAX
#define NSIZES     7

#define COUNTED_AT  4096
#define COUNTED_LEN 200
static uint8_t victim[VICTIM_LEN];   /* the child's, never registered */
static uint8_t p_victim[VICTIM_LEN]; /* the parent's, never registered */

static unsigned long refused(unit_ctx_t *ctx)
{
    return loom_engine_rail_stats(ctx->engine, 0)->refused;
}

/* Where each valid put goes in the big region, and its data's seed. */
static size_t valid_sizes(unit_ctx_t *ctx, size_t *sizes, size_t *offsets)
{
    size_t am = loom_engine_rail_info(ctx->engine, 0)->am_max, off = 4096, i;

    sizes[0] = 0;
    sizes[1] = 1;
    sizes[2] = am - 1;
    sizes[3] = am;
    sizes[4] = am + 1;
    sizes[5] = 3 * am + 7;
    sizes[6] = (5u << 20) + 3;
    for (i = 0; i < NSIZES; ++i) {
        offsets[i] = off;
        off += sizes[i] + 4093; /* gaps that must stay untouched */
    }
    CHECK(off <= BIG_LEN);
    return NSIZES;
}

/* ---- target (child) -------------------------------------------------------- */

/* The parent writes the same push twice into big at COUNTED_AT (bytes 0x61,
 * then 0x62), counting on a counter of ours, sends its notice and a third
 * copy (0x63): one addition, the first bytes. */
static void counted_writes_target(unit_ctx_t *ctx, uint8_t *big)
{
    const loom_push_stats_t *stats = loom_engine_push_stats(ctx->engine);
    unsigned long landed = stats->counted_on_landing, received = stats->notices_received;
    uint8_t expect[COUNTED_LEN];
    uint64_t counter;

    CHECK_RC(loom_counters_open(ctx->engine, 1, &counter), LOOM_OK);
    unit_send_u64(ctx, counter);
    UNIT_WAIT(ctx, loom_counter_value(ctx->engine, counter) > 0);
    unit_progress_for(ctx, 0.1); /* the second copy, had it counted */
    CHECK_UEQ(loom_counter_value(ctx->engine, counter), 1);
    CHECK_UEQ(stats->counted_on_landing, landed + 1);
    memset(expect, 0x61, sizeof(expect));
    CHECK_MEM(big + COUNTED_AT, expect, COUNTED_LEN, "a push's bytes, written again");
    unit_barrier(ctx); /* now its notice and a third copy */
    unit_barrier(ctx);
    UNIT_WAIT(ctx, stats->notices_received > received);
    unit_progress_for(ctx, 0.1);
    CHECK_UEQ(loom_counter_value(ctx->engine, counter), 1);
    CHECK_MEM(big + COUNTED_AT, expect, COUNTED_LEN, "a push's bytes, after its notice");
    CHECK_UEQ(loom_counter_release(ctx->engine, counter), 0);
    unit_barrier(ctx);
}

/* A push that landed whole, then comes again (its chunk re-driven after a
 * rail failed) once the target released the memory it landed in (its
 * broadcast ended there): answered, neither placed nor refused; a refusal
 * failed the push, and coll loom's broadcast with it, though every byte
 * had landed (the failover check's broadcast stream). */
static void counted_again_released_target(unit_ctx_t *ctx)
{
    uint8_t *gone = unit_alloc(COUNTED_LEN), expect[COUNTED_LEN];
    loom_region_t *region;
    unsigned long refused;
    uint64_t counter;

    CHECK_RC(loom_mem_register(ctx->engine, gone, COUNTED_LEN, &region), LOOM_OK);
    unit_send_region(ctx, region, gone, COUNTED_LEN);
    CHECK_RC(loom_counters_open(ctx->engine, 1, &counter), LOOM_OK);
    unit_send_u64(ctx, counter);
    UNIT_WAIT(ctx, loom_counter_value(ctx->engine, counter) > 0);
    loom_mem_deregister(region);
    refused = loom_engine_rail_stats(ctx->engine, 0)->writes_refused;
    unit_barrier(ctx); /* released: now the copy */
    unit_barrier(ctx);
    unit_progress_for(ctx, 0.1);
    CHECK_MSG(loom_engine_rail_stats(ctx->engine, 0)->writes_refused == refused,
              "a push that landed was refused when it came again after its memory was "
              "released");
    CHECK_UEQ(loom_counter_value(ctx->engine, counter), 1);
    memset(expect, 0x61, sizeof(expect));
    CHECK_MEM(gone, expect, COUNTED_LEN, "released memory, after a push came again");
    CHECK_UEQ(loom_counter_release(ctx->engine, counter), 0);
    unit_barrier(ctx);
    free(gone);
}

static void target_body(unit_ctx_t *ctx)
{
    uint8_t *mem_a = unit_alloc(REG_LEN), *mem_d = unit_alloc(REG_LEN);
    uint8_t *big = unit_alloc(BIG_LEN), *expect = unit_alloc(BIG_LEN);
    uint8_t *victim_ref = unit_alloc(VICTIM_LEN);
    loom_region_t *reg_a, *reg_d, *reg_big;
    size_t sizes[NSIZES], offsets[NSIZES], n, i;

    unit_fill(victim, VICTIM_LEN, 0x5151);
    memcpy(victim_ref, victim, VICTIM_LEN);
    unit_fill(mem_a, REG_LEN, 0xaaaa);
    unit_fill(mem_d, REG_LEN, 0xdddd);
    CHECK_RC(loom_mem_register(ctx->engine, mem_a, REG_LEN, &reg_a), LOOM_OK);
    CHECK_RC(loom_mem_register(ctx->engine, mem_d, REG_LEN, &reg_d), LOOM_OK);
    CHECK_RC(loom_mem_register(ctx->engine, big, BIG_LEN, &reg_big), LOOM_OK);
    unit_send_region(ctx, reg_a, mem_a, REG_LEN);
    unit_send_region(ctx, reg_d, mem_d, REG_LEN);
    unit_send_region(ctx, reg_big, big, BIG_LEN);
    unit_send_u64(ctx, (uint64_t)(uintptr_t)victim);
    loom_mem_deregister(reg_d); /* its memory stays, unregistered */
    unit_barrier(ctx);

    ctx->log_quiet = true;
    while (STEP_DONE != unit_recv_u64(ctx)) {
        unit_send_u64(ctx, refused(ctx));
    }
    ctx->log_quiet = false;
    CHECK_MEM(victim, victim_ref, VICTIM_LEN, "the target's unregistered static array");
    unit_fill(expect, REG_LEN, 0xaaaa);
    CHECK_MEM(mem_a, expect, REG_LEN, "region A");
    unit_fill(expect, REG_LEN, 0xdddd);
    CHECK_MEM(mem_d, expect, REG_LEN, "the deregistered region's memory");
#ifndef LOOM_TEST_BEFORE_CHECKS
    CHECK(loom_engine_rail_stats(ctx->engine, 0)->writes_refused >= 4);
#endif
    CHECK(unit_log_contains(ctx, "refused a write"));
    unit_barrier(ctx);

    /* the forged push: served from A */
    unit_barrier(ctx);

    /* valid puts */
    unit_barrier(ctx);
    n = valid_sizes(ctx, sizes, offsets);
    memset(expect, 0, BIG_LEN);
    for (i = 0; i < n; ++i) {
        unit_fill(expect + offsets[i], sizes[i], 0x1000 + i);
    }
    CHECK_MEM(big, expect, BIG_LEN, "the big region after the valid puts");
    unit_barrier(ctx);
    counted_writes_target(ctx, big);
    counted_again_released_target(ctx);
    loom_mem_deregister(reg_a);
    loom_mem_deregister(reg_big);
    free(mem_a);
    free(mem_d);
    free(big);
    free(expect);
    free(victim_ref);
}

/* ---- writer (parent) --------------------------------------------------------- */

/* A write message of the parent's own making, header and length bytes of
 * fill, sent on rail 0. */
static void send_raw_put(unit_ctx_t *ctx, loom_wire_put_t *put, uint8_t fill, size_t length)
{
    uint8_t msg[sizeof(*put) + 256];
    struct iovec iov = {msg, sizeof(*put) + length};
    uint8_t flags = put->hdr.flags;
    int rc;

    CHECK(length <= sizeof(msg) - sizeof(*put));
    loom_wire_hdr_fill(&put->hdr, LOOM_WIRE_PUT, 0, sizeof(*put) + length);
    put->hdr.flags = flags;
    put->sender    = loom_le64(ctx->name);
    memcpy(msg, put, sizeof(*put));
    memset(msg + sizeof(*put), fill, length);
    while (LOOM_ERR_AGAIN == (rc = loom_am_issue(ctx->peer, 0, LOOM_WIRE_PUT, NULL, &iov, 1))) {
        unit_progress(ctx);
    }
    CHECK_RC(rc, LOOM_OK);
}

typedef struct writer {
    unit_ctx_t    *ctx;
    uint8_t       *src;
    loom_region_t *src_region;
    unsigned long  target_refused;
} writer_t;

static unsigned long ask_refused(writer_t *w)
{
    unit_send_u64(w->ctx, 1);
    return unit_recv_u64(w->ctx);
}

/* The target's refusals, once they grew past what we knew (a write with no
 * answer may still be on its way when we ask): 0 if they did not in 5 s. */
static unsigned long wait_refused(writer_t *w)
{
    double end = unit_now() + 5.0;
    unsigned long now;

    while ((now = ask_refused(w)) <= w->target_refused) {
        if (unit_now() > end) {
            return 0;
        }
        unit_progress_for(w->ctx, 0.01);
    }
    return now;
}

/* A put the target must refuse: completes with want, counted there. */
static void expect_refused_put(writer_t *w, uint64_t addr, const void *key, size_t key_size,
                               size_t length, int want, const char *what)
{
    unit_op_t uop;
    unsigned long now;
    int rc;

    unit_op_init(&uop);
    rc = loom_put(w->ctx->peer, &uop.op, w->src, w->src_region, addr, key, key_size, length);
    CHECK_MSG(LOOM_INPROGRESS == rc, "%s: loom_put returned %d (%s)", what, rc,
              loom_strerror(rc));
    UNIT_WAIT(w->ctx, uop.calls > 0);
    CHECK_MSG(want == uop.status, "%s: completed with %d (%s), expected %d (%s)", what,
              uop.status, loom_strerror(uop.status), want, loom_strerror(want));
    now = ask_refused(w);
    CHECK_MSG(now > w->target_refused, "%s: not counted by the target", what);
    w->target_refused = now;
}

/* A copy of key claiming [base, base + length). */
static void key_claim(uint8_t *key, const unit_remote_t *r, uint64_t base, uint64_t length)
{
    memcpy(key, r->key, r->key_size);
    base   = loom_le64(base);
    length = loom_le64(length);
    memcpy(key + offsetof(loom_wire_key_t, base), &base, sizeof(base));
    memcpy(key + offsetof(loom_wire_key_t, length), &length, sizeof(length));
}

static uint64_t span_base(uint64_t a, uint64_t b)
{
    return (a < b) ? a : b;
}

static uint64_t span_length(uint64_t a, uint64_t a_len, uint64_t b, uint64_t b_len)
{
    uint64_t end = (a + a_len > b + b_len) ? a + a_len : b + b_len;

    return end - span_base(a, b);
}

static void refused_puts(writer_t *w, const unit_remote_t *a, const unit_remote_t *d,
                         uint64_t target_victim)
{
    unit_ctx_t *ctx = w->ctx;
    uint8_t key[LOOM_OP_MSG_MAX];
    uint32_t epoch;
    unit_op_t uop;

    /* A's key, an address outside A: never sent */
    unit_op_init(&uop);
    CHECK_RC(loom_put(ctx->peer, &uop.op, w->src, w->src_region, target_victim, a->key,
                      a->key_size, 4096), LOOM_ERR_RANGE);
    /* A's id with a range claiming the static array: the target's table says no */
    key_claim(key, a, span_base(a->base, target_victim),
              span_length(a->base, a->length, target_victim, VICTIM_LEN));
    expect_refused_put(w, target_victim, key, a->key_size, 4096, LOOM_ERR_RANGE,
                       "put into the static array with A's id");
    expect_refused_put(w, target_victim, key, a->key_size, VICTIM_LEN, LOOM_ERR_RANGE,
                       "put of several segments into the static array");
    key_claim(key, a, a->base, 2 * a->length);
    expect_refused_put(w, a->base + a->length - 100, key, a->key_size, 200, LOOM_ERR_RANGE,
                       "put across the end of A");
    /* a stale epoch, a deregistered region */
    memcpy(key, a->key, a->key_size);
    memcpy(&epoch, key + offsetof(loom_wire_key_t, epoch), sizeof(epoch));
    epoch ^= 0x10000u;
    memcpy(key + offsetof(loom_wire_key_t, epoch), &epoch, sizeof(epoch));
    expect_refused_put(w, a->base, key, a->key_size, 1000, LOOM_ERR_STALE_KEY,
                       "put with a changed epoch");
    expect_refused_put(w, d->base, d->key, d->key_size, 1000, LOOM_ERR_STALE_KEY,
                       "put into a deregistered region");
#ifndef LOOM_TEST_BEFORE_CHECKS
    /* a write of an earlier connection of the rail: A's valid range */
    {
        loom_wire_put_t put;
        const loom_wire_key_t *akey = (const loom_wire_key_t *)a->key;
        unsigned long now;

        memset(&put, 0, sizeof(put));
        put.hdr.flags    = LOOM_WIRE_FLAG_LAST;
        put.write_id     = loom_le64(0xfeed);
        put.region_id    = akey->region_id;
        put.region_epoch = akey->epoch;
        put.addr         = loom_le64(a->base);
        put.length       = loom_le64(64);
        put.rail_epoch   = loom_le32(ctx->peer->rails[0].rail_epoch - 1);
        send_raw_put(ctx, &put, 0xee, 64);
        now = wait_refused(w);
        CHECK_MSG(now > w->target_refused, "a write of an earlier rail epoch: not refused");
        w->target_refused = now;
    }
#endif
}

/* Ask the target, as if it were a push request of ours, to write 4 KiB of
 * its A into our unregistered static array, named with our region's id and
 * a key changed to claim the array. */
static void forged_push(writer_t *w, const unit_remote_t *a)
{
    unit_ctx_t *ctx = w->ctx;
    size_t key_size = loom_key_size(ctx->engine);
    uint8_t msg[sizeof(loom_wire_push_req_t) + LOOM_OP_MSG_MAX], *ref;
    const loom_wire_key_t *akey = (const loom_wire_key_t *)a->key;
    uint64_t own_base = (uint64_t)(uintptr_t)w->src, pv = (uint64_t)(uintptr_t)p_victim;
    loom_wire_push_req_t req;
    struct iovec iov = {msg, sizeof(req) + key_size};
    unit_remote_t own;
    unsigned long before = refused(ctx);
    int rc;

    ref = unit_alloc(VICTIM_LEN);
    unit_fill(p_victim, VICTIM_LEN, 0x7171);
    memcpy(ref, p_victim, VICTIM_LEN);
    own.key_size = key_size;
    CHECK_RC(loom_key_pack(w->src_region, own.key, key_size), LOOM_OK);
    key_claim(msg + sizeof(req), &own, span_base(own_base, pv),
              span_length(own_base, VICTIM_LEN, pv, VICTIM_LEN));
    memset(&req, 0, sizeof(req));
    loom_wire_hdr_fill(&req.hdr, LOOM_WIRE_PUSH_REQ, 0, sizeof(req) + key_size);
    req.request_id    = loom_le64(0xf0f0f0ull);
    req.requester     = loom_le64(ctx->name);
    req.dest_proc     = loom_le64(ctx->name);
    req.notify_proc   = loom_le64(ctx->name);
    req.src_addr      = loom_le64(a->base);
    req.dst_addr      = loom_le64(pv + 1000);
    req.length        = loom_le64(4096);
    req.src_region_id = akey->region_id;
    req.src_epoch     = akey->epoch;
    memcpy(msg, &req, sizeof(req));
    ctx->log_quiet = true;
    while (LOOM_ERR_AGAIN == (rc = loom_am_issue(ctx->peer, 0, LOOM_WIRE_PUSH_REQ, NULL,
                                                 &iov, 1))) {
        unit_progress(ctx);
    }
    CHECK_RC(rc, LOOM_OK);
    /* its PUSH_DONE, for a request we never made, is refused too */
    UNIT_WAIT(ctx, refused(ctx) > before);
    unit_progress_for(ctx, 0.2);
    ctx->log_quiet = false;
    CHECK_MEM(p_victim, ref, VICTIM_LEN, "the requester's unregistered static array");
#ifndef LOOM_TEST_BEFORE_CHECKS
    CHECK(loom_engine_rail_stats(ctx->engine, 0)->writes_refused >= 1);
    CHECK(unit_log_contains(ctx, "refused a write"));
#endif
    free(ref);
}

static void valid_puts(writer_t *w, const unit_remote_t *big)
{
    unit_ctx_t *ctx = w->ctx;
    size_t sizes[NSIZES], offsets[NSIZES], n, i;
    uint8_t *data = unit_alloc(BIG_LEN);
    loom_region_t *region;
    unit_op_t uops[NSIZES];

    CHECK_RC(loom_mem_register(ctx->engine, data, BIG_LEN, &region), LOOM_OK);
    n = valid_sizes(ctx, sizes, offsets);
    for (i = 0; i < n; ++i) {
        unit_fill(data + offsets[i], sizes[i], 0x1000 + i);
        unit_op_init(&uops[i]);
        CHECK_RC(loom_put(ctx->peer, &uops[i].op, data + offsets[i], region,
                          big->base + offsets[i], big->key, big->key_size, sizes[i]),
                 LOOM_INPROGRESS);
    }
    unit_ops_wait_all(ctx, uops, n);
    loom_mem_deregister(region);
    free(data);
}

/* A push's write that counts on the target's counter, twice, with other
 * bytes the second time (no answer asked: write id 0). */
static void counted_writes(unit_ctx_t *ctx, const unit_remote_t *big)
{
    const loom_wire_key_t *key = (const loom_wire_key_t *)big->key;
    uint64_t counter = unit_recv_u64(ctx);
    loom_wire_push_notice_t notice;
    loom_wire_put_t put;

    memset(&put, 0, sizeof(put));
    put.hdr.flags    = LOOM_WIRE_FLAG_LAST | LOOM_WIRE_FLAG_COUNT;
    put.request_id   = loom_le64(0x77);
    put.requester    = loom_le64(ctx->name);
    put.counter      = loom_le64(counter);
    put.region_id    = key->region_id;
    put.region_epoch = key->epoch;
    put.addr         = loom_le64(big->base + COUNTED_AT);
    put.length       = loom_le64(COUNTED_LEN);
    put.rail_epoch   = loom_le32(ctx->peer->rails[0].rail_epoch);
    send_raw_put(ctx, &put, 0x61, COUNTED_LEN);
    send_raw_put(ctx, &put, 0x62, COUNTED_LEN);
    unit_barrier(ctx); /* the target counted */
    memset(&notice, 0, sizeof(notice));
    notice.kind       = LOOM_WIRE_PUSH_NOTICE;
    notice.status     = loom_le32(LOOM_WIRE_OK);
    notice.requester  = put.requester;
    notice.request_id = put.request_id;
    notice.length     = loom_le64(COUNTED_LEN);
    notice.counter    = put.counter;
    CHECK(loom_engine_msg_send(ctx->peer, &notice, sizeof(notice), NULL) >= 0);
    send_raw_put(ctx, &put, 0x63, COUNTED_LEN); /* a copy late on a failed rail */
    unit_barrier(ctx);
    unit_barrier(ctx); /* the target looked */
}

/* A counting push into memory the target releases once it landed, then
 * the same push again (counted_again_released_target). */
static void counted_again_released(unit_ctx_t *ctx)
{
    const loom_wire_key_t *key;
    unit_remote_t gone;
    loom_wire_put_t put;

    unit_recv_region(ctx, &gone);
    key = (const loom_wire_key_t *)gone.key;
    memset(&put, 0, sizeof(put));
    put.hdr.flags    = LOOM_WIRE_FLAG_LAST | LOOM_WIRE_FLAG_COUNT;
    put.request_id   = loom_le64(0x78);
    put.requester    = loom_le64(ctx->name);
    put.counter      = loom_le64(unit_recv_u64(ctx));
    put.region_id    = key->region_id;
    put.region_epoch = key->epoch;
    put.addr         = loom_le64(gone.base);
    put.length       = loom_le64(COUNTED_LEN);
    put.rail_epoch   = loom_le32(ctx->peer->rails[0].rail_epoch);
    send_raw_put(ctx, &put, 0x61, COUNTED_LEN);
    unit_barrier(ctx); /* the target released the memory */
    send_raw_put(ctx, &put, 0x64, COUNTED_LEN);
    unit_barrier(ctx);
    unit_barrier(ctx); /* the target looked */
}

static void writer_body(unit_ctx_t *ctx)
{
    unit_remote_t a, d, big;
    uint64_t target_victim;
    writer_t w;

    memset(&w, 0, sizeof(w));
    w.ctx = ctx;
    w.src = unit_alloc(REG_LEN > VICTIM_LEN ? REG_LEN : VICTIM_LEN);
    unit_fill(w.src, VICTIM_LEN, 0xbad);
    CHECK_RC(loom_mem_register(ctx->engine, w.src, VICTIM_LEN, &w.src_region), LOOM_OK);
    unit_recv_region(ctx, &a);
    unit_recv_region(ctx, &d);
    unit_recv_region(ctx, &big);
    target_victim = unit_recv_u64(ctx);
    unit_barrier(ctx);
    w.target_refused = ask_refused(&w);

    ctx->log_quiet = true;
    refused_puts(&w, &a, &d, target_victim);
    ctx->log_quiet = false;
    unit_send_u64(ctx, STEP_DONE);
    unit_barrier(ctx);

    forged_push(&w, &a);
    unit_barrier(ctx);

    valid_puts(&w, &big);
    unit_barrier(ctx);
    unit_barrier(ctx);
    counted_writes(ctx, &big);
    counted_again_released(ctx);
    loom_mem_deregister(w.src_region);
    free(w.src);
}

int main(void)
{
    return unit_main("checked", NULL, writer_body, target_body);
}
