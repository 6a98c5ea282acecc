/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Peers: the endpoints to one remote process on every rail, connection
 * set-up for both UCT models, and rail failure.
 */
#include "engine/loom_engine.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t loom_peer_name(const loom_peer_t *peer)
{
    return peer->name;
}

size_t loom_peer_outstanding(const loom_peer_t *peer)
{
    return peer->outstanding;
}

/* A rail that connects to interfaces, usable towards this peer, or -1. */
static int loom_peer_bootstrap_rail(const loom_peer_t *peer)
{
    int i;

    for (i = 0; i < peer->engine->rail_count; ++i) {
        if (!peer->engine->rails[i].info.connect_to_ep && peer->rails[i].usable) {
            return i;
        }
    }
    return -1;
}

int loom_connect_send(loom_peer_t *peer, int rail_index, bool again)
{
    loom_rail_t *rail = &peer->engine->rails[rail_index];
    loom_peer_rail_t *prail = &peer->rails[rail_index];
    uint8_t msg[LOOM_OP_MSG_MAX];
    int boot = loom_peer_bootstrap_rail(peer);
    size_t length;

    if (boot < 0 && NULL == prail->boot_ep) {
        loom_log(peer->engine, LOOM_LOG_ERROR, "rail %s:%s connects endpoint to endpoint, "
                 "but no rail that connects to interfaces reaches peer %#llx to exchange "
                 "the addresses", rail->info.tl_name, rail->info.dev_name,
                 (unsigned long long)peer->name);
        return LOOM_ERR_UNREACH;
    }
    length = loom_connect_fill(peer, rail_index, again ? LOOM_WIRE_FLAG_CONNECT_AGAIN : 0,
                               msg, sizeof(msg));
    if (0 == length) {
        return LOOM_ERR_INVALID;
    }
    if (prail->local_connected) {
        prail->told_connected = true;
    }
    prail->connect_sent = loom_now_ns(); /* sent again if nothing comes of it */
    /* the rail's own interface endpoint if it has one, else another rail */
    return loom_connect_msg_send(peer, (NULL != prail->boot_ep) ? rail_index : boot,
                                 NULL != prail->boot_ep, msg, length);
}

/* An endpoint to the peer's interface on a connect-to-ep rail's bootstrap
 * (wireup) interface, for CONNECT messages; NULL if none can be made. */
static void loom_peer_boot_ep_create(loom_peer_t *peer, int index, const uint8_t *dev_addr,
                                     const uint8_t *iface_addr)
{
    loom_peer_rail_t *prail = &peer->rails[index];
    uct_ep_params_t params;

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
                        UCT_EP_PARAM_FIELD_IFACE_ADDR;
    params.iface      = peer->engine->rails[index].boot_iface;
    params.dev_addr   = (const uct_device_addr_t *)dev_addr;
    params.iface_addr = (const uct_iface_addr_t *)iface_addr;
    if (UCS_OK != uct_ep_create(&params, &prail->boot_ep)) {
        prail->boot_ep = NULL;
    }
}

