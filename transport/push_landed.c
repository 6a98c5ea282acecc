/*
 * Pushes counted as they land.  A push served whole in one checked write,
 * whose notice to its destination names a counter there, carries that
 * counter (LOOM_WIRE_FLAG_COUNT): the destination adds one once the last
 * segment is placed, on the next progress pass (push_cond.c), instead of
 * after the owner's PUT_ACK and notice, a round trip later on rails that
 * queue both behind data.  In a broadcast's chain each hop's forward waits
 * on that counter (README, coll loom).
 *
 * The notice still comes, and a landing counted here makes it add nothing;
 * one not counted yet when its notice comes is forgotten, and the notice
 * adds.  A write placed twice (its chunk re-driven on another rail after
 * its first copy landed) counts once.  A record lives until its notice, or
 * until the owner is gone; while LOOM_LANDED_MAX are kept a landing counts
 * nothing and its notice adds, as without the flag.  A notice that says the
 * push failed still fails the counter: the call waiting on it learns that
 * something went wrong, even if these bytes arrived.
 */
#include "loom_internal.h"

#include <stdlib.h>

#define LOOM_LANDED_MAX 4096

typedef struct loom_landed {
    ucs_list_link_t link;
    uint64_t        owner;
    uint64_t        requester;
    uint64_t        request_id;
    uint64_t        counter;
    bool            counted;   /* else its counter is still to be added to */
} loom_landed_t;

static loom_landed_t *loom_landed_find(loom_engine_t *engine, uint64_t owner,
                                       uint64_t requester, uint64_t request_id)
{
    loom_landed_t *landed;

    ucs_list_for_each(landed, &engine->push.landed, link) {
        if (landed->owner == owner && landed->requester == requester &&
            landed->request_id == request_id) {
            return landed;
        }
    }
    return NULL;
}

static void loom_landed_free(loom_engine_t *engine, loom_landed_t *landed)
{
    ucs_list_del(&landed->link);
    --engine->push.landed_count;
    engine->push.landed_pending -= !landed->counted;
    free(landed);
}

void loom_landed_record(loom_engine_t *engine, uint64_t owner, uint64_t requester,
                        uint64_t request_id, uint64_t counter)
{
    loom_landed_t *landed;

    if (0 == counter || engine->push.landed_count >= LOOM_LANDED_MAX ||
        NULL != loom_landed_find(engine, owner, requester, request_id)) {
        return; /* no room (its notice adds), or placed again */
    }
    landed = malloc(sizeof(*landed));
    if (NULL == landed) {
        return;
    }
    landed->owner      = owner;
    landed->requester  = requester;
    landed->request_id = request_id;
    landed->counter    = counter;
    landed->counted    = false;
    ucs_list_add_tail(&engine->push.landed, &landed->link);
    ++engine->push.landed_count;
    ++engine->push.landed_pending;
}

int loom_landed_count(loom_engine_t *engine, loom_landed_add_fn_t add)
{
    loom_landed_t *landed, *tmp;
    int count = 0;

    ucs_list_for_each_safe(landed, tmp, &engine->push.landed, link) {
        if (0 == engine->push.landed_pending) {
            break;
        }
        if (landed->counted) {
            continue;
        }
        ++count;
        if (LOOM_OK == add(engine, landed->counter)) {
            landed->counted = true;
            --engine->push.landed_pending;
        } else {
            loom_landed_free(engine, landed); /* its notice adds, or fails */
        }
    }
    return count;
}

bool loom_landed_take(loom_engine_t *engine, uint64_t owner, uint64_t requester,
                      uint64_t request_id, uint64_t counter)
{
    loom_landed_t *landed;
    bool counted;

    if (ucs_list_is_empty(&engine->push.landed)) {
        return false;
    }
    landed = loom_landed_find(engine, owner, requester, request_id);
    if (NULL == landed || landed->counter != counter) {
        return false;
    }
    counted = landed->counted;
    loom_landed_free(engine, landed);
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
    loom_landed_drop(engine, false, owner); /* its notices never come */
}

void loom_landed_free_all(loom_engine_t *engine)
{
    loom_landed_drop(engine, true, 0);
}
