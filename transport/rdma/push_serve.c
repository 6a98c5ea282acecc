/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The owner's side of a push request: the request checked whole (its
 * notices, the destination's key, our own key), then served by a put of
 * ours to the destination, striped over the rails to it when large; or
 * refused, and everyone it names told why.  Requests come from a peer (by a
 * rail) or from this process itself (a push of our own memory with notices,
 * rail -1).
 */
#include "rdma/loom_rdma.h"

#include <string.h>

int loom_push_req_notices(const void *data, size_t length, loom_serve_notices_t *notices,
                          const uint8_t **key_p, size_t *key_len_p)
{
    loom_wire_push_req_t req;
    size_t list_len;
    unsigned i;

    memset(notices, 0, sizeof(*notices));
    if (length < sizeof(req)) {
        return LOOM_ERR_INVALID;
    }
    memcpy(&req, data, sizeof(req));
    notices->requester = loom_from_le64(req.requester);
    notices->count     = loom_from_le16(req.notice_count);
    list_len           = (size_t)notices->count * sizeof(loom_wire_notice_to_t);
    if (notices->count > LOOM_WIRE_NOTICES_MAX ||
        length < sizeof(req) + list_len + sizeof(loom_wire_key_t)) {
        notices->count = 0; /* nobody to trust in a list that does not fit */
        return LOOM_ERR_INVALID;
    }
    memcpy(notices->to, (const uint8_t *)data + sizeof(req), list_len);
    for (i = 0; i < notices->count; ++i) {
        notices->to[i].proc    = loom_from_le64(notices->to[i].proc);
        notices->to[i].counter = loom_from_le64(notices->to[i].counter);
    }
    *key_p     = (const uint8_t *)data + sizeof(req) + list_len;
    *key_len_p = length - sizeof(req) - list_len;
    return LOOM_OK;
}

int loom_push_req_form(loom_engine_t *engine, const void *data, size_t length)
{
    loom_serve_notices_t notices;
    const loom_wire_key_t *dst_key;
    const uint8_t *key;
    size_t key_len;
    int rc = (length > LOOM_OP_MSG_MAX) ? LOOM_ERR_INVALID : LOOM_OK;

    /* no request of ours is longer than what an op holds: a longer one
     * only makes the owner keep its bytes while it waits */
    if (LOOM_OK == rc) {
        rc = loom_push_req_notices(data, length, &notices, &key, &key_len);
    }
    if (LOOM_OK == rc) {
        rc = loom_key_parse_whole(engine, key, key_len, &dst_key);
    }
    if (LOOM_OK != rc) {
        loom_log(engine, LOOM_LOG_WARN, "a push request of %zu bytes does not hold what its "
                 "notices and destination key need (at most %d bytes, nothing behind the key)",
                 length, LOOM_OP_MSG_MAX);
    }
    return rc;
}

void loom_push_refuse(loom_engine_t *engine, int rail, const void *data, size_t length, int rc)
{
    loom_serve_notices_t notices;
    loom_wire_push_req_t req;
    const uint8_t *key;
    size_t key_len;

    memcpy(&req, data, sizeof(req)); /* the caller checked the header's length */
    ++engine->push.stats.refused;
    if (rail >= 0) {
        ++engine->rails[rail].stats.refused;
    }
    /* a region gone is what a late request of a failed rail's old
     * connection, or one of a re-driven get, meets: no news */
    loom_log(engine, (LOOM_ERR_NOT_FOUND == rc || LOOM_ERR_STALE_KEY == rc ||
                      LOOM_ERR_CANCELLED == rc) ? LOOM_LOG_INFO : LOOM_LOG_WARN,
             "refused a push request of %llu bytes from %#llx: %s",
             (unsigned long long)loom_from_le64(req.length),
             (unsigned long long)loom_from_le64(req.requester), loom_strerror(rc));
    /* a cancellation is no refusal: bounded by the pushes that may wait */
    loom_push_done_send(engine, loom_from_le64(req.notify_proc), rail,
                        loom_from_le64(req.request_id), 0, rc, LOOM_ERR_CANCELLED != rc);
    /* a malformed list names nobody: only the requester hears of it */
    (void)loom_push_req_notices(data, length, &notices, &key, &key_len);
    loom_push_notices_send(engine, &notices, loom_from_le64(req.request_id), 0, rc);
}

/* A chunk of the requester's striped get, reading into its own memory: it
 * goes by the rail its request came by (LOOM_WIRE_FLAG_ON_RAIL). */
static bool loom_push_req_on_rail(const loom_peer_t *dest, int rail,
                                  const loom_wire_push_req_t *req)
{
    return rail >= 0 && (req->hdr.flags & LOOM_WIRE_FLAG_ON_RAIL) &&
           dest->name == loom_from_le64(req->requester);
}

/* The rail the data goes by: a striped get's chunk on the rail its request
 * came by; anything else on the destination's RDMA rail (unless striped). */
