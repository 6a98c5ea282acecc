/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Eager rings, sending side of a direction: choose the ring or an AM for
 * each message, write ring slots, ask the receiver for another phase and
 * take its acknowledgement once both of its flags arrived.
 *
 * While a request is under way, messages go by AM: AMs always work, so
 * nothing waits for the round trip, and the order is kept by the counters
 * every message carries (eager.h).
 */
#include "channels/loom_channels.h"

#include <stdlib.h>
#include <string.h>

static void loom_eager_tx_free_slots(loom_engine_t *engine, loom_eager_tx_t *tx)
{
    loom_eager_mem_free(engine, &tx->mem);
    free(tx->slots);
    tx->slots    = NULL;
    tx->retiring = false;
}

static void loom_eager_txslot_done(uct_completion_t *self)
{
    loom_eager_txslot_t *ts = loom_container_of(self, loom_eager_txslot_t, comp);
    loom_eager_tx_t *tx = ts->tx;

    ts->busy = false;
    if (0 == --tx->busy && tx->retiring) {
        /* the last put from slots dropped meanwhile: they can go now */
        loom_eager_tx_free_slots(loom_container_of(tx, loom_peer_t, eager.tx)->engine, tx);
    }
}

/* Let go of the ring: our send slots (once no put is in flight from them)
 * and the receiver's key. */
void loom_eager_tx_drop(loom_peer_t *peer)
{
    loom_engine_t *engine = peer->engine;
    loom_eager_tx_t *tx = &peer->eager.tx;

    if (tx->rkey_valid) {
        uct_rkey_release(engine->rails[tx->rail].component, &tx->rkey);
        tx->rkey_valid = false;
    }
    if (NULL != tx->slots) {
        if (0 == tx->busy) {
            loom_eager_tx_free_slots(engine, tx);
        } else {
            tx->retiring      = true;
            tx->retiring_rail = tx->rail;
        }
    }
    tx->phase   = 0;
    tx->credits = 0;
    tx->rail    = -1;
}

/* The endpoint of a rail was destroyed: puts from send slots dropped while
 * in flight on it complete no more (UCT drops put completions). */
void loom_eager_tx_rail_closed(loom_peer_t *peer, int rail)
{
    loom_eager_tx_t *tx = &peer->eager.tx;

    if (tx->retiring && tx->retiring_rail == rail) {
        tx->busy = 0;
        loom_eager_tx_free_slots(peer->engine, tx);
    }
}

/* Copy the message into the end of the next send slot and write it into
 * the same place of the receiver's slot. */
static int loom_eager_tx_write(loom_peer_t *peer, loom_chan_out_t *out)
{
    size_t length = out->length;
    loom_eager_tx_t *tx = &peer->eager.tx;
    loom_eager_txslot_t *ts = &tx->slots[tx->slot];
    size_t bytes = LOOM_WIRE_SLOT_BYTES(length);
    size_t offset = (size_t)tx->slot * tx->mem.slot_size + tx->mem.slot_size - bytes;
    uint8_t *msg = tx->mem.buf + offset;
    uint32_t flag = loom_eager_flag(tx->ring_sent);
    loom_wire_slot_foot_t foot;
    loom_wire_slot_t hdr;
    ucs_status_t status;
    uct_iov_t uiov;

    if (0 == tx->credits || ts->busy || !peer->rails[tx->rail].usable) {
        return LOOM_ERR_AGAIN;
    }
    memset(&hdr, 0, sizeof(hdr));
    hdr.head      = loom_le32(flag);
    loom_msg_stamp(peer, &hdr.seq, &hdr.ack);
    hdr.credits   = loom_le16(loom_eager_rx_credits_take(peer));
    hdr.tag       = out->tag;
    hdr.gen       = tx->gen;
    foot.length   = loom_le32((uint32_t)length);
    foot.tail     = loom_le32(flag);
    memcpy(msg, &hdr, sizeof(hdr));
    (void)loom_iov_pack(msg + sizeof(hdr), out->iov, out->iovcnt);
    memcpy(msg + bytes - sizeof(foot), &foot, sizeof(foot));

    loom_uct_iov_set(&uiov, msg, bytes, tx->mem.region->memh[tx->rail]);
    loom_uct_comp_arm(&ts->comp, loom_eager_txslot_done);
    if (peer->engine->rails[tx->rail].checked) {
        status = loom_checked_write_post(peer, tx->rail, msg, uiov.memh, bytes,
                                         tx->remote_region, tx->remote_epoch,
                                         tx->remote_addr + offset, &ts->comp);
    } else {
        status = uct_ep_put_zcopy(peer->rails[tx->rail].ep, &uiov, 1, tx->remote_addr + offset,
                                  tx->rkey.rkey, &ts->comp);
    }
    if (UCS_INPROGRESS == status) {
        ts->busy = true;
        ++tx->busy;
    } else if (UCS_OK != status) {
        loom_eager_rx_credits_untake(peer, hdr.credits);
        if (UCS_ERR_NO_RESOURCE != status) {
            loom_peer_fail_rail(peer, tx->rail, status);
        }
        return LOOM_ERR_AGAIN;
    }
    out->rail = tx->rail;
    tx->slot  = (tx->slot + 1) % tx->mem.slot_count;
    --tx->credits;
    ++tx->ring_sent;
    ++tx->msgs;
    ++peer->engine->eager.stats.ring_sent;
    return LOOM_OK;
}

