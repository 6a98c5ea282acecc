/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Rails connected endpoint to endpoint (rc_verbs) that come back (seed 004).
 *
 * Such a rail has no interface a probe could reach: both sides make fresh
 * endpoints and exchange their addresses, as when the two first connected
 * (CONNECT), with the rail's next epoch.  Every rail_rejoin_ms (rejoin.c's
 * clock), while the port is active:
 *  - the side whose time came closes its endpoint of the old connection
 *    (loom's operations on it fail and go again on other rails), makes a
 *    fresh one and announces it: a CONNECT of the next epoch, not connected,
 *    over the rail's wireup interface (a fresh wireup endpoint) or else the
 *    peer's message rail;
 *  - the peer takes the rail out of use if it had not, closes its old
 *    endpoint, makes a fresh one connected to the announced address and
 *    answers the same way, saying connected;
 *  - the announcer connects its endpoint to the answer and says so in a last
 *    CONNECT that goes on the rail itself, ahead of anything else there, and
 *    uses the rail; the peer uses it once that arrived.
 * Each side destroyed its old endpoint before either fresh one is connected,
 * so nothing of the old connection can land once the new one carries data;
 * remote keys name memory registrations on the NIC, which outlive a port
 * that flapped, and are checked as ever (loom checks region and epoch for
 * what goes through it).  An announcement or answer that got lost: the
 * announcer starts over with the next epoch once its period passed, and a
 * CONNECT of an older connection is refused.  Both sides announcing the
 * same epoch at once: the announcement of the smaller name goes on, the
 * other side answers it on the endpoint it had announced.
 */
#include "managers/loom_managers.h"

#include <stdlib.h>
#include <string.h>

/* A CONNECT of the rail's current connection, sent raw on ep from
 * progress: LOOM_OK, LOOM_ERR_AGAIN, or an error. */
static int loom_rejoin_ep_send(loom_peer_t *peer, int index, uct_ep_h ep)
{
    uint8_t msg[LOOM_OP_MSG_MAX];
    size_t length = loom_connect_fill(peer, index, 0, msg, sizeof(msg));

    if (0 == length || NULL == ep) {
        return LOOM_ERR_UNREACH;
    }
    return loom_am_send_raw(ep, LOOM_WIRE_CONNECT, msg, length);
}

/* Where an announcement and its answer go: the rail's wireup endpoint, else
 * the rail the peer's messages take now; NULL if neither can. */
static uct_ep_h loom_rejoin_ep_wireup(const loom_peer_t *peer, int index)
{
    const loom_peer_rail_t *am = &peer->rails[peer->am_rail];

    if (NULL != peer->rails[index].boot_ep) {
        return peer->rails[index].boot_ep;
    }
    return (am->usable && peer->am_rail != index) ? am->ep : NULL;
}

/* The rail's endpoint replaced by a fresh one, not connected yet, of
 * connection rail_epoch; false if none could be made. */
static bool loom_rejoin_ep_fresh(loom_peer_t *peer, int index, uint32_t rail_epoch)
{
    loom_peer_rail_t *prail = &peer->rails[index];
    uct_ep_params_t params;

    loom_rejoin_close(peer, index);
    prail->fresh_ep        = false;
    prail->local_connected = false;
    prail->told_connected  = false;
    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = peer->engine->rails[index].iface;
    if (UCS_OK != uct_ep_create(&params, &prail->ep)) {
        prail->ep = NULL;
        return false;
    }
    prail->fresh_ep   = true;
    prail->rail_epoch = rail_epoch;
    return true;
}

/* The rail's time came (rejoin.c): announce a fresh endpoint. */
void loom_rejoin_ep_start(loom_peer_t *peer, int index)
{
    loom_peer_rail_t *prail = &peer->rails[index];
    /* our last announcement got no answer */
    bool unanswered = prail->fresh_ep && !prail->local_connected;

    if (!loom_rail_link_up(&peer->engine->rails[index]) ||
        !loom_rejoin_ep_fresh(peer, index, prail->rail_epoch + 1)) {
        return; /* tried again next period */
    }
    ++peer->engine->rails[index].stats.rejoin_tries;
    loom_rejoin_forget_addr(prail);
    if (unanswered) {
        /* the wireup endpoint may have died with the port, silently (ud) */
        loom_peer_boot_ep_renew(peer, index);
    }
    prail->probe_epoch = prail->rail_epoch;
    loom_rejoin_state_set(peer, index, LOOM_PROBE_TRY);
    loom_rejoin_ep_step(peer, index);
}

/* Our side of the connection the peer announced: a fresh endpoint of its
 * epoch (the one we announced ourselves, if we did) connected to its
 * address.  LOOM_ERR_AGAIN while the rail's failure is still to be handled
 * (that handling must not undo this). */
static int loom_rejoin_ep_answer_ready(loom_peer_t *peer, int index)
{
    loom_peer_rail_t *prail = &peer->rails[index];
    size_t dev_len = peer->engine->rails[index].attr.device_addr_len;
    ucs_status_t status;

    if (peer->fail_pending & (1u << index)) {
        return LOOM_ERR_AGAIN;
    }
    if (!loom_rail_link_up(&peer->engine->rails[index])) {
        return LOOM_ERR_UNREACH; /* our port is down: the announcer tries again */
    }
    if (!(prail->fresh_ep && prail->rail_epoch == prail->probe_epoch) &&
        !loom_rejoin_ep_fresh(peer, index, prail->probe_epoch)) {
        return LOOM_ERR_NOMEM;
    }
    if (prail->local_connected) {
        return LOOM_OK;
    }
    if (NULL == prail->rejoin_addr) {
        return LOOM_ERR_INVALID;
    }
    status = uct_ep_connect_to_ep(prail->ep, (const uct_device_addr_t *)prail->rejoin_addr,
                                  (const uct_ep_addr_t *)(prail->rejoin_addr + dev_len));
    if (UCS_OK != status) {
        return loom_status_to_rc(status);
    }
    prail->local_connected = true;
    return LOOM_OK;
}

/* Send what the rail's return waits for (from progress). */
void loom_rejoin_ep_step(loom_peer_t *peer, int index)
{
    loom_peer_rail_t *prail = &peer->rails[index];
    int rc;

    switch (prail->probe_state) {
    case LOOM_PROBE_TRY: /* our fresh endpoint, announced */
        rc = loom_rejoin_ep_send(peer, index, loom_rejoin_ep_wireup(peer, index));
        break;
    case LOOM_PROBE_ANSWER: /* connected to the announced one, and saying so */
        rc = loom_rejoin_ep_answer_ready(peer, index);
        if (LOOM_OK == rc && prail->boot_renew) {
            /* our wireup endpoint may have died with the port, silently (ud) */
            loom_peer_boot_ep_renew(peer, index);
            prail->boot_renew = false;
        }
        if (LOOM_OK == rc) {
            rc = loom_rejoin_ep_send(peer, index, loom_rejoin_ep_wireup(peer, index));
        }
        break;
    case LOOM_PROBE_CONFIRM: /* connected to the answer: said on the rail, used */
        rc = loom_rail_link_up(&peer->engine->rails[index])
                 ? loom_rejoin_ep_send(peer, index, prail->ep) : LOOM_ERR_UNREACH;
        if (LOOM_OK == rc) {
            prail->told_connected = true;
            loom_rejoin_use(peer, index);
            return;
        }
        break;
    case LOOM_PROBE_CONFIRMED:
        prail->told_connected = true;
        loom_rejoin_use(peer, index);
        return;
    default:
        return;
    }
    if (LOOM_ERR_AGAIN != rc) {
        /* sent, waiting for the peer; or failed: the announcer starts over */
        loom_rejoin_state_set(peer, index, LOOM_PROBE_NONE);
    }
}

/* Keep the address the peer announced, and answer it from progress. */
static void loom_rejoin_ep_take(loom_peer_t *peer, int index, uint32_t rail_epoch,
                                const uint8_t *addr, size_t addr_len)
{
    loom_peer_rail_t *prail = &peer->rails[index];
    uint8_t *copy = malloc(addr_len);

    if (NULL == copy) {
        return; /* the announcer tries again */
    }
    memcpy(copy, addr, addr_len);
    /* a later announcement while we are connected to an earlier one: our
     * answer to that was lost (renewed from progress, not in this callback) */
    prail->boot_renew = prail->fresh_ep && prail->local_connected &&
                        loom_seq_after(rail_epoch, prail->rail_epoch);
    loom_rejoin_forget_addr(prail);
    prail->rejoin_addr     = copy;
    prail->rejoin_addr_len = addr_len;
    prail->probe_epoch     = rail_epoch;
    prail->next_probe      = loom_now_ns() + peer->engine->config.rail_rejoin_ms * 1000000ull;
    loom_rejoin_state_set(peer, index, LOOM_PROBE_ANSWER);
}

static void loom_rejoin_ep_refuse(loom_peer_t *peer, int index, uint32_t rail_epoch,
                                  const char *why)
{
    loom_rail_t *rail = &peer->engine->rails[index];

    ++rail->stats.refused;
    loom_log(peer->engine, LOOM_LOG_INFO, "rail %s:%s: refused a CONNECT of peer %#llx "
             "for connection %u (ours is %u): %s", rail->info.tl_name, rail->info.dev_name,
             (unsigned long long)peer->name, rail_epoch, peer->rails[index].rail_epoch, why);
}

/*
 * A CONNECT of the peer for the rail (its sender and lengths checked,
 * peer.c), in a UCT callback: true if it belongs to a return of the rail
 * (taken or refused here), false if it is the rail's own first exchange,
 * or if the rail cannot come back (peer.c refuses it then).
 */
bool loom_rejoin_ep_recv(loom_peer_t *peer, int index, uint32_t rail_epoch, bool connected,
                         const uint8_t *addr, size_t addr_len)
{
    loom_peer_rail_t *prail = &peer->rails[index];
    size_t dev_len = peer->engine->rails[index].attr.device_addr_len;
    const char *why;

    if ((!prail->failed && rail_epoch == prail->rail_epoch) ||
        !loom_rejoin_possible(peer, index)) {
        return false;
    }
    if (loom_seq_after(rail_epoch, prail->rail_epoch)) {
        if (connected) {
            loom_rejoin_ep_refuse(peer, index, rail_epoch, "it answers an announcement "
                                  "that was not ours");
            return true;
        }
        if (!prail->failed && NULL != (why = loom_rejoin_keep_why(peer, index))) {
            loom_rejoin_ep_refuse(peer, index, rail_epoch, why);
            return true;
        }
        if (!prail->failed) { /* the peer lost the rail: so do we */
            prail->down_told = true;
            loom_peer_fail_rail(peer, index, UCS_ERR_CONNECTION_RESET);
        }
        loom_rejoin_ep_take(peer, index, rail_epoch, addr, addr_len);
        return true;
    }
    if (rail_epoch != prail->rail_epoch || !prail->fresh_ep) {
        loom_rejoin_ep_refuse(peer, index, rail_epoch, "an old connection");
        return true;
    }
    /* the connection being set up, on a failed rail */
    if (!connected) {
        if (prail->local_connected) {
            loom_rejoin_state_set(peer, index, LOOM_PROBE_ANSWER); /* our answer was lost */
        } else if (peer->engine->config.name > peer->name) {
            loom_rejoin_ep_take(peer, index, rail_epoch, addr, addr_len); /* both announced */
        }
        return true;
    }
    if (prail->local_connected) { /* the announcer connected to our answer */
        if (LOOM_PROBE_NONE == prail->probe_state) {
            loom_rejoin_state_set(peer, index, LOOM_PROBE_CONFIRMED);
        }
        return true;
    }
    /* the answer to our announcement */
    if (UCS_OK != uct_ep_connect_to_ep(prail->ep, (const uct_device_addr_t *)addr,
                                       (const uct_ep_addr_t *)(addr + dev_len))) {
        loom_rejoin_state_set(peer, index, LOOM_PROBE_NONE); /* started over next period */
        return true;
    }
    prail->local_connected = true;
    loom_rejoin_state_set(peer, index, LOOM_PROBE_CONFIRM);
    return true;
}
