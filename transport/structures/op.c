/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Operations: their life from start to the done list, the queues they
 * wait in, and the state an op holds that must go with it when it finishes
 * (in-flight tracking, a region it reads, a checked write it waits for).
 */
#include "structures/loom_structures.h"

#include <stdlib.h>

/* An op of this kind is one the upper layer waits for, as opposed to loom's
 * own traffic (op->owed keeps the answer: loom_op_disown may change it). */
static bool loom_op_kind_owed(int kind)
{
    return LOOM_OP_CTRL != kind && LOOM_OP_SERVE != kind;
}

void loom_op_start(loom_peer_t *peer, loom_op_t *op, int kind, int stage)
{
    op->peer       = peer;
    op->kind       = kind;
    op->stage      = stage;
    op->status     = LOOM_OK;
    op->rkey_valid = false;
    op->done_sent  = false;
    op->on_wire    = false;
    op->region     = NULL;
    op->write_id   = 0;
    op->sent       = 0;
    op->owed       = loom_op_kind_owed(kind);
    peer->owed    += op->owed;
    ++peer->outstanding;
    ++peer->engine->outstanding;
}

void loom_op_disown(loom_op_t *op)
{
    if (op->owed) {
        op->owed = false;
        --op->peer->owed;
    }
}

/* Hand a finished op to the done list; its callback runs from progress. */
void loom_op_finish(loom_op_t *op, int status)
{
    loom_engine_t *engine = op->peer->engine;

    /* whatever finishes it, no answer or completion may find it now */
    if (LOOM_OP_PUSH_REQ == op->kind) {
        loom_hash_remove(&engine->requests, op->id);
        if (LOOM_STAGE_WAIT == op->stage) {
            --op->peer->push_reqs; /* sent, and answered or given up */
            loom_push_release_held(op->peer);
        }
    } else if (LOOM_OP_SERVE == op->kind && !op->done_sent) {
        --op->peer->serves; /* else when the requester was told */
    } else if (LOOM_OP_ATOMIC == op->kind) {
        loom_hash_remove(&engine->requests, op->id);
        --op->peer->atomics;
    }
    loom_checked_put_forget(op);
    loom_wire_untrack(op);
    loom_serve_unbind(op); /* its region's memory is no longer read */
    op->status = status;
    op->stage  = LOOM_STAGE_DONE;
    ucs_list_add_tail(&engine->done, &op->queue_link);
}

void loom_peer_mark_busy(loom_peer_t *peer)
{
    if (!peer->queued) {
        peer->queued = true;
        ucs_list_add_tail(&peer->engine->busy_peers, &peer->busy_link);
    }
}

static void loom_opq_push(loom_opq_t *q, loom_op_t *op)
{
    ucs_list_add_tail(q, &op->queue_link);
}

void loom_opq_push_front(loom_opq_t *q, loom_op_t *op)
{
    ucs_list_add_head(q, &op->queue_link);
}

loom_op_t *loom_opq_pop(loom_opq_t *q)
{
    return ucs_list_is_empty(q) ? NULL : ucs_list_extract_head(q, loom_op_t, queue_link);
}

/* Move the ops of q that match to out; the others keep their order. */
void loom_opq_take(loom_opq_t *q, bool (*match)(const loom_op_t *op, const void *arg),
                   const void *arg, loom_opq_t *out)
{
    loom_op_t *op, *tmp;

    ucs_list_for_each_safe(op, tmp, q, queue_link) {
        if (match(op, arg)) {
            ucs_list_del(&op->queue_link);
            loom_opq_push(out, op);
        }
    }
}

/* The upper layer's messages keep their order in the peer's queue; RDMA and
 * loom's own messages wait for their rail only. */
static loom_opq_t *loom_op_queue_of(loom_peer_t *peer, const loom_op_t *op)
{
    return (LOOM_OP_AM == op->kind || LOOM_OP_ATOMIC == op->kind)
               ? &peer->queue : &peer->rails[op->rail].rail_queue;
}