static int loom_peer_rail_connect(loom_peer_t *peer, int index, const uint8_t *dev_addr,
                                  const uint8_t *iface_addr)
{
    loom_rail_t *rail = &peer->engine->rails[index];
    loom_peer_rail_t *prail = &peer->rails[index];
    uct_ep_params_t params;
    ucs_status_t status;

    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_EP_PARAM_FIELD_IFACE;
    params.iface      = rail->iface;
    if (!rail->info.connect_to_ep) {
        if (NULL == iface_addr ||
            !uct_iface_is_reachable(rail->iface, (const uct_device_addr_t *)dev_addr,
                                    (const uct_iface_addr_t *)iface_addr)) {
            loom_log(peer->engine, LOOM_LOG_WARN, "peer %#llx is not reachable on rail "
                     "%s:%s", (unsigned long long)peer->name, rail->info.tl_name,
                     rail->info.dev_name);
            return LOOM_ERR_UNREACH;
        }
        params.field_mask |= UCT_EP_PARAM_FIELD_DEV_ADDR | UCT_EP_PARAM_FIELD_IFACE_ADDR;
        params.dev_addr    = (const uct_device_addr_t *)dev_addr;
        params.iface_addr  = (const uct_iface_addr_t *)iface_addr;
    }
    if (rail->info.connect_to_ep && rail->iface_reachable && NULL != iface_addr) {
        /* The peer's interface (or its wireup interface) is reachable too:
         * connect to it for CONNECT messages, so this rail needs no other
         * rail to bootstrap. */
        loom_peer_boot_ep_create(peer, index, dev_addr, iface_addr);
    }
    status = uct_ep_create(&params, &prail->ep);
    if (UCS_OK != status) {
        loom_log(peer->engine, LOOM_LOG_WARN, "cannot create endpoint to peer %#llx on "
                 "rail %s:%s: %s", (unsigned long long)peer->name, rail->info.tl_name,
                 rail->info.dev_name, ucs_status_string(status));
        prail->ep = NULL;
        return loom_status_to_rc(status);
    }
    prail->usable = !rail->info.connect_to_ep;
    return LOOM_OK;
}

static void loom_connect_apply(loom_peer_t *peer, const void *msg);

/* Does the peer's rail record pair with our rail: same transport and model,
 * addresses of our sizes (UCT reads that many bytes from them)? */
static bool loom_rail_addr_matches(const loom_rail_t *rail, const loom_wire_rail_addr_t *remote)
{
    uint32_t flags     = loom_from_le32(remote->flags);
    size_t   iface_len = loom_from_le16(remote->iface_addr_len);

    return 0 == strcmp(remote->tl_name, rail->info.tl_name) &&
           !!(flags & LOOM_WIRE_RAIL_CONNECT_TO_EP) == rail->info.connect_to_ep &&
           loom_from_le16(remote->dev_addr_len) == rail->attr.device_addr_len &&
           !!(flags & LOOM_WIRE_RAIL_CONNECT_TO_IFACE) == (0 != iface_len) &&
           (0 == iface_len || iface_len == rail->boot_iface_addr_len);
}

