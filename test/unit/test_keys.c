/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Remote keys.  The child owns memory, the parent gets from it.
 *  - a get naming a region its owner deregistered completes with
 *    LOOM_ERR_STALE_KEY and writes nothing, also after the owner registered
 *    new memory at the same address (region ids are not reused);
 *  - a key whose epoch field was changed is refused (LOOM_ERR_STALE_KEY);
 *  - ranges outside the region are refused (LOOM_ERR_RANGE): at once by
 *    loom_get/loom_put when outside what the key says, by the owner when the
 *    key was changed to claim more;
 *  - each of these counts once in the owner's refused counter, and the
 *    engine keeps working (a good get, a put and an AM afterwards);
 *  - keys that do not parse (truncated, absurd rail_count or stride, id 0)
 *    are refused by loom_get/loom_put at once, without a callback.
 */
#include "unit_harness.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/wire.h"

#define REG_LEN   65536
#define DST_LEN   (4 * REG_LEN)
#define STEP_DONE UINT64_MAX

/* ---- owner (child) ----------------------------------------------------------- */

static uint64_t owner_refused(unit_ctx_t *ctx)
{
    return loom_engine_rail_stats(ctx->engine, 0)->refused;
}

static void owner_body(unit_ctx_t *ctx)
{
    uint8_t *mem_a = unit_alloc(REG_LEN), *mem_b = unit_alloc(REG_LEN);
    loom_region_t *reg_a, *reg_b, *reg_b2;
    uint64_t step;

    unit_fill(mem_a, REG_LEN, 0xaaaa);
    unit_fill(mem_b, REG_LEN, 0xbbbb);
    CHECK_RC(loom_mem_register(ctx->engine, mem_a, REG_LEN, &reg_a), LOOM_OK);
    CHECK_RC(loom_mem_register(ctx->engine, mem_b, REG_LEN, &reg_b), LOOM_OK);
    unit_send_region(ctx, reg_a, mem_a, REG_LEN);
    unit_send_region(ctx, reg_b, mem_b, REG_LEN);
    unit_barrier(ctx);

    /* B goes away; the same memory comes back as a new region. */
    loom_mem_deregister(reg_b);
    CHECK_RC(loom_mem_register(ctx->engine, mem_b, REG_LEN, &reg_b2), LOOM_OK);
    unit_send_region(ctx, reg_b2, mem_b, REG_LEN);
    unit_barrier(ctx);

    /* Answer each of the requester's steps with our refused counter. */
    ctx->log_quiet = true;
    while (STEP_DONE != (step = unit_recv_u64(ctx))) {
        unit_send_u64(ctx, owner_refused(ctx));
    }
    ctx->log_quiet = false;
    CHECK(unit_log_contains(ctx, "refused a push request"));
    unit_barrier(ctx);
    /* a put from the requester landed in A; the rest of A is as it was */
    {
        uint8_t *expect = unit_alloc(REG_LEN);
        unit_fill(expect, REG_LEN, 0xaaaa);
        unit_fill(expect + 100, 1000, 0x9999);
        CHECK_MEM(mem_a, expect, REG_LEN, "region A after the final put");
        free(expect);
    }
    UNIT_WAIT(ctx, ctx->msg_count >= 1);
    CHECK_EQ(ctx->msgs[0].tag, 7);
    unit_barrier(ctx);
    loom_mem_deregister(reg_a);
    loom_mem_deregister(reg_b2);
    free(mem_a);
    free(mem_b);
}

/* ---- requester (parent) ---------------------------------------------------------- */

typedef struct keys_state {
    unit_ctx_t    *ctx;
    uint8_t       *dst;
    uint8_t       *dst_ref;
    loom_region_t *dst_region;
    unit_remote_t  a, b, b2;
    uint64_t       owner_refused;
    uint64_t       step;
} keys_state_t;

static uint64_t ask_owner_refused(keys_state_t *st)
{
    unit_send_u64(st->ctx, ++st->step);
    return unit_recv_u64(st->ctx);
}

