/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target over every receiver of bytes a peer controls: the UCT
 * active-message handlers (loom_am_handlers, what loom_rail_set_handlers()
 * registers), the eager ring slot parser, the ring ack box parser, the
 * address blob parser and the key parser.  Input format: fuzz_input.h.
 *
 * One world (fuzz_world.h) is set up before the first input and kept: the
 * engine's state carries from one input to the next, as it does from one
 * message to the next.  After each input every engine progresses, so that
 * what the input queued (replies, serves, ring changes) runs too, and a
 * connection the input broke is made anew.
 */
#include "fuzz_input.h"
#include "fuzz_world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT 4096

static fuzz_world_t fuzz_world;

/* UCT hands AM payloads at any alignment (tcp: right after a 5-byte
 * header); the fuzzer gives them an odd one so that UBSan sees every
 * unaligned read of a wire struct. */
/* A multicast request the harness lays out with FUZZ_FIX_KEY has at most
 * this many destinations, each with the fake peer's key. */
#define FUZZ_MULTI_DESTS 4

static uint8_t fuzz_buf[FUZZ_MAX_INPUT + 16 + sizeof(loom_wire_send_t) +
                        FUZZ_MULTI_DESTS * (sizeof(loom_wire_push_dest_t) + LOOM_OP_MSG_MAX)];
#define FUZZ_ODD (fuzz_buf + 5)

/* The AM id of each AM target; its handler is the engine's own
 * (loom_am_handlers), found in LLVMFuzzerInitialize. */
static const uint8_t fuzz_am_id[FUZZ_TARGET_COUNT] = {
    [FUZZ_AM_SEND]       = LOOM_WIRE_SEND,
    [FUZZ_AM_PUSH_REQ]   = LOOM_WIRE_PUSH_REQ,
    [FUZZ_AM_PUSH_DONE]  = LOOM_WIRE_PUSH_DONE,
    [FUZZ_AM_CONNECT]    = LOOM_WIRE_CONNECT,
    [FUZZ_AM_EAGER_REQ]  = LOOM_WIRE_EAGER_REQ,
    [FUZZ_AM_EAGER_NOTE] = LOOM_WIRE_EAGER_NOTE,
    [FUZZ_AM_MSG_ACK]    = LOOM_WIRE_MSG_ACK,
    [FUZZ_AM_PROBE]      = LOOM_WIRE_PROBE,
    [FUZZ_AM_BYE]        = LOOM_WIRE_BYE,
    [FUZZ_AM_PUT]        = LOOM_WIRE_PUT,
    [FUZZ_AM_PUT_ACK]    = LOOM_WIRE_PUT_ACK,
};
static uct_am_callback_t fuzz_am_cb[FUZZ_TARGET_COUNT];

/* Where each AM target's message names its sender (a push request: its
 * requester), written over for an input of another fake peer than the
 * first. */
static const size_t fuzz_sender_at[FUZZ_TARGET_COUNT] = {
    [FUZZ_AM_SEND]       = offsetof(loom_wire_send_t, sender),
    [FUZZ_AM_PUSH_REQ]   = offsetof(loom_wire_push_req_t, requester),
    [FUZZ_AM_PUSH_DONE]  = offsetof(loom_wire_push_done_t, sender),
    [FUZZ_AM_CONNECT]    = offsetof(loom_wire_connect_t, sender),
    [FUZZ_AM_EAGER_REQ]  = offsetof(loom_wire_eager_req_t, sender),
    [FUZZ_AM_EAGER_NOTE] = offsetof(loom_wire_eager_note_t, sender),
    [FUZZ_AM_MSG_ACK]    = offsetof(loom_wire_msg_ack_t, sender),
    [FUZZ_AM_PROBE]      = offsetof(loom_wire_probe_t, sender),
    [FUZZ_AM_BYE]        = offsetof(loom_wire_bye_t, sender),
    [FUZZ_AM_PUT]        = offsetof(loom_wire_put_t, sender),
    [FUZZ_AM_PUT_ACK]    = offsetof(loom_wire_put_ack_t, sender),
};

/* ---- fields at a byte offset, little-endian, any alignment ------------------ */

static void put32(uint8_t *msg, size_t length, size_t offset, uint32_t value)
{
    if (offset + sizeof(value) <= length) {
        value = loom_le32(value);
        memcpy(msg + offset, &value, sizeof(value));
    }
}

static void put64(uint8_t *msg, size_t length, size_t offset, uint64_t value)
{
    if (offset + sizeof(value) <= length) {
        value = loom_le64(value);
        memcpy(msg + offset, &value, sizeof(value));
    }
}

