/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Conditional pushes (seed 002): a push request may wait at its owner on a
 * counter until the counter reaches a threshold.  Counters grow by notices
 * of pushes that ended (one per notice naming the counter), by counter
 * messages of peers and by this process; when one reaches a waiting push's
 * threshold, the pushes waiting on it fire, in the order they came.  Both
 * are bounded; a counter released cancels what waits on it, and a
 * requester that goes cancels its own: a waiting push is always told.
 * Counters this process handed out (loom_counters_open) are never made by a
 * notice or a push: once released they stay gone.
 */
#include "rdma/loom_rdma.h"

#include <stdlib.h>
#include <string.h>

#define LOOM_PUSH_COUNTERS_DEFAULT 4096
#define LOOM_PUSH_WAITING_DEFAULT  4096
/* Notices received and not yet handed to the upper layer (full progress
 * hands them all): a notice is part of its sender's reliable stream, so
 * only a peer flooding this process reaches the bound, never a burst of a
 * legitimate schedule (a broadcast's leaf gets two per segment at once). */
#define LOOM_PUSH_NOTICES_HELD_MAX 65536

static unsigned loom_push_counters_max(const loom_engine_t *engine)
{
    return engine->config.push_counters_max ? engine->config.push_counters_max
                                            : LOOM_PUSH_COUNTERS_DEFAULT;
}

static unsigned loom_push_waiting_max(const loom_engine_t *engine)
{
    return engine->config.push_waiting_max ? engine->config.push_waiting_max
                                           : LOOM_PUSH_WAITING_DEFAULT;
}

static loom_counter_t *loom_counter_new(loom_engine_t *engine, uint64_t id)
{
    loom_counter_t *counter = calloc(1, sizeof(*counter));

    if (NULL == counter) {
        return NULL;
    }
    ucs_list_head_init(&counter->waiting);
    if (0 != loom_hash_put(&engine->push.counters, id, counter)) {
        free(counter);
        return NULL;
    }
    ++engine->push.stats.counters;
    return counter;
}

/* The counter of that id, made on first use unless it is one of those handed
 * out (released, or never issued: *rc LOOM_ERR_NOT_FOUND); NULL at the bound
 * (*rc LOOM_ERR_LIMIT). */
static loom_counter_t *loom_counter_get(loom_engine_t *engine, uint64_t id, int *rc)
{
    loom_counter_t *counter = loom_hash_get(&engine->push.counters, id);

    *rc = LOOM_OK;
    if (NULL != counter) {
        return counter;
    }
    if (id & LOOM_COUNTER_ISSUED) {
        *rc = LOOM_ERR_NOT_FOUND;
        return NULL;
    }
    *rc = LOOM_ERR_LIMIT;
    if (engine->push.stats.counters >= loom_push_counters_max(engine)) {
        loom_log(engine, LOOM_LOG_WARN, "push counter %#llx refused: %lu counters exist, "
                 "at most %u", (unsigned long long)id, engine->push.stats.counters,
                 loom_push_counters_max(engine));
        return NULL;
    }
    counter = loom_counter_new(engine, id);
    *rc = (NULL == counter) ? LOOM_ERR_NOMEM : LOOM_OK;
    return counter;
}

/* Serve the pushes whose threshold the counter reached, in order.  They
 * leave the list before any is served: a serve refused at once tells its
 * notices, which may add to counters of ours. */
static void loom_counter_fire(loom_engine_t *engine, loom_counter_t *counter)
{
    loom_push_waiting_t *waiting, *tmp;
    ucs_list_link_t ready;

    ucs_list_head_init(&ready);
    ucs_list_for_each_safe(waiting, tmp, &counter->waiting, link) {
        if (counter->value >= waiting->threshold) {
            ucs_list_del(&waiting->link);
            ucs_list_add_tail(&ready, &waiting->link);
        }
    }
    while (!ucs_list_is_empty(&ready)) {
        waiting = ucs_list_extract_head(&ready, loom_push_waiting_t, link);
        --engine->push.stats.waiting;
        ++engine->push.stats.fired;
        loom_push_serve(engine, waiting->rail, waiting->asker, waiting->msg, waiting->length);
        free(waiting);
    }
}

