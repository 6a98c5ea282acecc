/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 */
/* What the push tests share (push_state.h). */
#include "push_state.h"
#include "base/wire.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

notices_t notices;

void push_notice_cb(void *cb_ctx, const loom_push_notice_t *notice)
{
    (void)cb_ctx;
    CHECK(notices.count < sizeof(notices.got) / sizeof(notices.got[0]));
    notices.got[notices.count++] = *notice;
}

void state_init(state_t *st, unit_group_t *group)
{
    loom_engine_t *engine = group->ctx.engine;
    int r;

    memset(st, 0, sizeof(*st));
    st->group = group;
    st->buf   = unit_alloc(BUF_LEN);
    st->ref   = unit_alloc(BUF_LEN);
    unit_fill(st->buf, BUF_LEN, GUARD_SEED + (uint64_t)group->rank);
    memcpy(st->ref, st->buf, BUF_LEN);
    CHECK_RC(loom_mem_register(engine, st->buf, BUF_LEN, &st->region), LOOM_OK);
    for (r = 0; r < group->size; ++r) {
        unit_group_bcast_region(group, r, st->region, st->buf, BUF_LEN, &st->remote[r]);
    }
    st->ro_buf = unit_alloc(4096);
    st->wo_buf = unit_alloc(4096);
    if (RANK_B == group->rank) {
        CHECK_RC(loom_mem_register_access(engine, st->ro_buf, 4096, LOOM_ACCESS_LOCAL_WRITE |
                                          LOOM_ACCESS_REMOTE_WRITE, &st->ro_region), LOOM_OK);
    }
    if (RANK_C == group->rank) {
        CHECK_RC(loom_mem_register_access(engine, st->wo_buf, 4096, LOOM_ACCESS_LOCAL_WRITE |
                                          LOOM_ACCESS_REMOTE_READ, &st->wo_region), LOOM_OK);
    }
    unit_group_bcast_region(group, RANK_B, st->ro_region, st->ro_buf, 4096, &st->ro_remote);
    unit_group_bcast_region(group, RANK_C, st->wo_region, st->wo_buf, 4096, &st->wo_remote);
}

void state_fini(state_t *st)
{
    loom_mem_deregister(st->region);
    if (NULL != st->ro_region) {
        loom_mem_deregister(st->ro_region);
    }
    if (NULL != st->wo_region) {
        loom_mem_deregister(st->wo_region);
    }
    free(st->buf);
    free(st->ref);
    free(st->ro_buf);
    free(st->wo_buf);
}

void args_fill(const state_t *st, const push_case_t *pc, loom_push_args_t *args,
               loom_push_notice_to_t *to)
{
    int r;

    memset(args, 0, sizeof(*args));
    args->owner        = unit_group_name(pc->owner);
    args->src_addr     = st->remote[pc->owner].base + pc->src_off;
    args->src_key      = st->remote[pc->owner].key;
    args->src_key_size = st->remote[pc->owner].key_size;
    args->dest         = unit_group_name(pc->dest);
    args->dst_addr     = st->remote[pc->dest].base + pc->dst_off;
    args->dst_key      = st->remote[pc->dest].key;
    args->dst_key_size = st->remote[pc->dest].key_size;
    args->length       = pc->length;
    args->notices      = to;
    for (r = 0; r < GROUP_SIZE; ++r) {
        if (pc->notify & (1u << r)) {
            to[args->notice_count].proc      = unit_group_name(r);
            to[args->notice_count++].counter = pc->counter;
        }
    }
}

void push_start_waiting(state_t *st, const push_case_t *pc, uint64_t counter, unit_op_t *uop)
{
    loom_push_notice_to_t to[LOOM_PUSH_NOTICES_MAX];
    loom_push_args_t args;

    args_fill(st, pc, &args, to);
    args.cond_counter   = counter;
    args.cond_threshold = 1;
    unit_op_init(uop);
    CHECK_RC(loom_push(st->group->ctx.engine, &uop->op, &args), LOOM_INPROGRESS);
}

void check_dest(state_t *st, const push_case_t *pc, bool landed, uint64_t seed)
{
    if (landed) {
        unit_fill(st->ref + pc->dst_off, pc->length, seed);
    }
    CHECK_MEM(st->buf, st->ref, BUF_LEN, pc->what);
}

void forge_region_id(unit_remote_t *remote)
{
    uint64_t bogus = loom_le64(0x7777777);

    memcpy(remote->key + offsetof(loom_wire_key_t, region_id), &bogus, sizeof(bogus));
}

void push_state_two_rails(loom_engine_config_t *config)
{
    config->rails            = "tcp:lo,tcp:lo";
    config->max_rails        = 2;
    config->rails_repeat     = true;
    config->stripe_threshold = 262144; /* btl loom's defaults */
    config->stripe_chunk     = 131072;
    config->stripe_depth     = 4;
}
