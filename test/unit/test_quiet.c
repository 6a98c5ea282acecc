/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Quiet progress (loom_engine_progress_quiet, what btl_loom_progress_thread
 * runs while the application computes): the parent only runs quiet
 * progress while the child gets 1 MiB from the parent's memory (a push the
 * parent serves on tcp), sends it messages and asks for an atomic add on
 * its memory.  The get must complete, no message may reach the parent's
 * upper layer and the atomic must not run (atomics run on an application's
 * thread only, atomic.c says why); then one full progress hands every
 * message up, in order, byte for byte, and runs the atomic once.
 *
 * Then the bound: the child sends 48 MB of messages while the parent runs
 * only quiet progress for 2 s.  Quiet progress keeps no more than
 * LOOM_QUIET_KEPT_MAX bytes of them (and a pass's worth), and the child is
 * held back, as it is when nobody progresses; once the parent progresses
 * fully, every message arrives, in order, byte for byte.
 */
#include "unit_harness.h"
#include "engine/loom_engine.h" /* the bytes quiet progress keeps */

#include <poll.h>
#include <stdlib.h>
#include <string.h>

#define GET_LEN   (1024 * 1024)
#define MESSAGES  200
#define ADDEND    5

static size_t message_length(int i)
{
    return (size_t)(i * 997) % 4000 + 1; /* within one AM */
}

static bool control_readable(const unit_ctx_t *ctx)
{
    struct pollfd pfd = {.fd = ctx->sock, .events = POLLIN};

    return 1 == poll(&pfd, 1, 0);
}

static void parent_body(unit_ctx_t *ctx)
{
    uint8_t *mem = unit_alloc(GET_LEN), *expect = malloc(9000);
    uint64_t word;
    double deadline;
    loom_region_t *region;
    size_t i;

    CHECK(NULL != expect);
    unit_fill(mem, GET_LEN, 42);
    memcpy(&word, mem, sizeof(word));
    CHECK_RC(loom_mem_register(ctx->engine, mem, GET_LEN, &region), LOOM_OK);
    unit_send_region(ctx, region, mem, GET_LEN);
    unit_barrier(ctx);

    /* quiet until the child says its get completed and its messages left */
    deadline = unit_now() + UNIT_TIMEOUT;
    while (!control_readable(ctx)) {
        (void)loom_engine_progress_quiet(ctx->engine);
        CHECK_MSG(unit_now() < deadline, "the child's get did not complete under quiet "
                  "progress");
    }
    CHECK_UEQ(ctx->msg_count, 0); /* all came, none went up */
    CHECK_MSG(0 == memcmp(mem, &word, sizeof(word)), "a peer's atomic ran under quiet "
              "progress");
    CHECK_UEQ(unit_recv_u64(ctx), MESSAGES); /* progresses fully from here on */
    unit_note("quiet progress served a get of %d bytes", GET_LEN);

    UNIT_WAIT(ctx, ctx->msg_count >= MESSAGES);
    CHECK_UEQ(ctx->msg_count, MESSAGES);
    for (i = 0; i < MESSAGES; ++i) {
        CHECK_UEQ(ctx->msgs[i].tag, 3);
        CHECK_UEQ(ctx->msgs[i].length, message_length((int)i));
        unit_fill(expect, ctx->msgs[i].length, 1000 + i);
        CHECK_MEM(ctx->msgs[i].data, expect, ctx->msgs[i].length, "a message kept by quiet "
                  "progress");
    }
    unit_note("%d messages waited for full progress, then went up in order", MESSAGES);
    unit_barrier(ctx); /* the child's atomic was answered */
    word += ADDEND;
    CHECK_MSG(0 == memcmp(mem, &word, sizeof(word)), "the atomic held for full progress "
              "ran once");
    loom_mem_deregister(region);
    free(mem);
    free(expect);
}

static void child_body(unit_ctx_t *ctx)
{
    uint8_t *local = unit_alloc(GET_LEN), *expect = unit_alloc(GET_LEN), *data = malloc(9000);
    loom_region_t *local_region;
    uint64_t result = 0, word;
    unit_remote_t remote;
    unit_op_t uop, add;
    int i;

    CHECK(NULL != data);
    unit_recv_region(ctx, &remote);
    CHECK_RC(loom_mem_register(ctx->engine, local, GET_LEN, &local_region), LOOM_OK);
    unit_barrier(ctx);

    unit_op_init(&uop);
    CHECK_RC(loom_get(ctx->peer, &uop.op, local, local_region, remote.base, remote.key,
                      remote.key_size, GET_LEN), LOOM_INPROGRESS);
    UNIT_WAIT(ctx, uop.calls > 0);
    CHECK_RC(uop.status, LOOM_OK);
    unit_fill(expect, GET_LEN, 42);
    CHECK_MEM(local, expect, GET_LEN, "a get served by quiet progress");
    for (i = 0; i < MESSAGES; ++i) {
        unit_fill(data, message_length(i), 1000 + (uint64_t)i);
        CHECK_RC(unit_am_send(ctx, ctx->peer, 3, data, message_length(i)), LOOM_OK);
    }
    unit_op_init(&add);
    CHECK_RC(loom_atomic(ctx->peer, &add.op, LOOM_ATOMIC_ADD, sizeof(word), remote.base,
                         remote.key, remote.key_size, ADDEND, 0, &result), LOOM_INPROGRESS);
    unit_progress_for(ctx, 0.3); /* they leave; the atomic waits */
    CHECK_UEQ(add.calls, 0);
    unit_send_u64(ctx, MESSAGES);
    UNIT_WAIT(ctx, add.calls > 0);
    CHECK_RC(add.status, LOOM_OK);
    memcpy(&word, expect, sizeof(word)); /* the parent's memory before it */
    CHECK_UEQ(result, word);
    unit_barrier(ctx);
    loom_mem_deregister(local_region);
    free(local);
    free(expect);
    free(data);
}

/* ---- the bound on what quiet progress keeps ------------------------------------------- */

#define FLOOD_MSGS  6000
#define FLOOD_SEED  0xf100dull
#define FLOOD_SLACK ((size_t)1 << 20) /* what one pass may take in beyond the bound */
#define FLOOD_GO    0x90u

static size_t flood_length(unsigned i)
{
    return 4000 + (size_t)(i * 131u) % 4000; /* 48 MB in all, each within one AM */
}

static void bound_parent(unit_ctx_t *ctx)
{
    uint8_t *expect = malloc(8192);
    size_t most = 0;
    double deadline;
    uint64_t sent;
    unsigned i;

    CHECK(NULL != expect);
    unit_barrier(ctx);
    /* The barrier progresses fully while it waits, and took in the first
     * messages of a child that flooded as soon as it was through: the child
     * starts on this word, sent once no full progress is left to come. */
    unit_send_u64(ctx, FLOOD_GO);
    deadline = unit_now() + UNIT_TIMEOUT;
    while (!control_readable(ctx)) {
        (void)loom_engine_progress_quiet(ctx->engine);
        most = (ctx->engine->quiet_kept > most) ? ctx->engine->quiet_kept : most;
        CHECK(unit_now() < deadline);
    }
    /* the value comes in two writes: no full progress between them */
    unit_recv_noprogress(ctx, &sent, sizeof(sent));
    unit_note("quiet progress kept at most %zu bytes; the child sent %llu of %d messages "
              "meanwhile", most, (unsigned long long)sent, FLOOD_MSGS);
    CHECK_MSG(most <= LOOM_QUIET_KEPT_MAX + FLOOD_SLACK, "quiet progress kept %zu bytes",
              most);
    CHECK_MSG(sent < FLOOD_MSGS, "the sender was not held back by quiet progress");
    CHECK_UEQ(ctx->msg_count, 0);
    UNIT_WAIT(ctx, ctx->msg_count >= FLOOD_MSGS);
    CHECK_UEQ(ctx->msg_count, FLOOD_MSGS);
    for (i = 0; i < FLOOD_MSGS; ++i) {
        CHECK_UEQ(ctx->msgs[i].length, flood_length(i));
        unit_fill(expect, flood_length(i), FLOOD_SEED + i);
        CHECK_MEM(ctx->msgs[i].data, expect, flood_length(i), "a message held back");
    }
    CHECK_UEQ(ctx->engine->quiet_kept, 0);
    unit_barrier(ctx);
    free(expect);
}

static void bound_child(unit_ctx_t *ctx)
{
    uint8_t *data = malloc(8192);
    struct iovec iov;
    unsigned i = 0;
    double until;
    int rc;

    CHECK(NULL != data);
    unit_barrier(ctx);
    CHECK_UEQ(unit_recv_u64(ctx), FLOOD_GO);
    until = unit_now() + 2.0;
    while (i < FLOOD_MSGS && unit_now() < until) {
        unit_fill(data, flood_length(i), FLOOD_SEED + i);
        iov.iov_base = data;
        iov.iov_len  = flood_length(i);
        rc = loom_am_send(ctx->peer, 3, &iov, 1, NULL);
        if (LOOM_ERR_AGAIN == rc) {
            unit_progress(ctx);
            continue;
        }
        CHECK_RC(rc, LOOM_OK);
        ++i;
    }
    unit_send_u64(ctx, i);
    for (; i < FLOOD_MSGS; ++i) {
        unit_fill(data, flood_length(i), FLOOD_SEED + i);
        CHECK_RC(unit_am_send(ctx, ctx->peer, 3, data, flood_length(i)), LOOM_OK);
    }
    unit_barrier(ctx);
    free(data);
}

int main(void)
{
    int rc = unit_main("quiet", NULL, parent_body, child_body);

    return rc | unit_main("quiet bound", NULL, bound_parent, bound_child);
}
