/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Writes the wire fuzzer's seed corpus: one well-formed input per message
 * type (and a few variants), in the format of fuzz_input.h, into the
 * directory given.  Values only known at run time (epochs, keys, addresses,
 * the sequence numbers expected) are left to the harness's FUZZ_FIX_* bits.
 *
 * Usage: gen_seeds DIR   (the committed corpus is test/fuzz/corpus/seeds)
 */
#include "fuzz_input.h"
#include "base/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED_MAX 1024
#define SEED_KEY_ROOM 64 /* more than a tcp:lo key; FUZZ_FIX_KEY cuts it */

static const char *seed_dir;

static void seed_write(const char *name, int target, unsigned fix, const void *body,
                       size_t length)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", seed_dir, name);
    f = fopen(path, "wb");
    if (NULL == f || fputc(target, f) == EOF || fputc((int)fix, f) == EOF ||
        fwrite(body, 1, length, f) != length || 0 != fclose(f)) {
        perror(path);
        exit(1);
    }
}

static void seed_hdr(loom_wire_hdr_t *hdr, uint8_t type, size_t total)
{
    hdr->version = LOOM_WIRE_VERSION;
    hdr->type    = type;
    hdr->tag     = 0;
    hdr->flags   = 0;
    hdr->length  = loom_le32((uint32_t)(total - sizeof(*hdr)));
}

static void seed_send(void)
{
    uint8_t msg[SEED_MAX];
    loom_wire_send_t send;
    size_t length = sizeof(send) + 5;

    memset(&send, 0, sizeof(send));
    seed_hdr(&send.hdr, LOOM_WIRE_SEND, length);
    send.hdr.tag   = 7;
    send.hdr.flags = LOOM_WIRE_FLAG_KEPT;
    send.sender    = loom_le64(FUZZ_PEER_NAME);
    send.conn      = loom_le32(1);
    memcpy(msg, &send, sizeof(send));
    memcpy(msg + sizeof(send), "hello", 5);
    seed_write("send-next", FUZZ_AM_SEND, FUZZ_FIX_SEQ, msg, length);
    seed_write("send-next-quiet", FUZZ_AM_SEND, FUZZ_FIX_SEQ | FUZZ_FIX_QUIET, msg, length);
    send.hdr.flags = LOOM_WIRE_FLAG_ACK_REQ;
    send.seq       = loom_le32(3); /* a gap: held until the ones before came */
    memcpy(msg, &send, sizeof(send));
    seed_write("send-gap-ack-req", FUZZ_AM_SEND, 0, msg, length);
    send.sender = loom_le64(0x7777); /* not connected: a stranger */
    memcpy(msg, &send, sizeof(send));
    seed_write("send-stranger", FUZZ_AM_SEND, 0, msg, length);
    /* message 0 of another connection of the peer: kept, and the peer asked */
    send.sender = loom_le64(FUZZ_PEER_NAME);
    send.seq    = 0;
    send.conn   = loom_le32(0x5a5a5a5a);
    memcpy(msg, &send, sizeof(send));
    seed_write("send-new-conn", FUZZ_AM_SEND, 0, msg, length);
}

/* Engine messages (a SEND of loom's own tag, next in order): a multicast
 * push request naming two destinations with their keys, the same cut
 * short, and an answer to one. */
