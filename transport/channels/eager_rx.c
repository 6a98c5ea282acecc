/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Eager rings, receiving side of a direction: poll the ring, deliver ring
 * and AM messages in the order they were sent, return credits, and serve
 * the sender's requests for another phase: drain the old ring, replace it,
 * and RDMA-write the acknowledgement into the sender's box.
 */
#include "channels/loom_channels.h"

#include <stdlib.h>
#include <string.h>

void loom_eager_rx_drop(loom_peer_t *peer)
{
    loom_eager_rx_t *rx = &peer->eager.rx;

    if (0 != rx->phase) {
        --peer->engine->eager.stats.rings[rx->phase];
        ++peer->engine->eager.stats.rings[0];
    }
    loom_eager_mem_free(peer->engine, &rx->mem);
    rx->phase        = 0;
    rx->slot         = 0;
    rx->credits_owed = 0;
}

static void loom_eager_rx_refuse(loom_engine_t *engine, loom_rail_t *rail, uint64_t sender,
                                 const char *why)
{
    ++engine->eager.stats.refused;
    ++rail->stats.refused;
    loom_log(engine, LOOM_LOG_WARN, "rail %s:%s: refused an eager ring message from "
             "%#llx: %s", rail->info.tl_name, rail->info.dev_name,
             (unsigned long long)sender, why);
}

/* ---- delivery in order ------------------------------------------------------- */

/* The next slot: 1 when it arrived whole (*hdr_p, *length_p set), 0 while
 * it has not, -1 when its tail flag came with a length no slot can hold. */
