/*
 * config.force_connect_to_ep: the rail is used in UCT's connect-to-ep model
 * (the one rc_verbs always needs).  tcp can also connect to interfaces, so the
 * endpoint addresses travel in CONNECT messages over an interface endpoint of
 * the same rail; the AM, put and get exchange below must then work, each
 * wait bounded.
 */
#include "unit_harness.h"

#include <stdlib.h>
#include <string.h>

#define LEN (1 << 20)

static void exchange(unit_ctx_t *ctx)
{
    static const size_t sizes[] = {1, 4096, LEN};
    uint8_t *src = unit_alloc(LEN), *dst = unit_alloc(LEN), *expect = unit_alloc(LEN);
    uint64_t other = ctx->is_parent ? UNIT_CHILD_NAME : UNIT_PARENT_NAME;
    const char *hello = ctx->is_parent ? "from parent" : "from child ";
    struct iovec iov = {(void *)hello, 11};
    loom_region_t *src_reg, *dst_reg;
    unit_remote_t remote;
    unit_op_t uop;
    size_t i;
    int rc;

    /* AM with an op: it may have to wait for the endpoint to be connected. */
    unit_op_init(&uop);
    rc = loom_am_send(ctx->peer, 4, &iov, 1, &uop.op);
    CHECK_MSG(LOOM_OK == rc || LOOM_INPROGRESS == rc, "loom_am_send: %d (%s)", rc,
              loom_strerror(rc));
    if (LOOM_INPROGRESS == rc) {
        UNIT_WAIT(ctx, uop.calls > 0);
        CHECK_RC(uop.status, LOOM_OK);
    }
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
}

int main(void)
{
    unit_options_t options = {.force_connect_to_ep = true};

    return unit_main("connect_ep", &options, body, body);
}