static void seed_engine(void)
{
    uint8_t msg[SEED_MAX] = {0};
    loom_wire_send_t send;
    loom_wire_push_multi_t req;
    loom_wire_push_dest_t dest;
    loom_wire_push_multi_done_t done;
    size_t length = sizeof(send), i;

    memset(&send, 0, sizeof(send));
    send.hdr.tag = LOOM_WIRE_TAG_ENGINE;
    send.sender  = loom_le64(FUZZ_PEER_NAME);
    send.conn    = loom_le32(1);
    memset(&req, 0, sizeof(req));
    req.kind       = LOOM_WIRE_PUSH_MULTI;
    req.dest_count = 2;
    req.src_addr   = loom_le64(64);
    req.length     = loom_le64(256);
    memcpy(msg + length, &req, sizeof(req));
    length += sizeof(req);
    for (i = 0; i < 2; ++i) {
        memset(&dest, 0, sizeof(dest));
        dest.proc       = loom_le64(FUZZ_PEER_NAME);
        dest.dst_addr   = loom_le64(128 + 512 * i);
        dest.request_id = loom_le64(1 + i);
        dest.counter    = loom_le64(7);
        dest.flags      = LOOM_WIRE_PUSH_DEST_NOTIFY;
        dest.key_len    = loom_le16(SEED_KEY_ROOM);
        memcpy(msg + length, &dest, sizeof(dest));
        length += sizeof(dest) + SEED_KEY_ROOM;
    }
    seed_hdr(&send.hdr, LOOM_WIRE_SEND, length);
    send.hdr.tag = LOOM_WIRE_TAG_ENGINE;
    memcpy(msg, &send, sizeof(send));
    seed_write("engine-push-multi", FUZZ_AM_SEND, FUZZ_FIX_SEQ, msg, length);
    seed_hdr(&send.hdr, LOOM_WIRE_SEND, length - SEED_KEY_ROOM / 2);
    send.hdr.tag = LOOM_WIRE_TAG_ENGINE;
    memcpy(msg, &send, sizeof(send));
    seed_write("engine-push-multi-cut", FUZZ_AM_SEND, FUZZ_FIX_SEQ, msg,
               length - SEED_KEY_ROOM / 2);
    memset(&done, 0, sizeof(done));
    done.kind       = LOOM_WIRE_PUSH_MULTI_DONE;
    done.request_id = loom_le64(1);
    done.length     = loom_le64(256);
    length = sizeof(send) + sizeof(done);
    seed_hdr(&send.hdr, LOOM_WIRE_SEND, length);
    send.hdr.tag = LOOM_WIRE_TAG_ENGINE;
    memcpy(msg, &send, sizeof(send));
    memcpy(msg + sizeof(send), &done, sizeof(done));
    seed_write("engine-push-multi-done", FUZZ_AM_SEND, FUZZ_FIX_SEQ, msg, length);
}

/* Engine messages as the FUZZ_ENGINE target takes them (the harness wraps
 * them in the fake peer's next SEND): atomics of every op (numbered as
 * enum loom_atomic_op, 11 of them) and both sizes, a reply, counter
 * additions, a notice, multicast requests with keys fixed up, and some
 * of them again arriving in quiet progress. */
