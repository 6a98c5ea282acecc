/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Acknowledgements that come in: what the peer received (the log lets go
 * of it), the answers to our questions, and the watch that asks a silent
 * peer on another rail before a rail is taken for dead.
 */
#include "messages/loom_messages.h"

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
    loom_msg_entry_t *entry = loom_msg_log_first(peer);
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

int loom_msg_watch(loom_engine_t *engine)
{
    uint64_t limit = engine->config.rail_timeout_ms * 1000000ull, now;
    loom_msg_entry_t *entry;
    loom_peer_t *peer;
    size_t pos = 0;
    int rail;

    if (0 == limit || 0 == engine->msgs_logged) {
        return 0;
    }
    now = loom_engine_clock(engine);
    if (now < engine->next_msg_watch) {
        return 0;
    }
    engine->next_msg_watch = now + limit / 8;
    while (NULL != (peer = loom_hash_next(&engine->peers, &pos))) {
        entry = loom_msg_log_first(peer);
        if (NULL == entry || peer->msg.resending || loom_elapsed_ns(now, entry->sent) < limit ||
            (peer->msg.asked && loom_elapsed_ns(now, peer->msg.asked_time) < limit) ||
            (peer->msg.ask_again && now < peer->msg.ask_after) ||
            (rail = loom_peer_other_rail(peer, entry->rail)) < 0) {
            continue;
        }
        if (LOOM_OK == loom_msg_progress_ask(peer, rail)) {
            peer->msg.asked      = true;
            peer->msg.asked_time = now;
            peer->msg.asked_seq  = entry->seq;
            peer->msg.asked_rail = entry->rail;
        }
    }
    return 0;
}

ucs_status_t loom_msg_ack_recv(void *arg, void *data, size_t length, unsigned flags)
{
    loom_rail_t *rail = arg;
    loom_wire_msg_ack_t ack;
    loom_peer_t *peer;

    (void)flags;
    peer = loom_ctrl_recv_peer(rail, data, length, LOOM_WIRE_MSG_ACK, &ack, sizeof(ack),
                               NULL /* acks cross a disconnect (seen at MPI_Finalize) */);
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