/* The phase to ask for after a message of length bytes, or -1 for none. */
static int loom_eager_tx_next_phase(loom_peer_t *peer, size_t length)
{
    const loom_engine_config_t *config = &peer->engine->config;
    loom_eager_tx_t *tx = &peer->eager.tx;
    unsigned need;

    if (config->eager_cycle) {
        return (int)((tx->phase + 1) % (config->eager_phase_count + 1));
    }
    need = loom_eager_phase_for(peer->engine, length);
    if (0 == tx->phase && tx->msgs + 1 < config->eager_msgs_before_ring) { /* + this one */
        return -1;
    }
    return (need > tx->phase) ? (int)need : -1;
}

/* A message found every slot of the ring taken: after LOOM_EAGER_FULL_GROW
 * such messages, the ring doubles its slots (up to its phase's count), so
 * that only sustained streams pay for many slots. */
static void loom_eager_tx_full(loom_peer_t *peer)
{
    loom_eager_tx_t *tx = &peer->eager.tx;
    uint32_t max = peer->engine->config.eager_phases[tx->phase - 1].slot_count;

    if (++tx->full < LOOM_EAGER_FULL_GROW || tx->mem.slot_count >= max ||
        loom_engine_clock(peer->engine) < tx->retry_after) {
        return;
    }
    (void)loom_eager_tx_request_slots(peer, tx->phase,
                                      (tx->mem.slot_count * 2 < max) ? tx->mem.slot_count * 2
                                                                     : max);
}

/* The ring as a channel (chan.h): a message that asks for an acknowledgement
 * at once goes by AM, which carries the request; the ring may grow for the
 * next ones. */
int loom_eager_send(loom_peer_t *peer, loom_chan_out_t *out)
{
    loom_eager_tx_t *tx = &peer->eager.tx;
    size_t length = out->length;
    uint64_t now;
    unsigned need;
    int rc = LOOM_ERR_AGAIN, next;

    if (out->ack_now || tx->disabled || !loom_eager_rail_ok(peer->engine, peer->am_rail)) {
        return LOOM_ERR_AGAIN;
    }
    now = loom_engine_clock(peer->engine);
    tx->last_use = now;
    if (length > tx->window_max) {
        tx->window_max = length;
    }
    need = loom_eager_phase_for(peer->engine, length);
    if (tx->phase > 0 && !tx->pending && 0 != need && need <= tx->phase &&
        tx->rail == peer->am_rail) {
        rc = loom_eager_tx_write(peer, out);
        if (LOOM_ERR_AGAIN == rc && 0 == tx->credits) {
            loom_eager_tx_full(peer);
        }
    }
    if (!tx->pending && now >= tx->retry_after &&
        (next = loom_eager_tx_next_phase(peer, length)) >= 0) {
        (void)loom_eager_tx_request(peer, (unsigned)next);
    }
    return rc;
}

