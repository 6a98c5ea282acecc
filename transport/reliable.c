/*
 * Upper-layer messages that survive a rail failure.  Every message of a
 * direction (by AM or by eager ring) carries a sequence number; the
 * receiver delivers in that order and once each, and acknowledges what it
 * delivered, cumulatively, on messages going the other way or in a
 * MSG_ACK of its own.  With several rails the sender keeps a copy of every
 * message until it is acknowledged: when the rail carrying a peer's
 * messages fails, they are all sent again on the rail that takes over,
 * before anything new, and the receiver drops the ones it already had.
 */
#include "loom_internal.h"

#include <stdlib.h>
#include <string.h>

/* Copies are kept only where another rail could carry them again. */
bool loom_msg_logging(const loom_peer_t *peer)
{
    return peer->engine->config.msg_window > 0 && peer->engine->rail_count > 1;
}

/* New messages wait while the log is full (the peer acknowledges soon:
 * see loom_msg_ack_wanted) or while the log is being sent again. */
bool loom_msg_can_send(const loom_peer_t *peer)
{
    const loom_msg_state_t *msg = &peer->msg;

    return !msg->resending &&
           (!loom_msg_logging(peer) || msg->log_count < peer->engine->config.msg_window);
}

/* Half the window waits for an acknowledgement: ask for one at once. */
bool loom_msg_ack_wanted(const loom_peer_t *peer)
{
    return loom_msg_logging(peer) &&
           2 * (peer->msg.log_count + 1) >= peer->engine->config.msg_window;
}

/* The sequence number of the message about to leave, and our cumulative
 * acknowledgement of the peer's messages to go with it. */
void loom_msg_stamp(loom_peer_t *peer, uint32_t *seq, uint32_t *ack)
{
    *seq = loom_le32(peer->msg.tx_seq);
    *ack = loom_le32(peer->msg.rx_seq);
    peer->msg.acked = peer->msg.rx_seq;
}

/* The message stamped last has left: keep it until acknowledged. */
void loom_msg_sent(loom_peer_t *peer, int rail, uint8_t tag, const struct iovec *iov,
                   int iovcnt, size_t length)
{
    loom_msg_state_t *msg = &peer->msg;
    loom_msg_entry_t *entry;

    if (loom_msg_logging(peer)) {
        entry = malloc(sizeof(*entry) + length);
        if (NULL == entry) {
            loom_log(peer->engine, LOOM_LOG_WARN, "out of memory keeping message %u to "
                     "peer %#llx: it is lost if its rail fails", msg->tx_seq,
                     (unsigned long long)peer->name);
        } else {
            entry->next   = NULL;
            entry->sent   = loom_now_ns();
            entry->rail   = rail;
            entry->seq    = msg->tx_seq;
            entry->tag    = tag;
            entry->length = length;
            (void)loom_iov_pack(entry->data, iov, iovcnt);
            if (NULL == msg->log_tail) {
                msg->log_head = entry;
            } else {
                msg->log_tail->next = entry;
            }
            msg->log_tail = entry;
            ++msg->log_count;
            ++peer->engine->msgs_logged;
        }
    }
    ++msg->tx_seq;
}

/* The peer delivered every message before ack (little-endian). */
void loom_msg_acked(loom_peer_t *peer, uint32_t wire_ack)
{
    loom_msg_state_t *msg = &peer->msg;
    uint32_t ack = loom_from_le32(wire_ack);
    loom_msg_entry_t *entry;

    if (loom_seq_after(ack, msg->tx_seq)) {
        ++peer->engine->rails[peer->am_rail].stats.refused;
        loom_log(peer->engine, LOOM_LOG_WARN, "peer %#llx acknowledged message %u, only %u "
                 "were sent; ignored", (unsigned long long)peer->name, ack, msg->tx_seq);
        return;
    }
    while (NULL != (entry = msg->log_head) && loom_seq_after(ack, entry->seq)) {
        msg->log_head = entry->next;
        if (NULL == msg->log_head) {
            msg->log_tail = NULL;
        }
        --msg->log_count;
        --peer->engine->msgs_logged;
        free(entry);
    }
}

/*
 * An AM names the sender's connection to us.  The first one counts from 0,
 * as ours does (its first messages may have come by ring, which names no
 * connection).  Another one (the sender connected to us again after a
 * disconnect) counts from the message that shows it: what was kept of the
 * earlier connection can never be delivered.
 */
