/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Layer 1, structures: operations, their queues and the done list; the log
 * of messages kept until acknowledged.
 * What this layer offers to the layers above (transport/layers.map).
 */
#ifndef LOOM_STRUCTURES_H
#define LOOM_STRUCTURES_H

#include "base/loom_base.h"

/* op.c */
void loom_op_start(loom_peer_t *peer, loom_op_t *op, int kind, int stage);
void loom_op_finish(loom_op_t *op, int status);
/* The op is loom's own, started as one the upper layer waits for (a
 * multicast destination served for its requester): its peer owes nothing. */
void loom_op_disown(loom_op_t *op);
int  loom_op_submit(loom_peer_t *peer, loom_op_t *op, int (*advance)(loom_op_t *),
                    void (*fail)(loom_op_t *, int));
void loom_op_queue(loom_peer_t *peer, loom_op_t *op);
void loom_op_queue_front(loom_peer_t *peer, loom_op_t *op);
void loom_push_hold(loom_peer_t *peer, loom_op_t *op);
void loom_push_release_held(loom_peer_t *peer);
void loom_peer_mark_busy(loom_peer_t *peer);
bool loom_op_queue_empty(const loom_peer_t *peer, const loom_op_t *op);
loom_op_t *loom_opq_pop(loom_opq_t *q);
void loom_opq_push_front(loom_opq_t *q, loom_op_t *op);
void loom_opq_take(loom_opq_t *q, bool (*match)(const loom_op_t *op, const void *arg),
                   const void *arg, loom_opq_t *out);
loom_op_t *loom_op_alloc_ctrl(loom_engine_t *engine);
loom_op_t *loom_op_alloc_owned(loom_engine_t *engine);
void loom_op_free_owned(loom_engine_t *engine, loom_op_t *op);
void loom_wire_track(loom_op_t *op);
void loom_wire_untrack(loom_op_t *op);
void loom_serve_bind(loom_op_t *op, loom_region_t *region);
void loom_serve_unbind(loom_op_t *op);
void loom_checked_put_forget(loom_op_t *op);

/* msg_log.c */
/* The oldest message not acknowledged, or NULL. */
static inline loom_msg_entry_t *loom_msg_log_first(loom_peer_t *peer)
{
    return ucs_list_is_empty(&peer->msg.log) ? NULL :
           ucs_list_head(&peer->msg.log, loom_msg_entry_t, link);
}
/* Copies are kept only where another rail could carry them again. */
static inline bool loom_msg_logging(const loom_peer_t *peer)
{
    return peer->engine->config.msg_window > 0 && peer->engine->rail_count > 1;
}

/* New messages wait while the log is full (the peer acknowledges soon:
 * see loom_msg_ack_wanted) or while the log is being sent again; for a
 * send-immediate, full is further off, within bounds. */
static inline bool loom_msg_can_send(const loom_peer_t *peer)
{
    const loom_msg_state_t *msg = &peer->msg;
    unsigned window = peer->engine->config.msg_window;

    if (msg->past_window && msg->log_bytes < LOOM_AM_PAST_WINDOW_BYTES) {
        window += LOOM_AM_PAST_WINDOW_MAX;
    }
    return !msg->resending && (!loom_msg_logging(peer) || msg->log_count < window);
}

/* Half the window waits for an acknowledgement: ask for one at once. */
static inline bool loom_msg_ack_wanted(const loom_peer_t *peer)
{
    return loom_msg_logging(peer) &&
           2 * (peer->msg.log_count + 1) >= peer->engine->config.msg_window;
}

/* The sequence number of the message about to leave, and our cumulative
 * acknowledgement of the peer's messages to go with it. */
static inline void loom_msg_stamp(loom_peer_t *peer, uint32_t *seq, uint32_t *ack)
{
    *seq = loom_le32(peer->msg.tx_seq);
    *ack = loom_le32(peer->msg.rx_seq);
    peer->msg.acked = peer->msg.rx_seq;
}

/* The message stamped last has left: kept until acknowledged if logging. */
void loom_msg_sent(loom_peer_t *peer, int rail, uint8_t tag, const struct iovec *iov,
                   int iovcnt, size_t length);
void loom_msg_acked(loom_peer_t *peer, uint32_t ack);
bool loom_msg_on_rail(const loom_peer_t *peer, int rail);
void loom_msg_resend_start(loom_peer_t *peer);
/* a is after b, in the wrapping sequence numbers of a direction */
static inline bool loom_seq_after(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) > 0;
}

#endif