/* A request is leaving (the engine's progress sends it): the receiver drains the ring
 * messages written before it. */
void loom_eager_req_stamp(loom_peer_t *peer, void *msg)
{
    loom_wire_eager_req_t *req = msg;

    req->ring_before = loom_le32(peer->eager.tx.ring_sent);
}

/* Send the request for a ring of this phase (0: none).  From now on until
 * the ack, nothing more is written into the current ring, so the receiver
 * can drain it and let it go. */
static int loom_eager_tx_send_req(loom_peer_t *peer, unsigned phase, uint32_t slots)
{
    loom_engine_t *engine = peer->engine;
    loom_eager_tx_t *tx = &peer->eager.tx;
    uint8_t msg[LOOM_OP_MSG_MAX];
    loom_wire_eager_req_t req;
    size_t key_len = loom_key_size(engine);
    int rc;

    if (sizeof(req) + key_len > sizeof(msg)) {
        return LOOM_ERR_INVALID;
    }
    if (NULL == tx->box && NULL == (tx->box = loom_eager_box_get(engine))) {
        return LOOM_ERR_NOMEM;
    }
    memset(&req, 0, sizeof(req));
    tx->req_seq = (0 == tx->req_seq + 1) ? 1 : tx->req_seq + 1;
    loom_wire_hdr_fill(&req.hdr, LOOM_WIRE_EAGER_REQ, 0, sizeof(req) + key_len);
    req.sender   = loom_le64(engine->config.name);
    req.req_seq  = loom_le32(tx->req_seq);
    req.phase    = (uint8_t)phase;
    if (phase > 0) {
        req.slot_size  = loom_le32(engine->config.eager_phases[phase - 1].slot_size);
        req.slot_count = loom_le32(slots);
    }
    req.box_addr   = loom_le64((uint64_t)(uintptr_t)tx->box->mem);
    req.key_length = loom_le32((uint32_t)key_len);
    memcpy(msg, &req, sizeof(req));
    rc = loom_eager_box_key(tx->box, msg + sizeof(req), key_len);
    if (LOOM_OK == rc) {
        rc = loom_ctrl_send(peer, peer->am_rail, msg, sizeof(req) + key_len);
    }
    if (LOOM_OK != rc) {
        return rc;
    }
    memset(tx->box->mem, 0, engine->eager.box_size);
    if (0 == phase) {
        tx->msgs = 0; /* without a ring, earn the next one as a new connection does */
    }
    tx->pending  = true;
    tx->req_lost = false;
    tx->want       = phase;
    tx->want_slots = (0 == phase) ? 0 : slots;
    tx->req_time   = loom_engine_clock_read(peer->engine);
    loom_eager_activate(peer);
    loom_log(engine, LOOM_LOG_DEBUG, "eager ring to peer %#llx: asked for phase %u, %u slots "
             "(request %u)", (unsigned long long)peer->name, phase, tx->want_slots,
             tx->req_seq);
    return LOOM_OK;
}

/* The slots a new ring of a phase starts with (phase > 0). */
uint32_t loom_eager_start_slots(const loom_engine_t *engine, unsigned phase)
{
    uint32_t max = engine->config.eager_phases[phase - 1].slot_count;
    unsigned start = engine->config.eager_start_slots;

    return (0 == start || start >= max) ? max : (uint32_t)start;
}

/* Ask for a ring of that phase and slot count, unless a request is under
 * way or nothing changes. */
int loom_eager_tx_request_slots(loom_peer_t *peer, unsigned phase, uint32_t slots)
{
    loom_eager_tx_t *tx = &peer->eager.tx;
    size_t want_bytes;

    if (tx->pending) {
        return LOOM_ERR_AGAIN;
    }
    if ((phase == tx->phase && (0 == phase || slots == tx->mem.slot_count)) || tx->disabled) {
        return LOOM_OK;
    }
    want_bytes = (0 == phase) ? 0 : (size_t)peer->engine->config.eager_phases[phase - 1].slot_size *
                                    slots;
    if (want_bytes > (size_t)tx->mem.slot_size * tx->mem.slot_count &&
        !loom_eager_budget_room(peer, true, want_bytes,
                                (size_t)tx->mem.slot_size * tx->mem.slot_count)) {
        tx->retry_after = loom_engine_clock_read(peer->engine) + 20000000ull; /* evicted */
        return LOOM_ERR_AGAIN;
    }
    return loom_eager_tx_send_req(peer, phase, slots);
}

