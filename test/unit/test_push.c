/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Third-party and conditional pushes between four processes: A (rank 0)
 * asks B (rank 1) to push B's memory to C (rank 2), telling any of A, B, C
 * and D (rank 3); pushes that wait at B on a counter, bumped out of order;
 * a released counter; the bound on waiting pushes; a process pushing its
 * own memory with notices; and keys refused at each role.  Every byte that
 * lands is checked, and so is every byte that must not.  Then the same
 * pushes over two rails, where the large ones go striped; and pushes to
 * three destinations of which one dies on the way.
 */
#include "base/wire.h"
#include "push_state.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define WAITING_MAX 6

static void configure(loom_engine_config_t *config, bool is_parent)
{
    (void)is_parent;
    config->push_notice_cb   = push_notice_cb;
    config->push_waiting_max = WAITING_MAX;
}

/* A notice for this rank, of the request, as expected. */
static void expect_notice(unit_group_t *group, unsigned before, uint64_t request_id,
                          const push_case_t *pc, int status)
{
    const loom_push_notice_t *n;

    UNIT_WAIT(&group->ctx, notices.count > before);
    CHECK_UEQ(notices.count, before + 1);
    n = &notices.got[before];
    CHECK_UEQ(n->requester, unit_group_name(RANK_A));
    CHECK_UEQ(n->request_id, request_id);
    CHECK_UEQ(n->owner, unit_group_name(pc->owner));
    CHECK_UEQ(n->counter, pc->counter);
    CHECK_RC(n->status, status);
    CHECK_UEQ(n->length, (LOOM_OK == status) ? pc->length : 0);
}

/* Runs one push at every rank: A asks; the owner, destination and the told
 * ranks check their side. */
static void run_case(state_t *st, const push_case_t *pc, uint64_t seed)
{
    unit_group_t *group = st->group;
    loom_push_notice_to_t to[LOOM_PUSH_NOTICES_MAX];
    unsigned before = notices.count;
    uint64_t counter_before = loom_counter_value(group->ctx.engine, pc->counter);
    uint64_t request_id = 0;
    loom_push_args_t args;
    int status = 0;

    if (group->rank == pc->owner) {
        unit_fill(st->buf + pc->src_off, pc->length, seed);
        unit_fill(st->ref + pc->src_off, pc->length, seed);
    }
    unit_group_barrier(group);
    if (RANK_A == group->rank) {
        unit_op_t uop;

        unit_op_init(&uop);
        args_fill(st, pc, &args, to);
        CHECK_RC(loom_push(group->ctx.engine, &uop.op, &args), LOOM_INPROGRESS);
        request_id = loom_push_request_id(&uop.op);
        UNIT_WAIT(&group->ctx, uop.calls > 0);
        CHECK_EQ(uop.calls, 1);
        status = uop.status;
        CHECK_MSG(status == pc->expect, "%s: the push ended with %d (%s), expected %d (%s)",
                  pc->what, status, loom_strerror(status), pc->expect,
                  loom_strerror(pc->expect));
    }
    unit_group_bcast(group, RANK_A, &request_id, sizeof(request_id));
    if (pc->notify & (1u << group->rank)) {
        expect_notice(group, before, request_id, pc, pc->expect);
        if (0 != pc->counter) {
            CHECK_UEQ(loom_counter_value(group->ctx.engine, pc->counter),
                      counter_before + (LOOM_OK == pc->expect));
        }
    }
    if (group->rank == pc->dest) {
        check_dest(st, pc, LOOM_OK == pc->expect, seed);
    }
    unit_group_barrier(group);
    CHECK_UEQ(notices.count, before + !!(pc->notify & (1u << group->rank)));
}

