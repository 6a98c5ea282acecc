/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Multicast pushes (loom_push_multi) between four processes: A (rank 0)
 * asks B (rank 1) to push one range of B's memory to several destinations
 * (C, D, and A itself), each told or not; A pushes its own memory to B, C
 * and D; twelve destinations at once, which take several requests; one
 * destination's key refused while the others land; memory B registered
 * without remote read, which B serves as pushes of its own yet refuses to
 * A; destinations waiting at B on a counter until A adds to it; a
 * destination that dies while the others land; a requester that says
 * goodbye while its destinations wait at B (cancelled, nothing lands); a
 * destination that says goodbye, or that its owner disconnects, while
 * pushes to it wait for a counter (cancelled at once: the disconnect does
 * not wait for them); and arguments refused before anything is sent.
 * Every byte
 * that lands is checked at its destination, and so is every byte that
 * must not.  The same over two rails, where the large ones go striped.
 */
#include "base/wire.h"
#include "engine/loom_engine.h" /* a goodbye sent by hand, whether the peer said it */
#include "push_state.h"

#include <stdlib.h>
#include <string.h>

#define DESTS_MAX 12

/* One multicast as every rank sees it. */
typedef struct multi_case {
    const char *what;
    int         owner;
    size_t      src_off;
    size_t      length;
    unsigned    count;
    int         dest[DESTS_MAX];    /* rank of each destination */
    size_t      dst_off[DESTS_MAX];
    bool        notify[DESTS_MAX];
    uint64_t    counter;            /* the told destinations' counter, 0 none */
    int         forged;             /* destination whose key is forged, -1 none */
    bool        unreadable;         /* the source is B's memory without remote read */
    int         expect[DESTS_MAX];  /* each destination's status at A */
} multi_case_t;

static void configure(loom_engine_config_t *config, bool is_parent)
{
    (void)is_parent;
    config->push_notice_cb = push_notice_cb;
}

/* A's request for the case, each destination's op in uops. */
static int multi_issue(state_t *st, const multi_case_t *mc, unit_op_t *uops,
                       unit_remote_t *forged, uint64_t cond_counter)
{
    const unit_remote_t *src = mc->unreadable ? &st->ro_remote : &st->remote[mc->owner];
    loom_push_dest_t dests[DESTS_MAX];
    loom_push_multi_args_t args;
    unsigned i;

    memset(&args, 0, sizeof(args));
    args.owner          = unit_group_name(mc->owner);
    args.src_addr       = src->base + mc->src_off;
    args.src_key        = src->key;
    args.src_key_size   = src->key_size;
    args.length         = mc->length;
    args.cond_counter   = cond_counter;
    args.cond_threshold = (0 != cond_counter) ? 1 : 0;
    args.dests          = dests;
    args.dest_count     = mc->count;
    for (i = 0; i < mc->count; ++i) {
        const unit_remote_t *remote = ((int)i == mc->forged) ? forged : &st->remote[mc->dest[i]];

        unit_op_init(&uops[i]);
        memset(&dests[i], 0, sizeof(dests[i]));
        dests[i].proc         = unit_group_name(mc->dest[i]);
        dests[i].dst_addr     = st->remote[mc->dest[i]].base + mc->dst_off[i];
        dests[i].dst_key      = remote->key;
        dests[i].dst_key_size = remote->key_size;
        dests[i].notify       = mc->notify[i];
        dests[i].counter      = mc->counter;
        dests[i].op           = &uops[i].op;
    }
    return loom_push_multi(st->group->ctx.engine, &args);
}

/* A waits for every destination and checks how each ended. */
static void multi_wait(state_t *st, const multi_case_t *mc, unit_op_t *uops)
{
    unsigned i;

    for (i = 0; i < mc->count; ++i) {
        UNIT_WAIT(&st->group->ctx, uops[i].calls > 0);
    }
    for (i = 0; i < mc->count; ++i) {
        CHECK_EQ(uops[i].calls, 1);
        CHECK_MSG(uops[i].status == mc->expect[i], "%s: destination %u (rank %d) ended with "
                  "%d (%s), expected %d", mc->what, i, mc->dest[i], uops[i].status,
                  loom_strerror(uops[i].status), mc->expect[i]);
    }
}

/* This rank's side once A's ops ended: what landed here, the notices and
 * the counter. */