static int loom_push_serve_rail(loom_peer_t *dest, int rail, const loom_wire_push_req_t *req)
{
    if (loom_push_req_on_rail(dest, rail, req) && dest->rails[rail].usable) {
        return rail;
    }
    return loom_peer_rdma_rail(dest);
}

/* Every check a request passes before it is served; the destination's
 * rkey on the rail the data goes by comes back in rkey, and its whole key
 * (every rail's, within data) in key and key_len. */
static int loom_push_check(loom_engine_t *engine, int rail, uint64_t asker, const void *data,
                           size_t length, loom_serve_notices_t *notices, loom_peer_t **dest_p, int *dest_rail_p,
                           loom_region_t **region_p, uct_rkey_bundle_t *rkey,
                           loom_wire_key_t *dst_fields, const uint8_t **key_p,
                           size_t *key_len_p)
{
    const loom_wire_key_t *dst_key;
    loom_wire_push_req_t req;
    const uint8_t *key;
    size_t key_len;
    loom_peer_t *dest;
    uint64_t len;
    unsigned i;
    int rc;

    memcpy(&req, data, sizeof(req));
    len = loom_from_le64(req.length);
    rc  = loom_push_req_notices(data, length, notices, &key, &key_len);
    for (i = 0; LOOM_OK == rc && i < notices->count; ++i) {
        if (notices->to[i].proc != engine->config.name &&
            NULL == loom_peer_lookup(engine, notices->to[i].proc)) {
            loom_log(engine, LOOM_LOG_WARN, "a push request names process %#llx to tell, "
                     "which is not connected here", (unsigned long long)notices->to[i].proc);
            rc = LOOM_ERR_INVALID;
        }
    }
    if (LOOM_OK == rc) {
        rc = loom_key_parse_whole(engine, key, key_len, &dst_key);
    }
    dest = loom_peer_lookup(engine, loom_from_le64(req.dest_proc));
    if (LOOM_OK == rc && NULL == dest) {
        rc = LOOM_ERR_INVALID; /* not connected, or ourselves: a copy is no push */
    }
    if (LOOM_OK == rc && !loom_key_covers(dst_key, loom_from_le64(req.dst_addr), len)) {
        rc = LOOM_ERR_RANGE; /* the destination checks again where it can */
    }
    if (LOOM_OK == rc) {
        rc = loom_region_check(engine, loom_from_le64(req.src_region_id),
                               loom_from_le32(req.src_epoch), loom_from_le64(req.src_addr),
                               len, region_p);
    }
    if (LOOM_OK == rc && !((*region_p)->access & LOOM_ACCESS_REMOTE_READ) &&
        asker != engine->config.name) {
        /* registered without remote read: only we may read it, whatever
         * path a peer's request took (a multicast is served as our own) */
        rc = LOOM_ERR_STALE_KEY;
    }
    if (LOOM_OK != rc) {
        return rc;
    }
    *dest_rail_p = loom_push_serve_rail(dest, rail, &req);
    /* the rail that will carry it, not the one the request came by */
    if (len > engine->rails[*dest_rail_p].info.put_max) {
        return LOOM_ERR_INVALID;
    }
    if (rail >= 0 && dest->serves >= LOOM_PUSH_WINDOW) {
        /* peers' requests only: our own pushes are as many as we asked for */
        loom_msg_over_limit(engine, rail, loom_from_le64(req.requester), "a push request");
        return LOOM_ERR_LIMIT;
    }
    *dest_p     = dest;
    *dst_fields = loom_key_fields(dst_key);
    *key_p      = key;
    *key_len_p  = key_len;
    return loom_key_rkey(engine, dst_key, *dest_rail_p, rkey);
}

/* A push to a process we reach by several rails goes by the stripe path,
 * like any put (the destination's key names every rail): cut into chunks
 * when large, else as one chunk on the rail expected to finish it first,
 * placed again if that rail fails.  On the message rail alone, a chain of
 * segments below the stripe threshold shared one of two 200 mbit rails
 * with every notice and took 3.6x as long.  Not a chunk of a striped get
 * already placed on the rail its request came by. */
static bool loom_push_serve_striped(loom_peer_t *dest, int rail,
                                    const loom_wire_push_req_t *req)
{
    return !loom_push_req_on_rail(dest, rail, req) && loom_stripe_guarded(dest);
}

/* The destination's counter that its notice names, for its checked write
 * to add to as it lands (push_landed.c); none for the data of a get, whose
 * last segment is its notice. */
static void loom_push_serve_count(loom_op_t *op, const loom_serve_notices_t *notices)
{
    uint32_t i;

    op->count_request = 0;
    for (i = 0; i < notices->count && op->notify != op->peer->name; ++i) {
        if (notices->to[i].proc == op->peer->name && 0 != notices->to[i].counter) {
            op->count_requester = notices->requester;
            op->count_request   = op->id;
            op->count_counter   = notices->to[i].counter;
            return;
        }
    }
}

