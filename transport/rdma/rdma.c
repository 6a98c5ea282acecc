/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * RDMA: put, get, and the push request that emulates get on rails without
 * one (the owner's side of a push request is push_serve.c; pushes that
 * name a third process, push.c).
 *
 * Completion is only reported once the data is visible where it went: a put
 * is followed by an endpoint flush (remote completion); a push is reported
 * by the owner's PUSH_DONE, sent after its own put was flushed.
 */
#include "rdma/loom_rdma.h"

#include <stdlib.h>
#include <string.h>

static int loom_rdma_prepare(loom_peer_t *peer, loom_op_t *op, int rail, void *local,
                             loom_region_t *local_region, uint64_t remote_addr, size_t length)
{
    loom_rail_t *r = &peer->engine->rails[rail];

    if (length > r->info.put_max) {
        return LOOM_ERR_INVALID;
    }
    if (!peer->rails[rail].usable && peer->rails[rail].failed) {
        return LOOM_ERR_UNREACH;
    }
    if (r->needs_reg && NULL == local_region && length > 0) {
        loom_log(peer->engine, LOOM_LOG_ERROR, "RDMA on rail %s:%s needs registered "
                 "local memory", r->info.tl_name, r->info.dev_name);
        return LOOM_ERR_INVALID;
    }
    op->local  = local;
    op->remote = remote_addr;
    op->length = length;
    op->memh   = (NULL != local_region) ? local_region->memh[rail] : UCT_MEM_HANDLE_NULL;
    return LOOM_OK;
}

/* Our push request in op->msg: the fixed part, the notices, then the
 * destination's key.  src_key is the owner's key, already parsed. */
int loom_push_req_build(loom_engine_t *engine, loom_op_t *op, const loom_push_args_t *args)
{
    loom_wire_push_req_t *req = (loom_wire_push_req_t *)op->msg;
    size_t list_len = (size_t)args->notice_count * sizeof(loom_wire_notice_to_t);
    loom_wire_notice_to_t to;
    loom_wire_key_t fields;
    unsigned i;

    if (args->notice_count > LOOM_WIRE_NOTICES_MAX ||
        sizeof(*req) + list_len + args->dst_key_size > LOOM_OP_MSG_MAX) {
        loom_log(engine, LOOM_LOG_ERROR, "a push request with %u notices and a key of %zu "
                 "bytes: at most %d notices and %d bytes in all", args->notice_count,
                 args->dst_key_size, LOOM_WIRE_NOTICES_MAX, LOOM_OP_MSG_MAX);
        return LOOM_ERR_INVALID;
    }
    memset(req, 0, sizeof(*req));
    loom_wire_hdr_fill(&req->hdr, LOOM_WIRE_PUSH_REQ, 0,
                       sizeof(*req) + list_len + args->dst_key_size);
    op->id              = engine->next_request_id++;
    op->multi_peer      = 0; /* a push of its own, answered by PUSH_DONE */
    req->request_id     = loom_le64(op->id);
    req->requester      = loom_le64(engine->config.name);
    req->dest_proc      = loom_le64(args->dest);
    req->notify_proc    = loom_le64(engine->config.name);
    req->src_addr       = loom_le64(args->src_addr);
    req->dst_addr       = loom_le64(args->dst_addr);
    req->length         = loom_le64((uint64_t)args->length);
    fields = loom_key_fields(args->src_key);
    req->src_region_id  = fields.region_id; /* both little-endian already */
    req->src_epoch      = fields.epoch;
    req->notice_count   = loom_le16((uint16_t)args->notice_count);
    req->cond_counter   = loom_le64(args->cond_counter);
    req->cond_threshold = loom_le64(args->cond_threshold);
    for (i = 0; i < args->notice_count; ++i) {
        to.proc    = loom_le64(args->notices[i].proc);
        to.counter = loom_le64(args->notices[i].counter);
        memcpy(op->msg + sizeof(*req) + i * sizeof(to), &to, sizeof(to));
    }
    memcpy(op->msg + sizeof(*req) + list_len, args->dst_key, args->dst_key_size);
    op->msg_len = sizeof(*req) + list_len + args->dst_key_size;
    op->length  = args->length;
    op->notify  = args->dest;
    if (args->dest == engine->config.name) {
        /* the owner's checked write to us completes it (checked_put.c) */
        op->local = (void *)(uintptr_t)args->dst_addr;
    }
    if (0 != loom_hash_put(&engine->requests, op->id, op)) {
        return LOOM_ERR_NOMEM;
    }
    return LOOM_OK;
}

