/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Rails that go and come back, towards one peer.
 *
 * A side that takes a rail out of use says so on a surviving rail (DOWN):
 * the other side may not notice a dead TCP path for minutes, and what it
 * sent on it must go again.  The failed rail's endpoint is closed, after
 * loom's own operations on it were failed (UCT drops their completions on
 * destroy), so that the dead connection is never used again.
 *
 * Every rail_rejoin_ms a failed rail that connects to interfaces is tried
 * again, on fresh endpoints only: TRY goes on a new endpoint with the next
 * rail epoch; the peer drops its own endpoint of the rail, makes a new one
 * and sends ANSWER on it; the prober takes its new endpoint into use after
 * CONFIRM left on it, the peer once CONFIRM arrived, so neither sends data
 * on the rail before the other has its side of it.  When both sides probe
 * at once, the probe of the process with the smaller name goes on.  A step
 * that does not finish within two periods starts over.  Endpoints are made
 * and closed from progress, never inside a UCT callback.  Only where
 * messages are kept for re-sending (several rails): a message lost with
 * the old connection of the only rail would stall its peer for ever.  A
 * rail connected endpoint to endpoint (rc_verbs) has no interface to probe:
 * it comes back by exchanging fresh endpoint addresses (rejoin_ep.c), on
 * the same clock.
 */
#include "managers/loom_managers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void loom_probe_fill(loom_peer_t *peer, loom_wire_probe_t *probe, int index,
                            uint32_t rail_epoch, int kind)
{
    memset(probe, 0, sizeof(*probe));
    loom_wire_hdr_fill(&probe->hdr, LOOM_WIRE_PROBE, 0, sizeof(*probe));
    probe->sender       = loom_le64(peer->engine->config.name);
    probe->sender_epoch = loom_le32(peer->engine->epoch);
    probe->rail_epoch   = loom_le32(rail_epoch);
    probe->rail_index   = loom_le16((uint16_t)index);
    probe->kind         = (uint8_t)kind;
}

static int loom_probe_send(loom_peer_t *peer, int index, uct_ep_h ep, uint32_t rail_epoch,
                           int kind)
{
    loom_wire_probe_t probe;

    loom_probe_fill(peer, &probe, index, rail_epoch, kind);
    return loom_am_send_raw(ep, LOOM_WIRE_PROBE, &probe, sizeof(probe));
}

/*
 * We took the rail out of use towards the peer: tell it on the rail that
 * carries our messages now, unless it told us.
 */
void loom_rejoin_tell_down(loom_peer_t *peer, int index)
{
    loom_wire_probe_t probe;

    if (peer->rails[index].down_told || peer->rails[peer->am_rail].failed) {
        return;
    }
    loom_probe_fill(peer, &probe, index, peer->rails[index].rail_epoch, LOOM_WIRE_PROBE_DOWN);
    (void)loom_ctrl_send(peer, peer->am_rail, &probe, sizeof(probe));
}

/* The rail of a peer failed (loom_peer_fail_rail): close its endpoint from
 * progress, and try it again after a period, not at once, so that a rail
 * that flaps is not taken back while it is still going down. */
void loom_rejoin_rail_failed(loom_peer_t *peer, int index)
{
    loom_peer_rail_t *prail = &peer->rails[index];

    if (loom_rejoin_possible(peer, index)) {
        prail->rejoin_counted = true; /* the rejoin clock runs */
        ++peer->engine->failed_rails;
    }
    prail->next_probe = loom_now_ns() + peer->engine->config.rail_rejoin_ms * 1000000ull;
    if (prail->down_told && peer->engine->rails[index].info.connect_to_ep) {
        /* the side that found the failure announces first: two announcements
         * crossing cost a round more */
        prail->next_probe += peer->engine->config.rail_rejoin_ms * 1000000ull;
    }
    prail->fresh_ep   = false;
    if ((!peer->engine->rails[index].info.connect_to_ep || loom_rejoin_possible(peer, index)) &&
        NULL != prail->ep && !prail->to_close) {
        prail->to_close = true;
        ++peer->engine->closes_pending;
    }
}

/* Make the rail's endpoint the fresh one of epoch rail_epoch: probe_ep
 * (the prober) or a new one (the peer). */
static bool loom_rejoin_fresh(loom_peer_t *peer, int index, uct_ep_h probe_ep)
{
    loom_peer_rail_t *prail = &peer->rails[index];

    if (prail->fresh_ep && prail->rail_epoch == prail->probe_epoch &&
        (NULL == probe_ep || prail->ep == probe_ep)) {
        return true;
    }
    loom_rejoin_close(peer, index);
    if (NULL != probe_ep) {
        prail->ep       = probe_ep;
        prail->probe_ep = NULL;
    } else if (LOOM_OK != loom_peer_iface_ep_create(peer, index, peer->engine->rails[index].iface,
                                                      &prail->ep)) {
        prail->ep = NULL;
        return false;
    }
    prail->fresh_ep   = true;
    prail->rail_epoch = prail->probe_epoch;
    return true;
}