static void seed_engine_kinds(void)
{
    const unsigned all = FUZZ_FIX_EPOCH | FUZZ_FIX_ADDR | FUZZ_FIX_SEQ | FUZZ_FIX_KEY;
    uint8_t msg[SEED_MAX] = {0};
    loom_wire_atomic_t atomic;
    loom_wire_counter_add_t add;
    loom_wire_push_notice_t notice;
    loom_wire_push_multi_t multi;
    loom_wire_push_dest_t dest;
    char name[64];
    unsigned op, i;

    memset(&atomic, 0, sizeof(atomic));
    atomic.kind       = LOOM_WIRE_ATOMIC_REQ;
    atomic.request_id = loom_le64(5);
    atomic.addr       = loom_le64(64);
    atomic.operand    = loom_le64(3);
    atomic.compare    = loom_le64(0);
    for (op = 0; op < 11; ++op) {
        atomic.op   = (uint8_t)op;
        atomic.size = (op & 1) ? 9 : 4; /* FUZZ_FIX_ADDR: odd is 8 bytes */
        snprintf(name, sizeof(name), "engine-atomic-op%u", op);
        seed_write(name, FUZZ_ENGINE, all, &atomic, sizeof(atomic));
    }
    seed_write("engine-atomic-quiet", FUZZ_ENGINE, all | FUZZ_FIX_QUIET, &atomic,
               sizeof(atomic));
    seed_write("engine-atomic-raw", FUZZ_ENGINE, 0, &atomic, sizeof(atomic));
    atomic.kind   = LOOM_WIRE_ATOMIC_REPLY;
    atomic.status = loom_le32(LOOM_WIRE_OK);
    seed_write("engine-atomic-reply", FUZZ_ENGINE, all, &atomic, sizeof(atomic));

    memset(&add, 0, sizeof(add));
    add.kind    = LOOM_WIRE_COUNTER_ADD;
    add.counter = loom_le64(1);
    add.amount  = loom_le64(1);
    seed_write("engine-counter-add", FUZZ_ENGINE, FUZZ_FIX_SEQ, &add, sizeof(add));
    seed_write("engine-counter-add-quiet", FUZZ_ENGINE, FUZZ_FIX_SEQ | FUZZ_FIX_QUIET, &add,
               sizeof(add));
    add.amount = loom_le64(UINT64_MAX); /* past the top */
    seed_write("engine-counter-add-wrap", FUZZ_ENGINE, FUZZ_FIX_SEQ, &add, sizeof(add));

    memset(&notice, 0, sizeof(notice));
    notice.kind       = LOOM_WIRE_PUSH_NOTICE;
    notice.requester  = loom_le64(FUZZ_PEER_NAME);
    notice.request_id = loom_le64(9);
    notice.length     = loom_le64(256);
    notice.counter    = loom_le64(2);
    seed_write("engine-notice", FUZZ_ENGINE, FUZZ_FIX_SEQ, &notice, sizeof(notice));
    notice.status = loom_le32(LOOM_WIRE_CANCELLED);
    seed_write("engine-notice-cancelled", FUZZ_ENGINE, FUZZ_FIX_SEQ | FUZZ_FIX_QUIET, &notice,
               sizeof(notice));

    /* multicast: the harness gives each destination the fake peer's key */
    memset(&multi, 0, sizeof(multi));
    multi.kind       = LOOM_WIRE_PUSH_MULTI;
    multi.dest_count = 1; /* (n % 4) + 1 destinations: 2 */
    multi.src_addr   = loom_le64(64);
    multi.length     = loom_le64(4096);
    memcpy(msg, &multi, sizeof(multi));
    for (i = 0; i < 2; ++i) {
        memset(&dest, 0, sizeof(dest));
        dest.dst_addr   = loom_le64(8192 * i);
        dest.request_id = loom_le64(11 + i);
        dest.flags      = (0 == i) ? LOOM_WIRE_PUSH_DEST_NOTIFY : 0;
        memcpy(msg + sizeof(multi) + i * sizeof(dest), &dest, sizeof(dest));
    }
    seed_write("engine-multi", FUZZ_ENGINE, all, msg, sizeof(multi) + 2 * sizeof(dest));
    multi.cond_counter   = loom_le64(3);
    multi.cond_threshold = loom_le64(1);
    memcpy(msg, &multi, sizeof(multi));
    seed_write("engine-multi-cond", FUZZ_ENGINE, all, msg, sizeof(multi) + 2 * sizeof(dest));
    seed_write("engine-multi-quiet", FUZZ_ENGINE, all | FUZZ_FIX_QUIET, msg,
               sizeof(multi) + 2 * sizeof(dest));
}