static uint64_t get64(const uint8_t *msg, size_t length, size_t offset)
{
    uint64_t value = 0;

    if (offset + sizeof(value) <= length) {
        memcpy(&value, msg + offset, sizeof(value));
    }
    return loom_from_le64(value);
}

static void put16(uint8_t *msg, size_t length, size_t offset, uint16_t value)
{
    if (offset + sizeof(value) <= length) {
        value = loom_le16(value);
        memcpy(msg + offset, &value, sizeof(value));
    }
}

/* An address inside the region of this base, room bytes before its end. */
static uint64_t fuzz_in_region(const void *base, uint64_t offset, size_t room)
{
    size_t span = (room < FUZZ_REGION_BYTES) ? FUZZ_REGION_BYTES - room + 1 : 1;

    return (uint64_t)(uintptr_t)base + offset % span;
}

/* One of the counters self opened, picked by a fuzzed value. */
static uint64_t fuzz_counter(const fuzz_world_t *w, uint64_t pick)
{
    return w->counter_first + pick % FUZZ_COUNTERS;
}

/* A counter field: 0 stays 0 (none), any other becomes a live counter. */
static void fuzz_fix_counter(const fuzz_world_t *w, uint8_t *msg, size_t length, size_t offset)
{
    uint64_t value = get64(msg, length, offset);

    if (0 != value) {
        put64(msg, length, offset, fuzz_counter(w, value));
    }
}

/* ---- active messages ------------------------------------------------------------ */

static bool fuzz_flag(const uint8_t *msg, size_t length, uint8_t flag)
{
    return length >= sizeof(loom_wire_hdr_t) && (msg[offsetof(loom_wire_hdr_t, flags)] & flag);
}

/* A checked write: its epochs the expected ones; the write inside self's
 * region and the segment inside the write (FUZZ_FIX_ADDR), or the range
 * of the get of self's it answers (FUZZ_FIX_SEQ, LOOM_WIRE_FLAG_NOTIFY). */
static void fuzz_fix_put(fuzz_world_t *w, unsigned fix, uint8_t *msg, size_t length)
{
    size_t seg = (length > sizeof(loom_wire_put_t)) ? length - sizeof(loom_wire_put_t) : 0;
    loom_op_t *get = NULL;
    uint64_t total, region_id;

    if (fix & FUZZ_FIX_EPOCH) {
        put32(msg, length, offsetof(loom_wire_put_t, region_epoch), w->self->epoch);
    }
    if (fix & FUZZ_FIX_SEQ) {
        put32(msg, length, offsetof(loom_wire_put_t, rail_epoch),
              w->from->peer->rails[w->rail].rail_epoch);
        if (fuzz_flag(msg, length, LOOM_WIRE_FLAG_COUNT)) {
            /* a push counted as it lands: on one of self's counters */
            fuzz_fix_counter(w, msg, length, offsetof(loom_wire_put_t, counter));
        }
        if (fuzz_flag(msg, length, LOOM_WIRE_FLAG_NOTIFY) &&
            NULL != (get = fuzz_world_get(w->from))) {
            put64(msg, length, offsetof(loom_wire_put_t, request_id), get->id);
            put64(msg, length, offsetof(loom_wire_put_t, addr), (uintptr_t)get->local);
            put64(msg, length, offsetof(loom_wire_put_t, length), get->length);
        }
    }
    if (!(fix & FUZZ_FIX_ADDR)) {
        return;
    }
    if (NULL != get) {
        total     = get->length;
        region_id = loom_region_id(w->get_region);
    } else {
        total = get64(msg, length, offsetof(loom_wire_put_t, length)) % (FUZZ_REGION_BYTES + 1);
        if (total < seg) {
            total = seg;
        }
        region_id = loom_region_id(w->self_region);
        put64(msg, length, offsetof(loom_wire_put_t, length), total);
        put64(msg, length, offsetof(loom_wire_put_t, addr),
              fuzz_in_region(w->self_mem, get64(msg, length, offsetof(loom_wire_put_t, addr)),
                             total));
    }
    put64(msg, length, offsetof(loom_wire_put_t, region_id), region_id);
    if (seg <= total) {
        put64(msg, length, offsetof(loom_wire_put_t, offset),
              get64(msg, length, offsetof(loom_wire_put_t, offset)) % (total - seg + 1));
    }
}

/* A push's source: a length that fits self's region, the region's id and
 * an address inside it with room for that length; the length. */