/* Get by push request: the owner puts the data to us, on the rail the
 * request went by, and tells us. */
static int loom_push_post(loom_peer_t *peer, loom_op_t *op, int rail, void *local,
                          loom_region_t *local_region, uint64_t remote_addr,
                          const loom_wire_key_t *key, size_t length)
{
    loom_engine_t *engine = peer->engine;
    size_t key_size = loom_key_size(engine);
    uint8_t dst_key[LOOM_OP_MSG_MAX];
    loom_push_args_t args;
    int rc;

    if (NULL == local_region) {
        loom_log(engine, LOOM_LOG_ERROR, "a get by push request needs registered local "
                 "memory (it names it to the owner)");
        return LOOM_ERR_INVALID;
    }
    rc = loom_rdma_prepare(peer, op, rail, local, local_region, remote_addr, length);
    if (LOOM_OK == rc) {
        rc = loom_key_pack(local_region, dst_key, key_size);
    }
    if (LOOM_OK != rc) {
        return rc;
    }
    memset(&args, 0, sizeof(args));
    args.owner        = peer->name;
    args.src_addr     = remote_addr;
    args.src_key      = key;
    args.dest         = engine->config.name;
    args.dst_addr     = (uint64_t)(uintptr_t)local;
    args.dst_key      = dst_key;
    args.dst_key_size = key_size;
    args.length       = length;
    rc = loom_push_req_build(engine, op, &args);
    if (LOOM_OK != rc) {
        return rc;
    }
    /* a chunk of a striped get: the owner serves it on this rail (wire.h) */
    ((loom_wire_push_req_t *)op->msg)->hdr.flags |= LOOM_WIRE_FLAG_ON_RAIL;
    loom_op_start(peer, op, LOOM_OP_PUSH_REQ, LOOM_STAGE_SEND);
    op->rail = rail;
    return loom_op_submit(peer, op, loom_rdma_advance, loom_rdma_complete);
}

int loom_rdma_post(loom_peer_t *peer, loom_op_t *op, int kind, int rail, void *local,
                   loom_region_t *local_region, uint64_t remote_addr,
                   const loom_wire_key_t *key, size_t length)
{
    const loom_rail_info_t *info = &peer->engine->rails[rail].info;
    loom_wire_key_t fields;
    uct_rkey_bundle_t rkey;
    int rc;

    if (LOOM_OP_GET == kind && !(info->has_get && length >= info->get_min)) {
        return loom_push_post(peer, op, rail, local, local_region, remote_addr, key, length);
    }
    rc = loom_rdma_prepare(peer, op, rail, local, local_region, remote_addr, length);
    if (LOOM_OK != rc) {
        return rc;
    }
    rc = loom_key_rkey(peer->engine, key, rail, &rkey);
    if (LOOM_OK != rc) {
        return rc;
    }
    loom_op_start(peer, op, kind, LOOM_STAGE_ISSUE);
    op->rail          = rail;
    op->rkey          = rkey;
    op->rkey_valid    = true;
    fields = loom_key_fields(key);
    op->remote_region = loom_from_le64(fields.region_id);
    op->remote_epoch  = fields.epoch;
    return loom_op_submit(peer, op, loom_rdma_advance, loom_rdma_complete);
}

/* ---- stages ---------------------------------------------------------------- */

/* The rail's endpoint to the peer was destroyed: what still waits on it
 * (UCT dropped it) fails now through its own completion, as UCT would have
 * reported had the connection broken. */
void loom_rdma_fail_wire_ops(loom_peer_t *peer, int rail)
{
    loom_op_t *op;

    while (!ucs_list_is_empty(&peer->rails[rail].wire_ops)) {
        op = ucs_list_head(&peer->rails[rail].wire_ops, loom_op_t, wire_link);
        op->comp.status = UCS_ERR_CANCELED;
        op->comp.func(&op->comp);
    }
}