/* Do what the rail waits for: its probe, answer or confirmation, which a
 * fresh endpoint may take a while to send. */
static void loom_rejoin_step(loom_peer_t *peer, int index)
{
    loom_peer_rail_t *prail = &peer->rails[index];
    int rc = LOOM_OK;

    if (peer->engine->rails[index].info.connect_to_ep) {
        loom_rejoin_ep_step(peer, index);
        return;
    }
    switch (prail->probe_state) {
    case LOOM_PROBE_TRY:
        rc = loom_probe_send(peer, index, prail->probe_ep, prail->probe_epoch,
                             LOOM_WIRE_PROBE_TRY);
        if (LOOM_OK != rc && LOOM_ERR_AGAIN != rc) {
            loom_rejoin_drop_probe_ep(prail); /* tried again next period */
        }
        break;
    case LOOM_PROBE_ANSWER:
        if (!loom_rejoin_fresh(peer, index, NULL)) {
            rc = LOOM_ERR_IO; /* the prober tries again */
            break;
        }
        rc = loom_probe_send(peer, index, prail->ep, prail->rail_epoch, LOOM_WIRE_PROBE_ANSWER);
        break;
    case LOOM_PROBE_CONFIRM:
        if ((NULL == prail->probe_ep && !prail->fresh_ep) ||
            !loom_rejoin_fresh(peer, index, prail->probe_ep)) {
            rc = LOOM_ERR_IO; /* probed again next period */
            break;
        }
        rc = loom_probe_send(peer, index, prail->ep, prail->rail_epoch, LOOM_WIRE_PROBE_CONFIRM);
        if (LOOM_OK == rc) {
            loom_rejoin_use(peer, index);
            return;
        }
        break;
    case LOOM_PROBE_CONFIRMED:
        loom_rejoin_use(peer, index);
        return;
    default:
        return;
    }
    if (LOOM_ERR_AGAIN != rc) {
        loom_rejoin_state_set(peer, index, LOOM_PROBE_NONE);
    }
}

/* Close what failed, send what waits, and probe the failed rails whose
 * time came. */
static void loom_rejoin_peer(loom_peer_t *peer, uint64_t now, bool period_over)
{
    loom_engine_t *engine = peer->engine;
    uint64_t period = engine->config.rail_rejoin_ms * 1000000ull;
    int i;

    for (i = 0; i < engine->rail_count; ++i) {
        loom_peer_rail_t *prail = &peer->rails[i];

        if (prail->to_close) {
            loom_rejoin_close(peer, i);
        }
        loom_rejoin_step(peer, i);
        if (!period_over || !prail->failed || !loom_rejoin_possible(peer, i)) {
            continue;
        }
        if (LOOM_PROBE_NONE != prail->probe_state &&
            loom_elapsed_ns(now, prail->probe_since) > 2 * period) {
            loom_rejoin_state_set(peer, i, LOOM_PROBE_NONE); /* stuck: start over */
        }
        if (LOOM_PROBE_NONE != prail->probe_state || now < prail->next_probe) {
            continue;
        }
        prail->next_probe = now + period;
        if (engine->rails[i].info.connect_to_ep) {
            loom_rejoin_ep_start(peer, i);
            continue;
        }
        loom_rejoin_drop_probe_ep(prail); /* the last probe got no answer */
        if (!loom_rail_link_up(&engine->rails[i]) ||
            LOOM_OK != loom_peer_iface_ep_create(peer, i, engine->rails[i].iface,
                                                &prail->probe_ep)) {
            prail->probe_ep = NULL;
            continue;
        }
        prail->probe_epoch = prail->rail_epoch + 1;
        ++engine->rails[i].stats.rejoin_tries;
        loom_rejoin_state_set(peer, i, LOOM_PROBE_TRY);
        loom_rejoin_step(peer, i);
    }
}

static UCS_F_NOINLINE void loom_rejoin_peers(loom_engine_t *engine, uint64_t now,
                                              bool period_over)
{
    loom_peer_t *peer;
    size_t pos = 0;

    while (NULL != (peer = loom_hash_next(&engine->peers, &pos))) {
        loom_rejoin_peer(peer, now, period_over);
    }
}

/* A poller: rails to close and probes that wait go on in the pass that
 * marked them; the counts alone on every other pass. */
int loom_rejoin_progress(loom_engine_t *engine)
{
    if (0 != engine->probes_pending || 0 != engine->closes_pending) {
        loom_rejoin_peers(engine, 0, false);
    }
    return 0;
}

/* A timer: while a rail is out, its probes every quarter rejoin period. */
int loom_rejoin_timer(loom_engine_t *engine)
{
    uint64_t now = loom_engine_clock(engine);

    if (0 == engine->failed_rails || 0 == engine->config.rail_rejoin_ms ||
        now < engine->next_rejoin) {
        return 0;
    }
    engine->next_rejoin = now + engine->config.rail_rejoin_ms * 1000000ull / 4;
    loom_rejoin_peers(engine, now, true);
    return 0;
}

