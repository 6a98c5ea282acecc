/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Layer 6, managers: what watches and repairs: the rail watch, the eager
 * rings' policy, failed rails coming back, the one handler of rail
 * failures.
 * What this layer offers to the layers above (transport/layers.map).
 */
#ifndef LOOM_MANAGERS_H
#define LOOM_MANAGERS_H

#include "rdma/loom_rdma.h"

/* rail_watch.c */
int  loom_rail_watch(loom_engine_t *engine);

/* rejoin_rail.c */
bool loom_rail_link_up(const loom_rail_t *rail);
void loom_rejoin_state_set(loom_peer_t *peer, int index, int state);
bool loom_rejoin_possible(const loom_peer_t *peer, int index);
/* The peer says it lost the rail, which we still use, and offers a newer
 * connection (a CONNECT of connect-to-ep rails, a PROBE TRY of the others):
 * why we keep ours (for the log), or NULL when ours may fail so that the
 * rail comes back.  One rule for both kinds of rail. */
const char *loom_rejoin_keep_why(const loom_peer_t *peer, int index);
void loom_rejoin_close(loom_peer_t *peer, int index);
void loom_rejoin_drop_probe_ep(loom_peer_rail_t *prail);
void loom_rejoin_forget_addr(loom_peer_rail_t *prail);
void loom_rejoin_use(loom_peer_t *peer, int index);

/* rejoin_ep.c */
void loom_rejoin_ep_start(loom_peer_t *peer, int index);
void loom_rejoin_ep_step(loom_peer_t *peer, int index);
bool loom_rejoin_ep_recv(loom_peer_t *peer, int index, uint32_t rail_epoch, bool connected,
                         const uint8_t *addr, size_t addr_len);

/* rejoin.c */
int  loom_rejoin_progress(loom_engine_t *engine);
int  loom_rejoin_timer(loom_engine_t *engine);
void loom_rejoin_rail_failed(loom_peer_t *peer, int index);
void loom_rejoin_tell_down(loom_peer_t *peer, int index);
ucs_status_t loom_probe_recv(void *arg, void *data, size_t length, unsigned flags);
void loom_rejoin_peer_fini(loom_peer_t *peer);

/* peer_failure.c */
int  loom_peer_failures_progress(loom_engine_t *engine);
void loom_peer_failures_forget(loom_peer_t *peer);
void loom_peer_fail_requests(loom_peer_t *peer, int rail);

/* eager.c: policy, set-up, progress */
int    loom_eager_init(struct loom_engine *engine);
void   loom_eager_fini(struct loom_engine *engine);
void   loom_eager_peer_init(struct loom_peer *peer);
void   loom_eager_peer_fini(struct loom_peer *peer);
void   loom_eager_rail_failed(struct loom_peer *peer, int rail);
void   loom_eager_rail_back(struct loom_peer *peer);
int    loom_eager_progress(struct loom_engine *engine);
bool   loom_eager_writes_unannounced(const struct loom_engine *engine);
void   loom_eager_rx_quiet(struct loom_engine *engine);

#endif
