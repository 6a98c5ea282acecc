/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Checked writes: the software protection table of rails whose NIC checks
 * no keys (tcp: UCT ignores rkeys and writes wherever an address points).
 *
 * On such a rail a put, and the put of a push served, goes as LOOM_WIRE_PUT
 * messages (header + a segment of data); the target checks each against its
 * region table (loom_region_check: region, epoch, range), the region's access
 * and the rail's connection epoch before a byte is placed, and answers the
 * last segment with PUT_ACK.  The write completes at the writer with that
 * answer: placed at the target, as a flushed put, or refused.  The data of
 * a get (a serve to the requester) is not answered: its last segment tells
 * the requester, and the owner is done once UCT sent it.  The raw put stays
 * available with config.trust_network.
 */
#include "rdma/loom_rdma.h"

#include <string.h>

/* The write is the data of a get (a serve whose process to notify is its
 * destination): its last segment is the notice, and the requester, whose
 * own rail failure re-drives the get, needs nobody to wait for an answer. */
static bool loom_checked_put_notifies(const loom_op_t *op)
{
    return LOOM_OP_SERVE == op->kind && op->notify == op->peer->name;
}

/* Bytes per segment of a write of length: the fewest segments the rail
 * carries, of equal size (a 512 KiB get went as 524216 bytes and a segment
 * of 72), on a cache line where they fit, so that the target's copy of each
 * starts at one. */
static size_t loom_checked_seg_len(size_t length, size_t seg_max)
{
    size_t count = (length + seg_max - 1) / seg_max, seg;

    if (count <= 1) {
        return seg_max;
    }
    seg = (length + count - 1) / count;
    seg = (seg + 63) & ~(size_t)63;
    return (seg < seg_max) ? seg : seg_max;
}

/* Send what is left of the write, then wait for the acknowledgement (as a
 * put waits for its flush: a failing rail fails it, with the rail's other
 * operations on the wire). */
int loom_checked_put_advance(loom_op_t *op)
{
    loom_engine_t *engine = op->peer->engine;
    loom_peer_rail_t *prail = &op->peer->rails[op->rail];
    size_t seg_max = loom_checked_seg_len(op->length, engine->rails[op->rail].checked_seg);
    size_t length;
    bool notifies = loom_checked_put_notifies(op), last;
    ucs_status_t status = UCS_OK;
    loom_wire_put_t hdr;

    if (LOOM_STAGE_ISSUE == op->stage) {
        loom_rdma_comp_init(op);
        op->write_id   = notifies ? 0 : engine->next_request_id++; /* 0: no answer */
        op->rail_epoch = prail->rail_epoch;
        op->sent       = 0;
        if (!notifies && 0 != loom_hash_put(&engine->requests, op->write_id, op)) {
            op->write_id = 0;
            return LOOM_ERR_NOMEM;
        }
        op->stage = LOOM_STAGE_FLUSH; /* sending its segments */
    } else if (op->rail_epoch != prail->rail_epoch) {
        return LOOM_ERR_UNREACH; /* its connection is gone: the rest would be refused */
    }
    memset(&hdr, 0, sizeof(hdr));
    hdr.sender       = loom_le64(engine->config.name);
    hdr.write_id     = loom_le64(op->write_id);
    hdr.request_id   = loom_le64((LOOM_OP_SERVE == op->kind) ? op->id : op->count_request);
    hdr.region_id    = loom_le64(op->remote_region);
    hdr.addr         = loom_le64(op->remote);
    hdr.length       = loom_le64((uint64_t)op->length);
    hdr.region_epoch = op->remote_epoch;
    hdr.rail_epoch   = loom_le32(op->rail_epoch);
    if (0 != op->count_request && !notifies) {
        hdr.requester = loom_le64(op->count_requester);
        hdr.counter   = loom_le64(op->count_counter);
    }
    do {
        length = op->length - op->sent;
        if (length > seg_max) {
            length = seg_max;
        }
        loom_wire_hdr_fill(&hdr.hdr, LOOM_WIRE_PUT, 0, sizeof(hdr) + length);
        last = op->sent + length == op->length;
        hdr.hdr.flags = (notifies ? LOOM_WIRE_FLAG_NOTIFY : 0) | (last ? LOOM_WIRE_FLAG_LAST : 0) |
                        ((last && 0 != hdr.counter) ? LOOM_WIRE_FLAG_COUNT : 0);
        hdr.offset    = loom_le64((uint64_t)op->sent);
        /* Only the last segment of a get's data carries the op's completion:
         * tcp sends one zero-copy message at a time on an endpoint, so it
         * takes the last only after every earlier one went, and no segment
         * holds the op when the rail fails between two of them.  Other
         * writes complete with the target's acknowledgement, which comes
         * after their bytes. */
        status = loom_put_segment_post(op->peer, op->rail, &hdr,
                                       (const uint8_t *)op->local + op->sent, op->memh, length,
                                       (notifies && last) ? &op->comp : NULL);
        if (UCS_OK != status && UCS_INPROGRESS != status) {
            return (UCS_ERR_NO_RESOURCE == status) ? LOOM_ERR_AGAIN : loom_status_to_rc(status);
        }
        op->sent += length;
    } while (op->sent < op->length);
    if (notifies) {
        /* A get's data all posted: done once UCT holds none of it (as a
         * native serve that notified early, rdma.c), without the target's
         * PUT_ACK, one message less per get for the requester to send, and
         * without a flush, which on tcp asks the target for an answer too. */
        loom_serve_told(op); /* by the last segment: no PUSH_DONE follows */
        return loom_rdma_wait_on(op, status);
    }
    op->stage = LOOM_STAGE_WAIT;
    loom_wire_track(op);
    return LOOM_OK;
}