void loom_msg_conn_check(loom_peer_t *peer, uint32_t wire_conn, uint32_t wire_seq)
{
    loom_msg_state_t *msg = &peer->msg;
    uint32_t conn = loom_from_le32(wire_conn);

    if (conn == msg->rx_conn) {
        return;
    }
    if (0 == msg->rx_conn) {
        msg->rx_conn = conn;
        return;
    }
    loom_log(peer->engine, LOOM_LOG_INFO, "peer %#llx connected to us again",
             (unsigned long long)peer->name);
    loom_eager_rx_held_drop(peer);
    msg->rx_conn = conn;
    msg->rx_seq  = loom_from_le32(wire_seq);
    msg->acked   = msg->rx_seq;
}

/* Where a message of this sequence number stands: < 0 delivered already,
 * 0 next to deliver, > 0 one before it is still missing. */
int loom_msg_order(const loom_peer_t *peer, uint32_t seq)
{
    if (seq == peer->msg.rx_seq) {
        return 0;
    }
    return loom_seq_after(seq, peer->msg.rx_seq) ? 1 : -1;
}

/* A message not acknowledged yet last left on this rail. */
bool loom_msg_on_rail(const loom_peer_t *peer, int rail)
{
    const loom_msg_entry_t *entry;

    for (entry = peer->msg.log_head; NULL != entry; entry = entry->next) {
        if (entry->rail == rail) {
            return true;
        }
    }
    return false;
}

/* The rail carrying our messages to the peer failed: what it may have lost
 * goes again, first thing, on the rail that took over. */
void loom_msg_resend_start(loom_peer_t *peer)
{
    loom_msg_state_t *msg = &peer->msg;

    if (NULL == msg->log_head) {
        return;
    }
    loom_log(peer->engine, LOOM_LOG_INFO, "sending %u messages to peer %#llx again on "
             "rail %d", msg->log_count, (unsigned long long)peer->name, peer->am_rail);
    msg->resending  = true;
    msg->resend_seq = msg->log_head->seq;
    msg->asked      = false; /* an answer would describe the copies sent before */
    loom_peer_mark_busy(peer);
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
    for (entry = msg->log_head; NULL != entry; entry = entry->next) {
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
 * every stranger wait behind them, in order.
 */
typedef struct loom_msg_stranger {
    struct loom_msg_stranger *next;
    int      rail;
    size_t   length;
    uint8_t  data[]; /* loom_wire_send_t and payload */
} loom_msg_stranger_t;

bool loom_msg_stranger_keep(loom_engine_t *engine, int rail, const void *msg, size_t length)
{
    loom_msg_stranger_t *stranger;

    if (NULL == engine->config.peer_find_cb || engine->strangers_running) {
        return false;
    }
    stranger = malloc(sizeof(*stranger) + length);
    if (NULL == stranger) {
        return false;
    }
    stranger->next   = NULL;
    stranger->rail   = rail;
    stranger->length = length;
    memcpy(stranger->data, msg, length);
    if (NULL == engine->strangers_tail) {
        engine->strangers_head = stranger;
    } else {
        engine->strangers_tail->next = stranger;
    }
    engine->strangers_tail = stranger;
    return true;
}

int loom_msg_strangers_progress(loom_engine_t *engine)
{
    loom_msg_stranger_t *stranger;
    const loom_wire_send_t *hdr;
    int count = 0;

    engine->strangers_running = true;
    while (NULL != (stranger = engine->strangers_head)) {
        engine->strangers_head = stranger->next;
        if (NULL == engine->strangers_head) {
            engine->strangers_tail = NULL;
        }
        hdr = (const loom_wire_send_t *)stranger->data;
        (void)loom_peer_of_message(engine, loom_from_le64(hdr->sender));
        loom_eager_rx_am(engine, stranger->rail, hdr, hdr + 1, stranger->length - sizeof(*hdr));
        free(stranger);
        ++count;
    }
    engine->strangers_running = false;
    return count;
}

void loom_msg_strangers_free(loom_engine_t *engine)
{
    loom_msg_stranger_t *stranger;

    while (NULL != (stranger = engine->strangers_head)) {
        engine->strangers_head = stranger->next;
        free(stranger);
    }
    engine->strangers_tail = NULL;
}

void loom_msg_peer_fini(loom_peer_t *peer)
{
    loom_msg_entry_t *entry;

    while (NULL != (entry = peer->msg.log_head)) {
        peer->msg.log_head = entry->next;
        --peer->engine->msgs_logged;
        free(entry);
    }
    peer->msg.log_tail  = NULL;
    peer->msg.log_count = 0;
    peer->msg.resending = false;
    loom_msg_owed_forget(peer);
}
