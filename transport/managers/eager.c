/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Eager rings: set-up, memory accounting, progress and the policy that
 * shrinks idle rings and keeps the process inside its eager memory budget.
 * The two sides of the protocol are in eager_tx.c and eager_rx.c.
 */
#include "managers/loom_managers.h"

#include <stdlib.h>
#include <string.h>

#define LOOM_EAGER_CHECK_NS 10000000ull /* policy runs every 10 ms */


/* Check the phases of the configuration; fill in default thresholds. */
static int loom_eager_config_check(loom_engine_t *engine)
{
    loom_engine_config_t *config = &engine->config;
    uint32_t prev = 0;
    unsigned p;

    if (config->eager_phase_count > LOOM_EAGER_MAX_PHASES) {
        loom_log(engine, LOOM_LOG_ERROR, "eager rings: %u phases configured, at most %d",
                 config->eager_phase_count, LOOM_EAGER_MAX_PHASES);
        return LOOM_ERR_INVALID;
    }
    for (p = 0; p < config->eager_phase_count; ++p) {
        loom_eager_phase_t *phase = &config->eager_phases[p];
        const char *why = NULL;

        if (0 == phase->threshold) {
            phase->threshold = phase->slot_size - LOOM_WIRE_SLOT_OVERHEAD;
        }
        if (phase->slot_size < LOOM_WIRE_SLOT_MIN || phase->slot_size > LOOM_WIRE_SLOT_MAX ||
            0 != phase->slot_size % 8) {
            why = "slot size must be a multiple of 8 from 64 to 1048576";
        } else if (0 == phase->slot_count || phase->slot_count > LOOM_WIRE_SLOTS_MAX) {
            why = "slot count must be from 1 to 4095";
        } else if ((uint64_t)phase->slot_size * phase->slot_count > LOOM_WIRE_RING_MAX) {
            why = "a ring may have at most 64 MiB";
        } else if (phase->threshold > phase->slot_size - LOOM_WIRE_SLOT_OVERHEAD) {
            why = "threshold larger than the slot size less loom's 31 bytes";
        } else if (phase->threshold <= prev) {
            why = "thresholds must grow from phase to phase";
        }
        if (NULL != why) {
            loom_log(engine, LOOM_LOG_ERROR, "eager rings: phase %u (%u slots of %u bytes, "
                     "threshold %u): %s", p + 1, phase->slot_count, phase->slot_size,
                     phase->threshold, why);
            return LOOM_ERR_INVALID;
        }
        prev = phase->threshold;
    }
    return LOOM_OK;
}

int loom_eager_init(loom_engine_t *engine)
{
    size_t ack = LOOM_WIRE_ACK_BYTES(loom_key_size(engine));
    int i, rc;

    engine->eager.box_size = (ack + 63) & ~(size_t)63;
    if (sizeof(loom_wire_eager_req_t) + loom_key_size(engine) > LOOM_OP_MSG_MAX) {
        engine->config.eager_phase_count = 0; /* keys too big for a request: no rings */
    }
    rc = loom_eager_config_check(engine);
    for (i = 0; i < engine->rail_count; ++i) {
        engine->eager.rail_ok[i] = (LOOM_OK == rc) &&
                                   loom_eager_rail_capable(engine, &engine->rails[i]);
    }
    return rc;
}

void loom_eager_fini(loom_engine_t *engine)
{
    loom_eager_boxes_free(engine);
}

void loom_eager_peer_init(loom_peer_t *peer)
{
    memset(&peer->eager, 0, sizeof(peer->eager));
    peer->eager.tx.rail = -1;
    /* requests of this incarnation do not take the numbers of an earlier one */
    peer->eager.tx.req_seq = (uint32_t)(loom_now_ns() ^ (peer->name * 2654435761u));
    ++peer->engine->eager.stats.rings[0];
}