int loom_peer_connect(loom_engine_t *engine, const void *blob, size_t length,
                      loom_peer_t **peer_p)
{
    const loom_wire_rail_addr_t *rails[LOOM_MAX_RAILS];
    const uint8_t *dev_addrs[LOOM_MAX_RAILS], *iface_addrs[LOOM_MAX_RAILS];
    loom_wire_addr_t addr;
    loom_early_t *early;
    loom_peer_t *peer;
    int rc, i, connected = 0;

    rc = loom_address_parse(blob, length, &addr, rails, dev_addrs, iface_addrs);
    if (LOOM_OK != rc) {
        loom_log(engine, LOOM_LOG_ERROR, "refused a malformed address blob of %zu bytes",
                 length);
        return rc;
    }
    peer = loom_peer_lookup(engine, loom_from_le64(addr.name));
    if (NULL != peer) {
        ++peer->refcount;
        *peer_p = peer;
        return LOOM_OK;
    }
    peer = calloc(1, sizeof(*peer));
    if (NULL == peer) {
        return LOOM_ERR_NOMEM;
    }
    for (i = 0; i < LOOM_MAX_RAILS; ++i) {
        ucs_list_head_init(&peer->rails[i].wire_ops);
        ucs_list_head_init(&peer->rails[i].rail_queue);
    }
    ucs_list_head_init(&peer->queue);
    ucs_list_head_init(&peer->push_held);
    ucs_list_head_init(&peer->msg.log);
    ucs_list_head_init(&peer->msg.held);
    ucs_list_head_init(&peer->msg.waiting);
    ucs_list_head_init(&peer->msg.new_msgs);
    ucs_list_head_init(&peer->stripes_waiting);
    peer->engine   = engine;
    peer->name     = loom_from_le64(addr.name);
    peer->epoch    = loom_from_le32(addr.epoch);
    peer->refcount = 1;
    peer->msg.tx_conn = loom_random_id();
    peer->addr_blob = malloc(length);
    if (NULL == peer->addr_blob || 0 != loom_hash_put(&engine->peers, peer->name, peer)) {
        free(peer->addr_blob);
        free(peer);
        return LOOM_ERR_NOMEM;
    }
    memcpy(peer->addr_blob, blob, length);
    peer->addr_blob_len = length;
    loom_eager_peer_init(peer);
    /* Rail i pairs with the peer's rail i when both run the same transport. */
    for (i = 0; i < engine->rail_count && i < addr.rail_count; ++i) {
        loom_wire_rail_addr_t remote;

        memcpy(&remote, rails[i], sizeof(remote));
        peer->remote_rails[i] = remote;
        if (!loom_rail_addr_matches(&engine->rails[i], &remote)) {
            loom_log(engine, LOOM_LOG_WARN, "peer %#llx rail %d is %s:%s, ours is %s:%s: "
                     "not used", (unsigned long long)peer->name, i, remote.tl_name,
                     remote.dev_name, engine->rails[i].info.tl_name,
                     engine->rails[i].info.dev_name);
            continue;
        }
        if (LOOM_OK == loom_peer_rail_connect(peer, i, dev_addrs[i],
                                              (loom_from_le32(remote.flags) &
                                               LOOM_WIRE_RAIL_CONNECT_TO_IFACE)
                                                  ? iface_addrs[i] : NULL)) {
            ++connected;
        }
    }
    /* A connect-to-ep rail whose address cannot be sent never becomes usable:
     * fail it now rather than queue operations on it for ever. */
    for (i = 0; i < engine->rail_count; ++i) {
        if (NULL != peer->rails[i].ep && engine->rails[i].info.connect_to_ep &&
            LOOM_OK != loom_connect_send(peer, i, false)) {
            loom_peer_fail_rail(peer, i, UCS_ERR_UNREACHABLE);
            --connected;
        }
    }
    if (0 == connected) {
        loom_log(engine, LOOM_LOG_ERROR, "peer %#llx is unreachable on every rail",
                 (unsigned long long)peer->name);
        peer->refcount = 1;
        loom_peer_disconnect(peer);
        return LOOM_ERR_UNREACH;
    }
    loom_peer_choose_am_rail(peer);
    early = loom_hash_remove(&engine->early_connects, peer->name);
    if (NULL != early) {
        engine->early_unasked -= !early->looked_up;
        for (i = 0; i < LOOM_MAX_RAILS; ++i) {
            if (early->length[i] > 0) {
                loom_connect_apply(peer, early->msg[i]);
            }
        }
        free(early);
    }
    *peer_p = peer;
    return LOOM_OK;
}

/* The peer disconnects from us: its endpoints close next. */
ucs_status_t loom_bye_recv(void *arg, void *data, size_t length, unsigned flags)
{
    loom_rail_t *rail = arg;
    loom_wire_bye_t bye;
    loom_peer_t *peer;

    (void)flags;
    if (!loom_wire_hdr_check(rail, data, length, LOOM_WIRE_BYE, sizeof(bye))) {
        return UCS_OK;
    }
    memcpy(&bye, data, sizeof(bye));
    /* a process that connected to us but we never to it: nothing to close */
    peer = loom_peer_lookup(rail->engine, loom_from_le64(bye.sender));
    if (NULL == peer || peer->said_bye) {
        return UCS_OK;
    }
    if (loom_from_le32(bye.sender_epoch) != peer->epoch) {
        ++rail->stats.refused;
        loom_log(rail->engine, LOOM_LOG_WARN, "rail %s:%s: refused a goodbye of process "
                 "%#llx from another incarnation", rail->info.tl_name, rail->info.dev_name,
                 (unsigned long long)peer->name);
        return UCS_OK;
    }
    peer->said_bye = true;
    loom_log(rail->engine, LOOM_LOG_INFO, "peer %#llx is closing", (unsigned long long)peer->name);
    /* nobody is left to want what it parked here, nor to take in what
     * waits here to push to it: neither may fire later */
    loom_push_peer_gone(rail->engine, peer->name);
    return UCS_OK;
}

