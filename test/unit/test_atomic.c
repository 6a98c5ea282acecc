/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Atomics (loom_atomic) between two processes on tcp:lo:
 * - semantics: every op on 4- and 8-byte words, signed min/max with negative
 *   values, compare-and-swap that swaps and one that does not: the value
 *   returned is the word's before, and the word afterwards is what the
 *   reference says, read by its owner;
 * - contention: both processes add 1 to the same word of the child many
 *   times, the parent remotely (up to 64 in flight), the child with its own
 *   CPU atomics between progress calls: the word ends at the sum, and every
 *   value the parent fetched is distinct;
 * - refusals: unaligned, outside the key's region, not 4 or 8 bytes (at
 *   once); a region registered without atomic access, and one deregistered
 *   (refused by the target, counted there); tag 255 from the upper layer.
 */
#include "unit_harness.h"

#include <stdlib.h>
#include <string.h>

#define WORDS       64
#define REGION_LEN  (WORDS * sizeof(uint64_t))
#define ADDS        4000
#define IN_FLIGHT   64

typedef struct atomic_case {
    int      op;
    unsigned size;
    uint64_t init;
    uint64_t operand;
    uint64_t compare;
} atomic_case_t;

static const atomic_case_t cases[] = {
    {LOOM_ATOMIC_ADD,   8, 5, 7, 0},
    {LOOM_ATOMIC_ADD,   8, UINT64_MAX, 2, 0},            /* wraps */
    {LOOM_ATOMIC_AND,   8, 0xff00ff00ff00ff00ull, 0x0ff00ff00ff00ff0ull, 0},
    {LOOM_ATOMIC_OR,    8, 0x1010, 0x0101, 0},
    {LOOM_ATOMIC_XOR,   8, 0xffff, 0x0ff0, 0},
    {LOOM_ATOMIC_LAND,  8, 3, 0, 0},
    {LOOM_ATOMIC_LOR,   8, 0, 9, 0},
    {LOOM_ATOMIC_LXOR,  8, 4, 4, 0},
    {LOOM_ATOMIC_SWAP,  8, 11, 22, 0},
    {LOOM_ATOMIC_MIN,   8, 5, (uint64_t)-3, 0},          /* signed: -3 < 5 */
    {LOOM_ATOMIC_MAX,   8, (uint64_t)-8, (uint64_t)-2, 0},
    {LOOM_ATOMIC_CSWAP, 8, 40, 41, 40},                  /* swaps */
    {LOOM_ATOMIC_CSWAP, 8, 40, 41, 39},                  /* does not */
    {LOOM_ATOMIC_ADD,   4, 0xfffffffe, 3, 0},            /* wraps in 32 bits */
    {LOOM_ATOMIC_AND,   4, 0xf0f0f0f0, 0xff00ff00, 0},
    {LOOM_ATOMIC_OR,    4, 1, 6, 0},
    {LOOM_ATOMIC_XOR,   4, 5, 5, 0},
    {LOOM_ATOMIC_SWAP,  4, 1, 2, 0},
    {LOOM_ATOMIC_MIN,   4, 7, 0xfffffff0, 0},            /* -16 */
    {LOOM_ATOMIC_MAX,   4, 0xfffffff0, 0xfffffff1, 0},   /* -15 > -16 */
    {LOOM_ATOMIC_LXOR,  4, 0, 7, 0},
    {LOOM_ATOMIC_CSWAP, 4, 9, 10, 9},
    {LOOM_ATOMIC_CSWAP, 4, 9, 10, 8},
};
#define CASES (sizeof(cases) / sizeof(cases[0]))

/* What the word holds after the case's operation (size bytes). */
static uint64_t atomic_reference(const atomic_case_t *c)
{
    uint64_t mask = (8 == c->size) ? UINT64_MAX : 0xffffffffull;
    uint64_t a = c->init & mask, b = c->operand & mask, r;
    int64_t sa = (8 == c->size) ? (int64_t)a : (int64_t)(int32_t)a;
    int64_t sb = (8 == c->size) ? (int64_t)b : (int64_t)(int32_t)b;

    switch (c->op) {
    case LOOM_ATOMIC_ADD:   r = a + b; break;
    case LOOM_ATOMIC_AND:   r = a & b; break;
    case LOOM_ATOMIC_OR:    r = a | b; break;
    case LOOM_ATOMIC_XOR:   r = a ^ b; break;
    case LOOM_ATOMIC_LAND:  r = a && b; break;
    case LOOM_ATOMIC_LOR:   r = a || b; break;
    case LOOM_ATOMIC_LXOR:  r = !a != !b; break;
    case LOOM_ATOMIC_SWAP:  r = b; break;
    case LOOM_ATOMIC_MIN:   r = (sb < sa) ? b : a; break;
    case LOOM_ATOMIC_MAX:   r = (sb > sa) ? b : a; break;
    default:                r = (a == (c->compare & mask)) ? b : a; break;
    }
    return r & mask;
}