static bool loom_eager_idle(const loom_peer_t *peer)
{
    const loom_eager_peer_t *e = &peer->eager;

    return 0 == e->tx.phase && !e->tx.pending && NULL == e->tx.box && 0 == e->tx.busy &&
           0 == e->rx.phase && 0 == peer->msg.held_count && 0 == peer->msg.waiting_count &&
           0 == e->rx.req_len && 0 == e->rx.credits_owed && NULL == e->rx.ack_box;
}

/* After its endpoints are gone: nothing can land in its memory any more. */
void loom_eager_peer_fini(loom_peer_t *peer)
{
    loom_engine_t *engine = peer->engine;

    peer->eager.tx.busy = 0; /* no completion comes for a destroyed endpoint */
    loom_eager_tx_drop(peer);
    loom_eager_rx_drop(peer);
    --engine->eager.stats.rings[0];
    loom_msg_held_drop(peer);
    loom_msg_waiting_drop(peer);
    if (NULL != peer->eager.tx.box) {
        loom_eager_box_put(engine, peer->eager.tx.box);
        peer->eager.tx.box = NULL;
    }
    if (NULL != peer->eager.rx.ack_box) {
        loom_eager_box_put(engine, peer->eager.rx.ack_box);
        peer->eager.rx.ack_box = NULL;
    }
    if (peer->eager.active) {
        ucs_list_del(&peer->eager.link);
        peer->eager.active = false;
    }
}

/*
 * The rail carrying our ring to the peer failed: our messages to it go by AM
 * from now on.  The ring the peer writes into here stays until the peer asks
 * otherwise or goes: a rail the watch took out of use may still deliver what
 * was written before, and must find the ring in place (a message that then
 * comes twice is dropped by its sequence number).  Ring messages lost with
 * a dead rail are sent again by AM, like its AMs (reliable.c).  A ring
 * request under way may have lost its ack with any failing rail (the
 * message carrying it may have been sent again on another rail, and the ack
 * is written on the rail the request arrived by): when a rail comes back it
 * is given up, and the next message asks again at once
 * (loom_eager_tx_forget_lost), instead of after the timeout and its backoff.
 */
void loom_eager_rail_failed(loom_peer_t *peer, int rail)
{
    if (peer->eager.tx.pending) {
        peer->eager.tx.req_lost = true; /* the request or its ack may have gone with it */
    }
    if (0 != peer->eager.rx.phase && peer->eager.rx.rail == rail) {
        peer->eager.rx.rail_lost = true; /* the peer's ring writes on it may be lost */
    }
    if (peer->eager.tx.rail == rail) {
        loom_log(peer->engine, LOOM_LOG_INFO, "eager ring to peer %#llx off: its rail failed",
                 (unsigned long long)peer->name);
        peer->eager.tx.disabled = true;
        loom_eager_tx_drop(peer);
    }
}

/* A rail of the peer is back in use: our messages may take a ring again
 * (one is asked for on the rail that carries them). */
void loom_eager_rail_back(loom_peer_t *peer)
{
    if (peer->eager.tx.disabled) {
        loom_log(peer->engine, LOOM_LOG_INFO, "eager ring to peer %#llx on again: a rail "
                 "came back", (unsigned long long)peer->name);
        peer->eager.tx.disabled = false;
    }
    loom_eager_tx_forget_lost(peer);
}

/* Go down: to the phase the last window's messages needed (idle), or one
 * phase (memory budget). */
static void loom_eager_shrink_idle(loom_peer_t *peer, uint64_t now)
{
    loom_eager_tx_t *tx = &peer->eager.tx;
    uint64_t idle = (uint64_t)peer->engine->config.eager_idle_ms * 1000000ull;
    unsigned target;

    /* now was read before this pass took an ack in: a ring put in place
     * since has a window_start after it */
    if (0 == idle || 0 == tx->phase || tx->pending || now < tx->window_start + idle) {
        return;
    }
    target = (0 == tx->window_max) ? 0 : loom_eager_phase_for(peer->engine, tx->window_max);
    if (0 == target && tx->window_max > 0) {
        target = tx->phase; /* its messages were all too big for any ring */
    }
    tx->window_start = now;
    tx->window_max   = 0;
    if (target < tx->phase) {
        loom_log(peer->engine, LOOM_LOG_DEBUG, "eager ring to peer %#llx idle: phase %u -> %u",
                 (unsigned long long)peer->name, tx->phase, target);
        (void)loom_eager_tx_request(peer, target);
    } else if (0 == tx->full &&
               tx->mem.slot_count > loom_eager_start_slots(peer->engine, tx->phase)) {
        /* grown for a stream that stopped: back to the slots it started with */
        (void)loom_eager_tx_request_slots(peer, tx->phase,
                                          loom_eager_start_slots(peer->engine, tx->phase));
    }
    tx->full = 0;
}

