/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * In-order delivery of a peer's messages, whichever way they came (active
 * message or eager ring slot): the next one goes up, duplicates are
 * dropped, those ahead of order are kept until the ones before them came.
 */
#include "messages/loom_messages.h"

#include <stdlib.h>
#include <string.h>

/* Hand a message to the upper layer, unless it has a tag the upper layer
 * does not take: a broken or hostile sender's, dropped and counted. */
static void loom_msg_up(loom_engine_t *engine, int rail, uint64_t sender, uint8_t tag,
                          const void *data, size_t length)
{
    if (0 != engine->config.tag_count && tag >= engine->config.tag_count) {
        ++engine->rails[rail].stats.bad_tags;
        loom_log(engine, LOOM_LOG_INFO, "rail %s:%s: dropped a message of %zu bytes from "
                 "%#llx with tag %u (tags go up to %u)", engine->rails[rail].info.tl_name,
                 engine->rails[rail].info.dev_name, length, (unsigned long long)sender, tag,
                 engine->config.tag_count - 1);
        return;
    }
    engine->config.recv_cb(engine->config.cb_ctx, tag, data, length);
}

/* In quiet progress (a helper thread's) nothing goes up: an upper-layer
 * message (or an engine message that must run on an application's thread)
 * is delivered into a copy that waits, in order, for the next full progress
 * (loom_msg_waiting_up).  Delivered, it is acknowledged and no longer held
 * against the sender's order: the sender may be any number of messages
 * ahead when the application computes long. */
void loom_msg_wait_for_full(loom_peer_t *peer, int rail, uint8_t tag, const void *data,
                            size_t length)
{
    loom_msg_held_t *copy = malloc(sizeof(*copy) + length);

    if (NULL == copy) {
        loom_log(peer->engine, LOOM_LOG_ERROR, "out of memory keeping a message of %zu "
                 "bytes of peer %#llx for the upper layer; dropped", length,
                 (unsigned long long)peer->name);
        return;
    }
    copy->seq    = 0;
    copy->tag    = tag;
    copy->rail   = rail;
    copy->length = length;
    memcpy(copy->data, data, length);
    ucs_list_add_tail(&peer->msg.waiting, &copy->link);
    ++peer->msg.waiting_count;
    peer->engine->quiet_kept += sizeof(*copy) + length; /* progress_quiet's bound */
    peer->msg.engine_waiting += (LOOM_WIRE_TAG_ENGINE == tag);
    loom_eager_activate(peer); /* so that the next full progress hands it up */
}

/* What quiet progress delivered goes up first, in order (an engine message
 * that waited for full progress runs here); how many went. */
static UCS_F_NOINLINE int loom_msg_waiting_deliver(loom_peer_t *peer)
{
    loom_msg_held_t *copy;
    int count = 0;

    while (!ucs_list_is_empty(&peer->msg.waiting)) {
        copy = ucs_list_extract_head(&peer->msg.waiting, loom_msg_held_t, link);
        --peer->msg.waiting_count;
        peer->engine->quiet_kept -= sizeof(*copy) + copy->length;
        if (LOOM_WIRE_TAG_ENGINE == copy->tag) {
            --peer->msg.engine_waiting;
            peer->engine->engine_recv(peer, copy->rail, copy->data, copy->length);
        } else {
            loom_msg_up(peer->engine, copy->rail, peer->name, copy->tag, copy->data,
                        copy->length);
        }
        free(copy);
        ++count;
    }
    return count;
}

/* Messages that waited for full progress go up first: the check alone for
 * the message of every call. */
static inline int loom_msg_waiting_up(loom_peer_t *peer)
{
    return ucs_list_is_empty(&peer->msg.waiting) ? 0 : loom_msg_waiting_deliver(peer);
}

void loom_msg_waiting_drop(loom_peer_t *peer)
{
    loom_msg_held_t *copy;

    while (!ucs_list_is_empty(&peer->msg.waiting)) {
        copy = ucs_list_extract_head(&peer->msg.waiting, loom_msg_held_t, link);
        peer->engine->quiet_kept -= sizeof(*copy) + copy->length;
        free(copy);
    }
    peer->msg.waiting_count  = 0;
    peer->msg.engine_waiting = 0;
}

/* A dropped message counts as delivered too: the sender's next ones go on. */
static void loom_msg_hand_up(loom_peer_t *peer, int rail, uint8_t tag, const void *data,
                             size_t length, bool ack_now)
{
    loom_msg_delivered(peer, ack_now); /* first: a reply from the callback acks it */
    if (LOOM_WIRE_TAG_ENGINE == tag && peer->engine->quiet && 0 != peer->msg.engine_waiting) {
        /* behind an engine message waiting for full progress: in its order */
        loom_msg_wait_for_full(peer, rail, tag, data, length);
    } else if (LOOM_WIRE_TAG_ENGINE == tag) {
        if (!peer->engine->quiet) {
            loom_msg_waiting_up(peer); /* what waited came before this one */
        }
        peer->engine->engine_recv(peer, rail, data, length); /* loom's own */
    } else if (peer->engine->quiet) {
        loom_msg_wait_for_full(peer, rail, tag, data, length);
    } else {
        loom_msg_waiting_up(peer); /* they came before this one */
        loom_msg_up(peer->engine, rail, peer->name, tag, data, length);
    }
}