static void seed_push(void)
{
    uint8_t msg[SEED_MAX] = {0};
    loom_wire_push_req_t req;
    loom_wire_push_done_t done;

    memset(&req, 0, sizeof(req));
    seed_hdr(&req.hdr, LOOM_WIRE_PUSH_REQ, sizeof(req) + SEED_KEY_ROOM);
    req.request_id  = loom_le64(1);
    req.requester   = loom_le64(FUZZ_PEER_NAME);
    req.dest_proc   = loom_le64(FUZZ_PEER_NAME);
    req.notify_proc = loom_le64(FUZZ_PEER_NAME);
    req.src_addr    = loom_le64(64);
    req.dst_addr    = loom_le64(128);
    req.length      = loom_le64(256);
    memcpy(msg, &req, sizeof(req));
    seed_write("push-req", FUZZ_AM_PUSH_REQ,
               FUZZ_FIX_EPOCH | FUZZ_FIX_KEY | FUZZ_FIX_ADDR | FUZZ_FIX_FLAGS, msg,
               sizeof(req) + SEED_KEY_ROOM);
    seed_write("push-req-raw", FUZZ_AM_PUSH_REQ, 0, msg, sizeof(req) + SEED_KEY_ROOM);
    /* the same as a chunk of a striped get: served on the rail it came by */
    req.hdr.flags = LOOM_WIRE_FLAG_ON_RAIL;
    memcpy(msg, &req, sizeof(req));
    seed_write("push-req-on-rail", FUZZ_AM_PUSH_REQ,
               FUZZ_FIX_EPOCH | FUZZ_FIX_KEY | FUZZ_FIX_ADDR | FUZZ_FIX_FLAGS, msg,
               sizeof(req) + SEED_KEY_ROOM);
    req.hdr.flags = 0;
    /* a third-party push telling two processes, waiting on a counter */
    {
        loom_wire_notice_to_t to[2] = {{loom_le64(FUZZ_PEER_NAME), loom_le64(7)},
                                       {loom_le64(FUZZ_PEER_NAME), 0}};

        req.notice_count   = loom_le16(2);
        req.cond_counter   = loom_le64(7);
        req.cond_threshold = loom_le64(1);
        seed_hdr(&req.hdr, LOOM_WIRE_PUSH_REQ, sizeof(req) + sizeof(to) + SEED_KEY_ROOM);
        memcpy(msg, &req, sizeof(req));
        memcpy(msg + sizeof(req), to, sizeof(to));
        seed_write("push-req-notices-cond", FUZZ_AM_PUSH_REQ, 0, msg,
                   sizeof(req) + sizeof(to) + SEED_KEY_ROOM);
        /* the same valid: served once a counter of self's reaches 1, telling
         * self and the fake peer (FUZZ_FIX_SEQ picks them) */
        seed_write("push-req-notices-cond-fixed", FUZZ_AM_PUSH_REQ,
                   FUZZ_FIX_EPOCH | FUZZ_FIX_KEY | FUZZ_FIX_ADDR | FUZZ_FIX_FLAGS |
                   FUZZ_FIX_SEQ, msg, sizeof(req) + sizeof(to) + SEED_KEY_ROOM);
        seed_write("push-req-quiet", FUZZ_AM_PUSH_REQ,
                   FUZZ_FIX_EPOCH | FUZZ_FIX_KEY | FUZZ_FIX_ADDR | FUZZ_FIX_FLAGS |
                   FUZZ_FIX_SEQ | FUZZ_FIX_QUIET, msg, sizeof(req) + sizeof(to) + SEED_KEY_ROOM);
    }

    memset(&done, 0, sizeof(done));
    seed_hdr(&done.hdr, LOOM_WIRE_PUSH_DONE, sizeof(done));
    done.sender     = loom_le64(FUZZ_PEER_NAME);
    done.request_id = loom_le64(1);
    done.length     = loom_le64(256);
    seed_write("push-done", FUZZ_AM_PUSH_DONE, 0, &done, sizeof(done));
    /* the answer to a get of the engine's under way */
    seed_write("push-done-get", FUZZ_AM_PUSH_DONE, FUZZ_FIX_SEQ, &done, sizeof(done));
    done.status = loom_le32(LOOM_WIRE_IO_ERROR);
    seed_write("push-done-get-io", FUZZ_AM_PUSH_DONE, FUZZ_FIX_SEQ, &done, sizeof(done));
}

static void seed_connect(void)
{
    uint8_t msg[SEED_MAX];
    loom_wire_connect_t conn;
    size_t length = sizeof(conn) + 8;

    memset(&conn, 0, sizeof(conn));
    seed_hdr(&conn.hdr, LOOM_WIRE_CONNECT, length);
    conn.sender       = loom_le64(FUZZ_PEER_NAME);
    conn.connected    = 1;
    conn.dev_addr_len = loom_le16(4);
    conn.ep_addr_len  = loom_le16(4);
    memcpy(msg, &conn, sizeof(conn));
    memset(msg + sizeof(conn), 0x11, 8);
    seed_write("connect", FUZZ_AM_CONNECT, FUZZ_FIX_EPOCH, msg, length);
    conn.sender = loom_le64(0x7777); /* kept for a process not connected yet */
    memcpy(msg, &conn, sizeof(conn));
    seed_write("connect-early", FUZZ_AM_CONNECT, 0, msg, length);
}

