/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Links: the state of each rail towards one peer as every layer sees it:
 * finding a peer, choosing its rails, fresh endpoints to it and the CONNECT
 * that names ours (connect-to-ep rails), the evidence
 * that a rail delivers, and marking a rail failed (handled later from
 * progress, in peer.c).
 */
#include "link/loom_link.h"

#include <string.h>

loom_peer_t *loom_peer_lookup(loom_engine_t *engine, uint64_t name)
{
    return loom_hash_get(&engine->peers, name);
}

/* The sender of a message: connected now if it was not yet (the upper
 * layer may connect only when it first sends), so that its messages are
 * ordered and acknowledged from the first one; NULL if it cannot be. */
loom_peer_t *loom_peer_of_message(loom_engine_t *engine, uint64_t name)
{
    loom_peer_t *peer = loom_peer_lookup(engine, name);

    if (NULL == peer && NULL != engine->config.peer_find_cb) {
        peer = engine->config.peer_find_cb(engine->config.cb_ctx, engine, name);
    }
    return peer;
}

/* A fresh endpoint to the peer's interface on rail index, made on iface (the
 * rail's own, or its wireup interface), from the peer's address blob. */
int loom_peer_iface_ep_create(loom_peer_t *peer, int index, uct_iface_h iface,
                              uct_ep_h *ep_p)
{
    const loom_wire_rail_addr_t *rails[LOOM_MAX_RAILS];
    const uint8_t *dev_addrs[LOOM_MAX_RAILS], *iface_addrs[LOOM_MAX_RAILS];
    loom_wire_addr_t addr;
    uct_ep_params_t params;
    ucs_status_t status;

    if (LOOM_OK != loom_address_parse(peer->addr_blob, peer->addr_blob_len, &addr, rails,
                                      dev_addrs, iface_addrs) ||
        index >= addr.rail_count) {
        return LOOM_ERR_INVALID;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
                        UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.iface      = iface;
    params.dev_addr   = (const uct_device_addr_t *)dev_addrs[index];
    params.iface_addr = (const uct_iface_addr_t *)iface_addrs[index];
    status = uct_ep_create(&params, ep_p);
    return (UCS_OK == status) ? LOOM_OK : loom_status_to_rc(status);
}

/* A fresh bootstrap endpoint in place of the rail's one (its connection
 * delivered nothing, or the rail comes back: connect_retry.c, rejoin_ep.c); the old one goes, unless
 * no new one could be made. */
void loom_peer_boot_ep_renew(loom_peer_t *peer, int index)
{
    loom_peer_rail_t *prail = &peer->rails[index];
    uct_ep_h fresh;

    if (NULL == prail->boot_ep ||
        LOOM_OK != loom_peer_iface_ep_create(peer, index,
                                             peer->engine->rails[index].boot_iface, &fresh)) {
        return; /* CONNECT goes by another rail, or the old endpoint goes on */
    }
    uct_ep_destroy(prail->boot_ep);
    prail->boot_ep = fresh;
}


/*
 * A CONNECT for the rail into msg (size bytes): our device and endpoint
 * address, whether that endpoint is connected to the peer's, and which
 * connection of the rail it is (its rail epoch); flags as
 * LOOM_WIRE_FLAG_CONNECT_*.  Its length, or 0 if it cannot be made.
 */
size_t loom_connect_fill(loom_peer_t *peer, int index, unsigned flags, uint8_t *msg,
                         size_t size)
{
    const loom_rail_t *rail = &peer->engine->rails[index];
    const loom_peer_rail_t *prail = &peer->rails[index];
    loom_wire_connect_t *conn = (loom_wire_connect_t *)msg;
    size_t length = sizeof(*conn) + rail->attr.device_addr_len + rail->attr.ep_addr_len;

    if (length > size || NULL == prail->ep) {
        return 0;
    }
    memset(conn, 0, sizeof(*conn));
    loom_wire_hdr_fill(&conn->hdr, LOOM_WIRE_CONNECT, 0, length);
    conn->hdr.flags    = (uint8_t)flags;
    conn->sender       = loom_le64(peer->engine->config.name);
    conn->sender_epoch = loom_le32(peer->engine->epoch);
    conn->rail_index   = loom_le16((uint16_t)index);
    conn->connected    = prail->local_connected;
    conn->dev_addr_len = loom_le16((uint16_t)rail->attr.device_addr_len);
    conn->ep_addr_len  = loom_le16((uint16_t)rail->attr.ep_addr_len);
    conn->rail_epoch   = loom_le32(prail->rail_epoch);
    memcpy(conn + 1, rail->dev_addr, rail->attr.device_addr_len);
    if (UCS_OK != uct_ep_get_address(prail->ep, (uct_ep_addr_t *)(msg + sizeof(*conn) +
                                                                  rail->attr.device_addr_len))) {
        return 0;
    }
    return length;
}

/* From rail first on, wrapping: the first rail in use towards the peer
 * (usable_only), or connected and not failed (it may still be connecting);
 * -1 if none. */
static int loom_peer_rail_from(const loom_peer_t *peer, int first, bool usable_only)
{
    int count = peer->engine->rail_count, i;

    for (i = 0; i < count; ++i) {
        int rail = (first + i) % count;
        const loom_peer_rail_t *prail = &peer->rails[rail];

        if (usable_only ? prail->usable : (NULL != prail->ep && !prail->failed)) {
            return rail;
        }
    }
    return -1;
}

/* The rail for messages: a fixed choice per peer spreads peers over rails. */
void loom_peer_choose_am_rail(loom_peer_t *peer)
{
    int count = peer->engine->rail_count;
    int first = (peer->engine->config.am_rail >= 0 && peer->engine->config.am_rail < count)
                    ? peer->engine->config.am_rail : (int)(peer->name % (uint64_t)count);
    int rail = loom_peer_rail_from(peer, first, false);

    if (rail >= 0) {
        peer->am_rail = rail;
    }
}

/* Round robin: the next usable rail after the current one. */
void loom_peer_next_am_rail(loom_peer_t *peer)
{
    int rail = loom_peer_rail_from(peer, peer->am_rail + 1, true);

    if (rail >= 0) {
        peer->am_rail = rail;
    }
}

/* A usable rail to the peer other than this one, or -1. */
int loom_peer_other_rail(const loom_peer_t *peer, int rail)
{
    int other = loom_peer_rail_from(peer, rail + 1, true);

    return (other == rail) ? -1 : other;
}

/* A rail to the peer is in use. */
bool loom_peer_reachable(const loom_peer_t *peer)
{
    return loom_peer_rail_from(peer, 0, true) >= 0;
}

int loom_peer_rdma_rail(loom_peer_t *peer)
{
    return peer->am_rail;
}

/*
 * A rail to the peer failed.  Whoever finds it (a send, a completion, a
 * handler, the rail watch) only marks it: the rail is out of use at once,
 * messages take another rail, those it carried are to be sent again first;
 * the rest, which drops rings, fails operations, tells the peer and may
 * report the peer lost to the upper layer, runs from progress alone
 * (the managers' handler of rail failures), never underneath the caller.
 */
void loom_peer_fail_rail(loom_peer_t *peer, int rail, ucs_status_t status)
{
    loom_peer_rail_t *prail = &peer->rails[rail];
    /* our messages to the peer went on it, by AM or by ring */
    bool carried = peer->am_rail == rail || peer->eager.tx.rail == rail ||
                   loom_msg_on_rail(peer, rail);

    if (prail->failed) {
        return;
    }
    prail->failed      = true;
    prail->usable      = false;
    prail->fail_status = status;
    if (peer->am_rail == rail) {
        loom_peer_choose_am_rail(peer);
    }
    if (carried && !loom_peer_closing(peer) && !peer->rails[peer->am_rail].failed) {
        loom_msg_resend_start(peer);
    }
    if (0 == peer->fail_pending) {
        ucs_list_add_tail(&peer->engine->failing, &peer->fail_link);
    }
    peer->fail_pending |= 1u << rail;
}

ucs_status_t loom_rail_error(void *arg, uct_ep_h ep, ucs_status_t status)
{
    loom_rail_t *rail = arg;
    loom_peer_t *peer;
    size_t pos = 0;

    while (NULL != (peer = loom_hash_next(&rail->engine->peers, &pos))) {
        if (peer->rails[rail->index].ep == ep) {
            loom_peer_fail_rail(peer, rail->index, status);
        }
    }
    return UCS_OK;
}

/* A chunk went on a rail that had none in flight: watch it from now. */
void loom_rail_watch_start(loom_peer_t *peer, int rail)
{
    loom_peer_rail_t *prail = &peer->rails[rail];

    prail->last_landed  = loom_now_ns();
    prail->landed_mark  = peer->chunks_landed;
    prail->others_since = 0;
    prail->watch_asked  = 0;
}

/* A chunk landed on a rail in use: it is alive, and it is the evidence
 * against the other rails to the peer that wait for theirs. */
void loom_rail_watch_landed(loom_peer_t *peer, int rail)
{
    uint64_t now = loom_now_ns();
    int i;

    ++peer->chunks_landed;
    for (i = 0; i < peer->engine->rail_count; ++i) {
        loom_peer_rail_t *prail = &peer->rails[i];

        if (i == rail) {
            prail->last_landed  = now;
            prail->landed_mark  = peer->chunks_landed;
            prail->others_since = 0;
            prail->watch_asked  = 0;
        } else if (0 == prail->others_since && prail->inflight_chunks > 0) {
            prail->others_since = now;
        }
    }
}
