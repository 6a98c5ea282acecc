/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Layer 5, rdma: put, get, atomics and pushes, checked and served, striped
 * over rails, with counters and notices.
 * What this layer offers to the layers above (transport/layers.map).
 */
#ifndef LOOM_RDMA_H
#define LOOM_RDMA_H

#include "messages/loom_messages.h"

/* atomic.c */
int  loom_atomic_advance(loom_op_t *op);
/* Refuses (and says why) a size other than 4 or 8, an unknown operation or
 * an address not aligned to the size. */
int  loom_atomic_check(loom_engine_t *engine, int atomic_op, unsigned size,
                       uint64_t addr);
/* Stores an atomic's result (size bytes, host order) where result points. */
void loom_atomic_result(void *result, unsigned size, uint64_t value);
/* Runs a checked atomic on the word at addr; returns its earlier value. */
uint64_t loom_atomic_run(uint64_t addr, unsigned size, int atomic_op, uint64_t operand,
                         uint64_t compare);
/* An atomic's engine message (loom_wire_atomic_t, length checked). */
void loom_atomic_recv(loom_peer_t *peer, int rail, const void *data, size_t length);

/* rdma_done.c */
void loom_rdma_account(loom_op_t *op);
void loom_serve_told(loom_op_t *op);
void loom_push_done_send(loom_engine_t *engine, uint64_t notify_name, int rail,
                         uint64_t request_id, uint64_t length, int rc, bool refusal);
/* A push's end told to its notices (from its request, or a serve's copy). */
void loom_push_notices_send(loom_engine_t *engine, const loom_serve_notices_t *notices,
                            uint64_t request_id, uint64_t length, int rc);
/* Our push request's answer (PUSH_DONE, or our own serve's end): the op it
 * names completes, if it still waits for exactly that; why: what the log
 * says of a refusal. */
void loom_push_answered(loom_engine_t *engine, int rail, uint64_t owner, uint64_t request_id,
                        uint64_t length, int rc, const char *why);
void loom_rdma_complete(loom_op_t *op, int rc);
/* What the UCT call that ends an operation (a get, a flush) returned:
 * completed now, waiting on the rail (stage WAIT, tracked), or as an error
 * code (LOOM_ERR_AGAIN when the rail is busy). */
int  loom_rdma_wait_on(loom_op_t *op, ucs_status_t status);

/* push_serve.c */
/* A push request, from a peer (by rail) or of this process (rail -1),
 * checked whole (header, notices, keys, bounds) and served now.  asker is
 * the process it is for: its requester, or the peer whose multicast
 * request this process serves as pushes of its own; memory is read for
 * anyone but this process only with remote read access. */
void loom_push_serve(loom_engine_t *engine, int rail, uint64_t asker, const void *data,
                     size_t length);
int  loom_push_serve_stripe(loom_op_t *op);
/* Refused: its notify_proc and notices are told why. */
void loom_push_refuse(loom_engine_t *engine, int rail, const void *data, size_t length,
                      int rc);
/* LOOM_OK if the request's length is what its notices and key need, and
 * the key is whole; LOOM_ERR_INVALID (logged) otherwise. */
int  loom_push_req_form(loom_engine_t *engine, const void *data, size_t length);
/* The request's notices, or NULL with an error for a malformed request. */
int  loom_push_req_notices(const void *data, size_t length, loom_serve_notices_t *notices,
                           const uint8_t **key_p, size_t *key_len_p);

/* push_cond.c */
void loom_push_cond_init(loom_engine_t *engine);
void loom_push_cond_fini(loom_engine_t *engine);
ucs_status_t loom_push_req_recv(void *arg, void *data, size_t length, unsigned flags);
void loom_push_accept(loom_engine_t *engine, int rail, uint64_t asker, const void *data,
                      size_t length);
/* A notice (loom_wire_push_notice_t, length checked) from owner; rail -1:
 * one of ours to ourselves. */
void loom_push_notice_recv(loom_engine_t *engine, int rail, uint64_t owner,
                           const void *data);
