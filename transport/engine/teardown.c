/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Going away: disconnecting a peer, flushing it, and deregistering memory
 * wait (by running progress, never from inside it) for what the network
 * still holds, then take the state down.
 */
#include "engine/loom_engine.h"

#include <stdlib.h>

/* How long deregistration waits for serves already handed to UCT. */
#define LOOM_SERVE_DRAIN_NS 2000000000ull

static void loom_peer_retire(loom_peer_t *peer);

/* Whether UCT still holds something for the peer on a rail in use. */
static bool loom_peer_eps_busy(loom_peer_t *peer)
{
    ucs_status_t status;
    int i;

    for (i = 0; i < peer->engine->rail_count; ++i) {
        if (!peer->rails[i].usable) {
            continue;
        }
        status = uct_ep_flush(peer->rails[i].ep, 0, NULL);
        if (UCS_INPROGRESS == status || UCS_ERR_NO_RESOURCE == status) {
            return true;
        }
    }
    return false;
}

/* Whether the peer still waits for something of ours: not with every rail
 * to it failed (nothing in flight can finish), nor once it said goodbye
 * (everything it sent came before) and the upper layer waits for nothing
 * of it; what is left then is our own goodbye and acknowledgements,
 * which a peer that closes does not need, and which it may never take in
 * (a peer that left first has closed its endpoints). */
static bool loom_peer_unsettled(loom_peer_t *peer)
{
    if ((peer->said_bye && 0 == peer->owed) || !loom_peer_reachable(peer)) {
        return false;
    }
    return peer->outstanding > 0 || loom_peer_eps_busy(peer);
}

/* Let what is in flight finish and our goodbye leave, but never hang on a
 * dead peer, nor progress from inside progress. */
static void loom_peer_settle(loom_peer_t *peer)
{
    loom_engine_t *engine = peer->engine;
    uint64_t deadline = loom_now_ns() + 2000000000ull;

    while (loom_peer_unsettled(peer) && !engine->in_progress && loom_now_ns() < deadline) {
        loom_engine_progress(engine);
    }
}

/* A push served to the peer that another process asked for: that process
 * and the push's notices are told it failed. */
static void loom_peer_drop_op(loom_peer_t *peer, loom_op_t *op)
{
    if (LOOM_OP_SERVE == op->kind && op->notify != peer->name) {
        loom_rdma_complete(op, LOOM_ERR_UNREACH);
    } else {
        loom_op_finish(op, LOOM_ERR_UNREACH);
    }
}

/* Fail what still waits to be issued to the peer, and take the peer off
 * the list of busy peers (an O(1) unlink: it may be on the list progress
 * is draining). */
static void loom_peer_drop_queued(loom_peer_t *peer)
{
    loom_op_t *op;
    int i;

    while (NULL != (op = loom_opq_pop(&peer->queue))) {
        loom_peer_drop_op(peer, op);
    }
    while (NULL != (op = loom_opq_pop(&peer->push_held))) {
        loom_peer_drop_op(peer, op);
    }
    for (i = 0; i < peer->engine->rail_count; ++i) {
        while (NULL != (op = loom_opq_pop(&peer->rails[i].rail_queue))) {
            loom_peer_drop_op(peer, op);
        }
    }
    if (peer->queued) {
        peer->queued = false;
        ucs_list_del(&peer->busy_link);
    }
}

/* Destroy the peer's endpoints; its rails are out of use for good. */
static void loom_peer_close_eps(loom_peer_t *peer)
{
    int i;

    for (i = 0; i < peer->engine->rail_count; ++i) {
        loom_peer_rail_t *prail = &peer->rails[i];

        if (NULL != prail->ep) {
            uct_ep_destroy(prail->ep);
            prail->ep = NULL;
        }
        if (NULL != prail->boot_ep) {
            uct_ep_destroy(prail->boot_ep);
            prail->boot_ep = NULL;
        }
        prail->usable = false;
        prail->failed = true;
    }
    loom_serves_peer_closed(peer);
}