/* A get the owner must refuse with want; nothing may land; one refusal counted. */
static void expect_refused_get(keys_state_t *st, uint64_t addr, const void *key,
                               size_t key_size, size_t length, int want, const char *what)
{
    unit_ctx_t *ctx = st->ctx;
    size_t outstanding = loom_engine_outstanding(ctx->engine);
    uint64_t refused;
    unit_op_t uop;
    int rc;

    unit_op_init(&uop);
    rc = loom_get(ctx->peer, &uop.op, st->dst + 64, st->dst_region, addr, key, key_size,
                  length);
    CHECK_MSG(LOOM_INPROGRESS == rc, "%s: loom_get returned %d (%s), expected the "
              "owner to refuse it", what, rc, loom_strerror(rc));
    UNIT_WAIT(ctx, uop.calls > 0);
    unit_progress_for(ctx, 0.05);
    CHECK_MSG(1 == uop.calls, "%s: callback ran %d times", what, uop.calls);
    CHECK_MSG(want == uop.status, "%s: completed with %d (%s), expected %d (%s)", what,
              uop.status, loom_strerror(uop.status), want, loom_strerror(want));
    CHECK_MEM(st->dst, st->dst_ref, DST_LEN, what);
    CHECK_UEQ(loom_engine_outstanding(ctx->engine), outstanding);
    refused = ask_owner_refused(st);
    CHECK_MSG(refused == st->owner_refused + 1, "%s: the owner's refused counter went "
              "from %llu to %llu, expected one more", what,
              (unsigned long long)st->owner_refused, (unsigned long long)refused);
    st->owner_refused = refused;
}

/* A range outside the key's region: loom_get and loom_put refuse it at once,
 * the owner sees nothing. */
static void expect_range_refused(keys_state_t *st, uint64_t addr, size_t length,
                                 const char *what)
{
    unit_ctx_t *ctx = st->ctx;
    size_t outstanding = loom_engine_outstanding(ctx->engine);
    unit_op_t get_op, put_op;

    unit_op_init(&get_op);
    unit_op_init(&put_op);
    CHECK_MSG(LOOM_ERR_RANGE == loom_get(ctx->peer, &get_op.op, st->dst + 64, st->dst_region,
                                         addr, st->a.key, st->a.key_size, length),
              "%s: loom_get did not refuse the range at once", what);
    CHECK_MSG(LOOM_ERR_RANGE == loom_put(ctx->peer, &put_op.op, st->dst + 64, st->dst_region,
                                         addr, st->a.key, st->a.key_size, length),
              "%s: loom_put did not refuse the range at once", what);
    unit_progress_for(ctx, 0.02);
    CHECK_MSG(0 == get_op.calls && 0 == put_op.calls, "%s: a refused operation ran its "
              "callback", what);
    CHECK_UEQ(loom_engine_outstanding(ctx->engine), outstanding);
    CHECK_MEM(st->dst, st->dst_ref, DST_LEN, what);
    CHECK_UEQ(ask_owner_refused(st), st->owner_refused);
}

static void expect_good_get(keys_state_t *st, const unit_remote_t *r, uint64_t off,
                            size_t length, uint64_t seed)
{
    unit_ctx_t *ctx = st->ctx;
    uint8_t *expect = unit_alloc(REG_LEN);
    unit_op_t uop;

    unit_fill(expect, REG_LEN, seed);
    unit_op_init(&uop);
    CHECK_RC(loom_get(ctx->peer, &uop.op, st->dst + 128, st->dst_region, r->base + off,
                      r->key, r->key_size, length), LOOM_INPROGRESS);
    UNIT_WAIT(ctx, uop.calls > 0);
    CHECK_RC(uop.status, LOOM_OK);
    CHECK_MEM(st->dst + 128, expect + off, length, "good get");
    CHECK_MEM(st->dst, st->dst_ref, 128, "bytes before a good get");
    CHECK_MEM(st->dst + 128 + length, st->dst_ref + 128 + length, DST_LEN - 128 - length,
              "bytes after a good get");
    memcpy(st->dst + 128, st->dst_ref + 128, length);
    CHECK_UEQ(ask_owner_refused(st), st->owner_refused);
    free(expect);
}

/* loom_get and loom_put must refuse a key that does not parse, at once. */
static void expect_local_refusal(keys_state_t *st, const void *key, size_t key_size,
                                 const char *what)
{
    unit_ctx_t *ctx = st->ctx;
    loom_rail_stats_t *stats = loom_engine_rail_stats(ctx->engine, 0);
    unsigned long refused = stats->refused;
    size_t outstanding = loom_engine_outstanding(ctx->engine);
    unit_op_t get_op, put_op;
    int rc;

    unit_op_init(&get_op);
    unit_op_init(&put_op);
    rc = loom_get(ctx->peer, &get_op.op, st->dst, st->dst_region, st->a.base, key,
                  key_size, 16);
    CHECK_MSG(rc < 0, "%s: loom_get returned %d (%s), expected an error", what, rc,
              loom_strerror(rc));
    rc = loom_put(ctx->peer, &put_op.op, st->dst, st->dst_region, st->a.base, key,
                  key_size, 16);
    CHECK_MSG(rc < 0, "%s: loom_put returned %d (%s), expected an error", what, rc,
              loom_strerror(rc));
    unit_progress_for(ctx, 0.02);
    CHECK_MSG(0 == get_op.calls && 0 == put_op.calls, "%s: a refused operation ran its "
              "callback", what);
    CHECK_UEQ(loom_engine_outstanding(ctx->engine), outstanding);
    CHECK_UEQ(stats->refused, refused + 2);
    CHECK_MEM(st->dst, st->dst_ref, DST_LEN, what);
}