static int loom_counter_bump(loom_engine_t *engine, uint64_t id, uint64_t amount)
{
    loom_counter_t *counter;
    int rc;

    if (0 == id) {
        return LOOM_ERR_INVALID; /* 0 means "no counter" on the wire */
    }
    counter = loom_counter_get(engine, id, &rc);
    if (NULL == counter) {
        return rc;
    }
    if (amount > UINT64_MAX - counter->value) {
        /* an amount off the wire that would wrap it past the thresholds
         * waiting on it, back to below them */
        return LOOM_ERR_INVALID;
    }
    counter->value += amount;
    ++engine->push.stats.counter_adds;
    loom_counter_fire(engine, counter);
    return LOOM_OK;
}

/* A notice of a push that did not land: the counter says so (its waiting
 * pushes stay: the upper layer releases it). */
static int loom_counter_fail(loom_engine_t *engine, uint64_t id, int status)
{
    loom_counter_t *counter = loom_hash_get(&engine->push.counters, id);

    if (NULL == counter) {
        return (id & LOOM_COUNTER_ISSUED) ? LOOM_ERR_NOT_FOUND : LOOM_OK;
    }
    if (LOOM_OK == counter->failed) {
        counter->failed = (LOOM_OK == status) ? LOOM_ERR_IO : status;
    }
    return LOOM_OK;
}

static void loom_push_waiting_cancel(loom_engine_t *engine, loom_push_waiting_t *waiting)
{
    --engine->push.stats.waiting;
    ++engine->push.stats.cancelled;
    loom_push_refuse(engine, waiting->rail, waiting->msg, waiting->length,
                     LOOM_ERR_CANCELLED);
    free(waiting);
}

/* A request checked for its header: served now, or kept until its counter
 * reaches the threshold (refused at the bounds). */
void loom_push_accept(loom_engine_t *engine, int rail, uint64_t asker, const void *data,
                      size_t length)
{
    loom_push_waiting_t *waiting;
    loom_counter_t *counter;
    loom_wire_push_req_t req;
    uint64_t id;
    int rc = LOOM_ERR_NOMEM;

    memcpy(&req, data, sizeof(req));
    id = loom_from_le64(req.cond_counter);
    counter = (0 == id) ? NULL : loom_hash_get(&engine->push.counters, id);
    if (0 == id || (NULL != counter && counter->value >= loom_from_le64(req.cond_threshold))) {
        loom_push_serve(engine, rail, asker, data, length);
        return;
    }
    if (engine->push.stats.waiting >= loom_push_waiting_max(engine)) {
        loom_log(engine, LOOM_LOG_WARN, "%lu pushes wait on counters here, at most %u "
                 "(btl_loom_push_waiting)", engine->push.stats.waiting,
                 loom_push_waiting_max(engine));
        loom_push_refuse(engine, rail, data, length, LOOM_ERR_LIMIT);
        return;
    }
    waiting = malloc(sizeof(*waiting) + length);
    counter = (NULL == waiting) ? NULL : loom_counter_get(engine, id, &rc);
    if (NULL == counter) {
        free(waiting);
        /* a counter handed out and released: what waited on it was cancelled */
        loom_push_refuse(engine, rail, data, length,
                         (LOOM_ERR_NOT_FOUND == rc) ? LOOM_ERR_CANCELLED : rc);
        return;
    }
    waiting->counter   = id;
    waiting->threshold = loom_from_le64(req.cond_threshold);
    waiting->rail      = rail;
    waiting->asker     = asker;
    waiting->dest      = loom_from_le64(req.dest_proc);
    waiting->length    = length;
    memcpy(waiting->msg, data, length);
    ucs_list_add_tail(&counter->waiting, &waiting->link);
    ++engine->push.stats.waiting;
    ++engine->push.stats.waited;
}