static loom_msg_held_t *loom_msg_held_first(loom_peer_t *peer)
{
    return ucs_list_is_empty(&peer->msg.held) ? NULL :
           ucs_list_head(&peer->msg.held, loom_msg_held_t, link);
}

static void loom_msg_held_unlink(loom_peer_t *peer, loom_msg_held_t *held)
{
    ucs_list_del(&held->link);
    --peer->msg.held_count;
}

/* Deliver what may go now, in the sender's order; returns how many
 * messages were taken (duplicates dropped included). */
int loom_msg_deliver_ready(loom_peer_t *peer)
{
    loom_engine_t *engine = peer->engine;
    const loom_chan_t *chan;
    loom_msg_held_t *held;
    loom_chan_in_t in;
    int count = 0, order = 1, i;

    if (!engine->quiet && 0 != peer->msg.waiting_count) {
        count += loom_msg_waiting_up(peer);
    }
    for (;;) {
        held = loom_msg_held_first(peer);
        if (NULL != held && (order = loom_msg_order(peer, held->seq)) <= 0) {
            loom_msg_held_unlink(peer, held); /* before it goes up: a callback may send */
            if (0 == order) {
                loom_msg_hand_up(peer, held->rail, held->tag, held->data, held->length,
                                   false);
            }
            free(held);
            ++count;
            continue;
        }
        /* the next message of a channel the receiver reads, if it is due */
        for (i = 0, chan = NULL; i < engine->chan_count; ++i) {
            if (NULL != engine->chans[i]->next && 1 == engine->chans[i]->next(peer, &in) &&
                (order = loom_msg_order(peer, in.seq)) <= 0) {
                chan = engine->chans[i];
                break;
            }
        }
        if (NULL == chan) {
            break; /* nothing came, or what came waits for one sent before it */
        }
        loom_eager_tx_credits(peer, in.credits);
        loom_msg_acked(peer, in.ack);
        if (0 == order) {
            loom_msg_hand_up(peer, in.rail, in.tag, in.data, in.length, false);
        } else {
            loom_msg_duplicate(peer, in.rail); /* it was sent again by AM and came */
        }
        chan->consume(peer, &in);
        ++count;
    }
    return count;
}

/* Forget the messages kept for later (the peer goes, or connected again). */
void loom_msg_held_drop(loom_peer_t *peer)
{
    loom_msg_held_t *held;

    while (NULL != (held = loom_msg_held_first(peer))) {
        loom_msg_held_unlink(peer, held);
        free(held);
    }
}

/* Keep a copy of a message that came before one it must follow, in
 * sequence order; false if it cannot be kept. */
static bool loom_msg_hold(loom_peer_t *peer, int rail, uint32_t seq, uint8_t tag,
                          const void *payload, size_t length)
{
    loom_msg_held_t *held, *after = NULL;

    /* in sequence order: before the first one that comes after it */
    ucs_list_for_each(held, &peer->msg.held, link) {
        if (held->seq == seq) {
            return true; /* a second copy of one already kept */
        }
        if (loom_seq_after(held->seq, seq)) {
            after = held;
            break;
        }
    }
    held = malloc(sizeof(*held) + length);
    if (NULL == held) {
        return false;
    }
    held->seq    = seq;
    held->tag    = tag;
    held->rail   = rail;
    held->length = length;
    memcpy(held->data, payload, length);
    if (NULL != after) {
        ucs_list_insert_before(&after->link, &held->link);
    } else {
        ucs_list_add_tail(&peer->msg.held, &held->link);
    }
    ++peer->msg.held_count;
    loom_eager_activate(peer);
    return true;
}

/* An upper-layer message came by AM: deliver it now if it is the next one
 * of its sender, drop it if it was delivered before (sent again after a
 * rail failed), else keep a copy until the ones before it came. */
