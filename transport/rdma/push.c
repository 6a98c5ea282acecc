/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Pushes the upper layer asks for (seed 002's third-party and conditional
 * RDMA): the owner of the memory, a peer or this process, puts it into a
 * destination's memory and tells the processes the request names.  The
 * request is the one a get by push sends (rdma.c), with its destination,
 * notices and condition filled in; its owner serves it (push_serve.c), at
 * once or when its counter is reached (push_cond.c).
 */
#include "rdma/loom_rdma.h"

#include <string.h>

#if LOOM_PUSH_NOTICES_MAX != LOOM_WIRE_NOTICES_MAX
#error "the public and the wire bound on notices differ"
#endif

/* Keys are checked here for what this process can see: their form and
 * size (the owner and the destination check what they mean). */
static int loom_push_args_check(loom_engine_t *engine, const loom_push_args_t *args)
{
    const loom_wire_key_t *key;
    const char *what = NULL;
    unsigned i;

    if (NULL == args || 0 == args->owner || 0 == args->dest) {
        what = "no owner or destination";
    } else if (args->owner == args->dest) {
        what = "the owner is the destination (a copy, not a push)";
    } else if (args->notice_count > LOOM_PUSH_NOTICES_MAX ||
               (args->notice_count > 0 && NULL == args->notices)) {
        what = "too many notices";
    } else if (0 != args->cond_counter && 0 == args->cond_threshold) {
        what = "a condition with threshold 0 (push at once: no counter)";
    } else if (LOOM_OK != loom_key_parse(engine, args->src_key, args->src_key_size, &key)) {
        what = "the owner's key is malformed";
    } else if (LOOM_OK != loom_key_parse(engine, args->dst_key, args->dst_key_size, &key)) {
        what = "the destination's key is malformed";
    }
    for (i = 0; NULL == what && i < args->notice_count; ++i) {
        if (0 == args->notices[i].proc) {
            what = "a notice names no process";
        }
    }
    if (NULL != what) {
        loom_log(engine, LOOM_LOG_ERROR, "loom_push: %s", what);
        return LOOM_ERR_INVALID;
    }
    return LOOM_OK;
}

int loom_push(loom_engine_t *engine, loom_op_t *op, const loom_push_args_t *args)
{
    loom_peer_t *peer;
    bool local;
    int rc;

    rc = loom_push_args_check(engine, args);
    if (LOOM_OK != rc) {
        return rc;
    }
    local = args->owner == engine->config.name;
    peer  = loom_peer_lookup(engine, local ? args->dest : args->owner);
    if (NULL == peer) {
        loom_log(engine, LOOM_LOG_ERROR, "loom_push: %s %#llx is not connected",
                 local ? "destination" : "owner",
                 (unsigned long long)(local ? args->dest : args->owner));
        return LOOM_ERR_UNREACH;
    }
    rc = loom_push_req_build(engine, op, args);
    if (LOOM_OK != rc) {
        return rc;
    }
    ++engine->push.stats.requested;
    if (local) {
        loom_push_issue_local(engine, peer, op);
        return LOOM_INPROGRESS;
    }
    loom_op_start(peer, op, LOOM_OP_PUSH_REQ, LOOM_STAGE_SEND);
    op->rail = peer->am_rail;
    return loom_op_submit(peer, op, loom_rdma_advance, loom_rdma_complete);
}

/* A push of our own memory, built in op: served (or kept waiting) here as a
 * peer's request would be, waiting for its answer with the destination's
 * operations (a destination that fails fails it). */
void loom_push_issue_local(loom_engine_t *engine, loom_peer_t *dest, loom_op_t *op)
{
    loom_op_start(dest, op, LOOM_OP_PUSH_REQ, LOOM_STAGE_WAIT);
    if (0 != op->multi_peer) {
        /* served for the requester: nobody here waits for it, and a
         * destination that says goodbye is not waited for on its account */
        loom_op_disown(op);
    }
    op->rail = -1;
    ++dest->push_reqs;
    /* a multicast destination is served for the peer that asked */
    loom_push_accept(engine, -1, (0 != op->multi_peer) ? op->multi_peer : engine->config.name,
                     op->msg, op->msg_len);
}

uint64_t loom_push_request_id(const loom_op_t *op)
{
    return op->id;
}