/* Ask for another phase, with the slots a ring of it starts with. */
int loom_eager_tx_request(loom_peer_t *peer, unsigned phase)
{
    if (peer->eager.tx.pending) {
        return LOOM_ERR_AGAIN;
    }
    if (phase == peer->eager.tx.phase) {
        return LOOM_OK; /* its slot count changes only by loom_eager_tx_request_slots */
    }
    return loom_eager_tx_request_slots(peer, phase,
                                       (0 == phase) ? 0 : loom_eager_start_slots(peer->engine,
                                                                                 phase));
}

/* Check an ack that arrived whole against what we asked for. */
static const char *loom_eager_ack_check(loom_peer_t *peer, const loom_wire_eager_ack_t *ack,
                                        const loom_wire_key_t **key_p)
{
    loom_engine_t *engine = peer->engine;
    loom_eager_tx_t *tx = &peer->eager.tx;
    uint32_t size = loom_from_le32(ack->slot_size), count = loom_from_le32(ack->slot_count);
    uint64_t addr = loom_from_le64(ack->ring_addr), base, len;
    size_t key_len = loom_from_le32(ack->key_length);
    loom_wire_key_t fields;

    if (ack->version != LOOM_WIRE_VERSION) {
        return "wrong wire version";
    }
    if (LOOM_WIRE_EAGER_OK != ack->status) {
        return NULL; /* a refusal: checked by the caller */
    }
    if (ack->phase != tx->want) {
        return "phase differs from the one asked for";
    }
    if (0 == tx->want) {
        return NULL;
    }
    if (size != engine->config.eager_phases[tx->want - 1].slot_size || count != tx->want_slots) {
        return "ring geometry differs from the one asked for";
    }
    if (key_len != loom_key_size(engine) ||
        LOOM_OK != loom_key_parse(engine, ack + 1, key_len, key_p)) {
        return "malformed ring key";
    }
    fields = loom_key_fields(*key_p);
    if (loom_from_le32(fields.epoch) != peer->epoch) {
        return "ring key of an earlier incarnation of the peer";
    }
    base = loom_from_le64(fields.base);
    len  = loom_from_le64(fields.length);
    if (addr < base || (uint64_t)size * count > len || addr - base > len - (uint64_t)size * count) {
        return "ring outside the region its key names";
    }
    return NULL;
}

/* Put the ring the ack describes in place. */
static int loom_eager_tx_switch(loom_peer_t *peer, const loom_wire_eager_ack_t *ack,
                                const loom_wire_key_t *key)
{
    loom_engine_t *engine = peer->engine;
    loom_eager_tx_t *tx = &peer->eager.tx;
    loom_wire_key_t fields;
    unsigned old = tx->phase, i;
    int rc;

    loom_eager_tx_drop(peer);
    if (0 == tx->want) {
        return LOOM_OK;
    }
    tx->rail = peer->am_rail;
    rc = loom_key_rkey(engine, key, tx->rail, &tx->rkey);
    if (LOOM_OK != rc) {
        return rc;
    }
    fields            = loom_key_fields(key);
    tx->rkey_valid    = true;
    tx->remote_region = loom_from_le64(fields.region_id);
    tx->remote_epoch  = fields.epoch;
    tx->slots = calloc(loom_from_le32(ack->slot_count), sizeof(*tx->slots));
    if (NULL == tx->slots) {
        return LOOM_ERR_NOMEM;
    }
    rc = loom_eager_mem_alloc(engine, &tx->mem, loom_from_le32(ack->slot_size),
                              loom_from_le32(ack->slot_count), 0 /* written from only */);
    if (LOOM_OK != rc) {
        free(tx->slots);
        tx->slots = NULL;
        return rc;
    }
    for (i = 0; i < tx->mem.slot_count; ++i) {
        tx->slots[i].tx = tx;
    }
    tx->remote_addr  = loom_from_le64(ack->ring_addr);
    tx->gen          = ack->gen;
    tx->slot         = 0;
    tx->credits      = tx->mem.slot_count;
    tx->phase        = tx->want;
    tx->full         = 0;
    tx->window_start = loom_engine_clock_read(peer->engine);
    tx->window_max   = 0;
    loom_eager_count_peer(peer);
    (void)old;
    return LOOM_OK;
}