ucs_status_t loom_push_req_recv(void *arg, void *data, size_t length, unsigned flags)
{
    loom_rail_t *rail = arg;
    loom_engine_t *engine = rail->engine;
    loom_wire_push_req_t req;

    (void)flags;
    if (!loom_wire_hdr_check(rail, data, length, LOOM_WIRE_PUSH_REQ,
                             sizeof(req) + sizeof(loom_wire_key_t))) {
        return UCS_OK;
    }
    memcpy(&req, data, sizeof(req));
    /* only this process asks for, and is answered about, its own pushes: a
     * peer's request naming it is forged (it could read memory without
     * remote read access, or end a push of ours) */
    if (loom_from_le64(req.requester) == engine->config.name ||
        loom_from_le64(req.notify_proc) == engine->config.name) {
        ++engine->push.stats.refused;
        ++rail->stats.refused;
        loom_log(engine, LOOM_LOG_WARN, "refused a push request that names this process "
                 "as its requester or the process to answer");
        return UCS_OK;
    }
    if (LOOM_OK != loom_push_req_form(engine, data, length)) {
        loom_push_refuse(engine, rail->index, data, length, LOOM_ERR_INVALID);
        return UCS_OK;
    }
    loom_push_accept(engine, rail->index, loom_from_le64(req.requester), data, length);
    return UCS_OK;
}

/* A notice of a push that ended: its counter grows now, the upper layer
 * hears of it from full progress. */
/* Pushes whose checked write landed since the last pass count now
 * (push_landed.c), on counters that exist: one the notice would make is
 * left to the notice. */
static UCS_F_NOINLINE int loom_push_landed_count(loom_engine_t *engine)
{
    loom_landed_t *landed;
    uint64_t id;
    int count = 0;

    while (NULL != (landed = loom_landed_pending(engine, &id))) {
        bool counted = NULL != loom_hash_get(&engine->push.counters, id) &&
                       LOOM_OK == loom_counter_bump(engine, id, 1);

        engine->push.stats.counted_on_landing += counted;
        loom_landed_counted(engine, landed, counted);
        ++count;
    }
    return count;
}

void loom_push_notice_recv(loom_engine_t *engine, int rail, uint64_t owner, const void *data)
{
    loom_wire_push_notice_t notice;
    loom_notice_held_t *held;
    uint64_t counter;
    int rc = LOOM_OK;

    memcpy(&notice, data, sizeof(notice));
    counter = loom_from_le64(notice.counter);
    ++engine->push.stats.notices_received;
    if (0 != engine->push.landed_pending) {
        (void)loom_push_landed_count(engine); /* what landed before it counts first */
    }
    if (0 != counter &&
        loom_landed_take(engine, owner, loom_from_le64(notice.requester),
                         loom_from_le64(notice.request_id), counter) &&
        LOOM_WIRE_OK == loom_from_le32(notice.status)) {
        /* its write added one as it landed (push_landed.c) */
    } else if (0 != counter && LOOM_WIRE_OK == loom_from_le32(notice.status)) {
        rc = loom_counter_bump(engine, counter, 1);
    } else if (0 != counter) {
        rc = loom_counter_fail(engine, counter, loom_wire_to_rc(loom_from_le32(notice.status)));
    }
    if (LOOM_ERR_NOT_FOUND == rc) {
        /* late, for a call that ended (failed) here: nobody counts on it */
        loom_log(engine, LOOM_LOG_INFO, "a notice of push request %llu of %#llx for counter "
                 "%#llx, released: dropped", (unsigned long long)loom_from_le64(notice.request_id),
                 (unsigned long long)loom_from_le64(notice.requester),
                 (unsigned long long)counter);
    } else if (LOOM_OK != rc) {
        if (rail >= 0) {
            ++engine->rails[rail].stats.refused;
        }
        loom_log(engine, LOOM_LOG_WARN, "a notice of push request %llu of %#llx could not "
                 "add to counter %#llx: %s", (unsigned long long)loom_from_le64(notice.request_id),
                 (unsigned long long)loom_from_le64(notice.requester),
                 (unsigned long long)counter, loom_strerror(rc));
    }
    if (NULL == engine->config.push_notice_cb) {
        return;
    }
    if (engine->push.held >= LOOM_PUSH_NOTICES_HELD_MAX) {
        loom_msg_over_limit(engine, (rail >= 0) ? rail : 0, owner, "a push notice");
        return;
    }
    held = malloc(sizeof(*held));
    if (NULL == held) {
        return;
    }
    held->owner  = owner;
    held->notice = notice;
    ucs_list_add_tail(&engine->push.notices, &held->link);
    ++engine->push.held;
}