/* ---- connect-to-ep address exchange ----------------------------------------- */

/* msg is a checked CONNECT message, at any alignment (an AM payload): its
 * fixed part is read from an aligned copy. */
static void loom_connect_apply(loom_peer_t *peer, const void *msg)
{
    loom_wire_connect_t copy, *conn = &copy;
    const uint8_t *dev_addr = (const uint8_t *)msg + sizeof(copy);
    loom_peer_rail_t *prail;
    ucs_status_t status;
    int index;

    memcpy(&copy, msg, sizeof(copy));
    index = loom_from_le16(conn->rail_index);

    if (index >= peer->engine->rail_count || !peer->engine->rails[index].info.connect_to_ep) {
        ++peer->engine->rails[0].stats.refused;
        loom_log(peer->engine, LOOM_LOG_WARN, "refused a connect message from peer %#llx "
                 "for rail %d", (unsigned long long)peer->name, index);
        return;
    }
    prail = &peer->rails[index];
    if (loom_from_le16(conn->dev_addr_len) != peer->engine->rails[index].attr.device_addr_len ||
        loom_from_le16(conn->ep_addr_len) != peer->engine->rails[index].attr.ep_addr_len ||
        loom_from_le32(conn->sender_epoch) != peer->epoch) {
        ++peer->engine->rails[index].stats.refused;
        loom_log(peer->engine, LOOM_LOG_WARN, "refused a connect message from peer %#llx "
                 "for rail %d: address sizes or epoch do not match",
                 (unsigned long long)peer->name, index);
        return;
    }
    if (loom_rejoin_ep_recv(peer, index, loom_from_le32(conn->rail_epoch), conn->connected,
                            dev_addr, loom_from_le16(conn->dev_addr_len) +
                                      loom_from_le16(conn->ep_addr_len))) {
        return; /* the rail comes back */
    }
    if (NULL == prail->ep) {
        ++peer->engine->rails[0].stats.refused;
        loom_log(peer->engine, LOOM_LOG_WARN, "refused a connect message from peer %#llx "
                 "for rail %d: no endpoint", (unsigned long long)peer->name, index);
        return;
    }
    if (prail->failed || loom_from_le32(conn->rail_epoch) != prail->rail_epoch) {
        /* late, or not the peer's: a failed rail is not connected again this way */
        ++peer->engine->rails[index].stats.refused;
        loom_log(peer->engine, LOOM_LOG_INFO, "refused a connect message from peer %#llx "
                 "for rail %d: the rail failed", (unsigned long long)peer->name, index);
        return;
    }
    if (!prail->local_connected) {
        status = uct_ep_connect_to_ep(prail->ep, (const uct_device_addr_t *)dev_addr,
                                      (const uct_ep_addr_t *)(dev_addr +
                                          loom_from_le16(conn->dev_addr_len)));
        if (UCS_OK != status) {
            loom_peer_fail_rail(peer, index, status);
            return;
        }
        prail->local_connected = true;
    }
    if (!prail->told_connected || (conn->hdr.flags & LOOM_WIRE_FLAG_CONNECT_AGAIN)) {
        (void)loom_connect_send(peer, index, false); /* our answer may have been lost */
    }
    if (conn->connected) {
        prail->usable = true;
    }
}