/* Our push request the write answers: waiting, to that peer, for exactly
 * that range. */
static loom_op_t *loom_checked_put_request(loom_engine_t *engine, loom_peer_t *peer,
                                           const loom_wire_put_t *put)
{
    uint64_t request_id = loom_from_le64(put->request_id);
    loom_op_t *req = (0 == request_id) ? NULL : loom_hash_get(&engine->requests, request_id);

    if (NULL != req && LOOM_OP_PUSH_REQ == req->kind && LOOM_STAGE_WAIT == req->stage &&
        req->peer == peer && (uint64_t)(uintptr_t)req->local == loom_from_le64(put->addr) &&
        req->length == loom_from_le64(put->length)) {
        return req;
    }
    return NULL;
}

/* May a write of the sender's land in [addr, addr+length) here?  The
 * protection table is the region table; a push destination needs no remote
 * write access when it is exactly what one of our waiting requests asked. */
static int loom_checked_put_allowed(loom_rail_t *rail, loom_peer_t *peer,
                                    const loom_wire_put_t *put)
{
    loom_engine_t *engine = rail->engine;
    uint64_t addr = loom_from_le64(put->addr), length = loom_from_le64(put->length);
    loom_region_t *region;
    int rc;

    if (peer->rails[rail->index].failed ||
        loom_from_le32(put->rail_epoch) != peer->rails[rail->index].rail_epoch) {
        /* a late write of a connection out of use: its writer fails it with
         * the rail, an answer would race with that */
        return LOOM_ERR_UNREACH;
    }
    rc = loom_region_check(engine, loom_from_le64(put->region_id),
                           loom_from_le32(put->region_epoch), addr, length, &region);
    if (LOOM_OK != rc || (region->access & LOOM_ACCESS_REMOTE_WRITE)) {
        return rc;
    }
    if (NULL != loom_checked_put_request(engine, peer, put)) {
        return LOOM_OK;
    }
    return LOOM_ERR_STALE_KEY; /* registered without remote write */
}

/* Late writes of a failed connection, and pushes for a request that no
 * longer waits (a striped get re-driven its chunk elsewhere and finished),
 * come with rail failures: counted, logged at info.  Anything else refused
 * is news, once per write (its last segment). */
static int loom_checked_refusal_level(const loom_wire_put_t *put, int rc)
{
    if (LOOM_ERR_UNREACH == rc ||
        (0 != put->request_id && (LOOM_ERR_NOT_FOUND == rc || LOOM_ERR_STALE_KEY == rc))) {
        return LOOM_LOG_INFO;
    }
    return (put->hdr.flags & LOOM_WIRE_FLAG_LAST) ? LOOM_LOG_WARN : LOOM_LOG_DEBUG;
}

