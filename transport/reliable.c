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

/* Queue a MSG_ACK on a rail; its value is stamped when it leaves
 * (loom_msg_ack_stamp). */
static int loom_msg_ack_send(loom_peer_t *peer, int rail, uint8_t flags)
{
    loom_wire_msg_ack_t ack;

    memset(&ack, 0, sizeof(ack));
    loom_wire_hdr_fill(&ack.hdr, LOOM_WIRE_MSG_ACK, 0, sizeof(ack));
    ack.hdr.flags = flags;
    ack.sender    = loom_le64(peer->engine->config.name);
    return loom_ctrl_send(peer, rail, &ack, sizeof(ack));
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
}

/*
 * A rail can die without telling (a TCP path whose link went down errors
 * only once the kernel gives up, minutes later by default), and take
 * messages with it, with nothing striped in flight for the rail watch to
 * see.  A message not acknowledged for rail_timeout_ms makes us ask the
 * peer for an acknowledgement on another rail; if the peer answers there
 * without having the message, its rail lost it: the rail is failed for the
 * peer, which sends the log again on the rail that takes over.  A peer that
 * does not progress does not answer, and nothing is failed.
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
        return; /* it arrived, or it was sent again since we asked */
    }
    if (peer->rails[entry->rail].failed) {
        if (!msg->resending) {
            loom_msg_resend_start(peer); /* its rail is gone: send it again */
        }
        return;
    }
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
    if (!loom_wire_hdr_check(rail, data, length, LOOM_WIRE_MSG_ACK, sizeof(ack))) {
        return UCS_OK;
    }
    memcpy(&ack, data, sizeof(ack));
    peer = loom_peer_lookup(rail->engine, loom_from_le64(ack.sender));
    if (NULL == peer) {
        ++rail->stats.refused;
        loom_log(rail->engine, LOOM_LOG_WARN, "refused a message acknowledgement from "
                 "process %#llx, not connected", (unsigned long long)loom_from_le64(ack.sender));
        return UCS_OK;
    }
    loom_msg_acked(peer, ack.ack);
    if (ack.hdr.flags & LOOM_WIRE_FLAG_ACK_ASK) {
        (void)loom_msg_ack_send(peer, rail->index, LOOM_WIRE_FLAG_ACK_REPLY);
    }
    if (ack.hdr.flags & LOOM_WIRE_FLAG_ACK_REPLY) {
        loom_msg_watch_reply(peer, loom_from_le32(ack.ack));
    }
    return UCS_OK;
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
}
