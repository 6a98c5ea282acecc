/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Pushes counted as they land.  A push served whole in one checked write,
 * whose notice to its destination names a counter there, carries that
 * counter (LOOM_WIRE_FLAG_COUNT): the destination adds one once the last
 * segment is placed, on the next progress pass (push_cond.c), instead of
 * after the owner's PUT_ACK and notice, a round trip later on rails that
 * queue both behind data.  In a broadcast's chain each hop's forward waits
 * on that counter (docs/user/coll-loom.md).
 *
 * Once a push counted, whoever waits on its counter may go on and reuse the
 * memory, while its owner may still place the write again (its chunk
 * re-driven on another rail before the PUT_ACK came): a record of every
 * push that landed, by owner, requester and request, makes a write that
 * comes again answered but not placed, and never counted twice.  The
 * notice still comes and adds nothing for a push that counted; one that
 * could not count (its counter not made yet) is left to the notice.
 * Records stay after their notice, settled, until LOOM_LANDED_MAX newer
 * ones push them out or their owner is gone; while the table is full of
 * unsettled ones a landing is not recorded, and neither counts nor guards
 * (its notice adds, as without the flag).  A notice that says the push
 * failed still fails the counter.
 */
#include "rdma/loom_rdma.h"

#include <stdlib.h>

#define LOOM_LANDED_MAX 4096

enum {
    LOOM_LANDED_PENDING,  /* to be counted on the next pass */
    LOOM_LANDED_COUNTED,  /* counted: its notice adds nothing */
    LOOM_LANDED_DECLINED  /* could not count: its notice adds */
};

struct loom_landed {
    ucs_list_link_t link;       /* engine->push.landed, oldest first */
    ucs_list_link_t pending_link; /* engine->push.landed_to_count, while PENDING */
    uint64_t        key;        /* in engine->push.landed_ids */
    uint64_t        owner;
    uint64_t        requester;
    uint64_t        request_id;
    uint64_t        counter;
    int             state;
    bool            settled;    /* its notice came */
};

/* The table's key of a push: its three names mixed (a different push that
 * mixes alike is simply not recorded). */
static uint64_t loom_landed_key(uint64_t owner, uint64_t requester, uint64_t request_id)
{
    uint64_t key = owner * 0x9e3779b97f4a7c15ull ^ requester * 0xc2b2ae3d27d4eb4full ^
                   request_id;

    return (0 == key) ? 1 : key; /* 0 is no key (loom_hash.h) */
}

static loom_landed_t *loom_landed_find(loom_engine_t *engine, uint64_t owner,
                                       uint64_t requester, uint64_t request_id)
{
    loom_landed_t *landed = loom_hash_get(&engine->push.landed_ids,
                                          loom_landed_key(owner, requester, request_id));

    return (NULL != landed && landed->owner == owner && landed->requester == requester &&
            landed->request_id == request_id) ? landed : NULL;
}

static void loom_landed_free(loom_engine_t *engine, loom_landed_t *landed)
{
    ucs_list_del(&landed->link);
    if (LOOM_LANDED_PENDING == landed->state) {
        ucs_list_del(&landed->pending_link);
        --engine->push.landed_pending;
    }
    (void)loom_hash_remove(&engine->push.landed_ids, landed->key);
    free(landed);
}

/* Room for one more record: the oldest settled one goes if need be. */
static bool loom_landed_room(loom_engine_t *engine)
{
    loom_landed_t *landed;

    if (loom_hash_count(&engine->push.landed_ids) < LOOM_LANDED_MAX) {
        return true;
    }
    ucs_list_for_each(landed, &engine->push.landed, link) {
        if (landed->settled) {
            loom_landed_free(engine, landed);
            return true;
        }
    }
    return false;
}

bool loom_landed_again(loom_engine_t *engine, uint64_t owner, uint64_t requester,
                       uint64_t request_id)
{
    return 0 != requester && loom_hash_count(&engine->push.landed_ids) > 0 &&
           NULL != loom_landed_find(engine, owner, requester, request_id);
}

void loom_landed_record(loom_engine_t *engine, uint64_t owner, uint64_t requester,
                        uint64_t request_id, uint64_t counter)
{
    uint64_t key = loom_landed_key(owner, requester, request_id);
    loom_landed_t *landed;

    if (0 == counter || NULL != loom_hash_get(&engine->push.landed_ids, key) ||
        !loom_landed_room(engine)) {
        return; /* placed again, a key taken, or no room: its notice adds */
    }
    landed = malloc(sizeof(*landed));
    if (NULL == landed) {
        return;
    }
    landed->key        = key;
    landed->owner      = owner;
    landed->requester  = requester;
    landed->request_id = request_id;
    landed->counter    = counter;
    landed->state      = LOOM_LANDED_PENDING;
    landed->settled    = false;
    if (0 != loom_hash_put(&engine->push.landed_ids, key, landed)) {
        free(landed);
        return;
    }
    ucs_list_add_tail(&engine->push.landed, &landed->link);
    ucs_list_add_tail(&engine->push.landed_to_count, &landed->pending_link);
    ++engine->push.landed_pending;
}

loom_landed_t *loom_landed_pending(loom_engine_t *engine, uint64_t *counter)
{
    loom_landed_t *landed;

    if (ucs_list_is_empty(&engine->push.landed_to_count)) {
        return NULL;
    }
    landed   = ucs_list_head(&engine->push.landed_to_count, loom_landed_t, pending_link);
    *counter = landed->counter;
    return landed;
}

void loom_landed_counted(loom_engine_t *engine, loom_landed_t *landed, bool counted)
{
    ucs_list_del(&landed->pending_link);
    landed->state = counted ? LOOM_LANDED_COUNTED : LOOM_LANDED_DECLINED;
    --engine->push.landed_pending;
}

bool loom_landed_take(loom_engine_t *engine, uint64_t owner, uint64_t requester,
                      uint64_t request_id, uint64_t counter)
{
    loom_landed_t *landed;
    bool counted;

    if (0 == loom_hash_count(&engine->push.landed_ids)) {
        return false;
    }
    landed = loom_landed_find(engine, owner, requester, request_id);
    if (NULL == landed || landed->counter != counter || landed->settled) {
        return false;
    }
    if (LOOM_LANDED_PENDING == landed->state) {
        /* its notice came first: the notice adds, the pass does not */
        loom_landed_counted(engine, landed, false);
    }
    counted         = LOOM_LANDED_COUNTED == landed->state;
    landed->settled = true;
    return counted;
}

static void loom_landed_drop(loom_engine_t *engine, bool all, uint64_t owner)
{
    loom_landed_t *landed, *tmp;

    ucs_list_for_each_safe(landed, tmp, &engine->push.landed, link) {
        if (all || landed->owner == owner) {
            loom_landed_free(engine, landed);
        }
    }
}

void loom_landed_peer_gone(loom_engine_t *engine, uint64_t owner)
{
    loom_landed_drop(engine, false, owner); /* it writes no more */
}

void loom_landed_init(loom_engine_t *engine)
{
    ucs_list_head_init(&engine->push.landed);
    ucs_list_head_init(&engine->push.landed_to_count);
    loom_hash_init(&engine->push.landed_ids);
}

void loom_landed_free_all(loom_engine_t *engine)
{
    loom_landed_drop(engine, true, 0);
    loom_hash_fini(&engine->push.landed_ids);
}
