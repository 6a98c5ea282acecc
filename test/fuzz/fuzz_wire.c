/*
 * libFuzzer target over every receiver of bytes a peer controls: the UCT
 * active-message handlers loom_rail_set_handlers() registers, the eager
 * ring slot parser, the ring ack box parser, the address blob parser and
 * the key parser.  Input format: fuzz_input.h.
 *
 * One world (fuzz_world.h) is set up before the first input and kept: the
 * engine's state carries from one input to the next, as it does from one
 * message to the next.  After each input both engines progress, so that
 * what the input queued (replies, serves, ring changes) runs too.
 */
#include "fuzz_input.h"
#include "fuzz_world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Messages held for a gap in the sequence numbers grow without bound (an
 * open defect of its own, issue 10 item 7): the fuzzer drops them past this
 * so that the run measures crashes, not that memory. */
#define FUZZ_HELD_MAX 256
#define FUZZ_MAX_INPUT 4096

static fuzz_world_t fuzz_world;

/* UCT hands AM payloads at any alignment (tcp: right after a 5-byte
 * header); the fuzzer gives them an odd one so that UBSan sees every
 * unaligned read of a wire struct. */
static uint8_t fuzz_buf[FUZZ_MAX_INPUT + 16];
#define FUZZ_ODD (fuzz_buf + 5)

typedef ucs_status_t (*fuzz_am_cb_t)(void *arg, void *data, size_t length, unsigned flags);

static const struct {
    uint8_t      id;
    fuzz_am_cb_t cb;
} fuzz_am[] = {
    [FUZZ_AM_SEND]       = {LOOM_WIRE_SEND,       loom_am_recv_send},
    [FUZZ_AM_PUSH_REQ]   = {LOOM_WIRE_PUSH_REQ,   loom_push_req_recv},
    [FUZZ_AM_PUSH_DONE]  = {LOOM_WIRE_PUSH_DONE,  loom_push_done_recv},
    [FUZZ_AM_CONNECT]    = {LOOM_WIRE_CONNECT,    loom_connect_recv},
    [FUZZ_AM_EAGER_REQ]  = {LOOM_WIRE_EAGER_REQ,  loom_eager_req_recv},
    [FUZZ_AM_EAGER_NOTE] = {LOOM_WIRE_EAGER_NOTE, loom_eager_note_recv},
    [FUZZ_AM_MSG_ACK]    = {LOOM_WIRE_MSG_ACK,    loom_msg_ack_recv},
    [FUZZ_AM_PROBE]      = {LOOM_WIRE_PROBE,      loom_probe_recv},
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

/* ---- active messages ------------------------------------------------------------ */

static void fuzz_fix_am(fuzz_world_t *w, int target, unsigned fix, uint8_t *msg, size_t length)
{
    loom_peer_t *peer = w->peer;
    size_t ack_bytes = LOOM_WIRE_ACK_BYTES(w->key_size);

    if ((fix & FUZZ_FIX_FLAGS) && length >= sizeof(loom_wire_hdr_t)) {
        msg[0] = LOOM_WIRE_VERSION; /* a header that passes: the body is fuzzed */
        msg[1] = fuzz_am[target].id;
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
        if (fix & FUZZ_FIX_EPOCH) {
            put32(msg, length, offsetof(loom_wire_push_req_t, src_epoch), w->self->epoch);
        }
        if (fix & FUZZ_FIX_ADDR) {
            uint64_t len = get64(msg, length, offsetof(loom_wire_push_req_t, length)) %
                           (FUZZ_REGION_BYTES + 1);
            put64(msg, length, offsetof(loom_wire_push_req_t, length), len);
            put64(msg, length, offsetof(loom_wire_push_req_t, src_region_id),
                  loom_region_id(w->self_region));
            put64(msg, length, offsetof(loom_wire_push_req_t, src_addr),
                  fuzz_in_region(w->self_mem, get64(msg, length,
                                 offsetof(loom_wire_push_req_t, src_addr)), len));
            put64(msg, length, offsetof(loom_wire_push_req_t, dst_addr),
                  fuzz_in_region(w->other_mem, get64(msg, length,
                                 offsetof(loom_wire_push_req_t, dst_addr)), len));
        }
        if ((fix & FUZZ_FIX_KEY) && length >= sizeof(loom_wire_push_req_t) + w->key_size) {
            memcpy(msg + sizeof(loom_wire_push_req_t), w->other_key, w->key_size);
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
                  fuzz_in_region(w->other_mem, get64(msg, length,
                                 offsetof(loom_wire_eager_req_t, box_addr)), ack_bytes));
        }
        if ((fix & FUZZ_FIX_KEY) && length >= sizeof(loom_wire_eager_req_t) + w->key_size) {
            memcpy(msg + sizeof(loom_wire_eager_req_t), w->other_key, w->key_size);
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
            put32(msg, length, offsetof(loom_wire_msg_ack_t, ack), peer->msg.tx_seq);
        }
        break;
    case FUZZ_AM_PROBE:
        if (fix & FUZZ_FIX_EPOCH) {
            put32(msg, length, offsetof(loom_wire_probe_t, sender_epoch), peer->epoch);
        }
        if (fix & FUZZ_FIX_SEQ) {
            put32(msg, length, offsetof(loom_wire_probe_t, rail_epoch),
                  peer->rails[0].rail_epoch);
        }
        break;
    default:
        break;
    }
}