/* The striped serve's chunks all ended: so does the serve. */
static void loom_push_serve_chunks_done(loom_op_t *parent, int status)
{
    loom_op_t *op = parent->user;

    loom_op_free_owned(op->peer->engine, parent);
    loom_rdma_complete(op, status);
}

/*
 * A serve queued to go striped (its destination key kept behind its notices
 * in msg) goes now, from progress: by chunks over the rails to the
 * destination (one when it is below the stripe threshold), each with that
 * rail's key of the destination.  It stays bound
 * to its region, in LOOM_STAGE_CHUNKS, until the last chunk ended, so that a
 * deregistration waits for them.  LOOM_OK, or an error (it failed).
 */
int loom_push_serve_stripe(loom_op_t *op)
{
    loom_engine_t *engine = op->peer->engine;
    loom_op_t *parent = loom_op_alloc_owned(engine);
    int rc;

    if (NULL == parent) {
        return LOOM_ERR_NOMEM;
    }
    parent->cb   = loom_push_serve_chunks_done;
    parent->user = op;
    /* counted on landing only when it goes whole, as one chunk (stripe.c) */
    parent->count_requester = op->count_requester;
    parent->count_request   = op->count_request;
    parent->count_counter   = op->count_counter;
    rc = loom_stripe_start(op->peer, parent, LOOM_OP_PUT, op->local, op->region, op->remote,
                           op->msg + sizeof(loom_serve_notices_t),
                           op->msg_len - sizeof(loom_serve_notices_t), op->length,
                           loom_stripe_wanted(op->peer, op->length));
    if (rc < 0) {
        loom_op_free_owned(engine, parent);
        return rc;
    }
    if (op->rkey_valid) {
        uct_rkey_release(engine->rails[op->rail].component, &op->rkey);
        op->rkey_valid = false; /* every chunk unpacks the key of its own rail */
    }
    op->stage = LOOM_STAGE_CHUNKS;
    return LOOM_OK;
}

void loom_push_serve(loom_engine_t *engine, int rail, uint64_t asker, const void *data,
                     size_t length)
{
    loom_serve_notices_t notices;
    loom_wire_key_t dst_fields;
    loom_wire_push_req_t req;
    loom_region_t *region = NULL;
    uct_rkey_bundle_t rkey;
    loom_peer_t *dest = NULL;
    const uint8_t *key;
    size_t key_len;
    loom_op_t *op;
    int rc, dest_rail = 0;

    memcpy(&req, data, sizeof(req));
    /* a peer's request is answered to a peer (its receiver refused one
     * naming this process), ours (rail -1) to ourselves */
    if (rail >= 0 && NULL == loom_peer_lookup(engine, loom_from_le64(req.notify_proc))) {
        ++engine->push.stats.refused;
        ++engine->rails[rail].stats.refused;
        loom_log(engine, LOOM_LOG_WARN, "refused a push request whose process to notify "
                 "(%#llx) is not connected", (unsigned long long)loom_from_le64(req.notify_proc));
        return;
    }
    rc = loom_push_check(engine, rail, asker, data, length, &notices, &dest, &dest_rail, &region,
                         &rkey, &dst_fields, &key, &key_len);
    op = (LOOM_OK == rc) ? loom_op_alloc_ctrl(engine) : NULL;
    if (LOOM_OK == rc && NULL == op) {
        uct_rkey_release(engine->rails[dest_rail].component, &rkey);
        rc = LOOM_ERR_NOMEM;
    }
    if (LOOM_OK != rc) {
        loom_push_refuse(engine, rail, data, length, rc);
        return;
    }
    loom_op_start(dest, op, LOOM_OP_SERVE, LOOM_STAGE_ISSUE);
    ++dest->serves;
    ++engine->push.stats.served;
    op->rail          = dest_rail;
    op->rkey          = rkey;
    op->rkey_valid    = true;
    op->local         = (void *)(uintptr_t)loom_from_le64(req.src_addr);
    op->remote        = loom_from_le64(req.dst_addr);
    op->length        = loom_from_le64(req.length);
    op->memh          = region->memh[dest_rail];
    loom_serve_bind(op, region);
    op->id            = loom_from_le64(req.request_id);
    op->remote_region = loom_from_le64(dst_fields.region_id);
    op->remote_epoch  = dst_fields.epoch;
    op->notify        = loom_from_le64(req.notify_proc);
    memcpy(op->msg, &notices, sizeof(notices)); /* told when it ends */
    loom_push_serve_count(op, &notices);
    if (loom_push_serve_striped(dest, rail, &req) &&
        sizeof(notices) + key_len <= sizeof(op->msg)) {
        memcpy(op->msg + sizeof(notices), key, key_len); /* loom_push_serve_stripe */
        op->msg_len = sizeof(notices) + key_len;
    }
    /* Issued from progress, not from inside a UCT callback. */
    loom_op_queue(dest, op);
}