static uint64_t fuzz_fix_source(const fuzz_world_t *w, uint8_t *msg, size_t length,
                                size_t length_at, size_t region_at, size_t addr_at)
{
    uint64_t len = get64(msg, length, length_at) % (FUZZ_REGION_BYTES + 1);

    put64(msg, length, length_at, len);
    put64(msg, length, region_at, loom_region_id(w->self_region));
    put64(msg, length, addr_at, fuzz_in_region(w->self_mem, get64(msg, length, addr_at), len));
    return len;
}

/* A process field names self (an odd value) or a fake peer (an even one). */
static void fuzz_fix_proc(fuzz_world_t *w, uint8_t *msg, size_t length, size_t offset)
{
    uint64_t proc = get64(msg, length, offset);

    put64(msg, length, offset, (proc & 1) ? FUZZ_SELF_NAME : fuzz_world_fake(w, proc)->name);
}

/* A push request's notices each name self or a fake peer, and its
 * counters (the condition's, self's; a notice's, the told process's) are
 * live ones of self's. */
static void fuzz_fix_push_notices(fuzz_world_t *w, uint8_t *msg, size_t length)
{
    size_t at = sizeof(loom_wire_push_req_t), end;
    uint16_t count = 0;

    if (length < sizeof(loom_wire_push_req_t)) {
        return;
    }
    memcpy(&count, msg + offsetof(loom_wire_push_req_t, notice_count), sizeof(count));
    count = loom_from_le16(count);
    end   = at + ((count <= LOOM_WIRE_NOTICES_MAX) ? count : 0) *
                 sizeof(loom_wire_notice_to_t);
    fuzz_fix_counter(w, msg, length, offsetof(loom_wire_push_req_t, cond_counter));
    for (; at + sizeof(loom_wire_notice_to_t) <= end && at + sizeof(loom_wire_notice_to_t) <=
           length; at += sizeof(loom_wire_notice_to_t)) {
        fuzz_fix_proc(w, msg, length, at + offsetof(loom_wire_notice_to_t, proc));
        fuzz_fix_counter(w, msg, length, at + offsetof(loom_wire_notice_to_t, counter));
    }
}