static void third_party_sizes(state_t *st)
{
    static const size_t sizes[] = {0, 1, 7, 4096, 65539, 1048576 + 5, 16 * 1048576};
    static const unsigned notify[] = {0, 1u << RANK_C,
                                      (1u << RANK_A) | (1u << RANK_B) | (1u << RANK_C) |
                                      (1u << RANK_D)};
    push_case_t pc;
    size_t i;

    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        memset(&pc, 0, sizeof(pc));
        pc.what    = "third-party push";
        pc.owner   = RANK_B;
        pc.dest    = RANK_C;
        pc.length  = sizes[i];
        pc.src_off = unit_clip_offset(4096 * i + 3, sizes[i], BUF_LEN);
        pc.dst_off = unit_clip_offset(8192 * i + 11, sizes[i], BUF_LEN);
        pc.notify  = notify[i % 3];
        pc.counter = (i % 2) ? 0x500 + i : 0;
        run_case(st, &pc, 0x1000 + i);
    }
    /* the requester's own memory pushed by itself, telling C and D */
    memset(&pc, 0, sizeof(pc));
    pc.what    = "a push of the requester's own memory";
    pc.owner   = RANK_A;
    pc.dest    = RANK_C;
    pc.length  = 300000;
    pc.src_off = 17;
    pc.dst_off = 4099;
    pc.notify  = (1u << RANK_C) | (1u << RANK_D);
    pc.counter = 0x600;
    run_case(st, &pc, 0x2000);
    /* C's memory to A: the requester is the destination (a get), told too */
    pc.what   = "a push to the requester, told as a notice";
    pc.owner  = RANK_C;
    pc.dest   = RANK_A;
    pc.notify = (1u << RANK_A) | (1u << RANK_B);
    run_case(st, &pc, 0x2001);
}

/* One refused push with a key of role replaced by key, put back after. */
static void refused_with(state_t *st, push_case_t *pc, int role, const unit_remote_t *key,
                         const char *what, int expect, uint64_t seed)
{
    unit_remote_t saved = st->remote[role];

    st->remote[role] = *key;
    pc->what   = what;
    pc->expect = expect;
    run_case(st, pc, seed);
    st->remote[role] = saved;
}

/* Keys refused at each role: nothing lands anywhere, everyone told why. */
static void refusals(state_t *st)
{
    unit_remote_t forged;
    push_case_t pc;

    memset(&pc, 0, sizeof(pc));
    pc.owner   = RANK_B;
    pc.dest    = RANK_C;
    pc.length  = 3000;
    pc.notify  = (1u << RANK_C) | (1u << RANK_D);
    pc.counter = 0x700;
    st->group->ctx.log_quiet = true;
    forged = st->remote[RANK_B];
    forge_region_id(&forged);
    refused_with(st, &pc, RANK_B, &forged, "a forged key of the owner (refused there)",
                 LOOM_ERR_STALE_KEY, 0x3000);
    refused_with(st, &pc, RANK_B, &st->ro_remote, "the owner's memory without remote read",
                 LOOM_ERR_STALE_KEY, 0x3001);
    forged = st->remote[RANK_C];
    forge_region_id(&forged);
    refused_with(st, &pc, RANK_C, &forged, "a forged key of the destination (refused there)",
                 LOOM_ERR_STALE_KEY, 0x3002);
    refused_with(st, &pc, RANK_C, &st->wo_remote,
                 "the destination's memory without remote write", LOOM_ERR_STALE_KEY, 0x3003);
    /* outside the destination's region: refused before anything is sent */
    pc.dst_off = BUF_LEN - 100;
    refused_with(st, &pc, RANK_C, &st->remote[RANK_C], "a range past the destination's region",
                 LOOM_ERR_RANGE, 0x3004);
    st->group->ctx.log_quiet = false;
}

