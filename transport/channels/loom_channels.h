/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Layer 4, channels: the ways a message leaves and arrives: the eager ring
 * (both sides) and plain active messages.
 * What this layer offers to the layers above (transport/layers.map).
 */
#ifndef LOOM_CHANNELS_H
#define LOOM_CHANNELS_H

#include "memory/loom_memory.h"

/* am_chan.c */
int  loom_am_chan_send(loom_peer_t *peer, loom_chan_out_t *out);

/* eager_tx.c: the sending side */
int    loom_eager_send(struct loom_peer *peer, loom_chan_out_t *out);
void   loom_eager_req_stamp(struct loom_peer *peer, void *msg);
int    loom_eager_tx_request(struct loom_peer *peer, unsigned phase);
int    loom_eager_tx_request_slots(struct loom_peer *peer, unsigned phase, uint32_t slots);
uint32_t loom_eager_start_slots(const struct loom_engine *engine, unsigned phase);
void   loom_eager_tx_poll(struct loom_peer *peer, uint64_t now);
void   loom_eager_tx_drop(struct loom_peer *peer);
void   loom_eager_tx_rail_closed(struct loom_peer *peer, int rail);
void   loom_eager_tx_forget_lost(struct loom_peer *peer);
ucs_status_t loom_eager_note_recv(void *arg, void *data, size_t length, unsigned flags);

/* eager_rx.c: the receiving side */
ucs_status_t loom_eager_req_recv(void *arg, void *data, size_t length, unsigned flags);
void   loom_eager_rx_poll(struct loom_peer *peer);
int    loom_eager_rx_next(struct loom_peer *peer, loom_chan_in_t *in);
void   loom_eager_rx_done(struct loom_peer *peer, loom_chan_in_t *in);
void   loom_eager_rx_drop(struct loom_peer *peer);
void   loom_eager_rx_hint(struct loom_peer *peer, unsigned phase);
bool   loom_eager_rx_quiet_peer(struct loom_peer *peer);
void   loom_eager_note_stamp(struct loom_peer *peer, void *msg);

#endif