static void fuzz_fix_am(fuzz_world_t *w, int target, unsigned fix, uint8_t *msg, size_t length)
{
    loom_peer_t *peer = w->from->peer;
    fuzz_fake_t *dest;
    size_t ack_bytes = LOOM_WIRE_ACK_BYTES(w->key_size);
    loom_op_t *op;

    if ((fix & FUZZ_FIX_FLAGS) && length >= sizeof(loom_wire_hdr_t)) {
        msg[0] = LOOM_WIRE_VERSION; /* a header that passes: the body is fuzzed */
        msg[1] = fuzz_am_id[target];
        put32(msg, length, offsetof(loom_wire_hdr_t, length),
              (uint32_t)(length - sizeof(loom_wire_hdr_t)));
    }
    switch (target) {
    case FUZZ_AM_SEND:
        if (fix & FUZZ_FIX_SEQ) {
            put32(msg, length, offsetof(loom_wire_send_t, seq), peer->msg.rx_seq);
            if (0 != peer->msg.rx_conn) {
                put32(msg, length, offsetof(loom_wire_send_t, conn), peer->msg.rx_conn);
            }
        }
        break;
    case FUZZ_AM_PUSH_REQ:
        /* the destination: the requester itself or a third process */
        dest = fuzz_world_fake(w, get64(msg, length, offsetof(loom_wire_push_req_t,
                                                              dest_proc)));
        if (fix & FUZZ_FIX_EPOCH) {
            put32(msg, length, offsetof(loom_wire_push_req_t, src_epoch), w->self->epoch);
        }
        if (fix & FUZZ_FIX_ADDR) {
            uint64_t len = fuzz_fix_source(w, msg, length,
                                           offsetof(loom_wire_push_req_t, length),
                                           offsetof(loom_wire_push_req_t, src_region_id),
                                           offsetof(loom_wire_push_req_t, src_addr));
            put64(msg, length, offsetof(loom_wire_push_req_t, dest_proc), dest->name);
            put64(msg, length, offsetof(loom_wire_push_req_t, dst_addr),
                  fuzz_in_region(dest->mem, get64(msg, length,
                                 offsetof(loom_wire_push_req_t, dst_addr)), len));
        }
        if (fix & FUZZ_FIX_SEQ) {
            fuzz_fix_proc(w, msg, length, offsetof(loom_wire_push_req_t, notify_proc));
            fuzz_fix_push_notices(w, msg, length);
        }
        if ((fix & FUZZ_FIX_KEY) && length >= w->key_size) {
            memcpy(msg + length - w->key_size, dest->key, w->key_size);
        }
        break;
    case FUZZ_AM_PUSH_DONE:
        if ((fix & FUZZ_FIX_SEQ) && NULL != (op = fuzz_world_get(w->from))) {
            put64(msg, length, offsetof(loom_wire_push_done_t, request_id), op->id);
            put64(msg, length, offsetof(loom_wire_push_done_t, length), op->length);
        }
        break;
    case FUZZ_AM_CONNECT:
        if (fix & FUZZ_FIX_EPOCH) {
            put32(msg, length, offsetof(loom_wire_connect_t, sender_epoch), peer->epoch);
        }
        break;
    case FUZZ_AM_EAGER_REQ:
        if (fix & FUZZ_FIX_ADDR) {
            put64(msg, length, offsetof(loom_wire_eager_req_t, box_addr),
                  fuzz_in_region(w->from->mem, get64(msg, length,
                                 offsetof(loom_wire_eager_req_t, box_addr)), ack_bytes));
        }
        if ((fix & FUZZ_FIX_KEY) && length >= sizeof(loom_wire_eager_req_t) + w->key_size) {
            memcpy(msg + sizeof(loom_wire_eager_req_t), w->from->key, w->key_size);
            put32(msg, length, offsetof(loom_wire_eager_req_t, key_length),
                  (uint32_t)w->key_size);
        }
        if (fix & FUZZ_FIX_SEQ) {
            uint32_t next = peer->eager.rx.served_seq + 1;
            put32(msg, length, offsetof(loom_wire_eager_req_t, req_seq), next ? next : 1);
            put32(msg, length, offsetof(loom_wire_eager_req_t, ring_before),
                  peer->eager.rx.ring_recv);
        }
        break;
    case FUZZ_AM_EAGER_NOTE:
        if ((fix & FUZZ_FIX_SEQ) && length >= sizeof(loom_wire_eager_note_t)) {
            uint16_t credits;
            memcpy(&credits, msg + offsetof(loom_wire_eager_note_t, credits), sizeof(credits));
            put16(msg, length, offsetof(loom_wire_eager_note_t, credits),
                  LOOM_WIRE_CREDITS(peer->eager.tx.gen, loom_from_le16(credits)));
        }
        break;
    case FUZZ_AM_MSG_ACK:
        if (fix & FUZZ_FIX_SEQ) {
            bool reply = fuzz_flag(msg, length, LOOM_WIRE_FLAG_CONN_REPLY) &&
                         0 != peer->msg.new_conn;

            put32(msg, length, offsetof(loom_wire_msg_ack_t, ack), peer->msg.tx_seq);
            put32(msg, length, offsetof(loom_wire_msg_ack_t, conn),
                  reply ? peer->msg.new_conn : peer->msg.rx_conn);
        }
        break;
    case FUZZ_AM_PROBE:
        if (fix & FUZZ_FIX_EPOCH) {
            put32(msg, length, offsetof(loom_wire_probe_t, sender_epoch), peer->epoch);
        }
        if (fix & FUZZ_FIX_SEQ) {
            put32(msg, length, offsetof(loom_wire_probe_t, rail_epoch),
                  peer->rails[w->rail].rail_epoch);
        }
        break;
    case FUZZ_AM_BYE:
        if (fix & FUZZ_FIX_EPOCH) {
            put32(msg, length, offsetof(loom_wire_bye_t, sender_epoch), peer->epoch);
        }
        break;
    case FUZZ_AM_PUT:
        fuzz_fix_put(w, fix, msg, length);
        break;
    case FUZZ_AM_PUT_ACK:
        if ((fix & FUZZ_FIX_SEQ) && NULL != (op = fuzz_world_put(w->from))) {
            put64(msg, length, offsetof(loom_wire_put_ack_t, write_id), op->write_id);
        }
        break;
    default:
        break;
    }
}

/* With FUZZ_FIX_KEY, a message followed by a key is cut or zero-padded to
 * the length its key makes it (the key size is known only at run time). */
static size_t fuzz_am_length(const fuzz_world_t *w, int target, unsigned fix,
                             const uint8_t *body, size_t length)
{
    if (!(fix & FUZZ_FIX_KEY)) {
        return length;
    }
    if (FUZZ_AM_PUSH_REQ == target) {
        uint16_t count = 0;

        if (length >= sizeof(loom_wire_push_req_t)) {
            memcpy(&count, body + offsetof(loom_wire_push_req_t, notice_count), sizeof(count));
            count = loom_from_le16(count);
        }
        return sizeof(loom_wire_push_req_t) + w->key_size +
               (count <= LOOM_WIRE_NOTICES_MAX ? count : 0) * sizeof(loom_wire_notice_to_t);
    }
    if (FUZZ_AM_EAGER_REQ == target) {
        return sizeof(loom_wire_eager_req_t) + w->key_size;
    }
    return length;
}

