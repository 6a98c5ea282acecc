/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Counters handed out by the engine (loom_counters_open) and refusals at the
 * bounds, as coll loom relies on them: B opens counters, A asks C to push
 * into D with notices to B naming them.
 *  - ids are fresh on every open, never those of a released counter;
 *  - a notice or a conditional push that comes for a released counter does
 *    not make it again: the notice is dropped, the push cancelled;
 *  - a push that fails tells B's counter so (loom_counter_status);
 *  - a push refused at B's bound on counters or waiting pushes reaches A as
 *    LOOM_ERR_LIMIT, and every rail stays in use: the next push lands;
 *  - an addition that would wrap a counter past UINT64_MAX, B's own or one
 *    off the wire from A, is refused and the counter keeps its value;
 *  - a push into D that tells D on a counter of D's counts as its checked
 *    write lands, and the notice that follows adds nothing.
 */
#include "push_state.h"

#include <string.h>

#define COUNTERS_MAX 20
#define WAITING_MAX  16

static void configure(loom_engine_config_t *config, bool is_parent)
{
    (void)is_parent;
    config->push_notice_cb    = push_notice_cb;
    config->push_counters_max = COUNTERS_MAX;
    config->push_waiting_max  = WAITING_MAX;
}

/* A asks C to push 4096 bytes into D at off, B told on counter, waiting at
 * C on cond (0: none); returns the op's status. */
static int push_told(state_t *st, size_t off, uint64_t counter, int key_of)
{
    loom_push_notice_to_t to[LOOM_PUSH_NOTICES_MAX];
    loom_push_args_t args;
    unit_op_t uop;
    push_case_t pc;

    memset(&pc, 0, sizeof(pc));
    pc.owner   = RANK_C;
    pc.dest    = RANK_D;
    pc.src_off = off;
    pc.dst_off = off;
    pc.length  = 4096;
    pc.notify  = 1u << RANK_B;
    pc.counter = counter;
    args_fill(st, &pc, &args, to);
    if (key_of != RANK_D) {
        args.dst_key = st->remote[key_of].key; /* a key D refuses */
    }
    unit_op_init(&uop);
    CHECK_RC(loom_push(st->group->ctx.engine, &uop.op, &args), LOOM_INPROGRESS);
    UNIT_WAIT(&st->group->ctx, uop.calls > 0);
    return uop.status;
}

/* A asks B to push into C once B's counter reaches 1 (0: at once); the
 * caller waits for the op. */
static void push_waiting(state_t *st, unit_op_t *uop, uint64_t counter)
{
    push_case_t pc;

    memset(&pc, 0, sizeof(pc));
    pc.owner  = RANK_B;
    pc.dest   = RANK_C;
    pc.length = 4096;
    push_start_waiting(st, &pc, counter, uop);
}

static void issued_ids(state_t *st)
{
    unit_group_t *group = st->group;
    loom_engine_t *engine = group->ctx.engine;
    const loom_push_stats_t *stats = loom_engine_push_stats(engine);
    uint64_t ids[2] = {0, 0}, again;
    unit_op_t late;

    if (RANK_B == group->rank) {
        CHECK_RC(loom_counters_open(engine, 3, &ids[0]), LOOM_OK);
        CHECK_MSG(ids[0] & LOOM_COUNTER_ISSUED, "an issued id without its mark");
        CHECK_UEQ(stats->counters, 3);
        CHECK_RC(loom_counter_status(engine, ids[0] + 2), LOOM_OK);
        CHECK_UEQ(loom_counter_release(engine, ids[0] + 2), 0);
        CHECK_RC(loom_counter_status(engine, ids[0] + 2), LOOM_ERR_NOT_FOUND);
        CHECK_RC(loom_counters_open(engine, 1, &again), LOOM_OK);
        CHECK_MSG(again >= ids[0] + 3, "counter id %#llx handed out again",
                  (unsigned long long)again);
        CHECK_UEQ(loom_counter_release(engine, again), 0);
        ids[1] = ids[0] + 2; /* released */
    }
    unit_group_bcast(group, RANK_B, ids, sizeof(ids));

    /* a landed push counts; one told for a released counter does not make it */
    if (RANK_A == group->rank) {
        CHECK_RC(push_told(st, 0, ids[0], RANK_D), LOOM_OK);
        CHECK_RC(push_told(st, 8192, ids[1], RANK_D), LOOM_OK);
        /* a key D refuses: B's counter says the push failed */
        group->ctx.log_quiet = true;
        CHECK_MSG(LOOM_OK != push_told(st, 16384, ids[0] + 1, RANK_C),
                  "a push with the wrong destination key landed");
        group->ctx.log_quiet = false;
    }
    unit_group_barrier(group);
    if (RANK_B == group->rank) {
        UNIT_WAIT(&group->ctx, 1 == loom_counter_value(engine, ids[0]) &&
                                   LOOM_OK != loom_counter_status(engine, ids[0] + 1));
        CHECK_UEQ(loom_counter_value(engine, ids[0] + 1), 0);
        unit_note("the failed push told counter %#llx: %s", (unsigned long long)(ids[0] + 1),
                  loom_strerror(loom_counter_status(engine, ids[0] + 1)));
        unit_progress_for(&group->ctx, 0.1);
        CHECK_RC(loom_counter_status(engine, ids[1]), LOOM_ERR_NOT_FOUND);
        CHECK_UEQ(stats->counters, 2);
    }
    unit_group_barrier(group);

    /* a push that comes to wait on a released counter is cancelled at once */
    group->ctx.log_quiet = true;
    if (RANK_A == group->rank) {
        push_waiting(st, &late, ids[1]);
        UNIT_WAIT(&group->ctx, late.calls > 0);
        CHECK_RC(late.status, LOOM_ERR_CANCELLED);
    }
    unit_group_barrier(group);
    group->ctx.log_quiet = false;
    if (RANK_B == group->rank) {
        CHECK_UEQ(stats->waiting, 0);
        CHECK_UEQ(stats->counters, 2);
        CHECK_UEQ(loom_counter_release(engine, ids[0]), 0);
        CHECK_UEQ(loom_counter_release(engine, ids[0] + 1), 0);
    }
    unit_group_barrier(group);
}