/*
 * When the process to notify is the destination, reached on the same rail,
 * the notice can follow the data at once behind a fence: the endpoint
 * delivers it only after the data was placed.  That saves the round trip of
 * the flush; the flush still runs for the op's own completion.
 */
static void loom_serve_notify_early(loom_op_t *op)
{
    loom_peer_t *notify = op->peer;

    if (LOOM_OP_SERVE != op->kind || op->notify != notify->name ||
        UCS_OK != uct_ep_fence(op->peer->rails[op->rail].ep, 0)) {
        return;
    }
    loom_push_done_send(notify->engine, op->notify, op->rail, op->id, op->length, LOOM_OK,
                        false);
    loom_serve_told(op);
}

int loom_rdma_advance(loom_op_t *op)
{
    loom_peer_rail_t *prail = &op->peer->rails[op->rail];
    ucs_status_t status;
    struct iovec iov;
    uct_iov_t uiov;
    int rc;

    if (!prail->usable) {
        return prail->failed ? LOOM_ERR_UNREACH : LOOM_ERR_AGAIN;
    }
    loom_uct_iov_set(&uiov, op->local, op->length, op->memh);

    if (LOOM_OP_PUSH_REQ == op->kind) {
        if (op->peer->push_reqs >= LOOM_PUSH_WINDOW) {
            /* the owner takes no more: aside until an answer comes, not at
             * the head of the rail's queue, where it would hold up our
             * serves to the owner, and so the owner's answers to us, if the
             * owner's requests fill our window too */
            loom_push_hold(op->peer, op);
            return LOOM_INPROGRESS;
        }
        iov.iov_base = op->msg;
        iov.iov_len  = op->msg_len;
        rc = loom_am_issue(op->peer, op->rail, LOOM_WIRE_PUSH_REQ, NULL, &iov, 1);
        if (LOOM_OK == rc) {
            op->stage = LOOM_STAGE_WAIT; /* until PUSH_DONE */
            ++op->peer->push_reqs;
        } else if (rc < 0 && LOOM_ERR_AGAIN != rc) {
            loom_hash_remove(&op->peer->engine->requests, op->id);
        }
        return rc;
    }
    if (LOOM_OP_GET == op->kind) {
        loom_rdma_comp_init(op);
        status = uct_ep_get_zcopy(prail->ep, &uiov, 1, op->remote, op->rkey.rkey, &op->comp);
        return loom_rdma_wait_on(op, status);
    }
    if (op->peer->engine->rails[op->rail].checked) {
        /* the target checks, then acknowledges; the write sets up its
         * completion once, at its first call (checked_put.c) */
        return loom_checked_put_advance(op);
    }
    /* put and serve: write, then flush for remote completion */
    loom_rdma_comp_init(op);
    if (LOOM_STAGE_ISSUE == op->stage) {
        status = uct_ep_put_zcopy(prail->ep, &uiov, 1, op->remote, op->rkey.rkey, NULL);
        if (UCS_OK != status && UCS_INPROGRESS != status) {
            return loom_status_to_rc(status);
        }
        op->stage = LOOM_STAGE_FLUSH;
        loom_serve_notify_early(op);
    }
    status = uct_ep_flush(prail->ep, 0, &op->comp);
    return loom_rdma_wait_on(op, status);
}

/* ---- serves and the region they read ------------------------------------------ */

static bool loom_serve_unissued(const loom_op_t *op, const void *region)
{
    return LOOM_OP_SERVE == op->kind && op->region == region &&
           LOOM_STAGE_ISSUE == op->stage;
}

/* Serves of the region that have not read a byte yet are refused, as if
 * their request had come after the deregistration: the requester gets
 * UNKNOWN_KEY, never the bytes of memory that may be reused. */