/* A waits for the op, with its status. */
static void issue(state_t *st, unit_op_t *uop, const push_case_t *pc, uint64_t counter,
                  uint64_t threshold)
{
    loom_push_notice_to_t to[LOOM_PUSH_NOTICES_MAX];
    loom_push_args_t args;

    unit_op_init(uop);
    args_fill(st, pc, &args, to);
    args.cond_counter   = counter;
    args.cond_threshold = threshold;
    CHECK_RC(loom_push(st->group->ctx.engine, &uop->op, &args), LOOM_INPROGRESS);
}

/* Pushes that wait at B: bumped before they came, bumped by a push that
 * landed at B and by a counter message, fired in order; a release cancels;
 * the bound refuses. */
static void conditional(state_t *st)
{
    unit_group_t *group = st->group;
    const loom_push_stats_t *stats = loom_engine_push_stats(group->ctx.engine);
    unit_op_t early, first, second, bump, held[WAITING_MAX + 1];
    uint8_t tail[4096];
    push_case_t pc;
    unsigned long fired = 0;
    int i;

    memset(&pc, 0, sizeof(pc));
    pc.owner  = RANK_B;
    pc.dest   = RANK_C;
    pc.length = 70000;
    if (RANK_B == group->rank) {
        unit_fill(st->buf, 4 * pc.length, 0x4000);
        unit_fill(st->ref, 4 * pc.length, 0x4000);
    }
    unit_group_barrier(group);

    /* the counter reached before the push arrives: it fires on arrival */
    if (RANK_A == group->rank) {
        CHECK_RC(loom_counter_add_remote(group->peers[RANK_B], 0x801, 1), LOOM_OK);
        pc.dst_off = 0;
        issue(st, &early, &pc, 0x801, 1);
        UNIT_WAIT(&group->ctx, early.calls > 0);
        CHECK_RC(early.status, LOOM_OK);
    }
    unit_group_barrier(group);

    /* two pushes wait on counter 0x802, the first for 2, the second for 1 */
    if (RANK_A == group->rank) {
        pc.src_off = pc.length;
        pc.dst_off = 2 * pc.length;
        issue(st, &first, &pc, 0x802, 2);
        pc.src_off = 2 * pc.length;
        pc.dst_off = 3 * pc.length;
        issue(st, &second, &pc, 0x802, 1);
    }
    if (RANK_B == group->rank) {
        UNIT_WAIT(&group->ctx, 2 == stats->waiting);
        fired = stats->fired;
    }
    unit_group_barrier(group);
    /* C pushes its own memory into B, telling B with the counter: one */
    if (RANK_C == group->rank) {
        loom_push_notice_to_t to = {unit_group_name(RANK_B), 0x802};
        loom_push_args_t args;

        memset(&args, 0, sizeof(args));
        unit_op_init(&bump);
        args.owner        = unit_group_name(RANK_C);
        args.src_addr     = st->remote[RANK_C].base + BUF_LEN - 4096;
        args.src_key      = st->remote[RANK_C].key;
        args.src_key_size = st->remote[RANK_C].key_size;
        args.dest         = unit_group_name(RANK_B);
        args.dst_addr     = st->remote[RANK_B].base + BUF_LEN - 4096;
        args.dst_key      = st->remote[RANK_B].key;
        args.dst_key_size = st->remote[RANK_B].key_size;
        args.length       = 4096;
        args.notices      = &to;
        args.notice_count = 1;
        CHECK_RC(loom_push(group->ctx.engine, &bump.op, &args), LOOM_INPROGRESS);
        UNIT_WAIT(&group->ctx, bump.calls > 0);
        CHECK_RC(bump.status, LOOM_OK);
    }
    if (RANK_B == group->rank) {
        /* the second fired (threshold 1), the first still waits */
        UNIT_WAIT(&group->ctx, fired + 1 == stats->fired);
        CHECK_UEQ(stats->waiting, 1);
        CHECK_UEQ(loom_counter_value(group->ctx.engine, 0x802), 1);
    }
    if (RANK_A == group->rank) {
        UNIT_WAIT(&group->ctx, second.calls > 0);
        CHECK_RC(second.status, LOOM_OK);
        unit_progress_for(&group->ctx, 0.2);
        CHECK_EQ(first.calls, 0); /* its threshold is not reached */
        CHECK_RC(loom_counter_add_remote(group->peers[RANK_B], 0x802, 1), LOOM_OK);
        UNIT_WAIT(&group->ctx, first.calls > 0);
        CHECK_RC(first.status, LOOM_OK);
    }
    unit_group_barrier(group);
    if (RANK_C == group->rank) {
        uint8_t *want = unit_alloc(3 * pc.length);

        unit_fill(want, 3 * pc.length, 0x4000);
        memcpy(st->ref, want, pc.length); /* the push that fired on arrival */
        memcpy(st->ref + 2 * pc.length, want + pc.length, 2 * pc.length); /* those that waited */
        CHECK_MEM(st->buf, st->ref, BUF_LEN, "conditional pushes at C");
        free(want);
    }
    /* C's push landed at B */
    memcpy(tail, st->buf + BUF_LEN - 4096, sizeof(tail));
    unit_group_bcast(group, RANK_C, tail, sizeof(tail));
    if (RANK_B == group->rank) {
        CHECK_MEM(st->buf + BUF_LEN - 4096, tail, sizeof(tail), "C's push into B");
        memcpy(st->ref + BUF_LEN - 4096, tail, sizeof(tail));
        CHECK_MEM(st->buf, st->ref, BUF_LEN, "B's memory besides C's push");
        CHECK_UEQ(loom_counter_release(group->ctx.engine, 0x801), 0);
        CHECK_UEQ(loom_counter_release(group->ctx.engine, 0x802), 0);
    }
    unit_group_barrier(group);

    /* six pushes fill the room (one on 0x803, five on 0x804), a seventh is
     * refused; releases cancel the six */
    group->ctx.log_quiet = (RANK_A == group->rank || RANK_B == group->rank);
    if (RANK_A == group->rank) {
        pc.notify  = 1u << RANK_D;
        pc.counter = 0;
        for (i = 0; i <= WAITING_MAX; ++i) {
            issue(st, &held[i], &pc, (0 == i) ? 0x803 : 0x804, (0 == i) ? 5 : 1);
        }
        UNIT_WAIT(&group->ctx, held[WAITING_MAX].calls > 0);
        CHECK_RC(held[WAITING_MAX].status, LOOM_ERR_LIMIT);
    }
    unit_group_barrier(group);
    if (RANK_B == group->rank) {
        CHECK_UEQ(stats->waiting, WAITING_MAX);
        CHECK_UEQ(loom_counter_release(group->ctx.engine, 0x803), 1);
        CHECK_UEQ(loom_counter_release(group->ctx.engine, 0x804), WAITING_MAX - 1);
        CHECK_UEQ(loom_counter_release(group->ctx.engine, 0x804), 0);
        CHECK_UEQ(stats->waiting, 0);
        CHECK_UEQ(stats->cancelled, WAITING_MAX);
        group->ctx.log_quiet = false;
    }
    if (RANK_A == group->rank) {
        for (i = 0; i < WAITING_MAX; ++i) {
            UNIT_WAIT(&group->ctx, held[i].calls > 0);
            CHECK_RC(held[i].status, LOOM_ERR_CANCELLED);
        }
        group->ctx.log_quiet = false;
    }
    if (RANK_D == group->rank) {
        /* told of each, with its status */
        UNIT_WAIT(&group->ctx, notices.count == (unsigned)WAITING_MAX + 1);
        CHECK_RC(notices.got[0].status, LOOM_ERR_LIMIT); /* refused at once */
        for (i = 1; i <= WAITING_MAX; ++i) {
            CHECK_RC(notices.got[i].status, LOOM_ERR_CANCELLED);
        }
    }
    unit_group_barrier(group);
    if (RANK_C == group->rank) {
        CHECK_MEM(st->buf, st->ref, BUF_LEN, "nothing landed of cancelled or refused pushes");
    }
}