/* A counter message of a peer (an engine message: once, in order). */
void loom_counter_recv(loom_peer_t *peer, int rail, const void *data, size_t length)
{
    loom_wire_counter_add_t msg;
    int rc;

    (void)length; /* checked by the engine's dispatch */
    memcpy(&msg, data, sizeof(msg));
    rc = loom_counter_bump(peer->engine, loom_from_le64(msg.counter), loom_from_le64(msg.amount));
    if (LOOM_ERR_NOT_FOUND == rc) {
        /* a counter handed out here and released: its call ended */
        loom_log(peer->engine, LOOM_LOG_INFO, "peer %#llx added to counter %#llx, released: "
                 "dropped", (unsigned long long)peer->name,
                 (unsigned long long)loom_from_le64(msg.counter));
    } else if (LOOM_OK != rc) {
        ++peer->engine->rails[rail].stats.refused;
        loom_log(peer->engine, LOOM_LOG_WARN, "peer %#llx could not add to counter %#llx: %s",
                 (unsigned long long)peer->name,
                 (unsigned long long)loom_from_le64(msg.counter), loom_strerror(rc));
    }
}

static UCS_F_NOINLINE int loom_push_notices_deliver(loom_engine_t *engine)
{
    loom_notice_held_t *held;
    loom_push_notice_t notice;
    int count = 0;

    while (!ucs_list_is_empty(&engine->push.own)) {
        held = ucs_list_extract_head(&engine->push.own, loom_notice_held_t, link);
        --engine->push.held;
        loom_push_notice_recv(engine, -1, held->owner, &held->notice);
        free(held);
        ++count;
    }
    while (!engine->quiet && !ucs_list_is_empty(&engine->push.notices)) {
        held = ucs_list_extract_head(&engine->push.notices, loom_notice_held_t, link);
        --engine->push.held;
        notice.requester  = loom_from_le64(held->notice.requester);
        notice.request_id = loom_from_le64(held->notice.request_id);
        notice.owner      = held->owner;
        notice.counter    = loom_from_le64(held->notice.counter);
        notice.length     = loom_from_le64(held->notice.length);
        notice.status     = loom_wire_to_rc(loom_from_le32(held->notice.status));
        free(held);
        engine->config.push_notice_cb(engine->config.cb_ctx, &notice);
        ++count;
    }
    return count;
}

/* A poller: pushes counted as they landed, our notices to ourselves, then
 * (in full progress) the notices for the upper layer, in order; the checks
 * alone on every pass. */
int loom_push_notices_progress(loom_engine_t *engine)
{
    int count = (0 == engine->push.landed_pending) ? 0 : loom_push_landed_count(engine);

    if (ucs_list_is_empty(&engine->push.own) &&
        (engine->quiet || ucs_list_is_empty(&engine->push.notices))) {
        return count;
    }
    return count + loom_push_notices_deliver(engine);
}

/* A process that said goodbye or that we disconnect: the pushes waiting
 * here that it asked for (by multicast too) are cancelled, and so are those
 * that would push to it, which nothing could take in once its endpoints
 * close (a disconnect would otherwise wait for counters that may never be
 * reached).  The processes they name are told. */
void loom_push_peer_gone(loom_engine_t *engine, uint64_t name)
{
    loom_push_waiting_t *waiting, *tmp;
    loom_counter_t *counter;
    size_t pos = 0;

    while (NULL != (counter = loom_hash_next(&engine->push.counters, &pos))) {
        ucs_list_for_each_safe(waiting, tmp, &counter->waiting, link) {
            if (waiting->asker == name || waiting->dest == name) {
                ucs_list_del(&waiting->link);
                loom_push_waiting_cancel(engine, waiting);
            }
        }
    }
    loom_landed_peer_gone(engine, name);
}

void loom_push_cond_init(loom_engine_t *engine)
{
    loom_hash_init(&engine->push.counters);
    ucs_list_head_init(&engine->push.own);
    ucs_list_head_init(&engine->push.notices);
    loom_landed_init(engine);
}

static void loom_notices_free(ucs_list_link_t *list)
{
    while (!ucs_list_is_empty(list)) {
        free(ucs_list_extract_head(list, loom_notice_held_t, link));
    }
}