static void seed_eager(void)
{
    static const struct { const char *name; uint8_t phase; uint32_t size, count; } reqs[] = {
        {"eager-req-phase1", 1, 256, 8}, {"eager-req-phase2", 2, 1024, 8},
        {"eager-req-phase0", 0, 0, 0},
    };
    uint8_t msg[SEED_MAX] = {0};
    loom_wire_eager_req_t req;
    loom_wire_eager_note_t note;
    size_t i;

    for (i = 0; i < sizeof(reqs) / sizeof(reqs[0]); ++i) {
        memset(&req, 0, sizeof(req));
        seed_hdr(&req.hdr, LOOM_WIRE_EAGER_REQ, sizeof(req) + SEED_KEY_ROOM);
        req.sender     = loom_le64(FUZZ_PEER_NAME);
        req.req_seq    = loom_le32(1);
        req.phase      = reqs[i].phase;
        req.slot_size  = loom_le32(reqs[i].size);
        req.slot_count = loom_le32(reqs[i].count);
        req.box_addr   = loom_le64(512);
        memcpy(msg, &req, sizeof(req));
        seed_write(reqs[i].name, FUZZ_AM_EAGER_REQ,
                   FUZZ_FIX_KEY | FUZZ_FIX_ADDR | FUZZ_FIX_SEQ | FUZZ_FIX_FLAGS, msg,
                   sizeof(req) + SEED_KEY_ROOM);
    }

    memset(&note, 0, sizeof(note));
    seed_hdr(&note.hdr, LOOM_WIRE_EAGER_NOTE, sizeof(note));
    note.sender    = loom_le64(FUZZ_PEER_NAME);
    note.credits   = loom_le16(1);
    note.shrink_to = LOOM_WIRE_NO_SHRINK;
    seed_write("eager-note-credits", FUZZ_AM_EAGER_NOTE, FUZZ_FIX_SEQ, &note, sizeof(note));
    note.shrink_to = 0;
    seed_write("eager-note-shrink", FUZZ_AM_EAGER_NOTE, FUZZ_FIX_SEQ, &note, sizeof(note));
}

static void seed_ack_probe(void)
{
    static const uint8_t kinds[] = {LOOM_WIRE_PROBE_TRY, LOOM_WIRE_PROBE_ANSWER,
                                    LOOM_WIRE_PROBE_DOWN, LOOM_WIRE_PROBE_CONFIRM};
    loom_wire_msg_ack_t ack;
    loom_wire_probe_t probe;
    char name[64];
    size_t i;

    memset(&ack, 0, sizeof(ack));
    seed_hdr(&ack.hdr, LOOM_WIRE_MSG_ACK, sizeof(ack));
    ack.sender    = loom_le64(FUZZ_PEER_NAME);
    ack.hdr.flags = LOOM_WIRE_FLAG_ACK_ASK;
    seed_write("msg-ack-ask", FUZZ_AM_MSG_ACK, FUZZ_FIX_SEQ, &ack, sizeof(ack));
    ack.hdr.flags = LOOM_WIRE_FLAG_ACK_REPLY;
    seed_write("msg-ack-reply", FUZZ_AM_MSG_ACK, FUZZ_FIX_SEQ, &ack, sizeof(ack));
    ack.hdr.flags = LOOM_WIRE_FLAG_CONN_ASK;
    seed_write("msg-ack-conn-ask", FUZZ_AM_MSG_ACK, FUZZ_FIX_SEQ, &ack, sizeof(ack));
    /* names the connection asked about (send-new-conn) as the peer's */
    ack.hdr.flags = LOOM_WIRE_FLAG_CONN_REPLY;
    seed_write("msg-ack-conn-reply", FUZZ_AM_MSG_ACK, FUZZ_FIX_SEQ, &ack, sizeof(ack));
    /* of a connection not the one in use: not for ours */
    ack.hdr.flags = LOOM_WIRE_FLAG_ACK_ASK;
    ack.conn      = loom_le32(0x5a5a5a5a);
    seed_write("msg-ack-other-conn", FUZZ_AM_MSG_ACK, 0, &ack, sizeof(ack));

    for (i = 0; i < sizeof(kinds); ++i) {
        memset(&probe, 0, sizeof(probe));
        seed_hdr(&probe.hdr, LOOM_WIRE_PROBE, sizeof(probe));
        probe.sender     = loom_le64(FUZZ_PEER_NAME);
        probe.rail_epoch = loom_le32(1);
        probe.kind       = kinds[i];
        snprintf(name, sizeof(name), "probe-kind%u", kinds[i]);
        seed_write(name, FUZZ_AM_PROBE, FUZZ_FIX_EPOCH, &probe, sizeof(probe));
    }
}

