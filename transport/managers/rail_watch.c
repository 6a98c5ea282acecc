/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The rail watch: a rail can die without telling (a TCP path whose link went
 * down errors only once the kernel gives up retransmitting, minutes later by
 * default), with striped chunks on it that then never land.
 *
 * Silence alone proves nothing: on TCP a put lands only while its target
 * progresses, so a peer that computes for a minute lands nothing on any
 * rail, and the network is fine.  The watch therefore only compares the
 * rails to one peer with each other.  A rail is failed for a peer when,
 * for rail_timeout_ms counted from the first moment another rail to the same
 * peer delivered after this rail's last landing, it landed nothing while the
 * other rails landed twice what they can have in flight: chunks issued after
 * this rail went silent, which only a peer that progresses completes.
 *
 * When the other rails landed only what they had (a peer that stops to
 * compute lets what its kernel already holds land on some rails and not on
 * others), that proves nothing: the watch asks the peer, on another rail,
 * for an answer.  A peer that computes does not answer, and nothing is
 * failed; one that answers progresses, and if this rail still lands nothing
 * a quarter of a timeout after the answer (and a timeout after the others
 * delivered), the rail is dead.
 *
 * A peer silent on every rail is never failed here; a dead peer or a dead
 * last rail is left to the transport's own errors (UCT's endpoint errors,
 * the kernel's TCP keepalive and retransmission give-up).
 *
 * What the local NIC says is a network signal and needs no comparison: a
 * rail whose port or device went down (loom_rail_link_up) while chunks or
 * messages not yet acknowledged are in flight is failed at once for every
 * peer that has another rail (unless rail_timeout_ms is 0: then only the
 * transport's own errors count), where an RDMA queue pair would otherwise
 * error only after its retries ran out (seconds), or not at all if the port
 * came back before.
 */
#include "managers/loom_managers.h"

/* No rail to the peer but this one has striped chunks in flight; *others
 * is how many rails besides this one are in use. */
static bool loom_rail_watch_others_idle(const loom_peer_t *peer, int rail, unsigned *others)
{
    bool idle = true;
    int i;

    *others = 0;
    for (i = 0; i < peer->engine->rail_count; ++i) {
        if (i == rail || peer->rails[i].failed) {
            continue;
        }
        ++*others;
        if (peer->rails[i].inflight_chunks > 0) {
            idle = false;
        }
    }
    return idle;
}

/* The peer answered after we asked, and the rail stayed silent a quarter
 * of a timeout since: what the peer's progress then sent on it would have
 * landed. */
static bool loom_rail_watch_answered(const loom_peer_t *peer, int rail, uint64_t now,
                                     uint64_t limit)
{
    uint64_t reply = peer->msg.last_reply, asked = peer->rails[rail].watch_asked;

    return 0 != asked && reply > asked && loom_elapsed_ns(now, reply) > limit / 4;
}

/* Ask the peer for an answer on a rail of its own that works. */
static void loom_rail_watch_ask(loom_peer_t *peer, int rail, uint64_t now)
{
    int i;

    for (i = 0; i < peer->engine->rail_count; ++i) {
        if (i != rail && peer->rails[i].usable &&
            LOOM_OK == loom_msg_progress_ask(peer, i)) {
            peer->rails[rail].watch_asked = now;
            return;
        }
    }
}

/* The other rails to the peer delivered while this one stayed silent: true
 * when that proves the rail dead.  Where it does not, the peer is asked from
 * half the timeout on, so that its answer is in by the end of it. */
static bool loom_rail_watch_stuck(loom_peer_t *peer, int rail, uint64_t now, uint64_t limit)
{
    loom_peer_rail_t *prail = &peer->rails[rail];
    uint64_t landed = peer->chunks_landed - prail->landed_mark;
    unsigned others;
    bool idle;

    /* a closing peer's chunks fail as its endpoints close */
    if (0 == prail->inflight_chunks || prail->failed || 0 == prail->others_since ||
        loom_elapsed_ns(now, prail->others_since) <= limit / 2 || loom_peer_closing(peer)) {
        return false;
    }
    idle = loom_rail_watch_others_idle(peer, rail, &others);
    if (idle && 0 == prail->watch_asked) {
        loom_rail_watch_ask(peer, rail, now);
    }
    if (loom_elapsed_ns(now, prail->others_since) <= limit) {
        return false;
    }
    return landed >= 2ull * others * peer->engine->config.stripe_depth ||
           (idle && loom_rail_watch_answered(peer, rail, now, limit));
}

/* Rails whose local link went down leave use for every peer that has
 * another; a rail not in use for a peer (failed, or never connected to it)
 * is left alone. */
static void loom_rail_watch_links(loom_engine_t *engine, uint64_t now)
{
    loom_peer_t *peer;
    size_t pos;
    int i;

    if (now < engine->next_link_check) {
        return;
    }
    engine->next_link_check = now + LOOM_LINK_CHECK_NS;
    for (i = 0; i < engine->rail_count; ++i) {
        if (loom_rail_link_up(&engine->rails[i])) {
            continue;
        }
        pos = 0;
        while (NULL != (peer = loom_hash_next(&engine->peers, &pos))) {
            if (!peer->rails[i].usable || loom_peer_other_rail(peer, i) < 0 ||
                loom_peer_closing(peer)) {
                continue;
            }
            loom_log(engine, LOOM_LOG_ERROR, "rail %s:%s to peer %#llx: the link is down; "
                     "taking the rail out of use", engine->rails[i].info.tl_name,
                     engine->rails[i].info.dev_name, (unsigned long long)peer->name);
            loom_peer_fail_rail(peer, i, UCS_ERR_UNREACHABLE);
        }
    }
}

int loom_rail_watch(loom_engine_t *engine)
{
    uint64_t now, limit = engine->config.rail_timeout_ms * 1000000ull;
    loom_peer_t *peer;
    size_t pos = 0;
    int i;

    /* the link is read while anything is owed on a rail: a message not yet
     * acknowledged stalls its stream as surely as a chunk */
    if (0 == limit || engine->rail_count < 2 ||
        (0 == engine->chunks_inflight && 0 == engine->msgs_logged)) {
        return 0;
    }
    now = loom_engine_clock(engine);
    loom_rail_watch_links(engine, now);
    if (0 == engine->chunks_inflight || now < engine->next_watch) {
        return 0; /* nothing to compare */
    }
    engine->next_watch = now + limit / 4;
    while (NULL != (peer = loom_hash_next(&engine->peers, &pos))) {
        for (i = 0; i < engine->rail_count; ++i) {
            if (!loom_rail_watch_stuck(peer, i, now, limit)) {
                continue;
            }
            loom_log(engine, LOOM_LOG_ERROR, "rail %s:%s to peer %#llx: no chunk landed "
                     "for %llu ms with %u in flight, while %llu landed on other rails; "
                     "taking the rail out of use", engine->rails[i].info.tl_name,
                     engine->rails[i].info.dev_name, (unsigned long long)peer->name,
                     (unsigned long long)(loom_elapsed_ns(now, peer->rails[i].last_landed) /
                                          1000000),
                     peer->rails[i].inflight_chunks,
                     (unsigned long long)(peer->chunks_landed - peer->rails[i].landed_mark));
            loom_peer_fail_rail(peer, i, UCS_ERR_TIMED_OUT);
        }
    }
    return 0;
}
