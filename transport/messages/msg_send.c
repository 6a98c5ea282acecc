/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Sending the upper layer's messages: through the peer's eager ring when it
 * takes them, else by active message, in order behind what is queued; and
 * receiving those that come by active message.
 */
#include "messages/loom_messages.h"

#include <string.h>

/* Send one upper-layer message now, by the first channel that takes it
 * (the peer's eager ring, else AM).  Nothing new goes while earlier
 * messages are being sent again, or while too many wait for an
 * acknowledgement; when half of those wait, the message asks for one at
 * once (which only AM carries). */
int loom_am_send_now(loom_peer_t *peer, uint8_t tag, const struct iovec *iov, int iovcnt,
                     loom_op_t *op)
{
    loom_engine_t *engine = peer->engine;
    loom_chan_out_t out;
    loom_rail_stats_t *stats;
    int rc = LOOM_ERR_AGAIN, i;

    if (!loom_msg_can_send(peer)) {
        return LOOM_ERR_AGAIN;
    }
    if (engine->config.am_round_robin) {
        loom_peer_next_am_rail(peer); /* the receiver orders them again */
    }
    out.tag     = tag;
    out.iov     = iov;
    out.iovcnt  = iovcnt;
    out.length  = loom_iov_length(iov, iovcnt);
    out.ack_now = loom_msg_ack_wanted(peer);
    out.op      = op;
    out.rail    = -1;
    for (i = 0; i < engine->chan_count && LOOM_ERR_AGAIN == rc; ++i) {
        rc = engine->chans[i]->send(peer, &out);
    }
    if (LOOM_OK == rc || LOOM_INPROGRESS == rc) { /* INPROGRESS: op completes later */
        stats = &engine->rails[out.rail].stats;
        loom_msg_sent(peer, out.rail, tag, iov, iovcnt, out.length);
        stats->bytes_sent += out.length;
        ++stats->messages_sent;
    }
    return rc;
}

/* loom_am_send for any tag: the engine's own messages too. */
int loom_msg_send(loom_peer_t *peer, uint8_t tag, const struct iovec *iov, int iovcnt,
                  loom_op_t *op)
{
    int rc;

    if (loom_iov_length(iov, iovcnt) > peer->engine->rails[peer->am_rail].info.am_max) {
        return LOOM_ERR_INVALID;
    }
    /* Behind queued messages to the same peer: keep the order. */
    rc = ucs_list_is_empty(&peer->queue) ? loom_am_send_now(peer, tag, iov, iovcnt, op)
                                    : LOOM_ERR_AGAIN;
    if ((LOOM_ERR_AGAIN != rc && LOOM_INPROGRESS != rc) || NULL == op) {
        return rc;
    }
    loom_op_start(peer, op, LOOM_OP_AM, LOOM_STAGE_SEND);
    op->tag    = tag;
    op->iov    = iov;
    op->iovcnt = iovcnt;
    if (LOOM_INPROGRESS == rc) {
        loom_am_in_flight(op); /* sent, its data still read (op->rail set) */
    } else {
        loom_op_queue(peer, op);
    }
    return LOOM_INPROGRESS;
}

static void loom_engine_msg_free(loom_op_t *op, int status)
{
    (void)status;
    loom_op_free_owned(op->peer->engine, op);
}

int loom_engine_msg_send(loom_peer_t *peer, const void *msg, size_t length,
                         loom_op_cb_t done)
{
    loom_op_t *op;
    int rc;

    if (length > LOOM_OP_MSG_MAX) {
        return LOOM_ERR_INVALID;
    }
    op = loom_op_alloc_owned(peer->engine);
    if (NULL == op) {
        return LOOM_ERR_NOMEM;
    }
    memcpy(op->msg, msg, length);
    op->cb               = (NULL != done) ? done : loom_engine_msg_free;
    op->msg_len          = length;
    op->msg_iov.iov_base = op->msg;
    op->msg_iov.iov_len  = length;
    rc = loom_msg_send(peer, LOOM_WIRE_TAG_ENGINE, &op->msg_iov, 1, op);
    if (LOOM_INPROGRESS != rc) { /* sent at once (or failed with its peer): no callback */
        loom_op_free_owned(peer->engine, op);
    }
    return rc;
}

int loom_am_send(loom_peer_t *peer, uint8_t tag, const struct iovec *iov, int iovcnt,
                 loom_op_t *op)
{
    if (LOOM_WIRE_TAG_ENGINE == tag) {
        loom_log(peer->engine, LOOM_LOG_ERROR, "message tag %u is loom's own", tag);
        return LOOM_ERR_INVALID;
    }
    return loom_msg_send(peer, tag, iov, iovcnt, op);
}

ucs_status_t loom_am_recv_send(void *arg, void *data, size_t length, unsigned flags)
{
    loom_rail_t *rail = arg;
    const loom_wire_send_t *hdr = data;

    (void)flags;
    if (!loom_wire_hdr_check(rail, data, length, LOOM_WIRE_SEND, sizeof(*hdr))) {
        return UCS_OK;
    }
    rail->stats.bytes_received += length - sizeof(*hdr);
    ++rail->stats.messages_received;
    loom_msg_recv(rail->engine, rail->index, hdr, hdr + 1, length - sizeof(*hdr));
    return UCS_OK;
}