static void seed_bye(void)
{
    loom_wire_bye_t bye;

    memset(&bye, 0, sizeof(bye));
    seed_hdr(&bye.hdr, LOOM_WIRE_BYE, sizeof(bye));
    bye.sender = loom_le64(FUZZ_PEER_NAME);
    seed_write("bye", FUZZ_AM_BYE, FUZZ_FIX_EPOCH, &bye, sizeof(bye));
    /* of an earlier incarnation: refused */
    bye.sender_epoch = loom_le32(0xdead);
    seed_write("bye-other-epoch", FUZZ_AM_BYE, 0, &bye, sizeof(bye));
}

static void seed_put(void)
{
    uint8_t msg[SEED_MAX] = {0};
    loom_wire_put_t put;
    loom_wire_put_ack_t ack;
    size_t seg = 128, i;
    const unsigned fix_all = FUZZ_FIX_EPOCH | FUZZ_FIX_SEQ | FUZZ_FIX_ADDR | FUZZ_FIX_FLAGS;

    for (i = 0; i < seg; ++i) {
        msg[sizeof(put) + i] = (uint8_t)i;
    }
    memset(&put, 0, sizeof(put));
    seed_hdr(&put.hdr, LOOM_WIRE_PUT, sizeof(put) + seg);
    put.hdr.flags = LOOM_WIRE_FLAG_LAST;
    put.sender    = loom_le64(FUZZ_PEER_NAME);
    put.write_id  = loom_le64(1);
    put.addr      = loom_le64(256);
    put.length    = loom_le64(512);
    put.offset    = loom_le64(384);
    memcpy(msg, &put, sizeof(put));
    seed_write("put-last", FUZZ_AM_PUT, fix_all, msg, sizeof(put) + seg);
    seed_write("put-raw", FUZZ_AM_PUT, 0, msg, sizeof(put) + seg);
    put.hdr.flags = 0; /* a segment before the last: no answer */
    memcpy(msg, &put, sizeof(put));
    seed_write("put-segment", FUZZ_AM_PUT, fix_all, msg, sizeof(put) + seg);
    /* a push served to us whole, that counts on one of our counters as it
     * lands; its notice from the same owner comes as its own message */
    put.hdr.flags  = LOOM_WIRE_FLAG_LAST | LOOM_WIRE_FLAG_COUNT;
    put.request_id = loom_le64(7);
    put.requester  = loom_le64(FUZZ_PEER_NAME);
    put.counter    = loom_le64(1);
    memcpy(msg, &put, sizeof(put));
    seed_write("put-count", FUZZ_AM_PUT, fix_all, msg, sizeof(put) + seg);
    put.request_id = 0;
    put.requester  = 0;
    put.counter    = 0;
    /* a push served to us: the data of our get, which it completes */
    put.hdr.flags = LOOM_WIRE_FLAG_LAST | LOOM_WIRE_FLAG_NOTIFY;
    memcpy(msg, &put, sizeof(put));
    seed_write("put-notify", FUZZ_AM_PUT, fix_all, msg, sizeof(put) + seg);

    memset(&ack, 0, sizeof(ack));
    seed_hdr(&ack.hdr, LOOM_WIRE_PUT_ACK, sizeof(ack));
    ack.sender   = loom_le64(FUZZ_PEER_NAME);
    ack.write_id = loom_le64(1);
    seed_write("put-ack", FUZZ_AM_PUT_ACK, FUZZ_FIX_SEQ, &ack, sizeof(ack));
    seed_write("put-ack-unknown", FUZZ_AM_PUT_ACK, 0, &ack, sizeof(ack));
    ack.status = loom_le32(LOOM_WIRE_STALE_KEY);
    seed_write("put-ack-refused", FUZZ_AM_PUT_ACK, FUZZ_FIX_SEQ, &ack, sizeof(ack));
}

