/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * A failed rail towards one peer, on its way back, whatever its connection
 * model: whether it can come back and its link is up, what it waits to send
 * from progress, its old endpoint closed, and the rail taken into use again.
 * rejoin.c (rails that connect to interfaces) and rejoin_ep.c (endpoint to
 * endpoint) drive it.
 */
#include "managers/loom_managers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first line of a sysfs file, "" if it cannot be read. */
static void loom_sysfs_read(const char *path, char *buf, size_t size)
{
    FILE *file = fopen(path, "r");

    buf[0] = '\0';
    if (NULL == file) {
        return;
    }
    if (NULL == fgets(buf, (int)size, file)) {
        buf[0] = '\0';
    }
    fclose(file);
}

/*
 * Whether the rail's link is up: a probe over a device that is down cannot
 * succeed (and UCT logs every failed connect).  A tcp rail is a network
 * device (operstate); an RDMA rail is a port, "device:port", ACTIVE (state
 * 4) or not.  What cannot be read counts as up: the probe decides.
 */
bool loom_rail_link_up(const loom_rail_t *rail)
{
    char path[160], dev[64], state[32];
    const char *colon;

    if (0 == strcmp(rail->info.tl_name, "tcp")) {
        snprintf(path, sizeof(path), "/sys/class/net/%s/operstate", rail->info.dev_name);
        loom_sysfs_read(path, state, sizeof(state));
        return 0 != strncmp(state, "down", 4) && 0 != strncmp(state, "lowerlayerdown", 14) &&
               0 != strncmp(state, "notpresent", 10);
    }
    colon = strrchr(rail->info.dev_name, ':');
    if (NULL == colon || (size_t)(colon - rail->info.dev_name) >= sizeof(dev)) {
        return true;
    }
    memcpy(dev, rail->info.dev_name, (size_t)(colon - rail->info.dev_name));
    dev[colon - rail->info.dev_name] = '\0';
    snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%s/state", dev, colon + 1);
    loom_sysfs_read(path, state, sizeof(state));
    return '\0' == state[0] || 0 == strncmp(state, "4:", 2);
}

/* What the rail has to do next from progress (LOOM_PROBE_*). */
void loom_rejoin_state_set(loom_peer_t *peer, int index, int state)
{
    loom_peer_rail_t *prail = &peer->rails[index];

    peer->engine->probes_pending += (LOOM_PROBE_NONE == prail->probe_state) -
                                    (LOOM_PROBE_NONE == state);
    if (LOOM_PROBE_NONE == prail->probe_state) {
        prail->probe_since = loom_now_ns();
    }
    prail->probe_state = state;
}

/* The rail can come back for this peer: only where messages are kept for
 * re-sending (several rails), since a message lost with the old connection
 * of the only rail would stall its peer for ever; never towards a process
 * that goes. */
bool loom_rejoin_possible(const loom_peer_t *peer, int index)
{
    (void)index;
    return peer->engine->config.rail_rejoin_ms > 0 && loom_msg_logging(peer) &&
           !loom_peer_closing(peer);
}

const char *loom_rejoin_keep_why(const loom_peer_t *peer, int index)
{
    if (!loom_rejoin_possible(peer, index)) {
        return "rails do not come back towards this peer (one rail, rejoin off, or it leaves)";
    }
    if (loom_peer_other_rail(peer, index) < 0) {
        /* failing it would fail the peer: the peer tries again, and is
         * answered once another rail is back */
        return "it is the last rail in use";
    }
    return NULL;
}

/* Destroy the rail's endpoint, and fail loom's operations that were waiting
 * on it: UCT completes some of them with an error as the endpoint goes (tcp
 * flushes) and drops others without a word (tcp puts). */
void loom_rejoin_close(loom_peer_t *peer, int index)
{
    loom_peer_rail_t *prail = &peer->rails[index];

    if (prail->to_close) {
        prail->to_close = false;
        --peer->engine->closes_pending;
    }
    if (NULL != prail->ep) {
        uct_ep_destroy(prail->ep);
        prail->ep = NULL;
    }
    loom_rdma_fail_wire_ops(peer, index);
    loom_eager_tx_rail_closed(peer, index);
}

void loom_rejoin_drop_probe_ep(loom_peer_rail_t *prail)
{
    if (NULL != prail->probe_ep) {
        uct_ep_destroy(prail->probe_ep);
        prail->probe_ep = NULL;
    }
}

/* The endpoint address a peer announced for the rail (rejoin_ep.c). */
void loom_rejoin_forget_addr(loom_peer_rail_t *prail)
{
    free(prail->rejoin_addr);
    prail->rejoin_addr     = NULL;
    prail->rejoin_addr_len = 0;
}

/* The rail carries traffic to the peer again. */
void loom_rejoin_use(loom_peer_t *peer, int index)
{
    loom_peer_rail_t *prail = &peer->rails[index];
    loom_rail_t *rail = &peer->engine->rails[index];
    bool none_left = peer->rails[peer->am_rail].failed;

    if (prail->rejoin_counted) {
        prail->rejoin_counted = false;
        --peer->engine->failed_rails;
    }
    loom_rejoin_state_set(peer, index, LOOM_PROBE_NONE);
    loom_rejoin_drop_probe_ep(prail);
    loom_rejoin_forget_addr(prail);
    prail->failed      = false;
    prail->down_told   = false;
    prail->fresh_ep    = false;
    prail->usable      = true;
    loom_rail_watch_start(peer, index);
    peer->lost         = false;
    ++rail->stats.rejoins;
    /* good news, counted in rejoins */
    loom_log(peer->engine, LOOM_LOG_INFO, "rail %s:%s to peer %#llx is back (connection %u)",
             rail->info.tl_name, rail->info.dev_name, (unsigned long long)peer->name,
             prail->rail_epoch);
    loom_peer_choose_am_rail(peer);
    loom_eager_rail_back(peer);
    if (none_left) {
        loom_msg_resend_start(peer); /* every rail had failed: send again what was not acked */
    }
    loom_peer_mark_busy(peer); /* what waits for a rail may go now */
}