bool loom_op_queue_empty(const loom_peer_t *peer, const loom_op_t *op)
{
    return ucs_list_is_empty(loom_op_queue_of((loom_peer_t *)peer, op));
}

/* Issue op now (advance) if nothing is queued before it to the peer, else
 * queue it; an error goes to fail, so that the caller sees every started op
 * complete exactly once.  Returns LOOM_INPROGRESS. */
int loom_op_submit(loom_peer_t *peer, loom_op_t *op, int (*advance)(loom_op_t *),
                   void (*fail)(loom_op_t *, int))
{
    int rc = loom_op_queue_empty(peer, op) ? advance(op) : LOOM_ERR_AGAIN;

    if (LOOM_ERR_AGAIN == rc) {
        loom_op_queue(peer, op);
    } else if (rc < 0) {
        fail(op, rc);
    }
    return LOOM_INPROGRESS;
}

void loom_op_queue(loom_peer_t *peer, loom_op_t *op)
{
    loom_opq_push(loom_op_queue_of(peer, op), op);
    loom_peer_mark_busy(peer);
}

/* Ahead of everything queued to the peer. */
void loom_op_queue_front(loom_peer_t *peer, loom_op_t *op)
{
    loom_opq_push_front(loom_op_queue_of(peer, op), op);
    loom_peer_mark_busy(peer);
}

/* A push request the owner's window has no room for waits apart (in order)
 * until one of ours is answered. */
void loom_push_hold(loom_peer_t *peer, loom_op_t *op)
{
    loom_opq_push(&peer->push_held, op);
}

/* One of ours was answered: the oldest held one goes back to its rail. */
void loom_push_release_held(loom_peer_t *peer)
{
    loom_op_t *op = loom_opq_pop(&peer->push_held);

    if (NULL != op) {
        loom_op_queue(peer, op);
    }
}

/* An op the engine allocates for itself (control messages, serves, striped
 * chunks): kept on a list, so that what a dead rail never completes is
 * still freed when the engine goes. */
loom_op_t *loom_op_alloc_owned(loom_engine_t *engine)
{
    loom_op_t *op = calloc(1, sizeof(*op));

    if (NULL == op) {
        loom_log(engine, LOOM_LOG_ERROR, "out of memory for an operation");
        return NULL;
    }
    ucs_list_add_head(&engine->owned_ops, &op->owned_link);
    return op;
}

void loom_op_free_owned(loom_engine_t *engine, loom_op_t *op)
{
    (void)engine;
    ucs_list_del(&op->owned_link);
    free(op);
}

static void loom_ctrl_free(loom_op_t *op, int status)
{
    (void)status;
    loom_op_free_owned(op->peer->engine, op);
}

/* An op the engine sends on its own behalf; freed once done. */
loom_op_t *loom_op_alloc_ctrl(loom_engine_t *engine)
{
    loom_op_t *op = loom_op_alloc_owned(engine);

    if (NULL != op) {
        op->cb = loom_ctrl_free;
    }
    return op;
}

/* The ops of a rail endpoint that wait for UCT, so that they can be failed
 * before the endpoint is destroyed (UCT would drop their completions). */
void loom_wire_track(loom_op_t *op)
{
    ucs_list_add_head(&op->peer->rails[op->rail].wire_ops, &op->wire_link);
    op->on_wire = true;
}

void loom_wire_untrack(loom_op_t *op)
{
    if (op->on_wire) {
        ucs_list_del(&op->wire_link);
        op->on_wire = false;
    }
}

/* A serve reads its region from when it is queued until it ends: the region
 * cannot go before (loom_serves_end). */
void loom_serve_bind(loom_op_t *op, loom_region_t *region)
{
    op->region = region;
    ++region->serves;
}

void loom_serve_unbind(loom_op_t *op)
{
    if (NULL != op->region) {
        --op->region->serves;
        op->region = NULL;
    }
}

void loom_checked_put_forget(loom_op_t *op)
{
    if (0 != op->write_id) {
        loom_hash_remove(&op->peer->engine->requests, op->write_id);
        op->write_id = 0;
    }
}