static void multi_check_rank(state_t *st, const multi_case_t *mc, uint64_t seed,
                             unsigned notices_before, uint64_t counter_before)
{
    unit_group_t *group = st->group;
    unsigned i, told = 0, bumped = 0, n;

    for (i = 0; i < mc->count; ++i) {
        if (mc->dest[i] != group->rank) {
            continue;
        }
        if (LOOM_OK == mc->expect[i]) {
            unit_fill(st->ref + mc->dst_off[i], mc->length, seed);
            bumped += mc->notify[i] && 0 != mc->counter;
        }
        told += mc->notify[i];
    }
    CHECK_MEM(st->buf, st->ref, BUF_LEN, mc->what);
    UNIT_WAIT(&group->ctx, notices.count >= notices_before + told);
    CHECK_UEQ(notices.count, notices_before + told);
    for (n = notices_before; n < notices.count; ++n) {
        /* the owner pushes for the requester: it names itself */
        CHECK_UEQ(notices.got[n].owner, unit_group_name(mc->owner));
        CHECK_UEQ(notices.got[n].requester, unit_group_name(mc->owner));
        CHECK_UEQ(notices.got[n].counter, mc->counter);
    }
    if (0 != mc->counter) {
        CHECK_UEQ(loom_counter_value(group->ctx.engine, mc->counter), counter_before + bumped);
    }
}

static void run_multi(state_t *st, const multi_case_t *mc, uint64_t seed)
{
    unit_group_t *group = st->group;
    unsigned notices_before = notices.count;
    uint64_t counter_before = loom_counter_value(group->ctx.engine, mc->counter);
    unit_op_t uops[DESTS_MAX];
    unit_remote_t forged;

    if (group->rank == mc->owner) {
        unit_fill(st->buf + mc->src_off, mc->length, seed);
        unit_fill(st->ref + mc->src_off, mc->length, seed);
    }
    unit_group_barrier(group);
    if (RANK_A == group->rank) {
        if (mc->forged >= 0) {
            forged = st->remote[mc->dest[mc->forged]];
            forge_region_id(&forged);
        }
        CHECK_RC(multi_issue(st, mc, uops, &forged, 0), LOOM_INPROGRESS);
        multi_wait(st, mc, uops);
    }
    unit_group_barrier(group);
    multi_check_rank(st, mc, seed, notices_before, counter_before);
    unit_group_barrier(group);
}

static void multi_case_init(multi_case_t *mc, const char *what, int owner, size_t length)
{
    memset(mc, 0, sizeof(*mc));
    mc->what   = what;
    mc->owner  = owner;
    mc->length = length;
    mc->forged = -1;
}

static void multi_case_add(multi_case_t *mc, int dest, size_t dst_off, bool notify)
{
    mc->dest[mc->count]    = dest;
    mc->dst_off[mc->count] = unit_clip_offset(dst_off, mc->length, BUF_LEN);
    mc->notify[mc->count]  = notify;
    mc->expect[mc->count]  = LOOM_OK;
    ++mc->count;
}

/* B's memory to C, D and A (the requester), C told with a counter, at
 * every size class: nothing, eager-sized, one RDMA, striped. */
static void third_party(state_t *st)
{
    static const size_t sizes[] = {0, 1, 4096, 65539, 1048576 + 5, 16 * 1048576};
    multi_case_t mc;
    size_t i;

    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        multi_case_init(&mc, "multicast of B's memory to C, D and A", RANK_B, sizes[i]);
        mc.src_off = unit_clip_offset(4096 * i + 3, sizes[i], BUF_LEN);
        mc.counter = 0x800 + i;
        multi_case_add(&mc, RANK_C, 8192 * i + 11, true);
        multi_case_add(&mc, RANK_D, 8192 * i + 13, false);
        multi_case_add(&mc, RANK_A, 8192 * i + 17, 0 == i % 2);
        run_multi(st, &mc, 0x4000 + i);
    }
}

/* A's own memory to B, C and D, all told: no request travels. */
static void own_memory(state_t *st)
{
    multi_case_t mc;

    multi_case_init(&mc, "multicast of A's own memory", RANK_A, 300000);
    mc.src_off = 17;
    mc.counter = 0x900;
    multi_case_add(&mc, RANK_B, 4099, true);
    multi_case_add(&mc, RANK_C, 4101, true);
    multi_case_add(&mc, RANK_D, 4103, true);
    run_multi(st, &mc, 0x5000);
}

