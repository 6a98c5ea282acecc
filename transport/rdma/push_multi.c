/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Multicast pushes (seed 002's broadcast RDMA): one request asks the owner
 * of some memory to push it to several destinations, each with its own key.
 * The requester sends the request as engine messages (once, in order,
 * across rail failures; as many as the destinations' keys need) and waits
 * on one op per destination.  The owner serves each destination as a push
 * of its own memory (push.c's local path: checked, striped, failed over,
 * waiting on a counter like any push) and answers each by engine message
 * as it ends, so one destination refused or gone fails alone.
 */
#include "rdma/loom_rdma.h"

#include <string.h>

#if LOOM_PUSH_DESTS_MAX != LOOM_WIRE_PUSH_DESTS_MAX
#error "the public and the wire bound on destinations differ"
#endif

/* A request's source and condition, shared by its destinations. */
typedef struct loom_push_multi_src {
    loom_wire_key_t fields; /* region_id and epoch (little-endian) */
    uint64_t        src_addr;
    uint64_t        length;
    uint64_t        cond_counter;
    uint64_t        cond_threshold;
} loom_push_multi_src_t;

/* One destination, read from a request or from the caller's arguments. */
typedef struct loom_push_multi_one {
    uint64_t       proc;
    uint64_t       dst_addr;
    uint64_t       request_id;
    uint64_t       counter;
    bool           notify;
    const uint8_t *key;
    size_t         key_len;
} loom_push_multi_one_t;

static void loom_push_multi_served(loom_op_t *op, int status);

/* ---- the requester's side ---------------------------------------------------- */

/* The answer for one destination (from the owner, or from ourselves when
 * we own the memory): its op completes. */
static void loom_push_multi_answer(loom_engine_t *engine, int rail, uint64_t owner,
                                   uint64_t request_id, uint64_t length, int rc)
{
    loom_op_t *op = loom_hash_get(&engine->requests, request_id);

    /* one of our requests waiting for this owner's answer, not a push we
     * serve for someone (those end by our own PUSH_DONE) */
    if (NULL == op || LOOM_OP_PUSH_REQ != op->kind || LOOM_STAGE_WAIT != op->stage ||
        op->multi_peer != owner || loom_push_multi_served == op->cb ||
        (LOOM_OK == rc && length != op->length)) {
        if (rail >= 0) {
            ++engine->rails[rail].stats.refused;
        }
        /* none: a request that failed with its destination or owner meanwhile */
        loom_log(engine, (NULL == op) ? LOOM_LOG_INFO : LOOM_LOG_WARN, "refused an answer "
                 "of %#llx for multicast push request %llu: no such request waits for it",
                 (unsigned long long)owner, (unsigned long long)request_id);
        return;
    }
    if (LOOM_OK != rc) {
        loom_log(engine, LOOM_LOG_ERROR, "multicast push of %zu bytes to %#llx failed at "
                 "owner %#llx: %s", op->length, (unsigned long long)op->notify,
                 (unsigned long long)owner, loom_strerror(rc));
    }
    loom_rdma_complete(op, rc); /* also leaves the table */
}

void loom_push_multi_done_recv(loom_peer_t *peer, int rail, const void *data)
{
    loom_wire_push_multi_done_t done;

    memcpy(&done, data, sizeof(done));
    loom_push_multi_answer(peer->engine, rail, peer->name, loom_from_le64(done.request_id),
                           loom_from_le64(done.length),
                           loom_wire_to_rc(loom_from_le32(done.status)));
}

/* ---- the owner's side -------------------------------------------------------- */

/* Tell the requester how one destination ended. */
static void loom_push_multi_reply(loom_engine_t *engine, uint64_t requester,
                                  uint64_t request_id, uint64_t length, int rc)
{
    loom_wire_push_multi_done_t done;
    loom_peer_t *peer;

    if (requester == engine->config.name) {
        loom_push_multi_answer(engine, -1, requester, request_id, length, rc);
        return;
    }
    memset(&done, 0, sizeof(done));
    done.kind       = LOOM_WIRE_PUSH_MULTI_DONE;
    done.status     = loom_le32(loom_rc_to_wire(rc));
    done.request_id = loom_le64(request_id);
    done.length     = loom_le64((LOOM_OK == rc) ? length : 0);
    peer = loom_peer_lookup(engine, requester);
    if (NULL == peer || loom_engine_msg_send(peer, &done, sizeof(done), NULL) < 0) {
        loom_log(engine, LOOM_LOG_INFO, "multicast push request %llu: its requester %#llx "
                 "is gone", (unsigned long long)request_id, (unsigned long long)requester);
    }
}

/* One destination's push, of our own memory, ended. */
static void loom_push_multi_served(loom_op_t *op, int status)
{
    loom_engine_t *engine = op->peer->engine;

    loom_push_multi_reply(engine, op->multi_peer, op->multi_id, op->length, status);
    loom_op_free_owned(engine, op);
}

/* Serve one destination for requester: a push of our own memory, with
 * the destination's notice if it asked for one. */
static void loom_push_multi_serve(loom_engine_t *engine, uint64_t requester,
                                  const loom_push_multi_src_t *src,
                                  const loom_push_multi_one_t *one)
{
    loom_peer_t *dest = loom_peer_lookup(engine, one->proc);
    loom_push_notice_to_t notice = {one->proc, one->counter};
    loom_push_args_t args;
    loom_op_t *op;
    int rc;

    if (NULL == dest) {
        loom_log(engine, LOOM_LOG_WARN, "a multicast push request of %#llx names "
                 "destination %#llx, which is not connected here",
                 (unsigned long long)requester, (unsigned long long)one->proc);
        loom_push_multi_reply(engine, requester, one->request_id, 0, LOOM_ERR_INVALID);
        return;
    }
    op = loom_op_alloc_owned(engine);
    if (NULL == op) {
        loom_push_multi_reply(engine, requester, one->request_id, 0, LOOM_ERR_NOMEM);
        return;
    }
    memset(&args, 0, sizeof(args));
    args.owner          = engine->config.name;
    args.src_addr       = src->src_addr;
    args.src_key        = &src->fields;
    args.dest           = one->proc;
    args.dst_addr       = one->dst_addr;
    args.dst_key        = one->key;
    args.dst_key_size   = one->key_len;
    args.length         = (size_t)src->length;
    args.cond_counter   = src->cond_counter;
    args.cond_threshold = src->cond_threshold;
    args.notices        = one->notify ? &notice : NULL;
    args.notice_count   = one->notify ? 1 : 0;
    rc = loom_push_req_build(engine, op, &args);
    if (LOOM_OK != rc) {
        loom_op_free_owned(engine, op);
        loom_push_multi_reply(engine, requester, one->request_id, 0, rc);
        return;
    }
    op->cb         = loom_push_multi_served;
    op->multi_peer = requester; /* after the build, which makes it a push of ours */
    op->multi_id   = one->request_id;
    ++engine->push.stats.multi_served;
    loom_push_issue_local(engine, dest, op); /* checked, served or refused there */
}

/* The destinations of a request, in place: LOOM_OK with all of them in
 * ones, or an error with the count of those that could be read. */
static int loom_push_multi_parse(const uint8_t *data, size_t length, unsigned count,
                                 loom_push_multi_one_t *ones, unsigned *read_p)
{
    size_t off = sizeof(loom_wire_push_multi_t);
    loom_wire_push_dest_t entry;
    unsigned i;

    for (i = 0; i < count; ++i) {
        if (length - off < sizeof(entry)) {
            break;
        }
        memcpy(&entry, data + off, sizeof(entry));
        off += sizeof(entry);
        ones[i].proc       = loom_from_le64(entry.proc);
        ones[i].dst_addr   = loom_from_le64(entry.dst_addr);
        ones[i].request_id = loom_from_le64(entry.request_id);
        ones[i].counter    = loom_from_le64(entry.counter);
        ones[i].notify     = 0 != (entry.flags & LOOM_WIRE_PUSH_DEST_NOTIFY);
        ones[i].key        = data + off;
        ones[i].key_len    = loom_from_le16(entry.key_len);
        if (length - off < ones[i].key_len) {
            break;
        }
        off += ones[i].key_len;
    }
    *read_p = i;
    return (i == count && off == length) ? LOOM_OK : LOOM_ERR_INVALID;
}

void loom_push_multi_recv(loom_peer_t *peer, int rail, const void *data, size_t length)
{
    loom_engine_t *engine = peer->engine;
    loom_push_multi_one_t ones[LOOM_WIRE_PUSH_DESTS_MAX];
    loom_wire_push_multi_t req;
    loom_push_multi_src_t src;
    unsigned count, read = 0, i;
    int rc;

    memcpy(&req, data, sizeof(req)); /* the engine's dispatch checked the length */
    count = req.dest_count;
    rc = (0 == count || count > LOOM_WIRE_PUSH_DESTS_MAX)
             ? LOOM_ERR_INVALID : loom_push_multi_parse(data, length, count, ones, &read);
    if (LOOM_OK != rc) {
        /* the destinations that could be read hear of it; a request whose
         * length lies names nobody else */
        ++engine->rails[rail].stats.refused;
        ++engine->push.stats.refused;
        loom_log(engine, LOOM_LOG_WARN, "refused a multicast push request of %#llx: %u "
                 "destinations do not fit its %zu bytes", (unsigned long long)peer->name,
                 count, length);
        for (i = 0; i < read; ++i) {
            loom_push_multi_reply(engine, peer->name, ones[i].request_id, 0, LOOM_ERR_INVALID);
        }
        return;
    }
    memset(&src, 0, sizeof(src));
    src.fields.region_id = req.src_region_id; /* both little-endian */
    src.fields.epoch     = req.src_epoch;
    src.src_addr         = loom_from_le64(req.src_addr);
    src.length           = loom_from_le64(req.length);
    src.cond_counter     = loom_from_le64(req.cond_counter);
    src.cond_threshold   = loom_from_le64(req.cond_threshold);
    for (i = 0; i < count; ++i) {
        loom_push_multi_serve(engine, peer->name, &src, &ones[i]);
    }
}

/* ---- the request ------------------------------------------------------------ */

static int loom_push_multi_check(loom_engine_t *engine, const loom_push_multi_args_t *args)
{
    const loom_wire_key_t *key;
    const char *what = NULL;
    unsigned i;

    if (NULL == args || 0 == args->owner || NULL == args->dests || 0 == args->dest_count ||
        args->dest_count > LOOM_PUSH_DESTS_MAX) {
        what = "no owner, or not 1 to 64 destinations";
    } else if (0 != args->cond_counter && 0 == args->cond_threshold) {
        what = "a condition with threshold 0 (push at once: no counter)";
    } else if (LOOM_OK != loom_key_parse(engine, args->src_key, args->src_key_size, &key)) {
        what = "the owner's key is malformed";
    }
    for (i = 0; NULL == what && i < args->dest_count; ++i) {
        const loom_push_dest_t *dest = &args->dests[i];

        if (0 == dest->proc || dest->proc == args->owner || NULL == dest->op) {
            what = "a destination is no process, the owner itself, or has no op";
        } else if (LOOM_OK != loom_key_parse(engine, dest->dst_key, dest->dst_key_size, &key)) {
            what = "a destination's key is malformed";
        } else if (sizeof(loom_wire_push_multi_t) + sizeof(loom_wire_push_dest_t) +
                       dest->dst_key_size > LOOM_OP_MSG_MAX) {
            what = "a destination's key does not fit in a request";
        } else if (args->owner == engine->config.name &&
                   NULL == loom_peer_lookup(engine, dest->proc)) {
            what = "a destination is not connected";
        }
    }
    if (NULL != what) {
        loom_log(engine, LOOM_LOG_ERROR, "loom_push_multi: %s", what);
        return LOOM_ERR_INVALID;
    }
    return LOOM_OK;
}

/* op waits, on peer, for the answer about destination dest. */
static void loom_push_multi_wait(loom_engine_t *engine, loom_peer_t *peer, loom_op_t *op,
                                 uint64_t owner, const loom_push_dest_t *dest, size_t length)
{
    op->id         = engine->next_request_id++;
    op->multi_peer = owner;
    op->notify     = dest->proc;
    op->length     = length;
    op->local      = NULL;
    loom_op_start(peer, op, LOOM_OP_PUSH_REQ, LOOM_STAGE_WAIT);
    op->rail = -1; /* answered by engine message: only the owner's loss fails it */
    ++peer->push_reqs;
    if (0 != loom_hash_put(&engine->requests, op->id, op)) {
        loom_op_finish(op, LOOM_ERR_NOMEM);
    }
}

/* Append a destination to the request in msg; false if it does not fit. */
static bool loom_push_multi_append(uint8_t *msg, size_t *len, const loom_push_dest_t *dest)
{
    loom_wire_push_multi_t *req = (loom_wire_push_multi_t *)msg;
    loom_wire_push_dest_t entry;

    if (*len + sizeof(entry) + dest->dst_key_size > LOOM_OP_MSG_MAX) {
        return false;
    }
    memset(&entry, 0, sizeof(entry));
    entry.proc       = loom_le64(dest->proc);
    entry.dst_addr   = loom_le64(dest->dst_addr);
    entry.request_id = loom_le64(dest->op->id);
    entry.counter    = loom_le64(dest->notify ? dest->counter : 0);
    entry.key_len    = loom_le16((uint16_t)dest->dst_key_size);
    entry.flags      = dest->notify ? LOOM_WIRE_PUSH_DEST_NOTIFY : 0;
    memcpy(msg + *len, &entry, sizeof(entry));
    memcpy(msg + *len + sizeof(entry), dest->dst_key, dest->dst_key_size);
    *len += sizeof(entry) + dest->dst_key_size;
    ++req->dest_count;
    return true;
}

/* Send the request in msg, which names dests[first, end): those that
 * cannot be told fail now. */
static void loom_push_multi_flush(loom_peer_t *owner, uint8_t *msg, size_t len,
                                  const loom_push_dest_t *dests, unsigned first, unsigned end)
{
    int rc = loom_engine_msg_send(owner, msg, len, NULL);
    unsigned i;

    ++owner->engine->push.stats.multi_requested;
    for (i = first; rc < 0 && i < end; ++i) {
        if (LOOM_STAGE_WAIT == dests[i].op->stage) {
            loom_op_finish(dests[i].op, rc);
        }
    }
}

int loom_push_multi(loom_engine_t *engine, const loom_push_multi_args_t *args)
{
    bool local = NULL != args && args->owner == engine->config.name;
    uint8_t msg[LOOM_OP_MSG_MAX];
    loom_push_multi_src_t src;
    loom_push_multi_one_t one;
    loom_wire_push_multi_t req;
    loom_peer_t *owner = NULL;
    unsigned i, first = 0;
    size_t len;
    int rc;

    rc = loom_push_multi_check(engine, args);
    if (LOOM_OK == rc && !local && NULL == (owner = loom_peer_lookup(engine, args->owner))) {
        loom_log(engine, LOOM_LOG_ERROR, "loom_push_multi: owner %#llx is not connected",
                 (unsigned long long)args->owner);
        rc = LOOM_ERR_UNREACH;
    }
    if (LOOM_OK != rc) {
        return rc;
    }
    memset(&req, 0, sizeof(req));
    req.kind           = LOOM_WIRE_PUSH_MULTI;
    src.fields         = loom_key_fields(args->src_key);
    req.src_region_id  = src.fields.region_id;
    req.src_epoch      = src.fields.epoch;
    req.src_addr       = loom_le64(args->src_addr);
    req.length         = loom_le64((uint64_t)args->length);
    req.cond_counter   = loom_le64(args->cond_counter);
    req.cond_threshold = loom_le64(args->cond_threshold);
    src.src_addr       = args->src_addr;
    src.length         = args->length;
    src.cond_counter   = args->cond_counter;
    src.cond_threshold = args->cond_threshold;
    memcpy(msg, &req, sizeof(req));
    len = sizeof(req);
    for (i = 0; i < args->dest_count; ++i) {
        const loom_push_dest_t *dest = &args->dests[i];

        loom_push_multi_wait(engine, local ? loom_peer_lookup(engine, dest->proc) : owner,
                             dest->op, args->owner, dest, args->length);
        if (LOOM_STAGE_WAIT != dest->op->stage) {
            continue; /* failed already */
        }
        if (local) { /* our own memory: served here, as a peer's request would be */
            one.proc       = dest->proc;
            one.dst_addr   = dest->dst_addr;
            one.request_id = dest->op->id;
            one.counter    = dest->counter;
            one.notify     = dest->notify;
            one.key        = dest->dst_key;
            one.key_len    = dest->dst_key_size;
            loom_push_multi_serve(engine, engine->config.name, &src, &one);
            continue;
        }
        if (!loom_push_multi_append(msg, &len, dest)) {
            loom_push_multi_flush(owner, msg, len, args->dests, first, i);
            memcpy(msg, &req, sizeof(req));
            len   = sizeof(req);
            first = i;
            (void)loom_push_multi_append(msg, &len, dest); /* one always fits (checked) */
        }
    }
    if (!local && len > sizeof(req)) {
        loom_push_multi_flush(owner, msg, len, args->dests, first, args->dest_count);
    }
    return LOOM_INPROGRESS;
}