/* Word i of the region, as the case's size sees it. */
static void word_set(uint64_t *words, size_t i, const atomic_case_t *c)
{
    if (8 == c->size) {
        words[i] = c->init;
    } else {
        uint32_t v = (uint32_t)c->init;
        memcpy(&words[i], &v, sizeof(v));
    }
}

static uint64_t word_get(const uint64_t *words, size_t i, unsigned size)
{
    uint32_t v;

    if (8 == size) {
        return words[i];
    }
    memcpy(&v, &words[i], sizeof(v));
    return v;
}

typedef struct atomic_state {
    uint64_t      *words;      /* atomic access */
    uint64_t      *plain;      /* remote write only */
    uint64_t      *gone;       /* deregistered before it is used */
    loom_region_t *region, *plain_region, *gone_region;
    unit_remote_t  remote, remote_plain, remote_gone;
} atomic_state_t;

static void atomic_setup(unit_ctx_t *ctx, atomic_state_t *st)
{
    size_t i;

    st->words = unit_alloc(REGION_LEN);
    st->plain = unit_alloc(REGION_LEN);
    st->gone  = unit_alloc(REGION_LEN);
    for (i = 0; i < CASES; ++i) {
        word_set(st->words, i, &cases[i]);
    }
    CHECK_RC(loom_mem_register(ctx->engine, st->words, REGION_LEN, &st->region), LOOM_OK);
    CHECK_RC(loom_mem_register_access(ctx->engine, st->plain, REGION_LEN,
                                      LOOM_ACCESS_REMOTE_WRITE | LOOM_ACCESS_REMOTE_READ,
                                      &st->plain_region), LOOM_OK);
    CHECK_RC(loom_mem_register(ctx->engine, st->gone, REGION_LEN, &st->gone_region), LOOM_OK);
    unit_send_region(ctx, st->region, st->words, REGION_LEN);
    unit_send_region(ctx, st->plain_region, st->plain, REGION_LEN);
    unit_send_region(ctx, st->gone_region, st->gone, REGION_LEN);
    unit_recv_region(ctx, &st->remote);
    unit_recv_region(ctx, &st->remote_plain);
    unit_recv_region(ctx, &st->remote_gone);
    loom_mem_deregister(st->gone_region); /* its key names a region gone */
    unit_barrier(ctx);
}

static int atomic_issue(unit_ctx_t *ctx, const unit_remote_t *remote, size_t offset,
                        const atomic_case_t *c, unit_op_t *uop, uint64_t *result)
{
    unit_op_init(uop);
    return loom_atomic(ctx->peer, &uop->op, c->op, c->size, remote->base + offset,
                       remote->key, remote->key_size, c->operand, c->compare, result);
}

/* Parent: each case on its own word of the child's region. */
static void atomic_semantics(unit_ctx_t *ctx, atomic_state_t *st)
{
    uint64_t words[WORDS], result;
    unit_op_t uop;
    size_t i;

    if (!ctx->is_parent) {
        CHECK_UEQ(unit_recv_u64(ctx), CASES);
        unit_send(ctx, st->words, REGION_LEN);
        return;
    }
    for (i = 0; i < CASES; ++i) {
        result = 0xdeadbeefdeadbeefull;
        CHECK_RC(atomic_issue(ctx, &st->remote, i * sizeof(uint64_t), &cases[i], &uop,
                              &result), LOOM_INPROGRESS);
        UNIT_WAIT(ctx, uop.calls > 0);
        CHECK_RC(uop.status, LOOM_OK);
        if (4 == cases[i].size) {
            uint32_t r32;
            memcpy(&r32, &result, sizeof(r32));
            CHECK_UEQ(r32, (uint32_t)cases[i].init);
            CHECK_UEQ(result >> 32, 0xdeadbeefull); /* only 4 bytes written */
        } else {
            CHECK_UEQ(result, cases[i].init);
        }
    }
    unit_send_u64(ctx, CASES);
    unit_recv(ctx, words, REGION_LEN);
    for (i = 0; i < CASES; ++i) {
        CHECK_MSG(word_get(words, i, cases[i].size) == atomic_reference(&cases[i]),
                  "case %zu (op %d, %u bytes): word %#llx, expected %#llx", i, cases[i].op,
                  cases[i].size, (unsigned long long)word_get(words, i, cases[i].size),
                  (unsigned long long)atomic_reference(&cases[i]));
    }
    unit_note("%zu atomics: results and words as the reference says", CASES);
}

