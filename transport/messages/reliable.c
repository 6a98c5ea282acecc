/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Upper-layer messages that survive a rail failure.  Every message of a
 * direction (by AM or by eager ring) carries a sequence number; the
 * receiver delivers in that order and once each, and acknowledges what it
 * delivered, cumulatively, on messages going the other way or in a
 * MSG_ACK of its own.  With several rails the sender keeps a copy of every
 * message until it is acknowledged: when the rail carrying a peer's
 * messages fails, they are all sent again on the rail that takes over,
 * before anything new, and the receiver drops the ones it already had.
 */
#include "messages/loom_messages.h"

#include <stdlib.h>
#include <string.h>

/* A message of a process not connected, or of a connection not its own:
 * nothing can order it, so it is never handed up. */
void loom_msg_refuse(loom_engine_t *engine, int rail, uint64_t sender, const char *why)
{
    loom_rail_t *r = &engine->rails[rail];

    ++r->stats.refused;
    loom_log(engine, LOOM_LOG_INFO, "rail %s:%s: dropped a message of process %#llx: %s",
             r->info.tl_name, r->info.dev_name, (unsigned long long)sender, why);
}

/* A peer made us reach a bound on what it can make us hold: drop, count, and
 * say so at a verbose level (a peer that keeps to the protocol never does). */
void loom_msg_over_limit(loom_engine_t *engine, int rail, uint64_t sender, const char *what)
{
    loom_rail_t *r = &engine->rails[rail];

    ++r->stats.over_limit;
    loom_log(engine, LOOM_LOG_INFO, "rail %s:%s: dropped %s of process %#llx: over the "
             "limit", r->info.tl_name, r->info.dev_name, what, (unsigned long long)sender);
}

/*
 * How far after the next message expected one may be: a sender that keeps
 * its messages has at most msg_window not acknowledged; one that keeps none
 * can be ahead only by the ring messages it wrote before (AMs and ring
 * writes share the connection of a rail), unless messages to one peer are
 * spread over several rails with none kept (msg_window 0): then by what a
 * rail can lag, LOOM_MSG_AHEAD_UNKEPT.  Further is no peer of ours: dropped,
 * which is safe since a sender that keeps them sends again what is not
 * acknowledged.
 */
#define LOOM_MSG_AHEAD_UNKEPT 4096u

static uint32_t loom_msg_ahead_max(const loom_peer_t *peer)
{
    unsigned window = peer->engine->config.msg_window;

    return (window ? window : LOOM_MSG_AHEAD_UNKEPT) + peer->eager.rx.mem.slot_count + 1;
}

bool loom_msg_in_window(const loom_peer_t *peer, uint32_t seq)
{
    return seq - peer->msg.rx_seq <= loom_msg_ahead_max(peer);
}


/* hdr is the message's header (an aligned copy), payload its length bytes
 * after it (as they came, at any alignment). */
static bool loom_msg_copy_add(ucs_list_link_t *list, int rail, const loom_wire_send_t *hdr,
                              const void *payload, size_t length)
{
    loom_msg_copy_t *copy = malloc(sizeof(*copy) + sizeof(*hdr) + length);

    if (NULL == copy) {
        return false;
    }
    copy->rail   = rail;
    copy->length = sizeof(*hdr) + length;
    memcpy(copy->data, hdr, sizeof(*hdr));
    memcpy(copy->data + sizeof(*hdr), payload, length);
    ucs_list_add_tail(list, &copy->link);
    return true;
}

static void loom_msg_copies_free(ucs_list_link_t *list)
{
    while (!ucs_list_is_empty(list)) {
        free(ucs_list_extract_head(list, loom_msg_copy_t, link));
    }
}

void loom_msg_new_conn_drop(loom_peer_t *peer)
{
    loom_msg_state_t *msg = &peer->msg;

    loom_msg_copies_free(&msg->new_msgs);
    msg->new_count = 0;
    msg->new_conn  = 0;
}

/*
 * An AM names the sender's connection to us.  The first one counts from 0,
 * as ours does (its first messages may have come by ring, which names no
 * connection).  Another one is taken only if it starts with message 0 and
 * the peer, asked, names it as its connection now (a process that
 * disconnected and connected again): anyone can write a name and a number
 * into one message, and the real peer's next one would then wait for ever.
 * Until the answer, the new connection's messages are kept (as many as may
 * be ahead of order).  True when the message is of the connection in use.
 * hdr is an aligned copy of the message's header, payload the rest as it
 * came.  loom_msg_conn_check: a message not of the connection in use.
 */