/* level: a peer busy for a while, or a rail that failed (said where it
 * failed), is no news for the user (LOOM_LOG_INFO); a bad ack is.  A peer
 * slow to answer is asked again only after ten times the timeout; a request
 * lost with a rail at once. */
static void loom_eager_tx_give_up(loom_peer_t *peer, int level, const char *why)
{
    loom_eager_tx_t *tx = &peer->eager.tx;
    uint64_t backoff = 10ull * peer->engine->config.eager_ack_timeout_ms * 1000000ull;

    loom_log(peer->engine, level, "eager ring to peer %#llx: %s; its messages go "
             "by active message", (unsigned long long)peer->name, why);
    tx->pending      = false;
    tx->retry_after  = loom_engine_clock_read(peer->engine) + (tx->req_lost ? 0 : backoff);
    tx->req_lost     = false;
    tx->shrink_asked = false; /* no ring left to shrink */
    loom_eager_tx_drop(peer);
}

/* A rail to the peer is back: a request that was under way when its rail
 * failed is given up now (its ack may have gone with the rail), so that
 * the next message asks again on the rails that work. */
void loom_eager_tx_forget_lost(loom_peer_t *peer)
{
    if (peer->eager.tx.pending && peer->eager.tx.req_lost) {
        loom_eager_tx_give_up(peer, LOOM_LOG_INFO,
                              "a rail failed while a ring request was under way");
    }
}

/* The receiver asks us to go down to phase (its memory budget, or a wait
 * there that would sleep): now, or once the request under way is answered;
 * its ack may be in our box already, behind the note that asks. */
static void loom_eager_tx_shrink_to(loom_peer_t *peer, unsigned phase)
{
    loom_eager_tx_t *tx = &peer->eager.tx;

    if (tx->pending) {
        if (!tx->shrink_asked || phase < tx->shrink_to) {
            tx->shrink_to = phase;
        }
        tx->shrink_asked = true;
        return;
    }
    tx->shrink_asked = false;
    if (phase < tx->phase) {
        (void)loom_eager_tx_request(peer, phase);
    }
}

/* Both flags of the ack of our request arrived: copy it out of the box,
 * which the peer can write at any time, and trust only the copy (its flags
 * checked again there), never the box after the check. */