static void body(unit_group_t *group)
{
    state_t st;

    state_init(&st, group);
    third_party_sizes(&st);
    refusals(&st);
    notices.count = 0;
    unit_group_barrier(group);
    conditional(&st);
    unit_group_barrier(group);
    state_fini(&st);
}

static void configure_two_rails(loom_engine_config_t *config, bool is_parent)
{
    configure(config, is_parent);
    push_state_two_rails(config);
}

/* requester asks B for SMALL_PUSHES pushes below the stripe threshold at
 * once, each to its own part of C's buffer: A as a third party, or C
 * itself, pulling (as coll loom's reductions do).  B serves each as one
 * chunk, spread over both rails (on one rail, a broadcast's chain of small
 * segments shared it with every message and took 3.6x as long, and an
 * allreduce's pulls put twice the bytes on one rail as on the other), and
 * every byte lands. */
#define SMALL_PUSHES 16
#define SMALL_PUSH_LEN 200000
static void pushes_spread(state_t *st, int requester, uint64_t seed, const char *what)
{
    unit_group_t *group = st->group;
    loom_push_notice_to_t to[LOOM_PUSH_NOTICES_MAX];
    unsigned long chunks_before[2] = {0, 0};
    unit_op_t uops[SMALL_PUSHES];
    loom_push_args_t args;
    push_case_t pc[SMALL_PUSHES];
    int i, rail;

    for (i = 0; i < SMALL_PUSHES; ++i) {
        memset(&pc[i], 0, sizeof(pc[i]));
        pc[i].what    = what;
        pc[i].owner   = RANK_B;
        pc[i].dest    = RANK_C;
        pc[i].length  = SMALL_PUSH_LEN;
        pc[i].src_off = (size_t)i * 262144 + 1;
        pc[i].dst_off = (size_t)i * 262144 + 3;
        if (RANK_B == group->rank) {
            unit_fill(st->buf + pc[i].src_off, pc[i].length, seed + (uint64_t)i);
        }
    }
    for (rail = 0; RANK_B == group->rank && rail < 2; ++rail) {
        chunks_before[rail] = loom_engine_rail_stats(group->ctx.engine, rail)->chunks;
    }
    unit_group_barrier(group);
    if (requester == group->rank) {
        for (i = 0; i < SMALL_PUSHES; ++i) {
            args_fill(st, &pc[i], &args, to);
            unit_op_init(&uops[i]);
            CHECK_RC(loom_push(group->ctx.engine, &uops[i].op, &args), LOOM_INPROGRESS);
        }
        unit_ops_wait_all(&group->ctx, uops, SMALL_PUSHES); /* each once, LOOM_OK */
    }
    unit_group_barrier(group); /* every push ended */
    for (rail = 0; RANK_B == group->rank && rail < 2; ++rail) {
        unsigned long chunks = loom_engine_rail_stats(group->ctx.engine, rail)->chunks -
                               chunks_before[rail];

        CHECK_MSG(chunks > 0, "%s: none of %d pushes of %d bytes went on rail %d", what,
                  SMALL_PUSHES, SMALL_PUSH_LEN, rail);
        unit_note("%s: %lu of the %d on rail %d", what, chunks, SMALL_PUSHES, rail);
    }
    if (RANK_C == group->rank) {
        for (i = 0; i < SMALL_PUSHES; ++i) {
            unit_fill(st->ref + pc[i].dst_off, pc[i].length, seed + (uint64_t)i);
        }
        CHECK_MEM(st->buf, st->ref, BUF_LEN, what);
    }
    unit_group_barrier(group);
}