static bool loom_msg_conn_other(loom_peer_t *peer, int rail, const loom_wire_send_t *hdr,
                                const void *payload, size_t length)
{
    loom_msg_state_t *msg = &peer->msg;
    uint32_t conn = loom_from_le32(hdr->conn), seq = loom_from_le32(hdr->seq);

    if (0 == msg->rx_conn) {
        msg->rx_conn = conn;
        return true;
    }
    if (conn != msg->new_conn) {
        if (0 != seq) {
            loom_msg_refuse(peer->engine, rail, peer->name, "it names a connection that "
                            "is not the peer's and does not start there");
            return false;
        }
        loom_msg_new_conn_drop(peer); /* the latest claim is the one asked about */
        msg->new_conn = conn;
        loom_msg_conn_ask(peer, rail);
    }
    if (msg->new_count >= loom_msg_ahead_max(peer)) {
        loom_msg_over_limit(peer->engine, rail, peer->name, "a message of a connection "
                            "not confirmed yet");
        return false;
    }
    if (loom_msg_copy_add(&msg->new_msgs, rail, hdr, payload, length)) {
        ++msg->new_count;
    }
    return false;
}

bool loom_msg_conn_check(loom_peer_t *peer, int rail, const loom_wire_send_t *hdr,
                         const void *payload, size_t length)
{
    return loom_from_le32(hdr->conn) == peer->msg.rx_conn ||
           loom_msg_conn_other(peer, rail, hdr, payload, length);
}

/* Send the log again, in order; true once it all went (or cannot go). */
bool loom_msg_resend_progress(loom_peer_t *peer)
{
    loom_msg_state_t *msg = &peer->msg;
    loom_msg_entry_t *entry;
    loom_wire_send_t hdr;
    struct iovec iov;
    int rail, rc;

    if (!msg->resending) {
        return true;
    }
    ucs_list_for_each(entry, &msg->log, link) {
        if (loom_seq_after(msg->resend_seq, entry->seq)) {
            continue;
        }
        rail = peer->am_rail;
        memset(&hdr, 0, sizeof(hdr));
        loom_wire_hdr_fill(&hdr.hdr, LOOM_WIRE_SEND, entry->tag, sizeof(hdr) + entry->length);
        hdr.hdr.flags = LOOM_WIRE_FLAG_KEPT;
        hdr.sender = loom_le64(peer->engine->config.name);
        hdr.seq    = loom_le32(entry->seq);
        hdr.ack    = loom_le32(msg->rx_seq);
        hdr.conn   = loom_le32(msg->tx_conn);
        iov.iov_base = entry->data;
        iov.iov_len  = entry->length;
        rc = loom_am_issue(peer, rail, LOOM_WIRE_SEND, &hdr, &iov, 1);
        if (LOOM_ERR_AGAIN == rc) {
            return false;
        }
        if (LOOM_OK != rc) {
            /* that rail failed too: the log goes again from its start on
             * the next rail, unless every rail is gone (the peer is lost) */
            if (peer->rails[peer->am_rail].failed) {
                msg->resending = false;
                return true;
            }
            return false;
        }
        msg->acked      = msg->rx_seq;
        msg->resend_seq = entry->seq + 1;
        entry->sent     = loom_now_ns();
        entry->rail     = rail;
        ++peer->engine->rails[rail].stats.resent;
    }
    msg->resending = false;
    return true;
}

/*
 * A message from a process not connected yet (the upper layer connects to a
 * peer when it first sends to it): keep a copy, connect to the sender from
 * progress (endpoints cannot be created inside a UCT callback), then
 * deliver it as if it had just come.  While any wait, later messages of
 * every stranger wait behind them, in order; at most LOOM_STRANGERS_MAX
 * (within one progress a real peer sends a handful).  False if its sender
 * cannot be looked for; true if it is kept, or dropped at the bound.
 */
bool loom_msg_stranger_keep(loom_engine_t *engine, int rail, const loom_wire_send_t *hdr,
                            const void *payload, size_t length)
{
    if (NULL == engine->config.peer_find_cb || engine->strangers_running) {
        return false;
    }
    if (engine->strangers_count >= LOOM_STRANGERS_MAX) {
        loom_msg_over_limit(engine, rail, loom_from_le64(hdr->sender),
                            "a message of a process not connected");
        return true;
    }
    if (!loom_msg_copy_add(&engine->strangers, rail, hdr, payload, length)) {
        return false;
    }
    ++engine->strangers_count;
    return true;
}

void loom_msg_strangers_free(loom_engine_t *engine)
{
    loom_msg_copies_free(&engine->strangers);
    engine->strangers_count = 0;
}

void loom_msg_peer_fini(loom_peer_t *peer)
{
    loom_msg_entry_t *entry;

    while (NULL != (entry = loom_msg_log_first(peer))) {
        ucs_list_del(&entry->link);
        --peer->engine->msgs_logged;
        free(entry);
    }
    peer->msg.log_count = 0;
    peer->msg.log_bytes = 0;
    peer->msg.resending = false;
    loom_msg_new_conn_drop(peer);
    loom_msg_owed_forget(peer);
}
