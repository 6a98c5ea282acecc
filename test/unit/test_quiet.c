/*
 * Quiet progress (loom_engine_progress_quiet, what btl_loom_progress_thread
 * runs while the application computes): the parent only runs quiet
 * progress while the child gets 1 MiB from the parent's memory (a push the
 * parent serves on tcp), sends it messages and asks for an atomic add on
 * its memory.  The get must complete, no message may reach the parent's
 * upper layer and the atomic must not run (atomics run on an application's
 * thread only, atomic.c says why); then one full progress hands every
 * message up, in order, byte for byte, and runs the atomic once.
 */
#include "unit_harness.h"

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

int main(void)
{
    return unit_main("quiet", NULL, parent_body, child_body);
}