static void fuzz_am_run(fuzz_world_t *w, int target, unsigned fix, const uint8_t *body,
                        size_t length)
{
    size_t want = fuzz_am_length(w, target, fix, body, length);

    memset(FUZZ_ODD, 0, want);
    memcpy(FUZZ_ODD, body, (length < want) ? length : want);
    length = want;
    if (w->from != &w->fakes[0] && 0 != fuzz_sender_at[target]) {
        put64(FUZZ_ODD, length, fuzz_sender_at[target], w->from->name);
    }
    fuzz_fix_am(w, target, fix, FUZZ_ODD, length);
    (void)fuzz_am_cb[target](&w->self->rails[w->rail], FUZZ_ODD, length, 0);
}

/* ---- engine messages: the fake peer's next SEND of loom's tag ---------------------- */

/* With FUZZ_FIX_KEY a multicast request is laid out again: its first
 * destinations (1 to FUZZ_MULTI_DESTS, as the input has them, read at the
 * stride of no key), each followed by the key of the fake peer it names.
 * Its length. */
static size_t fuzz_multi_keys(fuzz_world_t *w, uint8_t *out, const uint8_t *body,
                              size_t length)
{
    loom_wire_push_multi_t req;
    loom_wire_push_dest_t dest;
    size_t at = sizeof(req), from = sizeof(req);
    unsigned count, i;

    memset(&req, 0, sizeof(req));
    memcpy(&req, body, (length < sizeof(req)) ? length : sizeof(req));
    count = (req.dest_count % FUZZ_MULTI_DESTS) + 1;
    req.dest_count = (uint8_t)count;
    memcpy(out, &req, sizeof(req));
    for (i = 0; i < count; ++i, from += sizeof(dest)) {
        memset(&dest, 0, sizeof(dest));
        if (from < length) {
            memcpy(&dest, body + from, (length - from < sizeof(dest)) ? length - from
                                                                       : sizeof(dest));
        }
        dest.key_len = loom_le16((uint16_t)w->key_size);
        memcpy(out + at, &dest, sizeof(dest));
        memcpy(out + at + sizeof(dest),
               fuzz_world_fake(w, loom_from_le64(dest.proc))->key, w->key_size);
        at += sizeof(dest) + w->key_size;
    }
    return at;
}

/* A multicast request's source in self's region, each destination a fake
 * peer's region (walked at the stride their key lengths give). */
static void fuzz_fix_multi(fuzz_world_t *w, unsigned fix, uint8_t *msg, size_t length)
{
    uint64_t len;
    size_t at;

    if (fix & FUZZ_FIX_EPOCH) {
        put32(msg, length, offsetof(loom_wire_push_multi_t, src_epoch), w->self->epoch);
    }
    if (fix & FUZZ_FIX_SEQ) {
        fuzz_fix_counter(w, msg, length, offsetof(loom_wire_push_multi_t, cond_counter));
    }
    if (!(fix & FUZZ_FIX_ADDR)) {
        return;
    }
    len = fuzz_fix_source(w, msg, length, offsetof(loom_wire_push_multi_t, length),
                          offsetof(loom_wire_push_multi_t, src_region_id),
                          offsetof(loom_wire_push_multi_t, src_addr));
    for (at = sizeof(loom_wire_push_multi_t); at + sizeof(loom_wire_push_dest_t) <= length;) {
        fuzz_fake_t *dest = fuzz_world_fake(w, get64(msg, length,
                                                     at + offsetof(loom_wire_push_dest_t,
                                                                   proc)));
        uint16_t key_len;

        put64(msg, length, at + offsetof(loom_wire_push_dest_t, proc), dest->name);
        put64(msg, length, at + offsetof(loom_wire_push_dest_t, dst_addr),
              fuzz_in_region(dest->mem, get64(msg, length,
                             at + offsetof(loom_wire_push_dest_t, dst_addr)), len));
        memcpy(&key_len, msg + at + offsetof(loom_wire_push_dest_t, key_len), sizeof(key_len));
        at += sizeof(loom_wire_push_dest_t) + loom_from_le16(key_len);
    }
}