/* Twelve destinations, six ranges each at C and D: more than one request
 * holds (every destination carries its key). */
static void many(state_t *st)
{
    const loom_push_stats_t *stats = loom_engine_push_stats(st->group->ctx.engine);
    unsigned long requested = stats->multi_requested;
    multi_case_t mc;
    unsigned i;

    multi_case_init(&mc, "multicast to twelve ranges", RANK_B, 70000);
    mc.src_off = 1001;
    for (i = 0; i < DESTS_MAX; ++i) {
        multi_case_add(&mc, (i % 2) ? RANK_D : RANK_C, 100000 * (i / 2) + 7, 0 == i % 3);
    }
    run_multi(st, &mc, 0x6000);
    if (RANK_A == st->group->rank) {
        CHECK_MSG(stats->multi_requested - requested >= 2, "twelve destinations went in %lu "
                  "request(s)", stats->multi_requested - requested);
        unit_note("twelve destinations: %lu requests", stats->multi_requested - requested);
    }
}

/* C's key forged: C refuses its part (and is told, as asked); D and A
 * get theirs. */
static void one_refused(state_t *st)
{
    multi_case_t mc;

    st->group->ctx.log_quiet = true;
    multi_case_init(&mc, "multicast with one destination's key forged", RANK_B, 3000);
    mc.counter = 0xa00;
    multi_case_add(&mc, RANK_C, 500, true);
    multi_case_add(&mc, RANK_D, 600, true);
    multi_case_add(&mc, RANK_A, 700, false);
    mc.forged    = 0;
    mc.expect[0] = LOOM_ERR_STALE_KEY;
    run_multi(st, &mc, 0x7000);
    st->group->ctx.log_quiet = false;
}

/* B's memory without remote read, to A and C at A's request: B serves a
 * multicast as pushes of its own, but for A, so both are refused. */
static void unreadable(state_t *st)
{
    multi_case_t mc;

    st->group->ctx.log_quiet = true;
    multi_case_init(&mc, "multicast of memory without remote read", RANK_B, 4096);
    mc.unreadable = true;
    multi_case_add(&mc, RANK_A, 900, false);
    multi_case_add(&mc, RANK_C, 900, false);
    mc.expect[0] = LOOM_ERR_STALE_KEY;
    mc.expect[1] = LOOM_ERR_STALE_KEY;
    run_multi(st, &mc, 0x7800);
    st->group->ctx.log_quiet = false;
}

/* The destinations wait at B on counter 0xb00 until A adds one to it. */
static void conditional(state_t *st)
{
    unit_group_t *group = st->group;
    unsigned notices_before = notices.count;
    unit_op_t uops[DESTS_MAX];
    multi_case_t mc;
    unsigned i;

    multi_case_init(&mc, "multicast waiting on a counter", RANK_B, 200000);
    mc.src_off = 77;
    multi_case_add(&mc, RANK_C, 3 * 1048576, false);
    multi_case_add(&mc, RANK_D, 3 * 1048576 + 5, false);
    if (RANK_B == group->rank) {
        unit_fill(st->buf + mc.src_off, mc.length, 0x8000);
        unit_fill(st->ref + mc.src_off, mc.length, 0x8000);
    }
    unit_group_barrier(group);
    if (RANK_A == group->rank) {
        CHECK_RC(multi_issue(st, &mc, uops, NULL, 0xb00), LOOM_INPROGRESS);
        unit_progress_for(&group->ctx, 0.2);
        for (i = 0; i < mc.count; ++i) {
            CHECK_MSG(0 == uops[i].calls, "a destination was served before its counter");
        }
    }
    unit_group_barrier(group); /* nothing landed yet: C and D check */
    if (RANK_C == group->rank || RANK_D == group->rank) {
        CHECK_MEM(st->buf, st->ref, BUF_LEN, "before the counter was reached");
    }
    unit_group_barrier(group);
    if (RANK_A == group->rank) {
        CHECK_RC(loom_counter_add_remote(group->peers[RANK_B], 0xb00, 1), LOOM_OK);
        multi_wait(st, &mc, uops);
    }
    unit_group_barrier(group);
    multi_check_rank(st, &mc, 0x8000, notices_before, 0);
    if (RANK_B == group->rank) {
        CHECK_UEQ(loom_counter_release(group->ctx.engine, 0xb00), 0);
    }
    unit_group_barrier(group);
}