static void seed_ring(void)
{
    uint8_t slot[SEED_MAX] = {0};
    uint8_t box[SEED_MAX] = {0};
    loom_wire_slot_t hdr;
    loom_wire_slot_foot_t foot;
    loom_wire_eager_ack_t ack;
    size_t bytes = LOOM_WIRE_SLOT_BYTES(5);

    memset(&hdr, 0, sizeof(hdr));
    hdr.tag = 9;
    foot.length = loom_le32(5);
    foot.tail   = 0;
    memcpy(slot, &hdr, sizeof(hdr));
    memcpy(slot + sizeof(hdr), "ring!", 5);
    memcpy(slot + bytes - sizeof(foot), &foot, sizeof(foot));
    seed_write("ring-slot", FUZZ_RING_SLOT, FUZZ_FIX_FLAGS | FUZZ_FIX_SEQ, slot, bytes);

    memset(&ack, 0, sizeof(ack));
    ack.version = LOOM_WIRE_VERSION;
    ack.status  = LOOM_WIRE_EAGER_OK;
    memcpy(box, &ack, sizeof(ack));
    seed_write("ack-box", FUZZ_ACK_BOX,
               FUZZ_FIX_SEQ | FUZZ_FIX_ADDR | FUZZ_FIX_KEY | FUZZ_FIX_FLAGS, box,
               sizeof(ack) + SEED_KEY_ROOM + sizeof(uint32_t));
    ack.status = LOOM_WIRE_EAGER_BUDGET;
    memcpy(box, &ack, sizeof(ack));
    seed_write("ack-box-budget", FUZZ_ACK_BOX, FUZZ_FIX_SEQ | FUZZ_FIX_FLAGS, box,
               sizeof(ack) + SEED_KEY_ROOM + sizeof(uint32_t));
}

static void seed_blobs(void)
{
    uint8_t blob[SEED_MAX] = {0}, key[SEED_MAX] = {0};
    loom_wire_addr_t addr;
    loom_wire_rail_addr_t rail;
    loom_wire_key_t k;
    size_t length = sizeof(addr) + sizeof(rail) + 4 + 2;
    uint16_t slot_len = 0;

    memset(&addr, 0, sizeof(addr));
    addr.magic        = loom_le32(LOOM_WIRE_ADDR_MAGIC);
    addr.version      = LOOM_WIRE_VERSION;
    addr.rail_count   = 1;
    addr.name         = loom_le64(FUZZ_PEER_NAME);
    addr.total_length = loom_le32((uint32_t)length);
    memset(&rail, 0, sizeof(rail));
    strcpy(rail.tl_name, "tcp");
    strcpy(rail.dev_name, "lo");
    rail.flags          = loom_le32(LOOM_WIRE_RAIL_CONNECT_TO_IFACE);
    rail.dev_addr_len   = loom_le16(4);
    rail.iface_addr_len = loom_le16(2);
    memcpy(blob, &addr, sizeof(addr));
    memcpy(blob + sizeof(addr), &rail, sizeof(rail));
    seed_write("address", FUZZ_ADDRESS, 0, blob, length);
    seed_write("address-any-version", FUZZ_ADDRESS, FUZZ_FIX_FLAGS, blob, length);

    memset(&k, 0, sizeof(k));
    k.region_id   = loom_le64(1);
    k.length      = loom_le64(4096);
    k.rail_count  = loom_le16(1);
    k.rkey_stride = loom_le16(16);
    memcpy(key, &k, sizeof(k));
    memcpy(key + sizeof(k), &slot_len, sizeof(slot_len));
    seed_write("key", FUZZ_KEY, 0, key, sizeof(k) + 16);
}

/* Three processes: push requests one fake peer asks and self serves into
 * the other, a multicast to both, and the second fake peer's own messages
 * (its inputs' first byte is the target plus FUZZ_TARGET_COUNT). */