/* An atomic on an aligned word of self's region, of the epoch it has. */
static void fuzz_fix_atomic(const fuzz_world_t *w, unsigned fix, uint8_t *msg, size_t length)
{
    uint8_t size = (length > offsetof(loom_wire_atomic_t, size) &&
                    (msg[offsetof(loom_wire_atomic_t, size)] & 1)) ? 8 : 4;
    uint64_t offset;

    if (fix & FUZZ_FIX_EPOCH) {
        put32(msg, length, offsetof(loom_wire_atomic_t, region_epoch), w->self->epoch);
    }
    if (!(fix & FUZZ_FIX_ADDR) || length <= offsetof(loom_wire_atomic_t, size)) {
        return;
    }
    msg[offsetof(loom_wire_atomic_t, size)] = size;
    offset = get64(msg, length, offsetof(loom_wire_atomic_t, addr)) % FUZZ_REGION_BYTES;
    put64(msg, length, offsetof(loom_wire_atomic_t, region_id), loom_region_id(w->self_region));
    put64(msg, length, offsetof(loom_wire_atomic_t, addr),
          (uint64_t)(uintptr_t)w->self_mem + (offset & ~(uint64_t)(size - 1)));
}

static void fuzz_fix_engine(fuzz_world_t *w, unsigned fix, uint8_t *msg, size_t length)
{
    switch ((length > 0) ? msg[0] : 0) {
    case LOOM_WIRE_ATOMIC_REQ:
    case LOOM_WIRE_ATOMIC_REPLY:
        fuzz_fix_atomic(w, fix, msg, length);
        break;
    case LOOM_WIRE_COUNTER_ADD:
        if (fix & FUZZ_FIX_SEQ) {
            put64(msg, length, offsetof(loom_wire_counter_add_t, counter),
                  fuzz_counter(w, get64(msg, length, offsetof(loom_wire_counter_add_t,
                                                              counter))));
        }
        break;
    case LOOM_WIRE_PUSH_NOTICE:
        if (fix & FUZZ_FIX_SEQ) {
            fuzz_fix_counter(w, msg, length, offsetof(loom_wire_push_notice_t, counter));
        }
        break;
    case LOOM_WIRE_PUSH_MULTI:
        fuzz_fix_multi(w, fix, msg, length);
        break;
    default:
        break;
    }
}

/* The fake peer's next message, in order and of its connection, carrying
 * the engine message; it goes through the SEND handler as any would. */
static void fuzz_engine_run(fuzz_world_t *w, unsigned fix, const uint8_t *body, size_t length)
{
    loom_wire_send_t send;
    uint8_t *msg = FUZZ_ODD + sizeof(send);

    if ((fix & FUZZ_FIX_KEY) && length > 0 && LOOM_WIRE_PUSH_MULTI == body[0]) {
        length = fuzz_multi_keys(w, msg, body, length);
    } else {
        memcpy(msg, body, length);
    }
    fuzz_fix_engine(w, fix, msg, length);
    memset(&send, 0, sizeof(send));
    send.hdr.version = LOOM_WIRE_VERSION;
    send.hdr.type    = LOOM_WIRE_SEND;
    send.hdr.tag     = LOOM_WIRE_TAG_ENGINE;
    send.hdr.length  = loom_le32((uint32_t)(sizeof(send) - sizeof(send.hdr) + length));
    send.sender      = loom_le64(w->from->name);
    send.seq         = loom_le32(w->from->peer->msg.rx_seq);
    send.conn        = loom_le32(w->from->peer->msg.rx_conn);
    memcpy(FUZZ_ODD, &send, sizeof(send));
    (void)fuzz_am_cb[FUZZ_AM_SEND](&w->self->rails[w->rail], FUZZ_ODD, sizeof(send) + length,
                                   0);
}

/* ---- the ring slot: written as the fake peer's RDMA write would -------------------- */

static void fuzz_slot_run(fuzz_world_t *w, unsigned fix, const uint8_t *body, size_t length)
{
    loom_eager_rx_t *rx = &w->from->peer->eager.rx;
    uint32_t flag, slot_len;
    size_t max_len, n;
    uint8_t *end;

    if (!fuzz_world_ring(w->from)) {
        return;
    }
    end = rx->mem.buf + (size_t)(rx->slot + 1) * rx->mem.slot_size;
    n   = (length < rx->mem.slot_size) ? length : rx->mem.slot_size;
    memcpy(end - n, body, n);
    if (!(fix & FUZZ_FIX_FLAGS)) {
        return;
    }
    /* the foot names a length that fits the slot; both flags where they belong */
    flag    = loom_eager_flag(rx->ring_recv);
    max_len = rx->mem.slot_size - LOOM_WIRE_SLOT_BYTES(0);
    memcpy(&slot_len, end - sizeof(loom_wire_slot_foot_t), sizeof(slot_len));
    slot_len = (uint32_t)(loom_from_le32(slot_len) % (max_len + 1));
    put32(end - sizeof(loom_wire_slot_foot_t), sizeof(loom_wire_slot_foot_t),
          offsetof(loom_wire_slot_foot_t, length), slot_len);
    put32(end - sizeof(loom_wire_slot_foot_t), sizeof(loom_wire_slot_foot_t),
          offsetof(loom_wire_slot_foot_t, tail), flag);
    end -= LOOM_WIRE_SLOT_BYTES(slot_len);
    put32(end, sizeof(loom_wire_slot_t), offsetof(loom_wire_slot_t, head), flag);
    if (fix & FUZZ_FIX_SEQ) {
        put32(end, sizeof(loom_wire_slot_t), offsetof(loom_wire_slot_t, seq),
              w->from->peer->msg.rx_seq);
        end[offsetof(loom_wire_slot_t, gen)] = rx->gen;
    }
}