/* Arguments refused at A before anything is sent: no callback. */
static void bad_arguments(state_t *st)
{
    unit_group_t *group = st->group;
    unit_op_t uops[DESTS_MAX];
    multi_case_t mc;
    unit_remote_t cut;

    if (RANK_A != group->rank) {
        return;
    }
    group->ctx.log_quiet = true;
    multi_case_init(&mc, "no destination", RANK_B, 100);
    CHECK_RC(multi_issue(st, &mc, uops, NULL, 0), LOOM_ERR_INVALID);
    multi_case_add(&mc, RANK_B, 0, false);
    mc.what = "the owner as a destination";
    CHECK_RC(multi_issue(st, &mc, uops, NULL, 0), LOOM_ERR_INVALID);
    cut = st->remote[RANK_C];
    cut.key_size -= 1;
    multi_case_init(&mc, "a truncated destination key", RANK_B, 100);
    multi_case_add(&mc, RANK_C, 0, false);
    mc.forged = 0;
    CHECK_RC(multi_issue(st, &mc, uops, &cut, 0), LOOM_ERR_INVALID);
    CHECK_EQ(uops[0].calls, 0);
    unit_progress_for(&group->ctx, 0.02);
    CHECK_EQ(uops[0].calls, 0);
    group->ctx.log_quiet = false;
}

static void body(unit_group_t *group)
{
    state_t st;

    state_init(&st, group);
    third_party(&st);
    own_memory(&st);
    many(&st);
    one_refused(&st);
    unreadable(&st);
    conditional(&st);
    bad_arguments(&st);
    unit_group_barrier(group);
    if (RANK_B == group->rank) {
        const loom_push_stats_t *stats = loom_engine_push_stats(group->ctx.engine);

        CHECK_MSG(stats->multi_served >= 6 * 3 + 12, "B served %lu destinations",
                  stats->multi_served);
    }
    unit_group_barrier(group);
    state_fini(&st);
}

static void configure_two_rails(loom_engine_config_t *config, bool is_parent)
{
    configure(config, is_parent);
    push_state_two_rails(config);
}

static void body_two_rails(unit_group_t *group)
{
    state_t st;

    state_init(&st, group);
    third_party(&st);
    many(&st);
    unit_group_barrier(group);
    state_fini(&st);
}

/* A asks B to push 16 MiB to C and D; D leaves for good meanwhile (as a
 * process that dies, the data to it on its way): D's part ends with an
 * error, C gets every byte, nothing waits for ever. */
static void body_dest_dies(unit_group_t *group)
{
    unit_op_t uops[DESTS_MAX];
    multi_case_t mc;
    state_t st;

    group->ctx.log_quiet = true; /* D's going is logged where it is seen */
    state_init(&st, group);
    multi_case_init(&mc, "a multicast with a destination that dies", RANK_B, 16 * 1048576);
    mc.src_off = 5;
    multi_case_add(&mc, RANK_C, 4099, false);
    multi_case_add(&mc, RANK_D, 4099, false);
    if (RANK_B == group->rank) {
        unit_fill(st.buf + mc.src_off, mc.length, 0x9000);
        unit_fill(st.ref + mc.src_off, mc.length, 0x9000);
    }
    unit_group_barrier(group);
    if (RANK_D == group->rank) {
        unit_group_leave(group);
    }
    if (RANK_A == group->rank) {
        CHECK_RC(multi_issue(&st, &mc, uops, NULL, 0), LOOM_INPROGRESS);
        unit_group_let_go(group, RANK_D);
        UNIT_WAIT(&group->ctx, uops[0].calls > 0 && uops[1].calls > 0);
        CHECK_RC(uops[0].status, LOOM_OK);
        CHECK_MSG(LOOM_OK != uops[1].status, "a push to a process that left succeeded");
        unit_note("the destination that left ended with %d (%s); the other landed",
                  uops[1].status, loom_strerror(uops[1].status));
    }
    unit_group_barrier(group);
    if (RANK_C == group->rank) {
        unit_fill(st.ref + mc.dst_off[0], mc.length, 0x9000);
    }
    CHECK_MEM(st.buf, st.ref, BUF_LEN, mc.what);
    unit_group_barrier(group);
    state_fini(&st);
}