/* Make room: the least recently used ring (ours to send, or one a peer
 * writes into here), other than the one of peer in direction tx, goes
 * down a phase.  The sender's side does it; for a ring of ours we ask. */
static void loom_eager_evict(loom_engine_t *engine, const loom_peer_t *except, bool except_tx)
{
    loom_peer_t *oldest_tx = NULL, *oldest_rx = NULL;
    loom_eager_peer_t *e;

    ucs_list_for_each(e, &engine->eager.active, link) {
        loom_peer_t *peer = loom_container_of(e, loom_peer_t, eager);
        if (e->tx.phase > 0 && !e->tx.pending && !(peer == except && except_tx) &&
            (NULL == oldest_tx || e->tx.last_use < oldest_tx->eager.tx.last_use)) {
            oldest_tx = peer;
        }
        if (e->rx.phase > 0 && !e->rx.hinted && !(peer == except && !except_tx) &&
            (NULL == oldest_rx || e->rx.last_use < oldest_rx->eager.rx.last_use)) {
            oldest_rx = peer;
        }
    }
    if (NULL != oldest_rx &&
        (NULL == oldest_tx || oldest_rx->eager.rx.last_use < oldest_tx->eager.tx.last_use)) {
        loom_log(engine, LOOM_LOG_DEBUG, "eager budget: asking peer %#llx to shrink its ring",
                 (unsigned long long)oldest_rx->name);
        loom_eager_rx_hint(oldest_rx, oldest_rx->eager.rx.phase - 1);
    } else if (NULL != oldest_tx) {
        loom_log(engine, LOOM_LOG_DEBUG, "eager budget: shrinking the ring to peer %#llx",
                 (unsigned long long)oldest_tx->name);
        (void)loom_eager_tx_request(oldest_tx, oldest_tx->eager.tx.phase - 1);
    }
}

static UCS_F_NOINLINE int loom_eager_poll_active(loom_engine_t *engine)
{
    loom_eager_engine_t *eager = &engine->eager;
    loom_eager_peer_t *e, *tmp;
    uint64_t now;
    bool check;
    int count = 0, delivered;

    now   = loom_engine_clock(engine);
    check = now >= eager->next_check;
    if (check) {
        eager->next_check = now + LOOM_EAGER_CHECK_NS;
    }
    ucs_list_for_each_safe(e, tmp, &eager->active, link) {
        loom_peer_t *peer = loom_container_of(e, loom_peer_t, eager);

        delivered = loom_msg_deliver_ready(peer); /* ring slots and held messages */
        if (delivered > 0) {
            e->rx.last_use = now;
            count += delivered;
        }
        loom_eager_rx_poll(peer);
        if (e->tx.pending || NULL != e->tx.box) {
            loom_eager_tx_poll(peer, now);
        }
        if (check) {
            loom_eager_shrink_idle(peer, now);
        }
        if (loom_eager_idle(peer)) {
            ucs_list_del(&e->link);
            e->active = false;
        }
    }
    if (eager->evict_wanted) {
        eager->evict_wanted = false;
        loom_eager_evict(engine, loom_peer_lookup(engine, eager->evict_except),
                         eager->evict_except_tx);
    } else if (check && 0 != engine->config.eager_budget &&
               eager->stats.registered_bytes > engine->config.eager_budget) {
        loom_eager_evict(engine, NULL, false);
    }
    return count;
}