static bool loom_eager_ack_take(const loom_eager_tx_t *tx, size_t bytes, uint32_t want,
                                uint8_t *copy)
{
    const volatile uint32_t *head = (const volatile uint32_t *)tx->box->mem;
    loom_wire_eager_ack_t ack;
    uint32_t tail;

    if (*head != want) {
        return false;
    }
    memcpy(&tail, tx->box->mem + bytes - sizeof(tail), sizeof(tail));
    if (tail != want) {
        return false; /* head arrived, tail not yet: a partly written ack */
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    memcpy(copy, tx->box->mem, bytes);
    memcpy(&ack, copy, sizeof(ack));
    memcpy(&tail, copy + bytes - sizeof(tail), sizeof(tail));
    return ack.head == want && tail == want;
}

/* Poll the box for the ack of our request; give up after the timeout,
 * also when only part of an ack came. */
void loom_eager_tx_poll(loom_peer_t *peer, uint64_t now)
{
    loom_engine_t *engine = peer->engine;
    loom_eager_tx_t *tx = &peer->eager.tx;
    uint64_t copy[LOOM_OP_MSG_MAX / sizeof(uint64_t)]; /* aligned for the ack's fields */
    const loom_wire_eager_ack_t *ack = (const void *)copy;
    const loom_wire_key_t *key = NULL;
    uint32_t want = loom_le32(tx->req_seq);
    /* the key size is the same in every process of the job */
    size_t bytes = LOOM_WIRE_ACK_BYTES(loom_key_size(engine));
    const char *why;
    int rc;

    if (bytes > sizeof(copy) || !loom_eager_ack_take(tx, bytes, want, (uint8_t *)copy)) {
        /* now may be older than a request sent in this very pass (its
         * messages delivered first): that one has not waited at all */
        if (tx->pending && now > tx->req_time && now - tx->req_time >
            (uint64_t)engine->config.eager_ack_timeout_ms * 1000000ull) {
            ++engine->eager.stats.ack_timeouts;
            /* the box stays ours: a late ack may still land in it */
            loom_eager_tx_give_up(peer, LOOM_LOG_INFO,
                                  "the peer did not acknowledge a ring request in time");
        }
        return;
    }
    if (!tx->pending) {
        /* a late ack after we gave up: it carries the peer's state, but we
         * already send by AM; tell it to drop the ring */
        loom_eager_box_put(engine, tx->box);
        tx->box = NULL;
        if (0 != ack->phase && LOOM_WIRE_EAGER_OK == ack->status) {
            (void)loom_eager_tx_send_req(peer, 0, 0);
        }
        return;
    }
    tx->pending = false;
    why = loom_eager_ack_check(peer, ack, &key);
    if (NULL != why) {
        ++engine->eager.stats.refused;
        loom_eager_tx_give_up(peer, LOOM_LOG_WARN, why);
        return;
    }
    if (LOOM_WIRE_EAGER_OK != ack->status) {
        /* refused (budget or bad request): the previous ring stays in use */
        ++engine->eager.stats.refused;
        tx->retry_after = now + (uint64_t)engine->config.eager_ack_timeout_ms * 10000000ull;
        loom_log(engine, LOOM_LOG_INFO, "eager ring to peer %#llx: phase %u refused (%s)",
                 (unsigned long long)peer->name, tx->want,
                 LOOM_WIRE_EAGER_BUDGET == ack->status ? "over its eager memory budget"
                                                       : "bad request");
    } else if (tx->disabled) {
        loom_eager_tx_give_up(peer, LOOM_LOG_INFO,
                              "its rail failed while the request was under way");
    } else if (0 != tx->busy) {
        tx->pending = true; /* the old slots' puts still run: switch later */
        return;
    } else {
        if (tx->want > tx->phase ||
            (tx->want == tx->phase && tx->want_slots > tx->mem.slot_count)) {
            ++engine->eager.stats.enlargements;
            engine->eager.stats.slot_growths += (tx->want == tx->phase);
        } else {
            ++engine->eager.stats.shrinks;
        }
        rc = loom_eager_tx_switch(peer, ack, key);
        if (LOOM_OK != rc) {
            loom_eager_tx_give_up(peer, LOOM_LOG_WARN, loom_strerror(rc));
        }
    }
    loom_eager_box_put(engine, tx->box);
    tx->box = NULL;
    if (tx->shrink_asked) {
        loom_eager_tx_shrink_to(peer, tx->shrink_to);
    }
}

ucs_status_t loom_eager_note_recv(void *arg, void *data, size_t length, unsigned flags)
{
    loom_rail_t *rail = arg;
    loom_wire_eager_note_t note;
    loom_peer_t *peer;

    (void)flags;
    peer = loom_ctrl_recv_peer(rail, data, length, LOOM_WIRE_EAGER_NOTE, &note, sizeof(note),
                               NULL /* notes cross a disconnect */);
    if (NULL == peer) {
        ++rail->engine->eager.stats.refused;
        return UCS_OK;
    }
    loom_eager_tx_credits(peer, loom_from_le16(note.credits));
    if (LOOM_WIRE_NO_SHRINK != note.shrink_to) {
        loom_eager_tx_shrink_to(peer, note.shrink_to);
    }
    return UCS_OK;
}