static int loom_eager_rx_ready(loom_peer_t *peer, loom_wire_slot_t **hdr_p, size_t *length_p)
{
    loom_eager_rx_t *rx = &peer->eager.rx;
    uint8_t *end = rx->mem.buf + (size_t)(rx->slot + 1) * rx->mem.slot_size;
    const volatile loom_wire_slot_foot_t *foot = (const void *)(end - sizeof(*foot));
    uint32_t flag = loom_le32(loom_eager_flag(rx->ring_recv));
    volatile loom_wire_slot_t *hdr;
    size_t length;

    if (foot->tail != flag) {
        return 0;
    }
    length = loom_from_le32(foot->length);
    if (LOOM_WIRE_SLOT_BYTES(length) > rx->mem.slot_size) {
        return -1;
    }
    hdr = (volatile void *)(end - LOOM_WIRE_SLOT_BYTES(length));
    if (hdr->head != flag) {
        return 0; /* the tail arrived before the head */
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    *length_p = length;
    *hdr_p    = (loom_wire_slot_t *)hdr;
    return 1;
}

/* Done with the current slot: zero both flags so the next lap cannot
 * mistake them, and move on. */
static void loom_eager_rx_consume(loom_peer_t *peer, loom_wire_slot_t *hdr)
{
    loom_eager_rx_t *rx = &peer->eager.rx;
    uint8_t *end = rx->mem.buf + (size_t)(rx->slot + 1) * rx->mem.slot_size;

    if (NULL != hdr) {
        /* all of it: a later header of another length may start anywhere in here */
        memset(hdr, 0, (size_t)(end - (uint8_t *)hdr));
    }
    memset(end - sizeof(loom_wire_slot_foot_t), 0, sizeof(loom_wire_slot_foot_t));
    rx->slot = (rx->slot + 1) % rx->mem.slot_count;
    ++rx->ring_recv;
    ++rx->credits_owed;
}

/* The ring as a channel (chan.h): the next slot that arrived whole; a slot
 * whose tail names a length no slot holds is refused and skipped. */
int loom_eager_rx_next(loom_peer_t *peer, loom_chan_in_t *in)
{
    loom_eager_rx_t *rx = &peer->eager.rx;
    loom_wire_slot_t *hdr;
    size_t length;
    int ready;

    if (0 == rx->phase) {
        return 0;
    }
    while ((ready = loom_eager_rx_ready(peer, &hdr, &length)) < 0) {
        loom_eager_rx_refuse(peer->engine, &peer->engine->rails[rx->rail], peer->name,
                             "ring slot with a length larger than the slot; dropped");
        loom_eager_rx_consume(peer, NULL);
    }
    if (0 == ready) {
        return 0;
    }
    in->seq     = loom_from_le32(hdr->seq);
    in->ack     = hdr->ack;
    in->credits = loom_from_le16(hdr->credits);
    in->tag     = hdr->tag;
    in->data    = hdr + 1;
    in->length  = length;
    in->rail    = rx->rail;
    in->slot    = hdr;
    return 1;
}

/* Done with the slot next returned (delivered or a duplicate): counted, and
 * the slot is free for the sender's next lap. */
void loom_eager_rx_done(loom_peer_t *peer, loom_chan_in_t *in)
{
    loom_eager_rx_t *rx = &peer->eager.rx;
    loom_wire_slot_t *hdr = in->slot;
    loom_rail_stats_t *stats = &peer->engine->rails[rx->rail].stats;

    if (hdr->gen != rx->gen) {
        loom_log(peer->engine, LOOM_LOG_WARN, "eager ring of peer %#llx: a message for "
                 "ring generation %u in generation %u; delivered",
                 (unsigned long long)peer->name, hdr->gen, rx->gen);
    }
    loom_eager_rx_consume(peer, hdr);
    ++peer->engine->eager.stats.ring_received;
    ++stats->messages_received;
    stats->bytes_received += in->length;
}

/* ---- requests ------------------------------------------------------------------- */

/* What is wrong with a request, or NULL; *key_p set when its box key is usable. */
static const char *loom_eager_req_check(loom_peer_t *peer, int rail,
                                        const loom_wire_eager_req_t *req, const uint8_t *key,
                                        size_t length, const loom_wire_key_t **key_p)
{
    const loom_eager_rx_t *rx = &peer->eager.rx;
    uint32_t ring_before = loom_from_le32(req->ring_before);
    loom_engine_t *engine = peer->engine;
    uint32_t size = loom_from_le32(req->slot_size), count = loom_from_le32(req->slot_count);
    size_t key_len = loom_from_le32(req->key_length);
    uint64_t box = loom_from_le64(req->box_addr), base, len;
    uint64_t ack_bytes = LOOM_WIRE_ACK_BYTES(loom_key_size(engine));
    loom_wire_key_t fields;

    *key_p = NULL;
    if (key_len != loom_key_size(engine) || length != sizeof(*req) + key_len ||
        LOOM_OK != loom_key_parse(engine, key, key_len, key_p)) {
        *key_p = NULL;
        return "malformed box key";
    }
    fields = loom_key_fields(*key_p);
    if (loom_from_le32(fields.epoch) != peer->epoch) {
        *key_p = NULL;
        return "box key of an earlier incarnation of the peer";
    }
    base = loom_from_le64(fields.base);
    len  = loom_from_le64(fields.length);
    if (box < base || ack_bytes > len || box - base > len - ack_bytes) {
        *key_p = NULL;
        return "box outside the region its key names";
    }
    if (0 != rx->served_seq && !loom_seq_after(loom_from_le32(req->req_seq), rx->served_seq)) {
        *key_p = NULL; /* its box may serve another request by now: no ack */
        return "request older than one already served";
    }
    if (0 != rx->phase && !rx->rail_lost &&
        (loom_seq_after(rx->ring_recv, ring_before) ||
         ring_before - rx->ring_recv > LOOM_WIRE_SLOTS_MAX)) {
        return "ring message count out of range";
    }
    if (req->phase > LOOM_EAGER_MAX_PHASES) {
        return "phase out of range";
    }
    if (0 == req->phase) {
        return (0 == size && 0 == count) ? NULL : "phase 0 with a ring size";
    }
    if (size < LOOM_WIRE_SLOT_MIN || size > LOOM_WIRE_SLOT_MAX || 0 != size % 8) {
        return "slot size out of range";
    }
    if (0 == count || count > LOOM_WIRE_SLOTS_MAX || (uint64_t)size * count > LOOM_WIRE_RING_MAX) {
        return "slot count out of range";
    }
    if (!loom_eager_rail_ok(engine, rail)) {
        return "eager rings are off on this rail here";
    }
    /* the memory is ours: no more than our own eager_slot_* allow (a ring
     * may start with fewer slots and grow to them) */
    if (req->phase > engine->config.eager_phase_count ||
        size != engine->config.eager_phases[req->phase - 1].slot_size ||
        count > engine->config.eager_phases[req->phase - 1].slot_count) {
        return "ring larger than our own phase of that number";
    }
    return NULL;
}

/* Replace the ring by the one asked for, or keep it (budget, failure). */
static int loom_eager_rx_provision(loom_peer_t *peer, const loom_wire_eager_req_t *req)
{
    loom_engine_t *engine = peer->engine;
    loom_eager_rx_t *rx = &peer->eager.rx;
    uint32_t size = loom_from_le32(req->slot_size), count = loom_from_le32(req->slot_count);
    size_t now_bytes = (size_t)rx->mem.slot_size * rx->mem.slot_count;
    size_t new_bytes = (size_t)size * count;
    loom_eager_mem_t ring;
    int rc;

    if (!loom_eager_budget_room(peer, false, new_bytes, now_bytes)) {
        return LOOM_WIRE_EAGER_BUDGET;
    }
    if (0 != req->phase) {
        rc = loom_eager_mem_alloc(engine, &ring, size, count, LOOM_ACCESS_REMOTE_WRITE);
        if (LOOM_OK != rc) {
            loom_log(engine, LOOM_LOG_WARN, "eager ring for peer %#llx: cannot register %zu "
                     "bytes: %s", (unsigned long long)peer->name, new_bytes, loom_strerror(rc));
            return LOOM_WIRE_EAGER_BUDGET; /* the ring stays as it was */
        }
    }
    loom_eager_rx_drop(peer);
    ++rx->gen;
    if (0 == req->phase) {
        return LOOM_WIRE_EAGER_OK;
    }
    rx->mem   = ring;
    rx->phase = req->phase;
    --engine->eager.stats.rings[0];
    ++engine->eager.stats.rings[rx->phase];
    rx->last_use = loom_engine_clock_read(peer->engine);
    rx->hinted   = false;
    loom_eager_count_peer(peer);
    return LOOM_WIRE_EAGER_OK;
}

static void loom_eager_ack_done(uct_completion_t *self)
{
    loom_eager_box_t *box = loom_container_of(self, loom_eager_box_t, comp);

    loom_eager_box_put(box->chunk->region->engine, box);
}

/* Write the prepared ack (rx->ack_box) into the requester's box; a busy
 * endpoint keeps it for the next progress. */
static void loom_eager_rx_ack_post(loom_peer_t *peer)
{
    loom_engine_t *engine = peer->engine;
    loom_eager_rx_t *rx = &peer->eager.rx;
    loom_eager_box_t *box = rx->ack_box;
    int rail = box->rkey_rail;
    ucs_status_t st;
    uct_iov_t uiov;

    if (!peer->rails[rail].usable) {
        if (peer->rails[rail].failed) { /* the sender times out and sends by AM */
            rx->ack_box = NULL;
            loom_eager_box_put(engine, box);
        }
        return; /* not connected both ways yet: next progress */
    }
    loom_uct_iov_set(&uiov, box->mem, LOOM_WIRE_ACK_BYTES(loom_key_size(engine)),
                     loom_eager_box_memh(box, rail));
    loom_uct_comp_arm(&box->comp, loom_eager_ack_done);
    if (engine->rails[rail].checked) {
        st = loom_checked_write_post(peer, rail, box->mem, uiov.memh, uiov.length,
                                     box->remote_region, box->remote_epoch, rx->ack_addr,
                                     &box->comp);
    } else {
        st = uct_ep_put_zcopy(peer->rails[rail].ep, &uiov, 1, rx->ack_addr, box->rkey.rkey,
                              &box->comp);
    }
    if (UCS_ERR_NO_RESOURCE == st) {
        return;
    }
    rx->ack_box = NULL;
    if (UCS_INPROGRESS != st) {
        if (UCS_OK != st) {
            loom_log(engine, LOOM_LOG_WARN, "eager ring for peer %#llx: cannot write the "
                     "acknowledgement: %s", (unsigned long long)peer->name,
                     ucs_status_string(st));
        }
        loom_eager_box_put(engine, box);
    }
}

/* A box of ours to write the ack from, with the requester's key for its
 * box; NULL if either cannot be had (the requester then times out). */
static loom_eager_box_t *loom_eager_rx_ack_box(loom_peer_t *peer, int rail,
                                               const loom_wire_key_t *box_key)
{
    loom_engine_t *engine = peer->engine;
    loom_eager_box_t *box = loom_eager_box_get(engine);
    loom_wire_key_t fields;

    if (NULL != box && LOOM_OK != loom_key_rkey(engine, box_key, rail, &box->rkey)) {
        loom_eager_box_put(engine, box);
        box = NULL;
    }
    if (NULL != box) {
        fields             = loom_key_fields(box_key);
        box->rkey_rail     = rail;
        box->remote_region = loom_from_le64(fields.region_id);
        box->remote_epoch  = fields.epoch;
    }
    return box;
}

/* Fill the ack of a request into box and write it. */
static void loom_eager_rx_ack(loom_peer_t *peer, loom_eager_box_t *box,
                              const loom_wire_eager_req_t *req, int status)
{
    loom_engine_t *engine = peer->engine;
    loom_eager_rx_t *rx = &peer->eager.rx;
    size_t key_len = loom_key_size(engine), bytes = LOOM_WIRE_ACK_BYTES(key_len);
    loom_wire_eager_ack_t ack;

    if (NULL != rx->ack_box) {
        /* an older ack never went out: this one supersedes it */
        loom_eager_box_put(engine, rx->ack_box);
        rx->ack_box = NULL;
    }
    memset(&ack, 0, sizeof(ack));
    ack.head       = req->req_seq;
    ack.version    = LOOM_WIRE_VERSION;
    ack.status     = (uint8_t)status;
    ack.phase      = (LOOM_WIRE_EAGER_OK == status) ? req->phase : (uint8_t)rx->phase;
    ack.gen        = rx->gen;
    ack.slot_size  = loom_le32(rx->mem.slot_size);
    ack.slot_count = loom_le32(rx->mem.slot_count);
    ack.ring_addr  = loom_le64((uint64_t)(uintptr_t)rx->mem.buf);
    ack.key_length = loom_le32((uint32_t)key_len);
    memset(box->mem, 0, bytes);
    memcpy(box->mem, &ack, sizeof(ack));
    if (NULL != rx->mem.region) {
        (void)loom_key_pack(rx->mem.region, box->mem + sizeof(ack), key_len);
    }
    memcpy(box->mem + bytes - sizeof(uint32_t), &req->req_seq, sizeof(uint32_t));
    rx->ack_box  = box;
    rx->ack_addr = loom_from_le64(req->box_addr);
    loom_eager_rx_ack_post(peer);
}

/* Serve the waiting request (checked when it came) once the old ring is
 * drained. */
static void loom_eager_rx_serve(loom_peer_t *peer)
{
    loom_eager_rx_t *rx = &peer->eager.rx;
    loom_wire_eager_req_t req;
    const loom_wire_key_t *box_key;
    loom_eager_box_t *box;
    int status;

    memcpy(&req, rx->req, sizeof(req));
    if (0 != rx->phase && !rx->rail_lost) {
        /* the old ring is drained by delivery (the eager policy's poller), which
         * runs before this on every progress */
        if (loom_seq_after(loom_from_le32(req.ring_before), rx->ring_recv)) {
            return; /* ring messages sent before the request are still coming */
        }
    }
    /* After its rail failed, those that did not land went with its
     * endpoints (destroyed before the rail came back: nothing late can
     * land) and the sender sends them again by AM. */
    rx->rail_lost = false;
    rx->ring_recv = loom_from_le32(req.ring_before);
    rx->req_len   = 0;
    (void)loom_key_parse(peer->engine, rx->req + sizeof(req), loom_key_size(peer->engine),
                         &box_key); /* checked when the request came */
    /* the ring changes only if its acknowledgement can be written */
    box = loom_eager_rx_ack_box(peer, rx->rail, box_key);
    if (NULL == box) {
        loom_eager_rx_refuse(peer->engine, &peer->engine->rails[rx->rail], peer->name,
                             "no way to write the acknowledgement; ring unchanged");
        return;
    }
    status = loom_eager_rx_provision(peer, &req);
    loom_log(peer->engine, LOOM_LOG_DEBUG, "eager ring of peer %#llx: request %u for phase "
             "%u answered with status %d, phase %u now", (unsigned long long)peer->name,
             loom_from_le32(req.req_seq), req.phase, status, rx->phase);
    loom_eager_rx_ack(peer, box, &req, status);
}

ucs_status_t loom_eager_req_recv(void *arg, void *data, size_t length, unsigned flags)
{
    loom_rail_t *rail = arg;
    loom_engine_t *engine = rail->engine;
    const loom_wire_key_t *box_key;
    loom_wire_eager_req_t req;
    loom_eager_box_t *box;
    loom_peer_t *peer;
    const char *why;

    (void)flags;
    peer = loom_ctrl_recv_peer(rail, data, length, LOOM_WIRE_EAGER_REQ, &req, sizeof(req),
                               "ring request");
    if (NULL == peer) {
        ++engine->eager.stats.refused;
        return UCS_OK;
    }
    if (length > sizeof(peer->eager.rx.req)) {
        loom_eager_rx_refuse(engine, rail, peer->name, "ring request too long");
        return UCS_OK;
    }
    /* everything is checked before anything here changes */
    why = loom_eager_req_check(peer, rail->index, &req, (const uint8_t *)data + sizeof(req),
                               length, &box_key);
    if (NULL != why) {
        loom_eager_rx_refuse(engine, rail, peer->name, why);
        if (NULL != box_key && NULL != (box = loom_eager_rx_ack_box(peer, rail->index, box_key))) {
            loom_eager_rx_ack(peer, box, &req, LOOM_WIRE_EAGER_REFUSED);
        }
        return UCS_OK;
    }
    peer->eager.rx.served_seq = loom_from_le32(req.req_seq);
    /* a newer request supersedes one still waiting: it was sent later */
    memcpy(peer->eager.rx.req, data, length);
    peer->eager.rx.req_len = length;
    peer->eager.rx.rail    = rail->index;
    loom_eager_activate(peer);
    loom_eager_rx_serve(peer);
    return UCS_OK;
}

/* Queue a note to the sender of our ring; its credits are taken when it
 * leaves (loom_eager_note_stamp), so that they are for the ring of then. */
static int loom_eager_rx_note(loom_peer_t *peer, unsigned shrink_to)
{
    loom_wire_eager_note_t note;
    int rc;

    memset(&note, 0, sizeof(note));
    loom_wire_hdr_fill(&note.hdr, LOOM_WIRE_EAGER_NOTE, 0, sizeof(note));
    note.sender    = loom_le64(peer->engine->config.name);
    note.shrink_to = (uint8_t)shrink_to;
    rc = loom_ctrl_send(peer, peer->eager.rx.rail, &note, sizeof(note));
    if (LOOM_OK == rc) {
        peer->eager.rx.note_queued = true;
    }
    return rc;
}

void loom_eager_note_stamp(loom_peer_t *peer, void *msg)
{
    loom_wire_eager_note_t *note = msg;

    note->credits = loom_le16(loom_eager_rx_credits_take(peer));
    peer->eager.rx.note_queued = false;
}

/* Over the budget: ask the sender to go down to phase. */
void loom_eager_rx_hint(loom_peer_t *peer, unsigned phase)
{
    if (LOOM_OK == loom_eager_rx_note(peer, phase)) {
        peer->eager.rx.hinted = true;
    }
}

/* A wait here wants to sleep: ask the writer of our ring to drop it (once
 * per ring), so that its messages come by AM, which wake a sleeper.  True
 * when asked now. */
bool loom_eager_rx_quiet_peer(loom_peer_t *peer)
{
    if (0 == peer->eager.rx.phase || peer->eager.rx.hinted) {
        return false;
    }
    loom_eager_rx_hint(peer, 0);
    return peer->eager.rx.hinted;
}

/* ---- progress --------------------------------------------------------------------- */

/* The ring's own work; its messages are delivered by the messages layer. */
void loom_eager_rx_poll(loom_peer_t *peer)
{
    loom_eager_rx_t *rx = &peer->eager.rx;

    if (NULL != rx->ack_box) {
        loom_eager_rx_ack_post(peer);
    }
    if (0 != rx->req_len) {
        loom_eager_rx_serve(peer);
    }
    /* credits nobody took along on a message: send them once half the ring
     * waits, and never for one slot of a larger ring (a two-slot ring would
     * otherwise send a note for every message, ahead of the reply that
     * carries its credits) */
    if (0 != rx->phase && !rx->note_queued &&
        rx->credits_owed >= ((rx->mem.slot_count <= 2) ? rx->mem.slot_count
                                                        : (rx->mem.slot_count + 1) / 2)) {
        (void)loom_eager_rx_note(peer, LOOM_WIRE_NO_SHRINK);
    }
}