void loom_serves_cancel(loom_region_t *region)
{
    loom_engine_t *engine = region->engine;
    loom_opq_t cancelled;
    loom_peer_t *peer;
    loom_op_t *op;
    size_t pos = 0;
    int i;

    ucs_list_head_init(&cancelled);
    while (NULL != (peer = loom_hash_next(&engine->peers, &pos))) {
        for (i = 0; i < engine->rail_count; ++i) {
            loom_opq_take(&peer->rails[i].rail_queue, loom_serve_unissued, region, &cancelled);
        }
    }
    while (NULL != (op = loom_opq_pop(&cancelled))) {
        ++engine->rails[op->rail].stats.refused;
        loom_rdma_complete(op, LOOM_ERR_NOT_FOUND);
    }
}

/* No send of the endpoint still reads memory: tcp takes a flush only once
 * the last byte went to the socket. */
static bool loom_ep_takes_flush(uct_ep_h ep)
{
    return NULL == ep || UCS_ERR_NO_RESOURCE != uct_ep_flush(ep, 0, NULL);
}

/* UCT holds none of the serve's bytes any more: its flush was taken, or its
 * endpoint takes one (a NIC that would still read the memory is stopped by
 * the deregistration itself).  A checked write waits for its last segment's
 * completion, not for a flush, and has segments left to post while in
 * FLUSH. */
static bool loom_serve_sent(const loom_op_t *op)
{
    uct_ep_h ep = op->peer->rails[op->rail].ep;

    if (op->peer->engine->rails[op->rail].checked) {
        /* in FLUSH it has segments left to post from the region */
        return LOOM_STAGE_DONE == op->stage ||
               (LOOM_STAGE_WAIT == op->stage && loom_ep_takes_flush(ep));
    }
    return LOOM_STAGE_WAIT == op->stage || LOOM_STAGE_DONE == op->stage ||
           (LOOM_STAGE_FLUSH == op->stage && loom_ep_takes_flush(ep));
}

/* Serves of the region whose bytes all left let go of it; they complete
 * later as usual. */
void loom_serves_release_sent(loom_region_t *region)
{
    loom_op_t *op;

    ucs_list_for_each(op, &region->engine->owned_ops, owned_link) {
        if (LOOM_OP_SERVE == op->kind && op->region == region && loom_serve_sent(op)) {
            loom_serve_unbind(op);
        }
    }
}

/*
 * Serves that may still send from the region when we cannot wait any more
 * (inside progress, or past the deadline) let go of it.  Refusing for want
 * of resources says the endpoint is busy, maybe with another op issued
 * after this one (which would prove this one sent): closing the rail on
 * that evidence failed valid MPI programs, so the serve is only logged.
 */
void loom_serves_detach(loom_region_t *region)
{
    loom_engine_t *engine = region->engine;
    loom_op_t *op;

    ucs_list_for_each(op, &engine->owned_ops, owned_link) {
        if (LOOM_OP_SERVE != op->kind || op->region != region) {
            continue;
        }
        loom_log(engine, LOOM_LOG_INFO, "memory deregistered while a push of %zu bytes "
                 "of it to %#llx may still be sending", op->length,
                 (unsigned long long)op->peer->name);
        loom_serve_unbind(op);
    }
}

/* The peer's endpoints were destroyed: UCT dropped its serves, which read
 * nothing any more. */
void loom_serves_peer_closed(loom_peer_t *peer)
{
    loom_op_t *op;

    ucs_list_for_each(op, &peer->engine->owned_ops, owned_link) {
        if (op->peer == peer) {
            loom_serve_unbind(op);
        }
    }
}

/* ---- receive side ------------------------------------------------------------ */

ucs_status_t loom_push_done_recv(void *arg, void *data, size_t length, unsigned flags)
{
    loom_rail_t *rail = arg;
    loom_wire_push_done_t done;
    uint32_t status;

    (void)flags;
    if (!loom_wire_hdr_check(rail, data, length, LOOM_WIRE_PUSH_DONE, sizeof(done))) {
        return UCS_OK;
    }
    memcpy(&done, data, sizeof(done));
    status = loom_from_le32(done.status);
    loom_push_answered(rail->engine, rail->index, loom_from_le64(done.sender),
                       loom_from_le64(done.request_id), loom_from_le64(done.length),
                       loom_wire_to_rc(status), loom_wire_status_str(status));
    return UCS_OK;
}
