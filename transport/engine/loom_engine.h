/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Layer 7, engine: progress and its pollers, sleeping until a rail has
 * work, connecting peers, teardown, the composition.
 * What this layer offers to the layers above (transport/layers.map).
 */
#ifndef LOOM_ENGINE_H
#define LOOM_ENGINE_H

#include "managers/loom_managers.h"

/* progress.c */
int  loom_op_advance(loom_op_t *op);
int  loom_progress_queues(loom_engine_t *engine);
void loom_progress_register(loom_engine_t *engine, loom_poller_fn_t poller);
void loom_progress_register_timer(loom_engine_t *engine, loom_poller_fn_t timer);

/* teardown.c: loom_peer_disconnect, loom_peer_flush and loom_mem_deregister
 * (transport.h) */

/* peer.c */
ucs_status_t loom_connect_recv(void *arg, void *data, size_t length, unsigned flags);
int  loom_early_connects_progress(loom_engine_t *engine);
int  loom_connect_send(loom_peer_t *peer, int rail_index, bool again);
ucs_status_t loom_bye_recv(void *arg, void *data, size_t length, unsigned flags);

/* connect_retry.c */
int  loom_connect_retry_progress(loom_engine_t *engine);

/* event_wait.c */
void loom_engine_wake_init(loom_engine_t *engine);
void loom_engine_wake_fini(loom_engine_t *engine);

/* engine.c */
extern const loom_am_handler_t loom_am_handlers[];
extern const size_t loom_am_handler_count;

#endif
