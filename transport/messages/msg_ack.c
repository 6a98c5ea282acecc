/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Acknowledgements of upper-layer messages (the sequence numbers and the
 * log they free are in reliable.c).  They ride on messages going the other
 * way, or go in a MSG_ACK of their own: when the sender asks, every
 * quarter window, and once a stream from a sender that keeps its messages
 * goes idle, so the tail of a burst does not stay kept until the next
 * burst.  A rail that loses messages silently is found by asking for an
 * acknowledgement on another rail (the message watch).
 */
#include "messages/loom_messages.h"

#include <string.h>

/* An acknowledgement owed to a sender that keeps its messages goes once
 * no new message came from it for one to two periods of this. */
#define LOOM_IDLE_ACK_NS 1000000ull

/* Queue a MSG_ACK on a rail; its value is stamped when it leaves
 * (loom_msg_ack_stamp). */
static int loom_msg_ack_send(loom_peer_t *peer, int rail, uint8_t flags)
{
    loom_wire_msg_ack_t ack;

    memset(&ack, 0, sizeof(ack));
    loom_wire_hdr_fill(&ack.hdr, LOOM_WIRE_MSG_ACK, 0, sizeof(ack));
    ack.hdr.flags = flags;
    ack.sender    = loom_le64(peer->engine->config.name);
    ack.conn      = loom_le32(peer->msg.tx_conn);
    return loom_ctrl_send(peer, rail, &ack, sizeof(ack));
}

#define LOOM_MSG_REPLY_FLAGS (LOOM_WIRE_FLAG_ACK_REPLY | LOOM_WIRE_FLAG_CONN_REPLY)

/* Answer an ask of the peer, on the rail it came by: one answer waits at a
 * time and says, as it leaves, what holds then, for every ask that came
 * meanwhile (so a peer cannot make us queue one per ask). */
void loom_msg_reply(loom_peer_t *peer, int rail, uint8_t flag)
{
    if (0 == peer->msg.reply_flags && LOOM_OK != loom_msg_ack_send(peer, rail, flag)) {
        return;
    }
    peer->msg.reply_flags |= flag;
}

/* Ask the peer which connection to us is its own (a message named another
 * that starts there, reliable.c). */
void loom_msg_conn_ask(loom_peer_t *peer, int rail)
{
    if (!peer->msg.conn_asking &&
        LOOM_OK == loom_msg_ack_send(peer, rail, LOOM_WIRE_FLAG_CONN_ASK)) {
        peer->msg.conn_asking = true;
    }
}

/* Ask the peer for an answer, which only a peer that progresses gives. */
int loom_msg_progress_ask(loom_peer_t *peer, int rail)
{
    return loom_msg_ack_send(peer, rail, LOOM_WIRE_FLAG_ACK_ASK);
}

void loom_msg_ack_soon(loom_peer_t *peer)
{
    if (!peer->msg.ack_queued && LOOM_OK == loom_msg_ack_send(peer, peer->am_rail, 0)) {
        peer->msg.ack_queued = true;
    }
}

/* One more message delivered.  Acknowledge when the sender asked, or, if
 * it keeps its messages, when a quarter of our window waits (16 when we
 * keep none ourselves). */
void loom_msg_delivered(loom_peer_t *peer, bool ack_now)
{
    loom_msg_state_t *msg = &peer->msg;
    unsigned every = peer->engine->config.msg_window / 4;

    ++msg->rx_seq;
    if (ack_now || (msg->rx_kept && (msg->rx_seq - msg->acked) >= (every ? every : 16))) {
        loom_msg_ack_soon(peer);
    }
    /* owed and not on its way (or it could not be queued): the sweep sends it */
    if (msg->rx_kept && !msg->ack_owed && !msg->ack_queued) {
        msg->ack_owed  = true;
        msg->owed_mark = msg->rx_seq - 1; /* not seen by a sweep yet */
        ucs_list_add_tail(&peer->engine->acks_owed, &msg->owed_link);
    }
}

/*
 * Senders whose last messages we did not acknowledge: a sweep every
 * LOOM_IDLE_ACK_NS acknowledges those from which nothing came since the
 * sweep before.  Streams still running are acknowledged every quarter
 * window anyway.
 */
int loom_msg_idle_acks(loom_engine_t *engine)
{
    loom_msg_state_t *msg, *tmp;
    uint64_t now;

    if (ucs_list_is_empty(&engine->acks_owed)) {
        return 0;
    }
    now = loom_engine_clock(engine);
    if (now < engine->next_idle_acks) {
        return 0;
    }
    engine->next_idle_acks = now + LOOM_IDLE_ACK_NS;
    ucs_list_for_each_safe(msg, tmp, &engine->acks_owed, owed_link) {
        loom_peer_t *peer = ucs_container_of(msg, loom_peer_t, msg);

        if (msg->acked == msg->rx_seq) {
            loom_msg_owed_forget(peer); /* acknowledged meanwhile */
        } else if (msg->owed_mark != msg->rx_seq) {
            msg->owed_mark = msg->rx_seq; /* still coming */
        } else {
            loom_msg_ack_soon(peer);
            if (msg->ack_queued) {
                loom_msg_owed_forget(peer);
            } /* else no room to send: the next sweep tries again */
        }
    }
    return 0;
}

void loom_msg_owed_forget(loom_peer_t *peer)
{
    if (peer->msg.ack_owed) {
        ucs_list_del(&peer->msg.owed_link);
        peer->msg.ack_owed = false;
    }
}

/* A message came a second time: the sender re-sent it, so it may not have
 * our acknowledgement; say again what we have. */
void loom_msg_duplicate(loom_peer_t *peer, int rail)
{
    ++peer->engine->rails[rail].stats.duplicates;
    loom_msg_ack_soon(peer);
}

void loom_msg_ack_stamp(loom_peer_t *peer, void *wire)
{
    loom_wire_msg_ack_t *ack = wire;

    ack->ack             = loom_le32(peer->msg.rx_seq);
    peer->msg.acked      = peer->msg.rx_seq;
    peer->msg.ack_queued = false;
    if (ack->hdr.flags & LOOM_MSG_REPLY_FLAGS) {
        ack->hdr.flags        = peer->msg.reply_flags;
        peer->msg.reply_flags = 0;
    }
    if (ack->hdr.flags & LOOM_WIRE_FLAG_CONN_ASK) {
        peer->msg.conn_asking = false;
    }
}
