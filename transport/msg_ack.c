/*
 * Acknowledgements of upper-layer messages (the sequence numbers and the
 * log they free are in reliable.c).  They ride on messages going the other
 * way, or go in a MSG_ACK of their own: when the sender asks, every
 * quarter window, and once a stream from a sender that keeps its messages
 * goes idle, so the tail of a burst does not stay kept until the next
 * burst.  A rail that loses messages silently is found by asking for an
 * acknowledgement on another rail (the message watch).
 */
#include "loom_internal.h"

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
static void loom_msg_reply(loom_peer_t *peer, int rail, uint8_t flag)
{
    if (0 == peer->msg.reply_flags && LOOM_OK != loom_msg_ack_send(peer, rail, flag)) {
        return;
    }
    peer->msg.reply_flags |= flag;
}

/* Ask the peer which connection to us is its own (loom_msg_conn_check). */
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
void loom_msg_idle_acks(loom_engine_t *engine)
{
    loom_msg_state_t *msg, *tmp;
    uint64_t now;

    if (ucs_list_is_empty(&engine->acks_owed) || 0 != (++engine->idle_ack_tick & 63)) {
        return;
    }
    now = loom_now_ns();
    if (now < engine->next_idle_acks) {
        return;
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

/*
 * A rail can die without telling (a TCP path whose link went down errors
 * only once the kernel gives up, minutes later by default), and take
 * messages with it, with nothing striped in flight for the rail watch to
 * see.  A message not acknowledged for rail_timeout_ms makes us ask the
 * peer for an acknowledgement on another rail; if the peer answers there
 * without having the message, twice, half a timeout apart, its rail lost
 * it: the rail is failed for the peer, which sends the log again on the
 * rail that takes over.  Twice, because a peer that comes back from a long
 * computation may read the question before the message, still queued on
 * the other rail.  A peer that does not progress does not answer, and
 * nothing is failed.
 */
static void loom_msg_watch_reply(loom_peer_t *peer, uint32_t ack)
{
    loom_msg_state_t *msg = &peer->msg;
    loom_msg_entry_t *entry = msg->log_head;
    loom_engine_t *engine = peer->engine;

    if (!msg->asked) {
        return;
    }
    msg->asked = false;
    if (NULL == entry || entry->seq != msg->asked_seq || loom_seq_after(ack, entry->seq) ||
        entry->rail != msg->asked_rail || entry->sent > msg->asked_time) {
        msg->ask_again = false;
        return; /* it arrived, or it was sent again since we asked */
    }
    if (peer->rails[entry->rail].failed) {
        msg->ask_again = false;
        if (!msg->resending) {
            loom_msg_resend_start(peer); /* its rail is gone: send it again */
        }
        return;
    }
    if (!msg->ask_again) {
        msg->ask_again = true;
        msg->ask_after = loom_now_ns() + engine->config.rail_timeout_ms * 500000ull;
        return;
    }
    msg->ask_again = false;
    loom_log(engine, LOOM_LOG_ERROR, "rail %s:%s to peer %#llx: message %u, sent %llu ms "
             "ago, did not arrive, while the peer answers on other rails; taking the rail "
             "out of use", engine->rails[entry->rail].info.tl_name,
             engine->rails[entry->rail].info.dev_name, (unsigned long long)peer->name,
             entry->seq, (unsigned long long)((loom_now_ns() - entry->sent) / 1000000));
    loom_peer_fail_rail(peer, entry->rail, UCS_ERR_TIMED_OUT);
}

void loom_msg_watch(loom_engine_t *engine)
{
    uint64_t limit = engine->config.rail_timeout_ms * 1000000ull, now;
    loom_msg_entry_t *entry;
    loom_peer_t *peer;
    size_t pos = 0;
    int rail;

    /* no clock read on every call of the latency path */
    if (0 == limit || 0 == engine->msgs_logged || 0 != (++engine->msg_watch_tick & 63)) {
        return;
    }
    now = loom_now_ns();
    if (now < engine->next_msg_watch) {
        return;
    }
    engine->next_msg_watch = now + limit / 8;
    while (NULL != (peer = loom_hash_next(&engine->peers, &pos))) {
        entry = peer->msg.log_head;
        if (NULL == entry || peer->msg.resending || now - entry->sent < limit ||
            (peer->msg.asked && now - peer->msg.asked_time < limit) ||
            (peer->msg.ask_again && now < peer->msg.ask_after) ||
            (rail = loom_peer_other_rail(peer, entry->rail)) < 0) {
            continue;
        }
        if (LOOM_OK == loom_msg_ack_send(peer, rail, LOOM_WIRE_FLAG_ACK_ASK)) {
            peer->msg.asked      = true;
            peer->msg.asked_time = now;
            peer->msg.asked_seq  = entry->seq;
            peer->msg.asked_rail = entry->rail;
        }
    }
}

ucs_status_t loom_msg_ack_recv(void *arg, void *data, size_t length, unsigned flags)
{
    loom_rail_t *rail = arg;
    loom_wire_msg_ack_t ack;
    loom_peer_t *peer;

    (void)flags;
    peer = loom_ctrl_recv_peer(rail, data, length, LOOM_WIRE_MSG_ACK, &ack, sizeof(ack),
                               "message acknowledgement");
    if (NULL == peer) {
        return UCS_OK;
    }
    if (ack.hdr.flags & LOOM_WIRE_FLAG_CONN_REPLY) {
        loom_msg_conn_reply(peer, rail->index, ack.conn);
    }
    if (ack.conn != loom_le32(peer->msg.rx_conn) && 0 != peer->msg.rx_conn) {
        return UCS_OK; /* of another connection of the peer: its ack is not for ours */
    }
    loom_msg_acked(peer, ack.ack);
    if (ack.hdr.flags & LOOM_WIRE_FLAG_ACK_ASK) {
        loom_msg_reply(peer, rail->index, LOOM_WIRE_FLAG_ACK_REPLY);
    }
    if (ack.hdr.flags & LOOM_WIRE_FLAG_CONN_ASK) {
        loom_msg_reply(peer, rail->index, LOOM_WIRE_FLAG_CONN_REPLY);
    }
    if (ack.hdr.flags & LOOM_WIRE_FLAG_ACK_REPLY) {
        peer->msg.last_reply = loom_now_ns(); /* it progresses (the rail watch) */
        loom_msg_watch_reply(peer, loom_from_le32(ack.ack));
    }
    return UCS_OK;
}