/* A counter's engine message (loom_wire_counter_add_t, length checked). */
void loom_counter_recv(loom_peer_t *peer, int rail, const void *data, size_t length);
int  loom_push_notices_progress(loom_engine_t *engine);
void loom_push_peer_gone(loom_engine_t *engine, uint64_t name);
/* push_landed.c, pushes whose checked write with LOOM_WIRE_FLAG_COUNT
 * landed whole: whether this one did already (its write, placed again, is
 * answered but not placed); record one (once, room allowing); the next one
 * recorded and not counted yet (its counter), and whether it counted; take
 * its record when its notice comes (true: it counted, the notice must add
 * nothing); forget those of an owner gone, or all. */
typedef struct loom_landed loom_landed_t;
void loom_landed_init(loom_engine_t *engine);
bool loom_landed_again(loom_engine_t *engine, uint64_t owner, uint64_t requester,
                       uint64_t request_id);
void loom_landed_record(loom_engine_t *engine, uint64_t owner, uint64_t requester,
                        uint64_t request_id, uint64_t counter);
loom_landed_t *loom_landed_pending(loom_engine_t *engine, uint64_t *counter);
void loom_landed_counted(loom_engine_t *engine, loom_landed_t *landed, bool counted);
bool loom_landed_take(loom_engine_t *engine, uint64_t owner, uint64_t requester,
                      uint64_t request_id, uint64_t counter);
void loom_landed_peer_gone(loom_engine_t *engine, uint64_t owner);
void loom_landed_free_all(loom_engine_t *engine);

/* rdma_done.c: op->comp as an RDMA op's completion, one reference held */
void loom_rdma_comp_init(loom_op_t *op);

/* checked_put.c */
int  loom_checked_put_advance(loom_op_t *op);
ucs_status_t loom_checked_put_recv(void *arg, void *data, size_t length, unsigned flags);
ucs_status_t loom_put_ack_recv(void *arg, void *data, size_t length, unsigned flags);

/* rdma.c */
ucs_status_t loom_push_done_recv(void *arg, void *data, size_t length, unsigned flags);
int  loom_rdma_advance(loom_op_t *op);
void loom_rdma_fail_wire_ops(loom_peer_t *peer, int rail);
void loom_serves_cancel(loom_region_t *region);
void loom_serves_release_sent(loom_region_t *region);
void loom_serves_detach(loom_region_t *region);
void loom_serves_peer_closed(loom_peer_t *peer);
int  loom_rdma_post(loom_peer_t *peer, loom_op_t *op, int kind, int rail, void *local,
                    loom_region_t *local_region, uint64_t remote_addr,
                    const loom_wire_key_t *key, size_t length);
/* A push request of ours, built in op->msg from args (dst_key packed),
 * registered as waiting for its answer. */
int  loom_push_req_build(loom_engine_t *engine, loom_op_t *op, const loom_push_args_t *args);

/* push.c */
void loom_push_issue_local(loom_engine_t *engine, loom_peer_t *dest, loom_op_t *op);

/* push_multi.c: engine messages of kind PUSH_MULTI (at least its header)
 * and PUSH_MULTI_DONE (its exact size) */
void loom_push_multi_recv(loom_peer_t *peer, int rail, const void *data, size_t length);
void loom_push_multi_done_recv(loom_peer_t *peer, int rail, const void *data);

/* stripe.c */
bool loom_stripe_wanted(loom_peer_t *peer, size_t length);
void loom_stripes_drop_region(loom_region_t *region);
bool loom_stripe_guarded(loom_peer_t *peer);
int  loom_stripe_start(loom_peer_t *peer, loom_op_t *op, int kind, void *local,
                       loom_region_t *local_region, uint64_t remote_addr,
                       const void *remote_key, size_t remote_key_size, size_t length,
                       bool cut);
double loom_rail_rate(const loom_rail_t *rail);
void loom_stripe_free_all(loom_engine_t *engine);

#endif