/* B's bounds: counters (open and made by a push), then waiting pushes. */
static void bounds(state_t *st)
{
    unit_group_t *group = st->group;
    loom_engine_t *engine = group->ctx.engine;
    const loom_push_stats_t *stats = loom_engine_push_stats(engine);
    unit_op_t held[WAITING_MAX + 1], extra;
    uint64_t first = 0;
    int i;

    if (RANK_B == group->rank) {
        CHECK_RC(loom_counters_open(engine, COUNTERS_MAX + 1, &first), LOOM_ERR_LIMIT);
        CHECK_UEQ(first, 0);
        CHECK_UEQ(stats->counters, 0);
        CHECK_RC(loom_counters_open(engine, COUNTERS_MAX, &first), LOOM_OK);
    }
    unit_group_barrier(group);
    /* no room for the counter this push would wait on */
    group->ctx.log_quiet = true;
    if (RANK_A == group->rank) {
        push_waiting(st, &extra, 0x900);
        UNIT_WAIT(&group->ctx, extra.calls > 0);
        CHECK_RC(extra.status, LOOM_ERR_LIMIT);
    }
    unit_group_barrier(group);
    if (RANK_B == group->rank) {
        for (i = 0; i < COUNTERS_MAX; ++i) {
            (void)loom_counter_release(engine, first + (uint64_t)i);
        }
    }
    unit_group_barrier(group);
    /* the room for waiting pushes full: the next one is refused */
    if (RANK_A == group->rank) {
        for (i = 0; i <= WAITING_MAX; ++i) {
            push_waiting(st, &held[i], 0x901);
        }
        UNIT_WAIT(&group->ctx, held[WAITING_MAX].calls > 0);
        CHECK_RC(held[WAITING_MAX].status, LOOM_ERR_LIMIT);
    }
    unit_group_barrier(group);
    if (RANK_B == group->rank) {
        CHECK_UEQ(stats->waiting, WAITING_MAX);
        CHECK_UEQ(loom_counter_release(engine, 0x901), WAITING_MAX);
    }
    if (RANK_A == group->rank) {
        for (i = 0; i < WAITING_MAX; ++i) {
            UNIT_WAIT(&group->ctx, held[i].calls > 0);
            CHECK_RC(held[i].status, LOOM_ERR_CANCELLED);
        }
    }
    unit_group_barrier(group);
    group->ctx.log_quiet = false;
    /* refusals are not broken rails: every rank still reaches B */
    if (RANK_A == group->rank) {
        for (i = 0; i < loom_engine_rail_count(engine); ++i) {
            CHECK_MSG(0 == loom_engine_rail_failed_peers(engine, i),
                      "rail %d failed after a refusal at a bound", i);
        }
        push_waiting(st, &extra, 0);
        UNIT_WAIT(&group->ctx, extra.calls > 0);
        CHECK_RC(extra.status, LOOM_OK);
    }
    unit_group_barrier(group);
}

/* Counter 0x903 at B stands at 2 with a push waiting on it for 3: an
 * amount that would wrap it round to 1 is refused, from A and from B. */