/* This process asks owner (itself or another) to push 8192 bytes of its
 * memory into dest at 65536 once owner's counter reaches 1. */
static void push_on_counter(state_t *st, int owner, int dest, uint64_t counter, unit_op_t *uop)
{
    push_case_t pc;

    memset(&pc, 0, sizeof(pc));
    pc.owner   = owner;
    pc.dest    = dest;
    pc.dst_off = 65536;
    pc.length  = 8192;
    push_start_waiting(st, &pc, counter, uop);
}

/* A asks B to push to C and D once B's counter 0xc00 is reached, by a
 * multicast and by a push of its own, then says goodbye to B: B cancels
 * all three (the multicast's destinations are pushes B made for A), and
 * when the counter is reached later nothing lands. */
static void body_requester_leaves(unit_group_t *group)
{
    const loom_push_stats_t *stats = loom_engine_push_stats(group->ctx.engine);
    unit_op_t uops[DESTS_MAX], own;
    unsigned long cancelled = stats->cancelled;
    multi_case_t mc;
    state_t st;

    group->ctx.log_quiet = true;
    state_init(&st, group);
    multi_case_init(&mc, "a multicast whose requester leaves", RANK_B, 8192);
    multi_case_add(&mc, RANK_C, 4096, false);
    multi_case_add(&mc, RANK_D, 4096, false);
    if (RANK_A == group->rank) {
        CHECK_RC(multi_issue(&st, &mc, uops, NULL, 0xc00), LOOM_INPROGRESS);
        push_on_counter(&st, RANK_B, RANK_C, 0xc00, &own);
    }
    if (RANK_B == group->rank) {
        UNIT_WAIT(&group->ctx, 3 == stats->waiting);
    }
    unit_group_barrier(group);
    if (RANK_A == group->rank) {
        loom_peer_disconnect(group->peers[RANK_B]); /* says goodbye first */
        group->peers[RANK_B] = NULL;
        UNIT_WAIT(&group->ctx, uops[0].calls > 0 && uops[1].calls > 0 && own.calls > 0);
    }
    if (RANK_B == group->rank) {
        UNIT_WAIT(&group->ctx, 0 == stats->waiting);
        CHECK_UEQ(stats->cancelled - cancelled, 3);
        CHECK_RC(loom_counter_add(group->ctx.engine, 0xc00, 1), LOOM_OK);
        unit_progress_for(&group->ctx, 0.2);
        CHECK_UEQ(loom_counter_release(group->ctx.engine, 0xc00), 0);
    }
    unit_group_barrier(group);
    CHECK_MEM(st.buf, st.ref, BUF_LEN, "after the requester of waiting pushes left");
    unit_group_barrier(group);
    state_fini(&st);
}

/* Say goodbye to peer on every rail in use, as loom_peer_disconnect does,
 * yet keep the endpoints open and the engine idle: a peer whose NIC
 * reports no endpoint closing (rc_verbs) looks so until it is gone. */
static void say_bye_only(loom_engine_t *engine, loom_peer_t *peer)
{
    loom_wire_bye_t bye;
    int i;

    memset(&bye, 0, sizeof(bye));
    loom_wire_hdr_fill(&bye.hdr, LOOM_WIRE_BYE, 0, sizeof(bye));
    bye.sender       = loom_le64(engine->config.name);
    bye.sender_epoch = loom_le32(engine->epoch);
    for (i = 0; i < engine->rail_count; ++i) {
        if (peer->rails[i].usable) {
            CHECK_RC(loom_ctrl_send_last(peer, i, &bye, sizeof(bye)), LOOM_OK);
        }
    }
}

/* B asks A to push to C and D once A's counter 0xd00 is reached, and A
 * pushes to D on the same condition; then D goes: it says goodbye and goes
 * idle (says_bye), or goes idle without a word.  Both pushes to D are
 * cancelled when A hears the goodbye or disconnects D, whichever is first
 * (before, they stayed parked: A's disconnect waited out its 2 s for them
 * and they fired later at a process gone), D's push ends with an error at
 * B, and C's lands once the counter is reached. */
