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

/* A copy of a received message (loom_wire_send_t and payload) on a list. */
typedef struct loom_msg_copy {
    struct loom_msg_copy *next;
    int      rail;
    size_t   length;
    uint8_t  data[];
} loom_msg_copy_t;

/* hdr is the message's header (an aligned copy), payload its length bytes
 * after it (as they came, at any alignment). */
static bool loom_msg_copy_add(loom_msg_copy_t **head, loom_msg_copy_t **tail, int rail,
                              const loom_wire_send_t *hdr, const void *payload,
                              size_t length)
{
    loom_msg_copy_t *copy = malloc(sizeof(*copy) + sizeof(*hdr) + length);

    if (NULL == copy) {
        return false;
    }
    copy->next   = NULL;
    copy->rail   = rail;
    copy->length = sizeof(*hdr) + length;
    memcpy(copy->data, hdr, sizeof(*hdr));
    memcpy(copy->data + sizeof(*hdr), payload, length);
    if (NULL == *tail) {
        *head = copy;
    } else {
        (*tail)->next = copy;
    }
    *tail = copy;
    return true;
}

static void loom_msg_copies_free(loom_msg_copy_t **head, loom_msg_copy_t **tail)
{
    loom_msg_copy_t *copy;

    while (NULL != (copy = *head)) {
        *head = copy->next;
        free(copy);
    }
    *tail = NULL;
}

/* Hand each copy to the AM path again, in order, and free it. */
static unsigned loom_msg_copies_replay(loom_engine_t *engine, loom_msg_copy_t *list)
{
    const loom_wire_send_t *hdr;
    loom_msg_copy_t *copy;
    unsigned count = 0;

    while (NULL != (copy = list)) {
        list = copy->next;
        hdr  = (const loom_wire_send_t *)copy->data;
        loom_eager_rx_am(engine, copy->rail, hdr, hdr + 1, copy->length - sizeof(*hdr));
        free(copy);
        ++count;
    }
    return count;
}

static void loom_msg_new_conn_drop(loom_peer_t *peer)
{
    loom_msg_state_t *msg = &peer->msg;

    loom_msg_copies_free(&msg->new_head, &msg->new_tail);
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
 * came.
 */
bool loom_msg_conn_check(loom_peer_t *peer, int rail, const loom_wire_send_t *hdr,
                         const void *payload, size_t length)
{
    loom_msg_state_t *msg = &peer->msg;
    uint32_t conn = loom_from_le32(hdr->conn), seq = loom_from_le32(hdr->seq);

    if (conn == msg->rx_conn) {
        return true;
    }
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
    if (loom_msg_copy_add(&msg->new_head, &msg->new_tail, rail, hdr, payload, length)) {
        ++msg->new_count;
    }
    return false;
}

/* The peer named its connection to us (asked by loom_msg_conn_check): take
 * the new one if it is that, else the claim was false. */
void loom_msg_conn_reply(loom_peer_t *peer, int rail, uint32_t wire_conn)
{
    loom_msg_state_t *msg = &peer->msg;
    uint32_t conn = loom_from_le32(wire_conn);
    loom_msg_copy_t *list = msg->new_head;
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
    loom_eager_rx_held_drop(peer); /* what was kept of the earlier one never comes */
    msg->rx_conn  = conn;
    msg->rx_seq   = 0;
    msg->acked    = 0;
    msg->new_head = NULL;
    msg->new_tail = NULL;
    msg->new_count = 0;
    msg->new_conn = 0;
    (void)loom_msg_copies_replay(peer->engine, list);
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
    if (!loom_msg_copy_add(&engine->strangers_head, &engine->strangers_tail, rail, hdr,
                           payload, length)) {
        return false;
    }
    ++engine->strangers_count;
    return true;
}

int loom_msg_strangers_progress(loom_engine_t *engine)
{
    loom_msg_copy_t *copy;
    const loom_wire_send_t *hdr;
    int count = 0;

    engine->strangers_running = true;
    while (NULL != (copy = engine->strangers_head)) {
        engine->strangers_head = copy->next;
        if (NULL == engine->strangers_head) {
            engine->strangers_tail = NULL;
        }
        --engine->strangers_count;
        hdr = (const loom_wire_send_t *)copy->data;
        (void)loom_peer_of_message(engine, loom_from_le64(hdr->sender));
        copy->next = NULL;
        count += (int)loom_msg_copies_replay(engine, copy);
    }
    engine->strangers_running = false;
    return count;
}

void loom_msg_strangers_free(loom_engine_t *engine)
{
    loom_msg_copies_free(&engine->strangers_head, &engine->strangers_tail);
    engine->strangers_count = 0;
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
    loom_msg_new_conn_drop(peer);
    loom_msg_owed_forget(peer);
}