void loom_msg_recv(loom_engine_t *engine, int rail, const loom_wire_send_t *msg,
                      const void *payload, size_t length)
{
    /* msg is an AM payload, at any alignment: its fields are read from a copy */
    loom_wire_send_t copy, *hdr = &copy;
    loom_peer_t *peer;
    uint64_t sender;
    uint32_t seq;
    bool ack_now;
    int order;

    memcpy(&copy, (const void *)msg, sizeof(copy));
    sender  = loom_from_le64(hdr->sender);
    peer    = loom_peer_lookup(engine, sender);
    seq     = loom_from_le32(hdr->seq);
    ack_now = !!(hdr->hdr.flags & LOOM_WIRE_FLAG_ACK_REQ);
    if (NULL == peer && loom_msg_stranger_keep(engine, rail, hdr, payload, length)) {
        return; /* connected to its sender, then delivered, from progress */
    }
    if (NULL == peer) {
        /* nothing to order it against: handed up, it would pass for a message
         * of whatever process it names inside */
        loom_msg_refuse(engine, rail, sender, "the process is not connected");
        return;
    }
    if (!loom_msg_conn_check(peer, rail, hdr, payload, length)) {
        return;
    }
    peer->msg.rx_kept = !!(hdr->hdr.flags & LOOM_WIRE_FLAG_KEPT);
    loom_eager_tx_credits(peer, loom_from_le16(hdr->credits));
    loom_msg_acked(peer, hdr->ack);
    while ((order = loom_msg_order(peer, seq)) > 0) {
        if (0 == loom_msg_deliver_ready(peer)) {
            break; /* what comes before it is still on its way */
        }
    }
    if (order < 0) {
        loom_msg_duplicate(peer, rail);
        return;
    }
    if (order > 0) {
        if (!loom_msg_in_window(peer, seq)) {
            loom_msg_over_limit(engine, rail, sender, "a message too far ahead of order");
        } else if (!loom_msg_hold(peer, rail, seq, hdr->hdr.tag, payload, length)) {
            loom_log(engine, LOOM_LOG_ERROR, "out of memory keeping message %u of peer "
                     "%#llx until the ones before it came; dropped, it will be sent again "
                     "only if its rail fails", seq, (unsigned long long)peer->name);
        }
        if (ack_now) {
            loom_msg_ack_soon(peer); /* tell it what we have */
        }
        return;
    }
    loom_msg_hand_up(peer, rail, hdr->hdr.tag, payload, length, ack_now);
    if (!ucs_list_is_empty(&peer->msg.held) || 0 != peer->eager.rx.phase) {
        loom_msg_deliver_ready(peer);
    }
}

/* Hand a kept copy to the AM path again, and free it. */
static void loom_msg_copy_replay(loom_engine_t *engine, loom_msg_copy_t *copy)
{
    const loom_wire_send_t *hdr = (const loom_wire_send_t *)copy->data;

    loom_msg_recv(engine, copy->rail, hdr, hdr + 1, copy->length - sizeof(*hdr));
    free(copy);
}

/* The peer named its connection to us (asked by loom_msg_conn_check): take
 * the new one if it is that, else the claim was false. */
void loom_msg_conn_reply(loom_peer_t *peer, int rail, uint32_t wire_conn)
{
    loom_msg_state_t *msg = &peer->msg;
    uint32_t conn = loom_from_le32(wire_conn);
    ucs_list_link_t list;
    unsigned i;

    if (0 == msg->new_conn || conn == msg->rx_conn) {
        for (i = 0; i < msg->new_count; ++i) {
            loom_msg_refuse(peer->engine, rail, peer->name, "its connection is not the "
                            "one the peer uses");
        }
        loom_msg_new_conn_drop(peer);
        return;
    }
    if (conn != msg->new_conn) {
        return; /* an answer about an earlier claim: the one for this one follows */
    }
    loom_log(peer->engine, LOOM_LOG_INFO, "peer %#llx connected to us again",
             (unsigned long long)peer->name);
    loom_msg_held_drop(peer); /* what was kept of the earlier one never comes */
    msg->rx_conn  = conn;
    msg->rx_seq   = 0;
    msg->acked    = 0;
    msg->new_count = 0;
    msg->new_conn = 0;
    /* aside first: a replayed message may start another claim */
    ucs_list_head_init(&list);
    ucs_list_splice_tail(&list, &msg->new_msgs);
    ucs_list_head_init(&msg->new_msgs);
    while (!ucs_list_is_empty(&list)) {
        loom_msg_copy_replay(peer->engine, ucs_list_extract_head(&list, loom_msg_copy_t, link));
    }
}

static UCS_F_NOINLINE int loom_msg_strangers_replay(loom_engine_t *engine)
{
    loom_msg_copy_t *copy;
    const loom_wire_send_t *hdr;
    int count = 0;

    engine->strangers_running = true;
    while (!ucs_list_is_empty(&engine->strangers)) {
        copy = ucs_list_extract_head(&engine->strangers, loom_msg_copy_t, link);
        --engine->strangers_count;
        hdr = (const loom_wire_send_t *)copy->data;
        (void)loom_peer_of_message(engine, loom_from_le64(hdr->sender));
        loom_msg_copy_replay(engine, copy);
        ++count;
    }
    engine->strangers_running = false;
    return count;
}

/* A poller (its check alone on every pass).  Connecting asks the upper
 * layer who the sender is: its thread's work, not quiet progress's. */
int loom_msg_strangers_progress(loom_engine_t *engine)
{
    if (ucs_list_is_empty(&engine->strangers) || engine->quiet) {
        return 0;
    }
    return loom_msg_strangers_replay(engine);
}
