/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The log of messages sent to a peer: sequence numbers and acknowledgements
 * stamped on them, each kept until acknowledged, and sent again after a
 * rail that carried them failed.
 */
#include "structures/loom_structures.h"

#include <stdlib.h>
#include <string.h>

/* The message stamped last has left, while logging (loom_msg_sent): keep
 * it until acknowledged. */
static void loom_msg_keep(loom_peer_t *peer, int rail, uint8_t tag,
                          const struct iovec *iov, int iovcnt, size_t length)
{
    loom_msg_state_t *msg = &peer->msg;
    loom_msg_entry_t *entry = malloc(sizeof(*entry) + length);

    if (NULL == entry) {
        loom_log(peer->engine, LOOM_LOG_WARN, "out of memory keeping message %u to "
                 "peer %#llx: it is lost if its rail fails", msg->tx_seq,
                 (unsigned long long)peer->name);
        return;
    }
    entry->sent   = loom_now_ns();
    entry->rail   = rail;
    entry->seq    = msg->tx_seq;
    entry->tag    = tag;
    entry->length = length;
    (void)loom_iov_pack(entry->data, iov, iovcnt);
    ucs_list_add_tail(&msg->log, &entry->link);
    ++msg->log_count;
    msg->log_bytes += length;
    ++peer->engine->msgs_logged;
}

void loom_msg_sent(loom_peer_t *peer, int rail, uint8_t tag, const struct iovec *iov,
                   int iovcnt, size_t length)
{
    if (loom_msg_logging(peer)) {
        loom_msg_keep(peer, rail, tag, iov, iovcnt, length);
    }
    ++peer->msg.tx_seq;
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
    while (NULL != (entry = loom_msg_log_first(peer)) && loom_seq_after(ack, entry->seq)) {
        ucs_list_del(&entry->link);
        --msg->log_count;
        msg->log_bytes -= entry->length;
        --peer->engine->msgs_logged;
        free(entry);
    }
    if (msg->log_count < peer->engine->config.msg_window) {
        msg->window_stalled = false;
    }
}

/* A message not acknowledged yet last left on this rail. */
bool loom_msg_on_rail(const loom_peer_t *peer, int rail)
{
    loom_msg_entry_t *entry;

    ucs_list_for_each(entry, &peer->msg.log, link) {
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

    if (ucs_list_is_empty(&msg->log)) {
        return;
    }
    loom_log(peer->engine, LOOM_LOG_INFO, "sending %u messages to peer %#llx again on "
             "rail %d", msg->log_count, (unsigned long long)peer->name, peer->am_rail);
    msg->resending  = true;
    msg->resend_seq = loom_msg_log_first(peer)->seq;
    msg->asked      = false; /* an answer would describe the copies sent before */
    loom_peer_mark_busy(peer);
}