/* Both add to the child's last word at once, the parent remotely. */
static void atomic_contention(unit_ctx_t *ctx, atomic_state_t *st)
{
    static const atomic_case_t add = {LOOM_ATOMIC_ADD, 8, 0, 1, 0};
    size_t offset = (WORDS - 1) * sizeof(uint64_t), issued = 0, done = 0, i, slot;
    static uint64_t results[ADDS];
    static unit_op_t uops[IN_FLIGHT];
    size_t slot_of[IN_FLIGHT];
    uint8_t *seen;

    unit_barrier(ctx);
    if (!ctx->is_parent) {
        for (i = 0; i < ADDS; ++i) {
            __atomic_fetch_add(&st->words[WORDS - 1], 1, __ATOMIC_ACQ_REL);
            unit_progress(ctx);
        }
        CHECK_UEQ(unit_recv_u64(ctx), ADDS); /* the parent's are all answered */
        CHECK_UEQ(__atomic_load_n(&st->words[WORDS - 1], __ATOMIC_ACQUIRE), 2 * ADDS);
        unit_send_u64(ctx, st->words[WORDS - 1]);
        return;
    }
    for (slot = 0; slot < IN_FLIGHT; ++slot) {
        uops[slot].calls = 1; /* free */
        slot_of[slot]    = SIZE_MAX;
    }
    while (done < ADDS) {
        for (slot = 0; slot < IN_FLIGHT; ++slot) {
            if (SIZE_MAX != slot_of[slot] && uops[slot].calls > 0) {
                CHECK_RC(uops[slot].status, LOOM_OK);
                slot_of[slot] = SIZE_MAX;
                ++done;
            }
            if (SIZE_MAX == slot_of[slot] && issued < ADDS) {
                CHECK_RC(atomic_issue(ctx, &st->remote, offset, &add, &uops[slot],
                                      &results[issued]), LOOM_INPROGRESS);
                slot_of[slot] = issued++;
            }
        }
        unit_progress(ctx);
    }
    unit_send_u64(ctx, ADDS);
    CHECK_UEQ(unit_recv_u64(ctx), 2 * ADDS);
    seen = calloc(2 * ADDS, 1);
    CHECK(NULL != seen);
    for (i = 0; i < ADDS; ++i) {
        CHECK_MSG(results[i] < 2 * ADDS && !seen[results[i]], "add %zu fetched %llu: out of "
                  "range or fetched twice", i, (unsigned long long)results[i]);
        seen[results[i]] = 1;
    }
    free(seen);
    unit_note("%d remote and %d local adds on one word: %d, every fetched value distinct",
              ADDS, ADDS, 2 * ADDS);
}

static void atomic_refusals(unit_ctx_t *ctx, atomic_state_t *st)
{
    static const atomic_case_t add = {LOOM_ATOMIC_ADD, 8, 0, 1, 0};
    static const atomic_case_t odd = {LOOM_ATOMIC_ADD, 2, 0, 1, 0};
    loom_rail_stats_t before = *loom_engine_rail_stats(ctx->engine, 0);
    struct iovec iov = {"x", 1};
    unit_op_t uop;
    uint64_t result;

    unit_barrier(ctx);
    if (!ctx->is_parent) {
        CHECK_UEQ(unit_recv_u64(ctx), 2);
        CHECK_UEQ(loom_engine_rail_stats(ctx->engine, 0)->refused - before.refused, 2);
        unit_send_u64(ctx, 0);
        return;
    }
    ctx->log_quiet = true;
    CHECK_RC(atomic_issue(ctx, &st->remote, 4, &add, &uop, &result), LOOM_ERR_INVALID);
    CHECK_RC(atomic_issue(ctx, &st->remote, REGION_LEN, &add, &uop, &result), LOOM_ERR_RANGE);
    CHECK_RC(atomic_issue(ctx, &st->remote, 0, &odd, &uop, &result), LOOM_ERR_INVALID);
    CHECK_RC(atomic_issue(ctx, &st->remote_plain, 0, &add, &uop, &result), LOOM_INPROGRESS);
    UNIT_WAIT(ctx, uop.calls > 0);
    CHECK_RC(uop.status, LOOM_ERR_STALE_KEY);
    CHECK_RC(atomic_issue(ctx, &st->remote_gone, 0, &add, &uop, &result), LOOM_INPROGRESS);
    UNIT_WAIT(ctx, uop.calls > 0);
    CHECK_RC(uop.status, LOOM_ERR_STALE_KEY);
    CHECK_RC(loom_am_send(ctx->peer, 255, &iov, 1, NULL), LOOM_ERR_INVALID);
    ctx->log_quiet = false;
    unit_send_u64(ctx, 2);
    CHECK_UEQ(unit_recv_u64(ctx), 0);
    unit_note("refused: unaligned, out of range, 2 bytes (at once); no atomic access and a "
              "region gone (by the target); tag 255 from the upper layer");
}