/* The peer writes into a ring of ours over a rail whose NIC places the
 * write, which no event announces (tcp carries it as a message, which
 * wakes a sleeper). */
static bool loom_eager_rx_placed(const loom_engine_t *engine, const loom_eager_peer_t *e)
{
    return e->rx.phase > 0 && loom_rail_places_writes(&engine->rails[e->rx.rail]);
}

/* Does a peer write into our memory by RDMA that no event announces: into
 * our ring, or the ack box of a request of ours? */
bool loom_eager_writes_unannounced(const loom_engine_t *engine)
{
    const loom_eager_peer_t *e;

    ucs_list_for_each(e, &engine->eager.active, link) {
        if (loom_eager_rx_placed(engine, e) ||
            ((e->tx.pending || NULL != e->tx.box) && e->tx.rail >= 0 &&
             loom_rail_places_writes(&engine->rails[e->tx.rail]))) {
            return true;
        }
    }
    return false;
}

/* A rank that waits cannot sleep while peers write into its rings by RDMA:
 * once the wait found nothing for eager_wait_shrink_ms, it asks them to drop
 * those rings (the engine's arming with LOOM_ARM_WAIT).  Not at once: the short
 * waits of a collective on a busy node would drop rings that its next
 * messages earn again.  A writer takes a ring again after msgs_before_ring
 * messages by AM. */
void loom_eager_rx_quiet(loom_engine_t *engine)
{
    uint64_t after = (uint64_t)engine->config.eager_wait_shrink_ms * 1000000ull;
    uint64_t now = loom_engine_clock(engine);
    loom_eager_peer_t *e;

    if (0 == after) {
        return;
    }
    if (0 == engine->eager.wait_since) {
        engine->eager.wait_since = now;
    }
    if (now - engine->eager.wait_since < after) {
        return;
    }
    ucs_list_for_each(e, &engine->eager.active, link) {
        loom_peer_t *peer = loom_container_of(e, loom_peer_t, eager);

        if (loom_eager_rx_placed(engine, e) && loom_eager_rx_quiet_peer(peer)) {
            ++engine->eager.stats.wait_shrinks;
            loom_log(engine, LOOM_LOG_DEBUG, "eager ring from peer %#llx: asked to drop it, "
                     "a wait here would sleep", (unsigned long long)peer->name);
        }
    }
}

int loom_eager_progress(loom_engine_t *engine)
{
    if (ucs_list_is_empty(&engine->eager.active)) {
        return 0; /* the check alone on every pass without rings */
    }
    return loom_eager_poll_active(engine);
}

/* ---- public accessors ---------------------------------------------------------- */

const loom_eager_stats_t *loom_engine_eager_stats(const loom_engine_t *engine)
{
    return &engine->eager.stats;
}

unsigned loom_eager_tx_phase(const loom_peer_t *peer)
{
    return peer->eager.tx.phase;
}

unsigned loom_eager_rx_phase(const loom_peer_t *peer)
{
    return peer->eager.rx.phase;
}

int loom_eager_request(loom_peer_t *peer, unsigned phase)
{
    if (phase > peer->engine->config.eager_phase_count) {
        return LOOM_ERR_INVALID;
    }
    return loom_eager_tx_request(peer, phase);
}

size_t loom_eager_fit(loom_peer_t *peer, size_t reserve, const struct iovec *elems, int count)
{
    const loom_eager_tx_t *tx = &peer->eager.tx;
    size_t threshold, sum = reserve, total = reserve;
    int i;

    for (i = 0; i < count; ++i) {
        total += elems[i].iov_len;
    }
    if (0 == tx->phase || tx->pending) {
        return total - reserve;
    }
    threshold = peer->engine->config.eager_phases[tx->phase - 1].threshold;
    for (i = 0; i < count; ++i) {
        if (sum + elems[i].iov_len > threshold) {
            /* the first element decides growth; a later one waits for the next call */
            return (0 == i) ? total - reserve : sum - reserve;
        }
        sum += elems[i].iov_len;
    }
    return total - reserve;
}