static void key_set16(uint8_t *key, size_t offset, uint16_t value)
{
    value = loom_le16(value);
    memcpy(key + offset, &value, sizeof(value));
}

static void local_refusals(keys_state_t *st)
{
    size_t size = st->a.key_size;
    uint8_t key[LOOM_OP_MSG_MAX];
    uint64_t zero = 0;
    uint16_t stride;

    CHECK(size >= sizeof(loom_wire_key_t) + sizeof(uint16_t));
    expect_local_refusal(st, NULL, size, "NULL key");
    expect_local_refusal(st, st->a.key, 0, "empty key");
    expect_local_refusal(st, st->a.key, sizeof(loom_wire_key_t) - 1,
                         "key shorter than its header");
    expect_local_refusal(st, st->a.key, size - 1, "key missing its last byte");

    memcpy(key, st->a.key, size);
    key_set16(key, offsetof(loom_wire_key_t, rail_count), LOOM_MAX_RAILS + 1);
    expect_local_refusal(st, key, size, "rail_count LOOM_MAX_RAILS + 1");
    key_set16(key, offsetof(loom_wire_key_t, rail_count), 0xffff);
    expect_local_refusal(st, key, size, "rail_count 65535");
    key_set16(key, offsetof(loom_wire_key_t, rail_count), 2);
    expect_local_refusal(st, key, size, "rail_count one more than the key holds");
    {
        /* LOOM_MAX_RAILS + 1 slots, all really there: refused for the count alone */
        size_t slot = size - sizeof(loom_wire_key_t), k, big;

        CHECK(sizeof(loom_wire_key_t) + (LOOM_MAX_RAILS + 1) * slot <= sizeof(key));
        memcpy(key, st->a.key, size);
        for (k = 1; k <= LOOM_MAX_RAILS; ++k) {
            memcpy(key + sizeof(loom_wire_key_t) + k * slot, key + sizeof(loom_wire_key_t),
                   slot);
        }
        big = sizeof(loom_wire_key_t) + (LOOM_MAX_RAILS + 1) * slot;
        key_set16(key, offsetof(loom_wire_key_t, rail_count), LOOM_MAX_RAILS + 1);
        expect_local_refusal(st, key, big, "rail_count LOOM_MAX_RAILS + 1 with every slot");
    }

    memcpy(key, st->a.key, size);
    key_set16(key, offsetof(loom_wire_key_t, rkey_stride), 1);
    expect_local_refusal(st, key, size, "rkey_stride below the slot header");
    key_set16(key, offsetof(loom_wire_key_t, rkey_stride), 0xffff);
    expect_local_refusal(st, key, size, "rkey_stride past the key");

    memcpy(key, st->a.key, size);
    memcpy(&stride, key + offsetof(loom_wire_key_t, rkey_stride), sizeof(stride));
    key_set16(key, sizeof(loom_wire_key_t), (uint16_t)(loom_from_le16(stride) - 1));
    expect_local_refusal(st, key, size, "slot length past its stride");

    memcpy(key, st->a.key, size);
    memcpy(key + offsetof(loom_wire_key_t, region_id), &zero, sizeof(zero));
    expect_local_refusal(st, key, size, "region id 0");

    /* Not a key problem, but also refused at once: get into unregistered memory. */
    {
        unit_op_t uop;
        unit_op_init(&uop);
        CHECK_RC(loom_get(st->ctx->peer, &uop.op, st->dst, NULL, st->a.base, st->a.key,
                          st->a.key_size, 16), LOOM_ERR_INVALID);
        unit_progress_for(st->ctx, 0.02);
        CHECK_EQ(uop.calls, 0);
    }
}