/* ---- the ack box of a ring request of ours ------------------------------------------ */

static void fuzz_box_run(fuzz_world_t *w, unsigned fix, const uint8_t *body, size_t length)
{
    loom_engine_t *engine = w->self;
    loom_eager_tx_t *tx = &w->from->peer->eager.tx;
    size_t ack_bytes = LOOM_WIRE_ACK_BYTES(w->key_size), n;
    uint8_t *box;

    /* a request of ours under way, as loom_eager_tx_request leaves it
     * (not sent: the fake peer's answer would race the input's bytes) */
    if (NULL == tx->box && NULL == (tx->box = loom_eager_box_get(engine))) {
        return;
    }
    if (!tx->pending) {
        tx->req_seq  = (0 == tx->req_seq + 1) ? 1 : tx->req_seq + 1;
        tx->want     = (0 == tx->phase) ? 1 : 0;
        tx->pending  = true;
        tx->req_time = loom_now_ns();
        loom_eager_activate(w->from->peer);
    }
    box = tx->box->mem;
    n   = (length < engine->eager.box_size) ? length : engine->eager.box_size;
    memcpy(box, body, n);
    if (fix & FUZZ_FIX_SEQ) {
        loom_wire_eager_ack_t ack;

        memcpy(&ack, box, sizeof(ack));
        ack.version    = LOOM_WIRE_VERSION;
        ack.phase      = (uint8_t)tx->want;
        ack.key_length = loom_le32((uint32_t)w->key_size);
        if (0 != tx->want) {
            ack.slot_size  = loom_le32(engine->config.eager_phases[tx->want - 1].slot_size);
            ack.slot_count = loom_le32(engine->config.eager_phases[tx->want - 1].slot_count);
        }
        memcpy(box, &ack, sizeof(ack));
    }
    if (fix & FUZZ_FIX_ADDR) {
        uint64_t ring = get64(box, ack_bytes, offsetof(loom_wire_eager_ack_t, ring_addr));
        put64(box, ack_bytes, offsetof(loom_wire_eager_ack_t, ring_addr),
              fuzz_in_region(w->from->mem, ring, 1024 * 8));
    }
    if (fix & FUZZ_FIX_KEY) {
        memcpy(box + sizeof(loom_wire_eager_ack_t), w->from->key, w->key_size);
    }
    if (fix & FUZZ_FIX_FLAGS) {
        put32(box, ack_bytes, offsetof(loom_wire_eager_ack_t, head), tx->req_seq);
        put32(box, ack_bytes, ack_bytes - sizeof(uint32_t), tx->req_seq);
    }
}

/* ---- blobs and keys ---------------------------------------------------------------- */

static void fuzz_address_run(unsigned fix, const uint8_t *body, size_t length)
{
    const loom_wire_rail_addr_t *rails[LOOM_MAX_RAILS];
    const uint8_t *dev_addrs[LOOM_MAX_RAILS], *iface_addrs[LOOM_MAX_RAILS];
    loom_wire_addr_t addr;
    volatile uint8_t sink = 0;
    int i;

    memcpy(FUZZ_ODD, body, length);
    if ((fix & FUZZ_FIX_FLAGS) && length >= sizeof(addr)) {
        /* a blob header that passes: the rail records are fuzzed */
        put32(FUZZ_ODD, length, offsetof(loom_wire_addr_t, magic), LOOM_WIRE_ADDR_MAGIC);
        put32(FUZZ_ODD, length, offsetof(loom_wire_addr_t, total_length), (uint32_t)length);
        FUZZ_ODD[offsetof(loom_wire_addr_t, version)] = LOOM_WIRE_VERSION;
    }
    if (LOOM_OK != loom_address_parse(FUZZ_ODD, length, &addr, rails, dev_addrs,
                                      iface_addrs)) {
        return;
    }
    /* what the parser vouched for is read whole, as loom_peer_connect does */
    for (i = 0; i < addr.rail_count; ++i) {
        loom_wire_rail_addr_t rail;
        size_t j;

        memcpy(&rail, rails[i], sizeof(rail));
        for (j = 0; j < loom_from_le16(rail.dev_addr_len); ++j) {
            sink ^= dev_addrs[i][j];
        }
        for (j = 0; j < loom_from_le16(rail.iface_addr_len); ++j) {
            sink ^= iface_addrs[i][j];
        }
    }
    (void)sink;
}