/* Each process on its own memory through its own keys (loom_local_*): every
 * case against the reference, put and get byte for byte, and the same
 * refusals a peer would meet. */
static void atomic_local(unit_ctx_t *ctx, atomic_state_t *st)
{
    size_t key_size = loom_key_size(ctx->engine), i;
    uint8_t *key = calloc(1, key_size), *plain_key = calloc(1, key_size);
    uint8_t *gone_key = calloc(1, key_size), *bytes = unit_alloc(REGION_LEN);
    uint64_t *words = unit_alloc(REGION_LEN), result;
    loom_region_t *region, *gone;

    CHECK(NULL != key && NULL != plain_key && NULL != gone_key);
    for (i = 0; i < CASES; ++i) {
        word_set(words, i, &cases[i]);
    }
    CHECK_RC(loom_mem_register(ctx->engine, words, REGION_LEN, &region), LOOM_OK);
    CHECK_RC(loom_mem_register(ctx->engine, bytes, REGION_LEN, &gone), LOOM_OK);
    CHECK_RC(loom_key_pack(region, key, key_size), LOOM_OK);
    CHECK_RC(loom_key_pack(st->plain_region, plain_key, key_size), LOOM_OK);
    CHECK_RC(loom_key_pack(gone, gone_key, key_size), LOOM_OK);
    loom_mem_deregister(gone);
    for (i = 0; i < CASES; ++i) {
        result = 0;
        CHECK_RC(loom_local_atomic(ctx->engine, cases[i].op, cases[i].size,
                                   (uint64_t)(uintptr_t)&words[i], key, key_size,
                                   cases[i].operand, cases[i].compare, &result), LOOM_OK);
        CHECK_UEQ(result, (8 == cases[i].size) ? cases[i].init : (uint32_t)cases[i].init);
        CHECK_UEQ(word_get(words, i, cases[i].size), atomic_reference(&cases[i]));
    }
    for (i = 0; i < REGION_LEN; ++i) {
        bytes[i] = (uint8_t)(i * 7 + 1);
    }
    CHECK_RC(loom_local_put(ctx->engine, bytes, (uint64_t)(uintptr_t)st->plain, plain_key,
                            key_size, REGION_LEN), LOOM_OK);
    CHECK_MEM(st->plain, bytes, REGION_LEN, "own region after a local put");
    memset(bytes, 0, REGION_LEN);
    CHECK_RC(loom_local_get(ctx->engine, bytes, (uint64_t)(uintptr_t)st->plain, plain_key,
                            key_size, REGION_LEN), LOOM_OK);
    CHECK_MEM(bytes, st->plain, REGION_LEN, "a local get of the own region");

    ctx->log_quiet = true;
    CHECK_RC(loom_local_atomic(ctx->engine, LOOM_ATOMIC_ADD, 8, (uint64_t)(uintptr_t)st->plain,
                               plain_key, key_size, 1, 0, &result), LOOM_ERR_STALE_KEY);
    CHECK_RC(loom_local_atomic(ctx->engine, LOOM_ATOMIC_ADD, 8,
                               (uint64_t)(uintptr_t)words + 4, key, key_size, 1, 0, &result),
             LOOM_ERR_INVALID);
    CHECK_RC(loom_local_put(ctx->engine, bytes, (uint64_t)(uintptr_t)st->plain + 1, plain_key,
                            key_size, REGION_LEN), LOOM_ERR_RANGE);
    CHECK_RC(loom_local_get(ctx->engine, bytes, (uint64_t)(uintptr_t)bytes, gone_key, key_size,
                            8), LOOM_ERR_NOT_FOUND);
    CHECK_RC(loom_local_get(ctx->engine, bytes, (uint64_t)(uintptr_t)st->plain, plain_key,
                            key_size - 8, 8), LOOM_ERR_INVALID);
    ctx->log_quiet = false;
    loom_mem_deregister(region);
    free(words);
    free(bytes);
    free(key);
    free(plain_key);
    free(gone_key);
    unit_note("own memory: %zu atomics as the reference says, put and get byte for byte; "
              "refused: no atomic access, unaligned, out of range, a region gone, a short key",
              CASES);
}

static void atomic_body(unit_ctx_t *ctx)
{
    atomic_state_t st;

    atomic_setup(ctx, &st);
    atomic_semantics(ctx, &st);
    atomic_contention(ctx, &st);
    atomic_refusals(ctx, &st);
    atomic_local(ctx, &st);
    unit_barrier(ctx);
    loom_mem_deregister(st.region);
    loom_mem_deregister(st.plain_region);
    free(st.words);
    free(st.plain);
    free(st.gone);
}

int main(void)
{
    return unit_main("atomic", NULL, atomic_body, atomic_body);
}