static void seed_third_party(void)
{
    const unsigned all = FUZZ_FIX_EPOCH | FUZZ_FIX_KEY | FUZZ_FIX_ADDR | FUZZ_FIX_FLAGS |
                         FUZZ_FIX_SEQ;
    const int second = FUZZ_TARGET_COUNT; /* added to a target: from the second */
    uint8_t msg[SEED_MAX] = {0};
    loom_wire_notice_to_t to[2];
    loom_wire_push_req_t req;
    loom_wire_push_multi_t multi;
    loom_wire_push_dest_t dest;
    loom_wire_send_t send;
    loom_wire_bye_t bye;
    size_t length = sizeof(req) + sizeof(to) + SEED_KEY_ROOM;
    unsigned i;

    memset(&req, 0, sizeof(req));
    seed_hdr(&req.hdr, LOOM_WIRE_PUSH_REQ, length);
    req.request_id   = loom_le64(21);
    req.requester    = loom_le64(fuzz_peer_name(0));
    req.dest_proc    = loom_le64(fuzz_peer_name(1));
    req.notify_proc  = loom_le64(fuzz_peer_name(0));
    req.src_addr     = loom_le64(256);
    req.dst_addr     = loom_le64(1024);
    req.length       = loom_le64(8192);
    req.notice_count = loom_le16(2);
    to[0].proc    = loom_le64(fuzz_peer_name(1)); /* the destination is told */
    to[0].counter = loom_le64(2);
    to[1].proc    = loom_le64(FUZZ_SELF_NAME);
    to[1].counter = loom_le64(1);
    memcpy(msg, &req, sizeof(req));
    memcpy(msg + sizeof(req), to, sizeof(to));
    seed_write("third-party-push", FUZZ_AM_PUSH_REQ, all, msg, length);
    seed_write("third-party-push-rail1", FUZZ_AM_PUSH_REQ, all | FUZZ_FIX_RAIL, msg, length);
    /* the other way round, waiting for a counter of self's */
    req.dest_proc      = loom_le64(fuzz_peer_name(0));
    req.notify_proc    = loom_le64(fuzz_peer_name(1));
    req.cond_counter   = loom_le64(3);
    req.cond_threshold = loom_le64(2);
    memcpy(msg, &req, sizeof(req));
    seed_write("third-party-push-cond-second", FUZZ_AM_PUSH_REQ + second, all, msg, length);

    /* a multicast asked by the first, one destination in each fake peer */
    memset(&multi, 0, sizeof(multi));
    multi.kind       = LOOM_WIRE_PUSH_MULTI;
    multi.dest_count = 1; /* (n % 4) + 1 destinations: 2 */
    multi.src_addr   = loom_le64(128);
    multi.length     = loom_le64(20000); /* striped over both rails */
    memcpy(msg, &multi, sizeof(multi));
    for (i = 0; i < 2; ++i) {
        memset(&dest, 0, sizeof(dest));
        dest.proc       = loom_le64(fuzz_peer_name(i));
        dest.dst_addr   = loom_le64(4096 * i);
        dest.request_id = loom_le64(31 + i);
        dest.counter    = loom_le64(1 + i);
        dest.flags      = LOOM_WIRE_PUSH_DEST_NOTIFY;
        memcpy(msg + sizeof(multi) + i * sizeof(dest), &dest, sizeof(dest));
    }
    seed_write("multi-two-peers", FUZZ_ENGINE, all & ~FUZZ_FIX_FLAGS, msg,
               sizeof(multi) + 2 * sizeof(dest));
    seed_write("multi-two-peers-second", FUZZ_ENGINE + second, all & ~FUZZ_FIX_FLAGS, msg,
               sizeof(multi) + 2 * sizeof(dest));

    /* the second fake peer's next message, and its goodbye */
    memset(&send, 0, sizeof(send));
    seed_hdr(&send.hdr, LOOM_WIRE_SEND, sizeof(send) + 5);
    send.hdr.tag   = 7;
    send.hdr.flags = LOOM_WIRE_FLAG_KEPT;
    send.sender    = loom_le64(fuzz_peer_name(1));
    memcpy(msg, &send, sizeof(send));
    memcpy(msg + sizeof(send), "hello", 5);
    seed_write("send-next-second", FUZZ_AM_SEND + second, FUZZ_FIX_SEQ, msg,
               sizeof(send) + 5);
    memset(&bye, 0, sizeof(bye));
    seed_hdr(&bye.hdr, LOOM_WIRE_BYE, sizeof(bye));
    bye.sender = loom_le64(fuzz_peer_name(1));
    seed_write("bye-second", FUZZ_AM_BYE + second, FUZZ_FIX_EPOCH, &bye, sizeof(bye));
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    seed_dir = argv[1];
    seed_send();
    seed_engine();
    seed_engine_kinds();
    seed_push();
    seed_connect();
    seed_eager();
    seed_ack_probe();
    seed_bye();
    seed_put();
    seed_ring();
    seed_blobs();
    seed_third_party();
    return 0;
}