/* With FUZZ_FIX_KEY, a message followed by a key is cut or zero-padded to
 * the length its key makes it (the key size is known only at run time). */
static size_t fuzz_am_length(const fuzz_world_t *w, int target, unsigned fix, size_t length)
{
    if (!(fix & FUZZ_FIX_KEY)) {
        return length;
    }
    if (FUZZ_AM_PUSH_REQ == target) {
        return sizeof(loom_wire_push_req_t) + w->key_size;
    }
    if (FUZZ_AM_EAGER_REQ == target) {
        return sizeof(loom_wire_eager_req_t) + w->key_size;
    }
    return length;
}

static void fuzz_am_run(fuzz_world_t *w, int target, unsigned fix, const uint8_t *body,
                        size_t length)
{
    size_t want = fuzz_am_length(w, target, fix, length);

    memset(FUZZ_ODD, 0, want);
    memcpy(FUZZ_ODD, body, (length < want) ? length : want);
    length = want;
    fuzz_fix_am(w, target, fix, FUZZ_ODD, length);
    (void)fuzz_am[target].cb(&w->self->rails[0], FUZZ_ODD, length, 0);
}

/* ---- the ring slot: written as the fake peer's RDMA write would -------------------- */

static void fuzz_slot_run(fuzz_world_t *w, unsigned fix, const uint8_t *body, size_t length)
{
    loom_eager_rx_t *rx = &w->peer->eager.rx;
    uint32_t flag, slot_len;
    size_t max_len, n;
    uint8_t *end;

    if (!fuzz_world_ring(w)) {
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
              w->peer->msg.rx_seq);
        end[offsetof(loom_wire_slot_t, gen)] = rx->gen;
    }
}

/* ---- the ack box of a ring request of ours ------------------------------------------ */

static void fuzz_box_run(fuzz_world_t *w, unsigned fix, const uint8_t *body, size_t length)
{
    loom_engine_t *engine = w->self;
    loom_eager_tx_t *tx = &w->peer->eager.tx;
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
        loom_eager_activate(w->peer);
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
              fuzz_in_region(w->other_mem, ring, 1024 * 8));
    }
    if (fix & FUZZ_FIX_KEY) {
        memcpy(box + sizeof(loom_wire_eager_ack_t), w->other_key, w->key_size);
    }
    if (fix & FUZZ_FIX_FLAGS) {
        put32(box, ack_bytes, offsetof(loom_wire_eager_ack_t, head), tx->req_seq);
        put32(box, ack_bytes, ack_bytes - sizeof(uint32_t), tx->req_seq);
    }
}

/* ---- blobs and keys ---------------------------------------------------------------- */

static void fuzz_address_run(const uint8_t *body, size_t length)
{
    const loom_wire_rail_addr_t *rails[LOOM_MAX_RAILS];
    const uint8_t *dev_addrs[LOOM_MAX_RAILS], *iface_addrs[LOOM_MAX_RAILS];
    loom_wire_addr_t addr;
    volatile uint8_t sink = 0;
    int i;

    memcpy(FUZZ_ODD, body, length);
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

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
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
    target = data[0] % FUZZ_TARGET_COUNT;
    fix    = data[1];
    length = size - FUZZ_HDR_BYTES;
    fuzz_world_heal(w);
    switch (target) {
    case FUZZ_RING_SLOT:
        fuzz_slot_run(w, fix, body, length);
        break;
    case FUZZ_ACK_BOX:
        fuzz_box_run(w, fix, body, length);
        break;
    case FUZZ_ADDRESS:
        fuzz_address_run(body, length);
        break;
    case FUZZ_KEY:
        fuzz_key_run(w, body, length);
        break;
    default:
        fuzz_am_run(w, target, fix, body, length);
        break;
    }
    fuzz_world_progress(w, 2);
    if (w->peer->eager.rx.held_count > FUZZ_HELD_MAX) {
        loom_eager_rx_held_drop(w->peer);
    }
    return 0;
}