/* At destroy: nobody is connected to hear of what still waits. */
void loom_push_cond_fini(loom_engine_t *engine)
{
    loom_counter_t *counter;
    size_t pos = 0;

    while (NULL != (counter = loom_hash_next(&engine->push.counters, &pos))) {
        while (!ucs_list_is_empty(&counter->waiting)) {
            free(ucs_list_extract_head(&counter->waiting, loom_push_waiting_t, link));
        }
        free(counter);
    }
    loom_hash_fini(&engine->push.counters);
    loom_notices_free(&engine->push.own);
    loom_notices_free(&engine->push.notices);
    loom_landed_free_all(engine);
}

/* ---- public -------------------------------------------------------------------- */

int loom_counter_add(loom_engine_t *engine, uint64_t counter, uint64_t amount)
{
    return loom_counter_bump(engine, counter, amount);
}

/* An engine message: sent once, in order with our messages, re-sent if its
 * rail fails (an addition lost would leave pushes waiting for ever). */
int loom_counter_add_remote(loom_peer_t *peer, uint64_t counter, uint64_t amount)
{
    loom_wire_counter_add_t msg;
    int rc;

    if (0 == counter) {
        return LOOM_ERR_INVALID;
    }
    memset(&msg, 0, sizeof(msg));
    msg.kind    = LOOM_WIRE_COUNTER_ADD;
    msg.counter = loom_le64(counter);
    msg.amount  = loom_le64(amount);
    rc = loom_engine_msg_send(peer, &msg, sizeof(msg), NULL);
    return (rc < 0) ? rc : LOOM_OK;
}

int loom_counter_add_at(loom_engine_t *engine, uint64_t proc, uint64_t counter,
                        uint64_t amount)
{
    loom_peer_t *peer;

    if (proc == engine->config.name) {
        return loom_counter_bump(engine, counter, amount);
    }
    peer = loom_peer_lookup(engine, proc);
    return (NULL == peer) ? LOOM_ERR_UNREACH : loom_counter_add_remote(peer, counter, amount);
}

uint64_t loom_counter_value(const loom_engine_t *engine, uint64_t id)
{
    const loom_counter_t *counter = loom_hash_get((loom_hash_t *)&engine->push.counters, id);

    return (NULL == counter) ? 0 : counter->value;
}

unsigned loom_counter_release(loom_engine_t *engine, uint64_t id)
{
    loom_counter_t *counter = loom_hash_remove(&engine->push.counters, id);
    unsigned cancelled = 0;

    if (NULL == counter) {
        return 0;
    }
    --engine->push.stats.counters;
    while (!ucs_list_is_empty(&counter->waiting)) {
        loom_push_waiting_cancel(engine, ucs_list_extract_head(&counter->waiting,
                                                               loom_push_waiting_t, link));
        ++cancelled;
    }
    free(counter);
    return cancelled;
}

int loom_counters_open(loom_engine_t *engine, unsigned count, uint64_t *first)
{
    uint64_t base = LOOM_COUNTER_ISSUED | (engine->push.issued + 1);
    unsigned i;

    *first = 0;
    if (0 == count || count > loom_push_counters_max(engine) - engine->push.stats.counters) {
        loom_log(engine, LOOM_LOG_INFO, "%u push counters refused: %lu exist, at most %u",
                 count, engine->push.stats.counters, loom_push_counters_max(engine));
        return (0 == count) ? LOOM_ERR_INVALID : LOOM_ERR_LIMIT;
    }
    for (i = 0; i < count; ++i) {
        if (NULL == loom_counter_new(engine, base + i)) {
            while (i-- > 0) {
                (void)loom_counter_release(engine, base + i);
            }
            return LOOM_ERR_NOMEM;
        }
    }
    engine->push.issued += count; /* never again, even those released */
    *first = base;
    return LOOM_OK;
}

int loom_counter_status(const loom_engine_t *engine, uint64_t id)
{
    const loom_counter_t *counter = loom_hash_get((loom_hash_t *)&engine->push.counters, id);

    return (NULL == counter) ? LOOM_ERR_NOT_FOUND : counter->failed;
}

const loom_push_stats_t *loom_engine_push_stats(const loom_engine_t *engine)
{
    return &engine->push.stats;
}
