/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Rail failures, handled from progress alone (a poller): the endpoint closed
 * for a rejoin, rings dropped, requests waiting on the rail failed, the peer
 * told, and the upper layer told once every rail to a peer is gone.
 */
#include "managers/loom_managers.h"

#include <stdio.h>

/* A peer that goes is no longer handled. */
void loom_peer_failures_forget(loom_peer_t *peer)
{
    if (0 != peer->fail_pending) {
        peer->fail_pending = 0;
        ucs_list_del(&peer->fail_link);
    }
}

/* Push requests to the peer (on one rail, or all: -1) waiting for an answer
 * that can no longer come fail now.  An atomic's request and answer are
 * messages, sent again on another rail: it fails only with the peer. */
void loom_peer_fail_requests(loom_peer_t *peer, int rail)
{
    loom_op_t *op;
    size_t pos = 0;

    while (NULL != (op = loom_hash_next(&peer->engine->requests, &pos))) {
        if (op->peer == peer && LOOM_STAGE_WAIT == op->stage &&
            (rail < 0 || (op->rail == rail && LOOM_OP_ATOMIC != op->kind))) {
            loom_op_finish(op, LOOM_ERR_UNREACH); /* also leaves the table */
        }
    }
}

/* Every rail to the peer failed: say so once, naming them, if anything
 * was still owed to it (a peer that finished first is no error). */
static void loom_peer_check_lost(loom_peer_t *peer)
{
    loom_engine_t *engine = peer->engine;
    char msg[512];
    size_t len;
    int i;

    for (i = 0; i < engine->rail_count; ++i) {
        if (NULL != peer->rails[i].ep && !peer->rails[i].failed) {
            return;
        }
    }
    if (peer->lost || 0 == peer->owed) {
        return;
    }
    peer->lost = true;
    len = (size_t)snprintf(msg, sizeof(msg), "every rail to peer %#llx failed (",
                           (unsigned long long)peer->name);
    for (i = 0; i < engine->rail_count && len < sizeof(msg); ++i) {
        len += (size_t)snprintf(msg + len, sizeof(msg) - len, "%s%s:%s", i ? ", " : "",
                                engine->rails[i].info.tl_name, engine->rails[i].info.dev_name);
    }
    if (len < sizeof(msg)) {
        snprintf(msg + len, sizeof(msg) - len, ") with %zu transfers to it pending",
                 peer->owed);
    }
    loom_log(engine, LOOM_LOG_ERROR, "%s", msg);
    if (NULL != engine->config.peer_lost_cb) {
        engine->config.peer_lost_cb(engine->config.cb_ctx, peer, msg);
    }
}

/* Say that the rail failed; to a closing peer it only closed: counted, not
 * said (a peer that finalizes closes every endpoint, and on several rails
 * some errors come before its process is gone). */
static void loom_peer_rail_report(loom_peer_t *peer, int rail, ucs_status_t status)
{
    loom_rail_t *r = &peer->engine->rails[rail];
    bool closing = loom_peer_closing(peer);

    if (closing) {
        ++r->stats.closings;
    } else {
        ++r->stats.failures;
    }
    /* A peer that closes while nothing is in flight to it (e.g. it finalized
     * first) is no error; an operation that later needs the rail reports it. */
    loom_log(peer->engine, closing ? LOOM_LOG_DEBUG
                           : peer->outstanding > 0 ? LOOM_LOG_ERROR : LOOM_LOG_INFO,
             "rail %s:%s to peer %#llx %s: %s", r->info.tl_name, r->info.dev_name,
             (unsigned long long)peer->name, closing ? "closed" : "failed",
             ucs_status_string(status));
}

/* The handling of a failed rail, from progress. */
static void loom_peer_rail_failed(loom_peer_t *peer, int rail)
{
    loom_rejoin_rail_failed(peer, rail); /* closes the endpoint from progress */
    loom_peer_rail_report(peer, rail, peer->rails[rail].fail_status);
    loom_eager_rail_failed(peer, rail);
    loom_peer_fail_requests(peer, rail);
    if (loom_peer_closing(peer)) {
        return; /* nothing more goes to it: nothing to tell */
    }
    loom_rejoin_tell_down(peer, rail);
    loom_peer_check_lost(peer); /* last: the upper layer may disconnect the peer */
}

static UCS_F_NOINLINE int loom_peer_failures_handle(loom_engine_t *engine)
{
    loom_peer_t *peer;
    int rail, count = 0;

    /* the head again every time: a handling may mark more, or take a peer away */
    while (!ucs_list_is_empty(&engine->failing)) {
        peer = ucs_list_head(&engine->failing, loom_peer_t, fail_link);
        rail = __builtin_ctz(peer->fail_pending);
        peer->fail_pending &= ~(1u << rail);
        if (0 == peer->fail_pending) {
            ucs_list_del(&peer->fail_link);
        }
        loom_peer_rail_failed(peer, rail);
        ++count;
    }
    return count;
}

/* A poller.  The check alone on every pass: the handling's stack frame
 * only when a rail failed. */
int loom_peer_failures_progress(loom_engine_t *engine)
{
    return ucs_list_is_empty(&engine->failing) ? 0 : loom_peer_failures_handle(engine);
}