/* Over two rails: the owner of the pushes (B) served the large ones by
 * chunks on both rails, and small ones served at once spread over them. */
static void body_two_rails(unit_group_t *group)
{
    state_t st;
    int rail;

    state_init(&st, group);
    third_party_sizes(&st);
    pushes_spread(&st, RANK_A, 0x4000, "small pushes served at once over two rails");
    pushes_spread(&st, RANK_C, 0x5000, "pulls served at once over two rails");
    if (RANK_B == group->rank) {
        for (rail = 0; rail < 2; ++rail) {
            loom_rail_stats_t *stats = loom_engine_rail_stats(group->ctx.engine, rail);

            CHECK_MSG(stats->chunks > 0, "no chunk of a striped push went on rail %d", rail);
            unit_note("rail %d: %lu chunks, %lu bytes sent", rail, stats->chunks,
                      stats->bytes_sent);
        }
    }
    unit_group_barrier(group);
    state_fini(&st);
}

/* A pushes 16 MiB of its own memory to B, C and D at once; D leaves for
 * good (it exits without placing a byte, the data to it still on its way,
 * as a process that dies): A's push to D ends with an error, nothing waits
 * for ever, and B and C get every byte. */
static void body_dest_dies(unit_group_t *group)
{
    static const int dests[] = {RANK_B, RANK_C, RANK_D};
    loom_push_notice_to_t to[LOOM_PUSH_NOTICES_MAX];
    unit_op_t uop[GROUP_SIZE];
    loom_push_args_t args;
    push_case_t pc;
    state_t st;
    size_t i;

    group->ctx.log_quiet = true; /* D's going is logged where it is seen */
    state_init(&st, group);
    memset(&pc, 0, sizeof(pc));
    pc.what    = "a push to a destination that dies, at another destination";
    pc.owner   = RANK_A;
    pc.length  = 16 * 1048576;
    pc.src_off = 5;
    pc.dst_off = 4099;
    if (RANK_A == group->rank) {
        unit_fill(st.buf + pc.src_off, pc.length, 0x3000);
        unit_fill(st.ref + pc.src_off, pc.length, 0x3000);
    }
    unit_group_barrier(group);
    if (RANK_D == group->rank) {
        unit_group_leave(group);
    }
    if (RANK_A == group->rank) {
        for (i = 0; i < sizeof(dests) / sizeof(dests[0]); ++i) {
            pc.dest = dests[i];
            args_fill(&st, &pc, &args, to);
            unit_op_init(&uop[dests[i]]);
            CHECK_RC(loom_push(group->ctx.engine, &uop[dests[i]].op, &args), LOOM_INPROGRESS);
        }
        unit_group_let_go(group, RANK_D);
        for (i = 0; i < sizeof(dests) / sizeof(dests[0]); ++i) {
            UNIT_WAIT(&group->ctx, uop[dests[i]].calls > 0);
        }
        CHECK_RC(uop[RANK_B].status, LOOM_OK);
        CHECK_RC(uop[RANK_C].status, LOOM_OK);
        CHECK_MSG(LOOM_OK != uop[RANK_D].status, "a push to a process that left succeeded");
        unit_note("the push to the process that left ended with %d (%s); the others landed",
                  uop[RANK_D].status, loom_strerror(uop[RANK_D].status));
    }
    unit_group_barrier(group); /* A's pushes ended */
    if (RANK_B == group->rank || RANK_C == group->rank) {
        pc.dest = group->rank;
        check_dest(&st, &pc, true, 0x3000);
    }
    unit_group_barrier(group);
    state_fini(&st);
}

int main(void)
{
    unit_options_t options = {0}, two_rails = {0};
    int rc;

    options.configure = configure;
    rc = unit_group_main("push", GROUP_SIZE, &options, body);
    two_rails.configure = configure_two_rails;
    rc |= unit_group_main("push over two rails", GROUP_SIZE, &two_rails, body_two_rails);
    return rc | unit_group_main("push to a destination that dies", GROUP_SIZE, &options,
                                body_dest_dies);
}