ucs_status_t loom_connect_recv(void *arg, void *data, size_t length, unsigned flags)
{
    loom_rail_t *rail = arg;
    loom_engine_t *engine = rail->engine;
    loom_wire_connect_t conn;
    loom_early_t *early;
    loom_peer_t *peer;
    uint64_t sender;
    unsigned index;

    (void)flags;
    if (!loom_wire_hdr_check(rail, data, length, LOOM_WIRE_CONNECT, sizeof(conn))) {
        return UCS_OK;
    }
    memcpy(&conn, data, sizeof(conn));
    index = loom_from_le16(conn.rail_index);
    if (length != sizeof(conn) + loom_from_le16(conn.dev_addr_len) +
                  loom_from_le16(conn.ep_addr_len) || length > LOOM_OP_MSG_MAX ||
        index >= LOOM_MAX_RAILS) {
        ++rail->stats.refused;
        loom_log(engine, LOOM_LOG_WARN, "refused a connect message with bad lengths");
        return UCS_OK;
    }
    sender = loom_from_le64(conn.sender);
    peer   = loom_peer_lookup(engine, sender);
    if (NULL != peer) {
        loom_connect_apply(peer, data);
        return UCS_OK;
    }
    /* Not connected to the sender yet: keep the latest message per rail, for
     * a bounded number of senders. */
    early = loom_hash_get(&engine->early_connects, sender);
    if (NULL == early && loom_hash_count(&engine->early_connects) >= LOOM_EARLY_CONNECTS_MAX) {
        ++rail->stats.refused;
        loom_log(engine, LOOM_LOG_WARN, "refused a connect message from unknown process "
                 "%#llx: too many pending", (unsigned long long)sender);
        return UCS_OK;
    }
    if (NULL == early) {
        early = calloc(1, sizeof(*early));
        if (NULL == early || 0 != loom_hash_put(&engine->early_connects, sender, early)) {
            free(early);
            return UCS_OK;
        }
        early->sender = sender;
        ++engine->early_unasked;
    }
    memcpy(early->msg[index], data, length);
    early->length[index] = length;
    return UCS_OK;
}

/*
 * A process that connects to us endpoint to endpoint (rc_verbs) can send
 * nothing before we connected back, so its CONNECT must make us connect:
 * the upper layer may add the process only when it first sends to it, or
 * not while another thread holds the engine (add_procs does not wait).  From
 * full progress only (the upper layer is asked who the sender is, as for a
 * message of a process not connected), once per sender; connecting takes
 * its early messages in (loom_peer_connect).
 */
static UCS_F_NOINLINE int loom_early_connects_look_up(loom_engine_t *engine)
{
    uint64_t names[16];
    loom_early_t *early;
    size_t pos = 0;
    int count = 0, n = 0, i;

    while (n < 16 && NULL != (early = loom_hash_next(&engine->early_connects, &pos))) {
        if (!early->looked_up) {
            early->looked_up = true;
            --engine->early_unasked;
            names[n++] = early->sender;
        }
    }
    for (i = 0; i < n; ++i) {
        count += (NULL != loom_peer_of_message(engine, names[i]));
    }
    return count;
}

int loom_early_connects_progress(loom_engine_t *engine)
{
    /* The check alone on every pass: senders asked about once stay (a
     * stranger's, up to LOOM_EARLY_CONNECTS_MAX) until they connect, and
     * walking them on every pass made each pass as slow as they are many. */
    if (0 == engine->early_unasked || engine->quiet) {
        return 0;
    }
    return loom_early_connects_look_up(engine);
}

/* Peers the rail is out of use for; with rejoining, only those for which it
 * is being connected again. */
static unsigned loom_rail_peers_out(loom_engine_t *engine, int rail, bool rejoining)
{
    loom_peer_t *peer;
    size_t pos = 0;
    unsigned count = 0;

    if (rail < 0 || rail >= engine->rail_count) {
        return 0;
    }
    while (NULL != (peer = loom_hash_next(&engine->peers, &pos))) {
        /* the rails of a process that leaves closed, they did not fail */
        count += peer->rails[rail].failed && !loom_peer_closing(peer) &&
                 (!rejoining || LOOM_PROBE_NONE != peer->rails[rail].probe_state);
    }
    return count;
}

unsigned loom_engine_rail_failed_peers(loom_engine_t *engine, int rail)
{
    return loom_rail_peers_out(engine, rail, false);
}

unsigned loom_engine_rail_rejoining_peers(loom_engine_t *engine, int rail)
{
    return loom_rail_peers_out(engine, rail, true);
}
