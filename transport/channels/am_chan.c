/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Plain active messages as a channel (chan.h): the message goes whole in
 * one AM on the peer's message rail, its header naming the sender, its
 * connection and number, and carrying the credits of our ring back.  It
 * takes what the ring does not.
 */
#include "channels/loom_channels.h"

/* Large messages whose sender waits for their completion leave from its
 * memory, unless they are kept to be sent again (several rails), which
 * copies them anyway. */
static bool loom_am_chan_zcopy(const loom_peer_t *peer, int rail, const loom_chan_out_t *out)
{
    const loom_engine_t *engine = peer->engine;

    return NULL != out->op && (size_t)out->iovcnt <= engine->rails[rail].am_zcopy_iov &&
           0 != engine->config.am_zcopy_min && out->length >= engine->config.am_zcopy_min &&
           !loom_msg_logging(peer);
}

int loom_am_chan_send(loom_peer_t *peer, loom_chan_out_t *out)
{
    int rail = peer->am_rail, rc;
    loom_wire_send_t hdr;
    bool zcopy;

    loom_wire_hdr_fill(&hdr.hdr, LOOM_WIRE_SEND, out->tag, sizeof(hdr) + out->length);
    hdr.hdr.flags = (out->ack_now ? LOOM_WIRE_FLAG_ACK_REQ : 0) |
                    (loom_msg_logging(peer) ? LOOM_WIRE_FLAG_KEPT : 0);
    hdr.sender   = loom_le64(peer->engine->config.name);
    loom_msg_stamp(peer, &hdr.seq, &hdr.ack);
    hdr.credits  = loom_le16(loom_eager_rx_credits_take(peer));
    hdr.reserved = 0;
    hdr.conn     = loom_le32(peer->msg.tx_conn);
    zcopy = loom_am_chan_zcopy(peer, rail, out);
    rc = zcopy ? loom_am_issue_zcopy(peer, rail, &hdr, out->iov, out->iovcnt, out->op)
             : loom_am_issue(peer, rail, LOOM_WIRE_SEND, &hdr, out->iov, out->iovcnt);
    if (LOOM_OK == rc || LOOM_INPROGRESS == rc) {
        out->rail = rail;
        peer->engine->rails[rail].stats.messages_zcopy += zcopy;
        ++peer->eager.tx.msgs; /* the ring policy counts every message */
    } else {
        loom_eager_rx_credits_untake(peer, hdr.credits); /* they go with a later one */
    }
    return rc;
}
