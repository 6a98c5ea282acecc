/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * CONNECT sent again.  A rail that connects endpoint to endpoint (rc_verbs)
 * becomes usable towards a peer only once both CONNECTs (the endpoint
 * addresses) crossed over the wireup interface.  That interface (ud_verbs)
 * is reliable once its own connection stands, but two processes connecting
 * to each other at the same moment were seen (soft-RoCE, UCX 1.13, about
 * one job in 50) to leave both CONNECTs undelivered for ever, and the job
 * waiting on a rail that never came up.  So a rail that is still not
 * connected a while after our CONNECT left gets it again, on a fresh
 * wireup endpoint, after 2 s, then at doubling intervals up to 16 s, marked
 * as sent again so that a peer that answered before answers again (its
 * answer may be what was lost); a CONNECT that comes twice changes nothing
 * else.  Only a wireup interface of its own (ud) gets a fresh endpoint: over
 * the rail's own interface (tcp) a CONNECT arrives or its endpoint fails
 * (loom_am_boot_refused renews it then), and a fresh endpoint there would
 * close a connection that the peer's wireup endpoint may share, failing
 * the CONNECT the peer sends next.  There is no last try: silence is no
 * proof that the peer is gone (it may compute long before it next calls
 * in), so the rail is never failed for it.
 */
#include "engine/loom_engine.h"

#define LOOM_CONNECT_RETRY_FIRST_NS 2000000000ull
#define LOOM_CONNECT_RETRY_LAST_NS  16000000000ull
#define LOOM_CONNECT_RETRY_CHECK_NS 250000000ull

static uint64_t loom_connect_retry_after(unsigned tries)
{
    uint64_t after = LOOM_CONNECT_RETRY_FIRST_NS;

    while (tries-- > 0 && after < LOOM_CONNECT_RETRY_LAST_NS) {
        after *= 2;
    }
    return after;
}

static void loom_connect_retry_peer(loom_peer_t *peer, uint64_t now)
{
    loom_engine_t *engine = peer->engine;
    loom_peer_rail_t *prail;
    int i;

    if (loom_peer_closing(peer)) {
        return; /* it goes: a CONNECT would make it connect back to us */
    }
    for (i = 0; i < engine->rail_count; ++i) {
        prail = &peer->rails[i];
        if (!engine->rails[i].info.connect_to_ep || NULL == prail->ep || prail->failed ||
            prail->usable || 0 == prail->connect_sent ||
            loom_elapsed_ns(now, prail->connect_sent) <
                loom_connect_retry_after(prail->connect_tries)) {
            continue;
        }
        ++prail->connect_tries;
        ++engine->rails[i].stats.connect_retries;
        loom_log(engine, LOOM_LOG_INFO, "rail %s:%s: peer %#llx has not connected back "
                 "%.1f s after our CONNECT; sending it again (try %u)",
                 engine->rails[i].info.tl_name, engine->rails[i].info.dev_name,
                 (unsigned long long)peer->name,
                 (double)loom_elapsed_ns(now, prail->connect_sent) / 1e9,
                 prail->connect_tries);
        if (NULL != engine->rails[i].wireup_iface) {
            loom_peer_boot_ep_renew(peer, i);
        }
        if (LOOM_OK != loom_connect_send(peer, i, true)) {
            prail->connect_sent = now; /* no memory now: the next round tries */
        }
    }
}

/* A poller: the peers' unconnected rails, a few times a second. */
int loom_connect_retry_progress(loom_engine_t *engine)
{
    uint64_t now;
    loom_peer_t *peer;
    size_t pos = 0;

    if (engine->quiet) {
        return 0; /* connecting is full progress's (loom_early_connects_progress) */
    }
    now = loom_engine_clock(engine);
    if (now < engine->next_connect_retry) {
        return 0;
    }
    engine->next_connect_retry = now + LOOM_CONNECT_RETRY_CHECK_NS;
    while (NULL != (peer = loom_hash_next(&engine->peers, &pos))) {
        loom_connect_retry_peer(peer, now);
    }
    return 0;
}
