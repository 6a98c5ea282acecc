/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Layer 5, messages: the upper layer's messages in order and reliable over
 * rails: sending, delivery, acknowledgements, connections, strangers, re-
 * sending.
 * What this layer offers to the layers above (transport/layers.map).
 */
#ifndef LOOM_MESSAGES_H
#define LOOM_MESSAGES_H

#include "channels/loom_channels.h"

/* msg_ack.c */
void loom_msg_delivered(loom_peer_t *peer, bool ack_now);
void loom_msg_duplicate(loom_peer_t *peer, int rail);
int  loom_msg_progress_ask(loom_peer_t *peer, int rail);
void loom_msg_reply(loom_peer_t *peer, int rail, uint8_t flag);
void loom_msg_ack_soon(loom_peer_t *peer);
void loom_msg_ack_stamp(loom_peer_t *peer, void *msg);
void loom_msg_conn_ask(loom_peer_t *peer, int rail);
int  loom_msg_idle_acks(loom_engine_t *engine);
void loom_msg_owed_forget(loom_peer_t *peer);

/* reliable.c */
/* A copy of a received message (loom_wire_send_t and payload) on a list. */
typedef struct loom_msg_copy {
    ucs_list_link_t link;
    int      rail;
    size_t   length;
    uint8_t  data[];
} loom_msg_copy_t;
void loom_msg_new_conn_drop(loom_peer_t *peer);
/* Where a message of this sequence number stands: < 0 delivered already,
 * 0 next to deliver, > 0 one before it is still missing. */
static inline int loom_msg_order(const loom_peer_t *peer, uint32_t seq)
{
    if (seq == peer->msg.rx_seq) {
        return 0;
    }
    return loom_seq_after(seq, peer->msg.rx_seq) ? 1 : -1;
}
bool loom_msg_resend_progress(loom_peer_t *peer);
void loom_msg_peer_fini(loom_peer_t *peer);
/* Is the message of the peer's connection in use? */
bool loom_msg_conn_check(loom_peer_t *peer, int rail, const loom_wire_send_t *hdr,
                         const void *payload, size_t length);
void loom_msg_refuse(loom_engine_t *engine, int rail, uint64_t sender, const char *why);
void loom_msg_over_limit(loom_engine_t *engine, int rail, uint64_t sender, const char *what);
bool loom_msg_in_window(const loom_peer_t *peer, uint32_t seq);
bool loom_msg_stranger_keep(loom_engine_t *engine, int rail, const loom_wire_send_t *hdr,
                            const void *payload, size_t length);
void loom_msg_strangers_free(loom_engine_t *engine);

/* msg_deliver.c */
void loom_msg_recv(loom_engine_t *engine, int rail, const loom_wire_send_t *hdr,
                   const void *payload, size_t length);
int  loom_msg_deliver_ready(loom_peer_t *peer);
void loom_msg_waiting_drop(loom_peer_t *peer);
void loom_msg_wait_for_full(loom_peer_t *peer, int rail, uint8_t tag, const void *data,
                            size_t length);
void loom_msg_held_drop(loom_peer_t *peer);
void loom_msg_conn_reply(loom_peer_t *peer, int rail, uint32_t conn);
int  loom_msg_strangers_progress(loom_engine_t *engine);

/* msg_ack_rx.c */
ucs_status_t loom_msg_ack_recv(void *arg, void *data, size_t length, unsigned flags);
int  loom_msg_watch(loom_engine_t *engine);

/* msg_send.c */
int  loom_am_send_now(loom_peer_t *peer, uint8_t tag, const struct iovec *iov, int iovcnt,
                      loom_op_t *op);
int  loom_msg_send(loom_peer_t *peer, uint8_t tag, const struct iovec *iov, int iovcnt,
                  loom_op_t *op);
ucs_status_t loom_am_recv_send(void *arg, void *data, size_t length, unsigned flags);
/* An engine message (wire.h) sent from an op the engine owns, in order with
 * the peer's messages: LOOM_INPROGRESS when it was queued, and then done
 * (NULL: free the op) runs with its end and must free the op; otherwise it
 * went, or failed, and nothing runs. */
int  loom_engine_msg_send(loom_peer_t *peer, const void *msg, size_t length,
                          loom_op_cb_t done);

#endif