static void no_wrap(state_t *st)
{
    unit_group_t *group = st->group;
    loom_engine_t *engine = group->ctx.engine;
    const loom_push_stats_t *stats = loom_engine_push_stats(engine);
    loom_push_notice_to_t to[LOOM_PUSH_NOTICES_MAX];
    unsigned long refused = loom_engine_rail_stats(engine, 0)->refused;
    loom_push_args_t args;
    unit_op_t waiting;
    push_case_t pc;

    group->ctx.log_quiet = true;
    if (RANK_B == group->rank) {
        CHECK_RC(loom_counter_add(engine, 0x903, 2), LOOM_OK);
    }
    unit_group_barrier(group);
    if (RANK_A == group->rank) {
        memset(&pc, 0, sizeof(pc));
        pc.owner  = RANK_B;
        pc.dest   = RANK_C;
        pc.length = 4096;
        args_fill(st, &pc, &args, to);
        args.cond_counter   = 0x903;
        args.cond_threshold = 3;
        unit_op_init(&waiting);
        CHECK_RC(loom_push(engine, &waiting.op, &args), LOOM_INPROGRESS);
        CHECK_RC(loom_counter_add_remote(group->peers[RANK_B], 0x903, UINT64_MAX), LOOM_OK);
    }
    if (RANK_B == group->rank) {
        UNIT_WAIT(&group->ctx, 1 == stats->waiting &&
                                   loom_engine_rail_stats(engine, 0)->refused > refused);
        CHECK_RC(loom_counter_add(engine, 0x903, UINT64_MAX - 1), LOOM_ERR_INVALID);
        CHECK_UEQ(loom_counter_value(engine, 0x903), 2);
        CHECK_UEQ(stats->waiting, 1);
        CHECK_UEQ(loom_counter_release(engine, 0x903), 1);
    }
    if (RANK_A == group->rank) {
        UNIT_WAIT(&group->ctx, waiting.calls > 0);
        CHECK_RC(waiting.status, LOOM_ERR_CANCELLED);
    }
    unit_group_barrier(group);
    group->ctx.log_quiet = false;
}

/* A asks C to push into D, telling D on a counter D opened: on tcp C's
 * checked write carries the counter and D adds to it as the write lands;
 * the notice that comes after adds nothing, so the counter stands at 1. */
static void counted_on_landing(state_t *st)
{
    unit_group_t *group = st->group;
    loom_engine_t *engine = group->ctx.engine;
    const loom_push_stats_t *stats = loom_engine_push_stats(engine);
    unsigned long landed = stats->counted_on_landing, adds = stats->counter_adds;
    unsigned long received = stats->notices_received;
    loom_push_notice_to_t to[LOOM_PUSH_NOTICES_MAX];
    loom_push_args_t args;
    push_case_t pc = {.what = "a push counted as it landed", .owner = RANK_C, .dest = RANK_D,
                      .src_off = 40961, .dst_off = 77, .length = 65536 + 3,
                      .notify = 1u << RANK_D};
    unit_op_t uop;
    uint64_t id = 0;

    if (RANK_C == group->rank) {
        unit_fill(st->buf + pc.src_off, pc.length, 0x5000);
    }
    if (RANK_D == group->rank) {
        CHECK_RC(loom_counters_open(engine, 1, &id), LOOM_OK);
    }
    unit_group_bcast(group, RANK_D, &id, sizeof(id));
    pc.counter = id;
    unit_group_barrier(group); /* C's bytes are in place */
    if (RANK_A == group->rank) {
        args_fill(st, &pc, &args, to);
        unit_op_init(&uop);
        CHECK_RC(loom_push(engine, &uop.op, &args), LOOM_INPROGRESS);
        UNIT_WAIT(&group->ctx, uop.calls > 0);
        CHECK_RC(uop.status, LOOM_OK);
    }
    unit_group_barrier(group); /* C's serve ended: its notice to D is on its way */
    if (RANK_D == group->rank) {
        UNIT_WAIT(&group->ctx, stats->notices_received > received);
        unit_progress_for(&group->ctx, 0.05);
        CHECK_UEQ(loom_counter_value(engine, id), 1);
        CHECK_UEQ(stats->counted_on_landing, landed + 1);
        CHECK_UEQ(stats->counter_adds, adds + 1);
        unit_fill(st->ref, pc.length, 0x5000); /* the earlier cases left D's buffer as it is */
        CHECK_MEM(st->buf + pc.dst_off, st->ref, pc.length, pc.what);
        CHECK_UEQ(loom_counter_release(engine, id), 0);
    }
    unit_group_barrier(group);
}

static void body(unit_group_t *group)
{
    state_t st;

    state_init(&st, group);
    issued_ids(&st);
    bounds(&st);
    no_wrap(&st);
    counted_on_landing(&st);
    state_fini(&st);
}

int main(void)
{
    unit_options_t options = {0};

    options.configure = configure;
    return unit_group_main("push counters", GROUP_SIZE, &options, body);
}