/* We leave: tell the peer on every rail we use towards it, behind what is
 * queued, so that it takes our endpoints closing for what it is. */
static void loom_peer_say_bye(loom_peer_t *peer)
{
    loom_wire_bye_t bye;
    int i;

    memset(&bye, 0, sizeof(bye));
    loom_wire_hdr_fill(&bye.hdr, LOOM_WIRE_BYE, 0, sizeof(bye));
    bye.sender       = loom_le64(peer->engine->config.name);
    bye.sender_epoch = loom_le32(peer->engine->epoch);
    for (i = 0; i < peer->engine->rail_count; ++i) {
        if (peer->rails[i].usable) {
            (void)loom_ctrl_send_last(peer, i, &bye, sizeof(bye));
        }
    }
}

void loom_peer_disconnect(loom_peer_t *peer)
{
    loom_engine_t *engine = peer->engine;

    /* progress below may run a callback that disconnects it again */
    if (peer->leaving || --peer->refcount > 0) {
        return;
    }
    peer->leaving = true;
    /* what waits here on a counter for it or to it would hold the settle */
    loom_push_peer_gone(engine, peer->name);
    loom_peer_say_bye(peer);
    loom_peer_settle(peer);
    loom_peer_drop_queued(peer);
    if (!engine->in_progress) {
        loom_engine_progress(engine); /* run the callbacks of what was dropped */
        loom_peer_drop_queued(peer);  /* and of what they queued meanwhile */
    }
    loom_rejoin_peer_fini(peer);
    loom_peer_failures_forget(peer);
    loom_peer_close_eps(peer);
    loom_hash_remove(&engine->peers, peer->name);
    loom_push_peer_gone(engine, peer->name); /* and what it asked for meanwhile */
    loom_eager_peer_fini(peer); /* nothing can land in its rings now */
    loom_msg_peer_fini(peer);
    free(peer->addr_blob);
    peer->addr_blob = NULL;
    if (peer->outstanding > 0) {
        loom_peer_retire(peer);
        return;
    }
    free(peer);
}

/*
 * Operations still in flight, or whose callbacks have not run, point at the
 * peer: fail those waiting for the peer's answer, and keep the memory until
 * the engine goes, where nothing can find the peer any more.
 */
static void loom_peer_retire(loom_peer_t *peer)
{
    loom_engine_t *engine = peer->engine;

    loom_log(engine, LOOM_LOG_WARN, "peer %#llx disconnected with %zu operations not "
             "completed; they fail", (unsigned long long)peer->name, peer->outstanding);
    loom_peer_fail_requests(peer, -1);
    ucs_list_add_tail(&engine->retired, &peer->retired_link);
}

int loom_peer_flush(loom_peer_t *peer)
{
    while (peer->outstanding > 0) {
        loom_engine_progress(peer->engine);
    }
    return LOOM_OK;
}

/* Serves still sending from the memory: wait for their last byte to leave,
 * unless we are inside progress (a callback deregistered) and cannot drive
 * it. */
static void loom_serves_drain(loom_region_t *region)
{
    loom_engine_t *engine = region->engine;
    uint64_t deadline = loom_now_ns() + LOOM_SERVE_DRAIN_NS;

    loom_serves_release_sent(region);
    while (region->serves > 0 && !engine->in_progress && loom_now_ns() < deadline) {
        loom_engine_progress(engine);
        loom_serves_release_sent(region);
    }
}

/* No serve may read the region once this returns (a striped one that
 * could not be waited for posts no chunk more; those in flight end). */
static void loom_serves_end(loom_region_t *region)
{
    loom_serves_cancel(region);
    loom_serves_drain(region);
    if (region->serves > 0) {
        loom_stripes_drop_region(region);
        loom_serves_detach(region);
    }
}

void loom_mem_revoke(loom_region_t *region)
{
    region->revoked = true;
    loom_mem_deregister(region);
}

void loom_mem_deregister(loom_region_t *region)
{
    loom_region_unpublish(region); /* a key naming it is refused from now on */
    if (region->serves > 0) {
        loom_serves_end(region);
    }
    loom_region_free(region);
}