ucs_status_t loom_checked_put_recv(void *arg, void *data, size_t length, unsigned flags)
{
    loom_rail_t *rail = arg;
    loom_engine_t *engine = rail->engine;
    loom_wire_put_t put;
    loom_wire_put_ack_t ack;
    loom_peer_t *peer;
    uint64_t offset, total;
    size_t seg;
    int rc;

    (void)flags;
    peer = loom_ctrl_recv_peer(rail, data, length, LOOM_WIRE_PUT, &put, sizeof(put),
                               "checked write");
    if (NULL == peer) {
        ++rail->stats.writes_refused;
        return UCS_OK;
    }
    seg    = length - sizeof(put);
    offset = loom_from_le64(put.offset);
    total  = loom_from_le64(put.length);
    rc = (offset > total || seg > total - offset) ? LOOM_ERR_INVALID
                                                  : loom_checked_put_allowed(rail, peer, &put);
    if ((LOOM_OK == rc || LOOM_ERR_NOT_FOUND == rc || LOOM_ERR_STALE_KEY == rc) &&
        loom_landed_again(engine, peer->name, loom_from_le64(put.requester),
                          loom_from_le64(put.request_id))) {
        /* a push that landed whole and may have counted, placed again (its
         * chunk re-driven after a rail failed): whoever waited on it may
         * own that memory by now, or have released it (its region gone: a
         * refusal would fail a push that landed).  Answered, not placed
         * (push_landed.c). */
        rc = LOOM_OK;
        if (put.hdr.flags & LOOM_WIRE_FLAG_LAST) {
            loom_log(engine, LOOM_LOG_INFO, "rail %s:%s: a push of %#llx that landed already "
                     "came again: not placed", rail->info.tl_name, rail->info.dev_name,
                     (unsigned long long)peer->name);
        }
    } else if (LOOM_OK == rc) {
        uintptr_t base = (uintptr_t)loom_from_le64(put.addr);
        /* a write is its sender's put (write id) or served get (request id) */
        uint64_t write = loom_from_le64(put.sender) ^ (loom_from_le64(put.write_id) << 1) ^
                         (loom_from_le64(put.request_id) << 33);
        bool stream = loom_copy_stream_wanted(engine, base, write, offset, seg, total);

        stream = loom_copy_placed((void *)(base + offset), (const uint8_t *)data + sizeof(put),
                                  seg, stream);
        ++rail->stats.writes_checked;
        rail->stats.writes_streamed += stream;
    } else {
        ++rail->stats.refused;
        ++rail->stats.writes_refused;
        loom_log(engine, loom_checked_refusal_level(&put, rc),
                 "rail %s:%s: refused a write of %llu bytes at %#llx (region %llu) from "
                 "%#llx: %s", rail->info.tl_name, rail->info.dev_name,
                 (unsigned long long)total, (unsigned long long)loom_from_le64(put.addr),
                 (unsigned long long)loom_from_le64(put.region_id),
                 (unsigned long long)peer->name,
                 (LOOM_ERR_UNREACH == rc) ? "late, of a connection taken out of use"
                                          : loom_strerror(rc));
    }
    if (!(put.hdr.flags & LOOM_WIRE_FLAG_LAST) || LOOM_ERR_UNREACH == rc) {
        return UCS_OK;
    }
    if (0 != put.write_id) { /* write id 0: nobody waits for an answer */
        memset(&ack, 0, sizeof(ack));
        loom_wire_hdr_fill(&ack.hdr, LOOM_WIRE_PUT_ACK, 0, sizeof(ack));
        ack.sender   = loom_le64(engine->config.name);
        ack.write_id = put.write_id;
        ack.status   = loom_le32(loom_rc_to_wire(rc));
        /* on the rail the data came by: behind nothing of another rail */
        (void)loom_ctrl_send(peer, rail->index, &ack, sizeof(ack));
    }
    if (LOOM_OK == rc && (put.hdr.flags & LOOM_WIRE_FLAG_COUNT)) {
        /* a push served whole in this write: it counts as it lands */
        loom_landed_record(engine, peer->name, loom_from_le64(put.requester),
                           loom_from_le64(put.request_id), loom_from_le64(put.counter));
    }
    if (put.hdr.flags & LOOM_WIRE_FLAG_NOTIFY) {
        /* the data of our get is here (or refused): no PUSH_DONE follows */
        loom_op_t *req = loom_checked_put_request(engine, peer, &put);

        if (NULL != req) {
            loom_rdma_complete(req, rc);
        }
    }
    return UCS_OK;
}

ucs_status_t loom_put_ack_recv(void *arg, void *data, size_t length, unsigned flags)
{
    loom_rail_t *rail = arg;
    loom_wire_put_ack_t ack;
    loom_peer_t *peer;
    loom_op_t *op;
    uint32_t status;
    int rc;

    (void)flags;
    peer = loom_ctrl_recv_peer(rail, data, length, LOOM_WIRE_PUT_ACK, &ack, sizeof(ack),
                               NULL);
    if (NULL == peer) {
        return UCS_OK;
    }
    op = loom_hash_get(&rail->engine->requests, loom_from_le64(ack.write_id));
    if (NULL == op || op->write_id != loom_from_le64(ack.write_id) || op->peer != peer ||
        LOOM_STAGE_WAIT != op->stage) {
        /* also the answer to a write failed with its rail meanwhile */
        ++rail->stats.refused;
        loom_log(rail->engine, LOOM_LOG_INFO, "rail %s:%s: dropped a write acknowledgement "
                 "for unknown write %llu", rail->info.tl_name, rail->info.dev_name,
                 (unsigned long long)loom_from_le64(ack.write_id));
        return UCS_OK;
    }
    status = loom_from_le32(ack.status);
    rc     = loom_wire_to_rc(status);
    if (LOOM_OK != rc) {
        /* a push's requester decides what its refusal means, and knows it */
        loom_log(rail->engine, (LOOM_OP_SERVE == op->kind) ? LOOM_LOG_INFO : LOOM_LOG_ERROR,
                 "peer %#llx refused our write of %zu bytes at %#llx: %s",
                 (unsigned long long)peer->name, op->length,
                 (unsigned long long)op->remote, loom_wire_status_str(status));
    }
    loom_wire_untrack(op);
    loom_rdma_complete(op, rc);
    return UCS_OK;
}