static void fuzz_key_run(fuzz_world_t *w, const uint8_t *body, size_t length)
{
    const loom_wire_key_t *key;
    uct_rkey_bundle_t bundle;

    memcpy(FUZZ_ODD, body, length);
    if (LOOM_OK == loom_key_parse(w->self, FUZZ_ODD, length, &key) &&
        LOOM_OK == loom_key_rkey(w->self, key, 0, &bundle)) {
        uct_rkey_release(w->self->rails[0].component, &bundle);
    }
}

/* ---- libFuzzer ------------------------------------------------------------------------ */

/* Each target's handler, and every handler a target: a message type added
 * to the engine without one here stops the fuzzer at once. */
static void fuzz_am_bind(void)
{
    size_t i;
    int t;

    for (i = 0; i < loom_am_handler_count; ++i) {
        for (t = 0; t < FUZZ_TARGET_COUNT; ++t) {
            if (fuzz_am_id[t] == loom_am_handlers[i].id) {
                fuzz_am_cb[t] = loom_am_handlers[i].cb;
                break;
            }
        }
        if (FUZZ_TARGET_COUNT == t) {
            fprintf(stderr, "fuzz: AM id %u has no target in fuzz_input.h\n",
                    loom_am_handlers[i].id);
            abort();
        }
    }
    for (t = 0; t < FUZZ_TARGET_COUNT; ++t) {
        if (0 != fuzz_am_id[t] && NULL == fuzz_am_cb[t]) {
            fprintf(stderr, "fuzz: target %d names AM id %u, which has no handler\n", t,
                    fuzz_am_id[t]);
            abort();
        }
    }
}

static void fuzz_report(void)
{
    fprintf(stderr, "fuzz: %lu messages delivered, %lu fresh pairs\n",
            fuzz_world.delivered, fuzz_world.resets);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_am_bind();
    atexit(fuzz_report);
    if (!fuzz_world_open(&fuzz_world)) {
        /* no tcp:lo here: nothing can be fuzzed */
        exit(77);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_world_t *w = &fuzz_world;
    const uint8_t *body = data + FUZZ_HDR_BYTES;
    size_t length;
    int target;
    unsigned fix;

    if (size < FUZZ_HDR_BYTES || size > FUZZ_MAX_INPUT) {
        return 0;
    }
    target  = data[0] % FUZZ_TARGET_COUNT;
    w->from = &w->fakes[(data[0] / FUZZ_TARGET_COUNT) % FUZZ_PEERS];
    fix     = data[1];
    length = size - FUZZ_HDR_BYTES;
    fuzz_world_ops(w);
    /* arriving in quiet progress, as with a progress thread: handlers
     * look at the engine's flag */
    w->self->quiet = !!(fix & FUZZ_FIX_QUIET);
    w->rail        = ((fix & FUZZ_FIX_RAIL) && w->self->rail_count > 1) ? 1 : 0;
    switch (target) {
    case FUZZ_ENGINE:
        fuzz_engine_run(w, fix, body, length);
        break;
    case FUZZ_RING_SLOT:
        fuzz_slot_run(w, fix, body, length);
        break;
    case FUZZ_ACK_BOX:
        fuzz_box_run(w, fix, body, length);
        break;
    case FUZZ_ADDRESS:
        fuzz_address_run(fix, body, length);
        break;
    case FUZZ_KEY:
        fuzz_key_run(w, body, length);
        break;
    default:
        fuzz_am_run(w, target, fix, body, length);
        break;
    }
    w->self->quiet = false;
    if (fix & FUZZ_FIX_QUIET) {
        (void)loom_engine_progress_quiet(w->self); /* what it sent back, quietly */
    }
    fuzz_world_progress(w, 2);
    fuzz_world_check(w);
    /* a pair the input broke is made anew now, its cost and coverage the
     * input's */
    fuzz_world_heal(w);
    return 0;
}