static void dest_leaves(unit_group_t *group, bool says_bye)
{
    const loom_push_stats_t *stats = loom_engine_push_stats(group->ctx.engine);
    unsigned long waiting = stats->waiting;
    unit_op_t uops[DESTS_MAX], own;
    multi_case_t mc;
    double start;
    loom_peer_t *d;
    state_t st;

    group->ctx.log_quiet = true;
    state_init(&st, group);
    multi_case_init(&mc, says_bye ? "a multicast whose destination says goodbye"
                                  : "a multicast whose destination the owner disconnects",
                    RANK_A, 8192);
    multi_case_add(&mc, RANK_C, 4096, false);
    multi_case_add(&mc, RANK_D, 4096, false);
    if (RANK_A == group->rank) {
        unit_fill(st.buf, mc.length, 0xd000);
        unit_fill(st.ref, mc.length, 0xd000);
    }
    if (RANK_C == group->rank) {
        unit_fill(st.ref + mc.dst_off[0], mc.length, 0xd000);
    }
    if (RANK_B == group->rank) {
        CHECK_RC(multi_issue(&st, &mc, uops, NULL, 0xd00), LOOM_INPROGRESS);
    }
    if (RANK_A == group->rank) {
        push_on_counter(&st, RANK_A, RANK_D, 0xd00, &own);
        UNIT_WAIT(&group->ctx, waiting + 3 == stats->waiting);
    }
    unit_group_barrier(group);
    if (RANK_D == group->rank) {
        if (says_bye) {
            say_bye_only(group->ctx.engine, group->peers[RANK_A]);
            UNIT_WAIT(&group->ctx, 0 == loom_peer_outstanding(group->peers[RANK_A])); /* sent */
        }
        unit_group_leave(group);
    }
    if (RANK_A == group->rank) {
        d = group->peers[RANK_D];
        if (says_bye) {
            UNIT_WAIT(&group->ctx, d->said_bye);
            UNIT_WAIT(&group->ctx, own.calls > 0);
            CHECK_UEQ(stats->waiting, waiting + 1);
        }
        start = unit_now();
        loom_peer_disconnect(d);
        group->peers[RANK_D] = NULL;
        unit_note("%s: disconnecting D with pushes to it waiting took %.3f s", mc.what,
                  unit_now() - start);
        /* nothing to D is left waiting, and the upper layer heard of its own */
        CHECK_UEQ(stats->waiting, waiting + 1);
        CHECK_UEQ(own.calls, 1);
        CHECK_RC(own.status, LOOM_ERR_CANCELLED);
        unit_group_let_go(group, RANK_D);
        CHECK_RC(loom_counter_add(group->ctx.engine, 0xd00, 1), LOOM_OK);
    }
    if (RANK_B == group->rank) {
        UNIT_WAIT(&group->ctx, uops[0].calls > 0 && uops[1].calls > 0);
        CHECK_RC(uops[0].status, LOOM_OK);
        CHECK_MSG(LOOM_OK != uops[1].status, "a push to a process that left succeeded");
    }
    unit_group_barrier(group);
    CHECK_MEM(st.buf, st.ref, BUF_LEN, mc.what);
    if (RANK_A == group->rank) {
        CHECK_UEQ(stats->waiting, waiting);
        CHECK_UEQ(loom_counter_release(group->ctx.engine, 0xd00), 0);
    }
    unit_group_barrier(group);
    state_fini(&st);
}

static void body_dest_says_bye(unit_group_t *group)
{
    dest_leaves(group, true);
}

static void body_dest_disconnected(unit_group_t *group)
{
    dest_leaves(group, false);
}

int main(void)
{
    unit_options_t options = {0}, two_rails = {0};
    int rc;

    options.configure = configure;
    rc = unit_group_main("multicast push", GROUP_SIZE, &options, body);
    two_rails.configure = configure_two_rails;
    rc |= unit_group_main("multicast push over two rails", GROUP_SIZE, &two_rails,
                          body_two_rails);
    rc |= unit_group_main("multicast push to a destination that dies", GROUP_SIZE, &options,
                          body_dest_dies);
    rc |= unit_group_main("multicast push whose requester leaves", GROUP_SIZE, &options,
                          body_requester_leaves);
    rc |= unit_group_main("multicast push whose destination says goodbye", GROUP_SIZE,
                          &options, body_dest_says_bye);
    return rc | unit_group_main("multicast push whose destination is disconnected", GROUP_SIZE,
                                &options, body_dest_disconnected);
}