ucs_status_t loom_probe_recv(void *arg, void *data, size_t length, unsigned flags)
{
    loom_rail_t *rail = arg;
    loom_engine_t *engine = rail->engine;
    loom_peer_rail_t *prail;
    loom_wire_probe_t probe;
    loom_peer_t *peer;
    const char *why;
    uint32_t rail_epoch;
    int index;

    (void)flags;
    peer = loom_ctrl_recv_peer(rail, data, length, LOOM_WIRE_PROBE, &probe, sizeof(probe),
                               "rail probe");
    if (NULL == peer) {
        return UCS_OK;
    }
    index = loom_from_le16(probe.rail_index);
    if (loom_from_le32(probe.sender_epoch) != peer->epoch ||
        index >= engine->rail_count || probe.kind > LOOM_WIRE_PROBE_CONFIRM ||
        (LOOM_WIRE_PROBE_DOWN != probe.kind &&
         (index != rail->index || rail->info.connect_to_ep))) {
        ++rail->stats.refused;
        loom_log(engine, LOOM_LOG_WARN, "rail %s:%s: refused a rail probe of process %#llx "
                 "(kind %u, rail %d): another incarnation or a bad rail", rail->info.tl_name,
                 rail->info.dev_name, (unsigned long long)peer->name, probe.kind, index);
        return UCS_OK;
    }
    prail      = &peer->rails[index];
    rail_epoch = loom_from_le32(probe.rail_epoch);
    switch (probe.kind) {
    case LOOM_WIRE_PROBE_DOWN:
        /* the peer lost this connection of the rail (an older one is gone) */
        if (!prail->failed && rail_epoch == prail->rail_epoch) {
            prail->down_told = true;
            loom_peer_fail_rail(peer, index, UCS_ERR_CONNECTION_RESET);
        }
        break;
    case LOOM_WIRE_PROBE_TRY:
        if (!prail->failed && !loom_seq_after(rail_epoch, prail->rail_epoch)) {
            break; /* we use a connection at least as new */
        }
        if (prail->failed && prail->fresh_ep && rail_epoch == prail->rail_epoch) {
            loom_rejoin_state_set(peer, index, LOOM_PROBE_ANSWER); /* our answer was lost */
            break;
        }
        if (prail->failed && NULL != prail->probe_ep && engine->config.name < peer->name) {
            break; /* both probe: ours goes on, the peer answers it */
        }
        if (!prail->failed && NULL != (why = loom_rejoin_keep_why(peer, index))) {
            ++rail->stats.refused;
            loom_log(engine, LOOM_LOG_INFO, "rail %s:%s: refused a rail probe of process "
                     "%#llx for connection %u (ours is %u): %s", rail->info.tl_name,
                     rail->info.dev_name, (unsigned long long)peer->name, rail_epoch,
                     prail->rail_epoch, why);
            break;
        }
        if (!prail->failed) {
            /* we did not see it fail: the peer did, so it goes */
            prail->down_told = true;
            loom_peer_fail_rail(peer, index, UCS_ERR_CONNECTION_RESET);
        }
        prail->fresh_ep    = false;
        prail->probe_epoch = rail_epoch;
        prail->next_probe  = loom_now_ns() + engine->config.rail_rejoin_ms * 1000000ull;
        loom_rejoin_state_set(peer, index, LOOM_PROBE_ANSWER);
        break;
    case LOOM_WIRE_PROBE_ANSWER:
        if (prail->failed && NULL != prail->probe_ep && rail_epoch == prail->probe_epoch &&
            (LOOM_PROBE_NONE == prail->probe_state || LOOM_PROBE_TRY == prail->probe_state)) {
            loom_rejoin_state_set(peer, index, LOOM_PROBE_CONFIRM);
        }
        break;
    default: /* CONFIRM: the prober uses its side of the rail now; we do from progress */
        if (prail->failed && prail->fresh_ep && rail_epoch == prail->rail_epoch &&
            LOOM_PROBE_NONE == prail->probe_state) {
            loom_rejoin_state_set(peer, index, LOOM_PROBE_CONFIRMED);
        }
        break;
    }
    return UCS_OK;
}

void loom_rejoin_peer_fini(loom_peer_t *peer)
{
    int i;

    for (i = 0; i < peer->engine->rail_count; ++i) {
        loom_peer_rail_t *prail = &peer->rails[i];

        if (prail->to_close) {
            prail->to_close = false;
            --peer->engine->closes_pending;
        }
        loom_rejoin_state_set(peer, i, LOOM_PROBE_NONE);
        loom_rejoin_drop_probe_ep(prail);
        loom_rejoin_forget_addr(prail);
        if (prail->rejoin_counted) {
            prail->rejoin_counted = false;
            --peer->engine->failed_rails;
        }
    }
}
