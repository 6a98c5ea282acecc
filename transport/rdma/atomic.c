/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Atomics (transport.h, loom_atomic): a request travels as an engine message
 * in the peer's message stream, so that it is delivered, and run, exactly
 * once even when its rail fails and the stream is sent again on another;
 * the target's CPU runs it on the word, after checking it as a write, and
 * answers with the word's earlier value, also as an engine message.
 */
#include "rdma/loom_rdma.h"

#include <string.h>

/*
 * loom_atomic_apply32/64: the operation done on the word atomically; returns
 * the value the word held before.  Those the CPU has an instruction for go
 * straight to it, the rest loop on compare-and-swap.
 */
#define LOOM_ATOMIC_APPLY(_bits) \
    static uint##_bits##_t loom_atomic_apply##_bits(uint##_bits##_t *word, int op, \
                                                    uint##_bits##_t operand, \
                                                    uint##_bits##_t compare) \
    { \
        uint##_bits##_t old, next; \
        \
        switch (op) { \
        case LOOM_ATOMIC_ADD:  return __atomic_fetch_add(word, operand, __ATOMIC_ACQ_REL); \
        case LOOM_ATOMIC_AND:  return __atomic_fetch_and(word, operand, __ATOMIC_ACQ_REL); \
        case LOOM_ATOMIC_OR:   return __atomic_fetch_or(word, operand, __ATOMIC_ACQ_REL); \
        case LOOM_ATOMIC_XOR:  return __atomic_fetch_xor(word, operand, __ATOMIC_ACQ_REL); \
        case LOOM_ATOMIC_SWAP: return __atomic_exchange_n(word, operand, __ATOMIC_ACQ_REL); \
        case LOOM_ATOMIC_CSWAP: \
            old = compare; \
            (void)__atomic_compare_exchange_n(word, &old, operand, false, __ATOMIC_ACQ_REL, \
                                              __ATOMIC_ACQUIRE); \
            return old; \
        default: \
            break; \
        } \
        old = __atomic_load_n(word, __ATOMIC_ACQUIRE); \
        do { \
            switch (op) { \
            case LOOM_ATOMIC_LAND: next = (0 != old) && (0 != operand); break; \
            case LOOM_ATOMIC_LOR:  next = (0 != old) || (0 != operand); break; \
            case LOOM_ATOMIC_LXOR: next = (0 != old) != (0 != operand); break; \
            case LOOM_ATOMIC_MIN: \
                next = ((int##_bits##_t)operand < (int##_bits##_t)old) ? operand : old; \
                break; \
            default: /* LOOM_ATOMIC_MAX */ \
                next = ((int##_bits##_t)operand > (int##_bits##_t)old) ? operand : old; \
                break; \
            } \
        } while (!__atomic_compare_exchange_n(word, &old, next, false, __ATOMIC_ACQ_REL, \
                                              __ATOMIC_ACQUIRE)); \
        return old; \
    }

LOOM_ATOMIC_APPLY(32)
LOOM_ATOMIC_APPLY(64)

int loom_atomic_check(loom_engine_t *engine, int atomic_op, unsigned size,
                      uint64_t addr)
{
    const char *why = (4 != size && 8 != size) ? "4 or 8 bytes only"
                    : (atomic_op < 0 || atomic_op >= LOOM_ATOMIC_LAST) ? "no such operation"
                    : (0 != addr % size) ? "not aligned to its size" : NULL;

    if (NULL != why) {
        loom_log(engine, LOOM_LOG_ERROR, "atomic %d of %u bytes at %#llx: %s", atomic_op,
                 size, (unsigned long long)addr, why);
        return LOOM_ERR_INVALID;
    }
    return LOOM_OK;
}

uint64_t loom_atomic_run(uint64_t addr, unsigned size, int atomic_op, uint64_t operand,
                         uint64_t compare)
{
    if (8 == size) {
        return loom_atomic_apply64((uint64_t *)(uintptr_t)addr, atomic_op, operand, compare);
    }
    return loom_atomic_apply32((uint32_t *)(uintptr_t)addr, atomic_op, (uint32_t)operand,
                               (uint32_t)compare);
}

void loom_atomic_result(void *result, unsigned size, uint64_t value)
{
    uint32_t value32 = (uint32_t)value;

    if (NULL != result) {
        memcpy(result, (8 == size) ? (const void *)&value : (const void *)&value32, size);
    }
}

int loom_atomic(loom_peer_t *peer, loom_op_t *op, int atomic_op, unsigned size,
                uint64_t remote_addr, const void *remote_key, size_t remote_key_size,
                uint64_t operand, uint64_t compare, void *result)
{
    loom_engine_t *engine = peer->engine;
    loom_wire_atomic_t *req = (loom_wire_atomic_t *)op->msg;
    const loom_wire_key_t *key;
    loom_wire_key_t fields;
    int rc;

    rc = loom_atomic_check(engine, atomic_op, size, remote_addr);
    if (LOOM_OK != rc) {
        return rc;
    }
    rc = loom_key_parse(engine, remote_key, remote_key_size, &key);
    if (LOOM_OK != rc) {
        return rc;
    }
    if (!loom_key_covers(key, remote_addr, size)) {
        return LOOM_ERR_RANGE;
    }
    if (peer->atomics >= LOOM_ATOMIC_WINDOW) {
        return LOOM_ERR_AGAIN;
    }
    fields = loom_key_fields(key);
    memset(req, 0, sizeof(*req));
    req->kind         = LOOM_WIRE_ATOMIC_REQ;
    req->op           = (uint8_t)atomic_op;
    req->size         = (uint8_t)size;
    req->region_id    = fields.region_id; /* both little-endian already */
    req->region_epoch = fields.epoch;
    req->addr         = loom_le64(remote_addr);
    req->operand      = loom_le64(operand);
    req->compare      = loom_le64(compare);
    op->id            = engine->next_request_id++;
    req->request_id   = loom_le64(op->id);
    if (0 != loom_hash_put(&engine->requests, op->id, op)) {
        return LOOM_ERR_NOMEM;
    }
    loom_op_start(peer, op, LOOM_OP_ATOMIC, LOOM_STAGE_SEND);
    op->rail             = peer->am_rail;
    op->local            = result;
    op->length           = size;
    op->msg_len          = sizeof(*req);
    op->msg_iov.iov_base = op->msg;
    op->msg_iov.iov_len  = op->msg_len;
    ++peer->atomics;
    /* behind the messages queued to the peer: it is one of them */
    return loom_op_submit(peer, op, loom_atomic_advance, loom_op_finish);
}

/* Send the request now: LOOM_OK (it waits for the reply), LOOM_ERR_AGAIN, or
 * an error. */
int loom_atomic_advance(loom_op_t *op)
{
    int rc = loom_am_send_now(op->peer, LOOM_WIRE_TAG_ENGINE, &op->msg_iov, 1, NULL);

    if (LOOM_OK == rc) {
        op->stage = LOOM_STAGE_WAIT;
    }
    return rc;
}

static void loom_atomic_reply_free(loom_op_t *op, int status)
{
    (void)status;
    --op->peer->atomic_replies;
    loom_op_free_owned(op->peer->engine, op);
}

/* Answer a request of the peer: at most LOOM_ATOMIC_WINDOW wait to leave
 * (a requester keeps no more unanswered; a hostile one's beyond are
 * dropped, and counted, after the operation ran). */
static void loom_atomic_reply(loom_peer_t *peer, int rail, const loom_wire_atomic_t *req,
                              uint32_t status, uint64_t result)
{
    loom_wire_atomic_t reply = *req;

    if (peer->atomic_replies >= LOOM_ATOMIC_WINDOW) {
        loom_msg_over_limit(peer->engine, rail, peer->name, "an atomic's answer");
        return;
    }
    reply.kind   = LOOM_WIRE_ATOMIC_REPLY;
    reply.status = loom_le32(status);
    reply.result = loom_le64(result);
    if (LOOM_INPROGRESS == loom_engine_msg_send(peer, &reply, sizeof(reply),
                                                loom_atomic_reply_free)) {
        ++peer->atomic_replies; /* until it leaves */
    }
}

/* The target's side: check the request as a write, run it, answer. */
static void loom_atomic_serve(loom_peer_t *peer, int rail, const loom_wire_atomic_t *req)
{
    loom_engine_t *engine = peer->engine;
    uint64_t addr = loom_from_le64(req->addr), result = 0;
    loom_region_t *region = NULL;
    int rc;

    rc = loom_region_check(engine, loom_from_le64(req->region_id), req->region_epoch, addr,
                           req->size, &region);
    if (LOOM_OK == rc && !(region->access & LOOM_ACCESS_REMOTE_ATOMIC)) {
        rc = LOOM_ERR_STALE_KEY; /* its key gives no atomic access */
    }
    if (LOOM_OK == rc) {
        rc = loom_atomic_check(engine, req->op, req->size, addr);
    }
    if (LOOM_OK != rc) {
        ++engine->rails[rail].stats.refused;
        loom_log(engine, LOOM_LOG_WARN, "refused an atomic of peer %#llx on %u bytes at "
                 "%#llx: %s", (unsigned long long)peer->name, req->size,
                 (unsigned long long)addr, loom_strerror(rc));
    } else {
        ++engine->rails[rail].stats.atomics;
        result = loom_atomic_run(addr, req->size, req->op, loom_from_le64(req->operand),
                                 loom_from_le64(req->compare));
    }
    loom_atomic_reply(peer, rail, req, loom_rc_to_wire(rc), result);
}

/* The requester's side: the answer completes our op. */
static void loom_atomic_answered(loom_peer_t *peer, int rail, const loom_wire_atomic_t *reply)
{
    loom_op_t *op = loom_hash_get(&peer->engine->requests,
                                  loom_from_le64(reply->request_id));
    if (NULL == op || op->peer != peer || LOOM_OP_ATOMIC != op->kind ||
        LOOM_STAGE_WAIT != op->stage) {
        ++peer->engine->rails[rail].stats.refused;
        loom_log(peer->engine, LOOM_LOG_WARN, "an atomic's answer from peer %#llx for no "
                 "atomic of ours waiting; dropped", (unsigned long long)peer->name);
        return;
    }
    loom_atomic_result(op->local, (unsigned)op->length, loom_from_le64(reply->result));
    loom_op_finish(op, loom_wire_to_rc(loom_from_le32(reply->status)));
}

/* An engine message of the peer, delivered in order (msg_deliver.c). */
void loom_atomic_recv(loom_peer_t *peer, int rail, const void *data, size_t length)
{
    loom_wire_atomic_t msg;

    (void)length; /* checked by the engine's dispatch */
    memcpy(&msg, data, sizeof(msg)); /* at any alignment in a slot or an AM */
    if (LOOM_WIRE_ATOMIC_REQ == msg.kind && peer->engine->quiet) {
        /* Run on an application's thread only: Open MPI 4.1.4's osc rdma
         * does a process's own compare-and-swap on its window with plain
         * loads and stores, under a lock peers' atomics never take; one of
         * ours run by the progress thread in between would be lost. */
        loom_msg_wait_for_full(peer, rail, LOOM_WIRE_TAG_ENGINE, data, length);
    } else if (LOOM_WIRE_ATOMIC_REQ == msg.kind) {
        loom_atomic_serve(peer, rail, &msg);
    } else {
        loom_atomic_answered(peer, rail, &msg);
    }
}