static void requester_body(unit_ctx_t *ctx)
{
    keys_state_t st;
    uint8_t key[LOOM_OP_MSG_MAX];
    uint32_t epoch;
    size_t epoch_at = offsetof(loom_wire_key_t, epoch);

    memset(&st, 0, sizeof(st));
    st.ctx     = ctx;
    st.dst     = unit_alloc(DST_LEN);
    st.dst_ref = unit_alloc(DST_LEN);
    unit_fill(st.dst_ref, DST_LEN, 0xd0d0);
    memcpy(st.dst, st.dst_ref, DST_LEN);
    CHECK_RC(loom_mem_register(ctx->engine, st.dst, DST_LEN, &st.dst_region), LOOM_OK);
    unit_recv_region(ctx, &st.a);
    unit_recv_region(ctx, &st.b);
    unit_barrier(ctx);
    unit_recv_region(ctx, &st.b2);
    unit_barrier(ctx);
    CHECK_UEQ(st.b2.base, st.b.base);
    CHECK_MSG(0 != memcmp(st.b.key, st.b2.key, st.b.key_size), "a new region has the "
              "same key as the deregistered one at its address");
    st.owner_refused = ask_owner_refused(&st);

    /* All good to begin with. */
    expect_good_get(&st, &st.a, 0, 4096, 0xaaaa);

    ctx->log_quiet = true;
    /* The deregistered region, with and without new memory at its address. */
    expect_refused_get(&st, st.b.base, st.b.key, st.b.key_size, 100, LOOM_ERR_STALE_KEY,
                       "get from a deregistered region");
    expect_refused_get(&st, st.b.base + 4096, st.b.key, st.b.key_size, REG_LEN - 4096,
                       LOOM_ERR_STALE_KEY, "get from a deregistered region (large)");
    /* one error for both, but the log says which the owner found */
    CHECK(unit_log_contains(ctx, "refused our get of 100 bytes: remote key refused (unknown:"));

    /* A's key with its epoch changed: all bits, then one. */
    memcpy(key, st.a.key, st.a.key_size);
    memcpy(&epoch, key + epoch_at, sizeof(epoch));
    epoch = ~epoch;
    memcpy(key + epoch_at, &epoch, sizeof(epoch));
    expect_refused_get(&st, st.a.base, key, st.a.key_size, 100, LOOM_ERR_STALE_KEY,
                       "get with the epoch bits flipped");
    epoch = ~epoch ^ 0x00010000u;
    memcpy(key + epoch_at, &epoch, sizeof(epoch));
    expect_refused_get(&st, st.a.base, key, st.a.key_size, 100, LOOM_ERR_STALE_KEY,
                       "get with one epoch bit flipped");
    CHECK(unit_log_contains(ctx, "refused our get of 100 bytes: remote key refused (stale:"));

    /* Ranges outside A: refused by the requester, before anything is sent. */
    expect_range_refused(&st, st.a.base + REG_LEN, 1, "get starting at the end of the region");
    expect_range_refused(&st, st.a.base + REG_LEN + 4096, 16,
                         "get starting past the end of the region");
    expect_range_refused(&st, st.a.base, REG_LEN + 1, "get one byte longer than the region");
    expect_range_refused(&st, st.a.base + REG_LEN - 10, 20, "get across the end of the region");
    expect_range_refused(&st, st.a.base - 1, 16, "get starting before the region");
    expect_range_refused(&st, UINT64_MAX - 5, 10, "get whose end wraps around");

    /* A key whose base and length were changed to cover more: the owner
     * refuses by its own table. */
    {
        uint64_t base = loom_le64(st.a.base - 4096), len = loom_le64(3 * REG_LEN);

        memcpy(key, st.a.key, st.a.key_size);
        memcpy(key + offsetof(loom_wire_key_t, base), &base, sizeof(base));
        memcpy(key + offsetof(loom_wire_key_t, length), &len, sizeof(len));
        expect_refused_get(&st, st.a.base + REG_LEN - 10, key, st.a.key_size, 20,
                           LOOM_ERR_RANGE, "get across the end, with a key claiming more");
        expect_refused_get(&st, st.a.base - 16, key, st.a.key_size, 16,
                           LOOM_ERR_RANGE, "get before the region, with a key claiming more");
    }
    ctx->log_quiet = false;
    CHECK(unit_log_contains(ctx, "refused our get"));

    /* Refused before anything is sent. */
    local_refusals(&st);
    CHECK_UEQ(ask_owner_refused(&st), st.owner_refused);

    /* Still working: good gets from A and from the new region at B's address,
     * a put, and an AM. */
    expect_good_get(&st, &st.a, 1, REG_LEN - 1, 0xaaaa);
    expect_good_get(&st, &st.b2, 0, REG_LEN, 0xbbbb);
    {
        struct iovec iov = {(void *)"after", 5};
        unit_op_t uop;

        unit_op_init(&uop);
        unit_fill(st.dst, 1000, 0x9999);
        CHECK_RC(loom_put(ctx->peer, &uop.op, st.dst, st.dst_region, st.a.base + 100,
                          st.a.key, st.a.key_size, 1000), LOOM_INPROGRESS);
        UNIT_WAIT(ctx, uop.calls > 0);
        CHECK_RC(uop.status, LOOM_OK);
        memcpy(st.dst, st.dst_ref, 1000);
        unit_send_u64(ctx, STEP_DONE);
        unit_barrier(ctx);
        CHECK_RC(unit_am_send(ctx, ctx->peer, 7, iov.iov_base, iov.iov_len), LOOM_OK);
    }
    unit_barrier(ctx);
    loom_mem_deregister(st.dst_region);
    free(st.dst);
    free(st.dst_ref);
}

int main(void)
{
    return unit_main("keys", NULL, requester_body, owner_body);
}
