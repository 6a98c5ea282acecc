/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * loom wire formats: every byte that crosses the network between two loom
 * engines is described here.
 *
 * Rules: every field is fixed-width and little-endian; every message starts
 * with loom_wire_hdr_t; receivers check the version, the type and every length
 * before they look at anything else.  Bump LOOM_WIRE_VERSION on any change.
 */
#ifndef LOOM_WIRE_H
#define LOOM_WIRE_H

#include <endian.h>
#include <stdint.h>

#define LOOM_WIRE_VERSION 11

/* UCT active message ids used by loom (one id per message type). */
enum loom_wire_type {
    LOOM_WIRE_SEND      = 16, /* upper-layer payload (BTL send) */
    LOOM_WIRE_PUSH_REQ  = 17, /* "put this memory of yours into that memory" */
    LOOM_WIRE_PUSH_DONE = 18, /* completion notice of a push request */
    LOOM_WIRE_CONNECT   = 19, /* endpoint address for connect-to-ep rails */
    LOOM_WIRE_EAGER_REQ = 20, /* "provision the eager ring of this phase for me" */
    LOOM_WIRE_EAGER_NOTE = 21, /* ring receiver to sender: credits, shrink hint */
    LOOM_WIRE_MSG_ACK   = 22, /* upper-layer messages delivered (loom_wire_msg_ack_t) */
    LOOM_WIRE_PROBE     = 23, /* a failed rail is back: connect it again */
    LOOM_WIRE_BYE       = 24, /* the sender disconnects (loom_wire_bye_t) */
    LOOM_WIRE_PUT       = 25, /* checked write on a rail without memory protection */
    LOOM_WIRE_PUT_ACK   = 26, /* a checked write was placed, or refused */
};

/* Common header of every message: 8 bytes. */
typedef struct loom_wire_hdr {
    uint8_t  version;  /* LOOM_WIRE_VERSION */
    uint8_t  type;     /* enum loom_wire_type, equal to the AM id */
    uint8_t  tag;      /* LOOM_WIRE_SEND: the upper layer's tag; else 0 */
    uint8_t  flags;    /* LOOM_WIRE_FLAG_*, 0 unless said */
    uint32_t length;   /* bytes following this header */
} loom_wire_hdr_t;

/* LOOM_WIRE_SEND: the sender keeps many messages for re-sending; acknowledge
 * at once. */
#define LOOM_WIRE_FLAG_ACK_REQ   0x1u
/* LOOM_WIRE_SEND: the sender keeps its messages until they are acknowledged
 * (it has several rails); without it the receiver sends no acknowledgement
 * of its own. */
#define LOOM_WIRE_FLAG_KEPT      0x8u
/* LOOM_WIRE_MSG_ACK: a message of the sender waits for an acknowledgement
 * for long; answer at once, on the rail this came by (which is not the one
 * the message went on). */
#define LOOM_WIRE_FLAG_ACK_ASK   0x2u
/* LOOM_WIRE_MSG_ACK: the answer to LOOM_WIRE_FLAG_ACK_ASK. */
#define LOOM_WIRE_FLAG_ACK_REPLY 0x4u
/* LOOM_WIRE_MSG_ACK: a message named a connection of the sender other than
 * the one we know: which is yours now?  Answered with CONN_REPLY (its conn). */
#define LOOM_WIRE_FLAG_CONN_ASK   0x10u
#define LOOM_WIRE_FLAG_CONN_REPLY 0x20u

/*
 * Upper-layer message sent as an active message.  Every upper-layer message
 * of a direction, by AM or by eager ring, has a sequence number (seq, from
 * 0 when the peers connected); the receiver delivers in that order, once
 * each: a message re-sent after its rail failed, or one that arrived both
 * ways, is dropped the second time.  ack is the receiver's cumulative
 * acknowledgement of the reverse direction (messages delivered, the next
 * seq expected); credits return slots of the reverse ring
 * (LOOM_WIRE_CREDITS).  The payload follows.
 */
typedef struct loom_wire_send {
    loom_wire_hdr_t hdr;
    uint64_t sender;      /* process name */
    uint32_t seq;
    uint32_t ack;
    uint16_t credits;     /* LOOM_WIRE_CREDITS(gen, count) or 0 */
    uint16_t reserved;
    uint32_t conn;        /* the sender's connection to the receiver: random,
                             new when it connects again; seq counts within it */
} loom_wire_send_t;

/* Acknowledgement of upper-layer messages, when none goes the other way. */
typedef struct loom_wire_msg_ack {
    loom_wire_hdr_t hdr;
    uint64_t sender;
    uint32_t ack;         /* as in loom_wire_send_t */
    uint32_t conn;        /* the sender's connection to the receiver (as in
                             loom_wire_send_t) */
} loom_wire_msg_ack_t;

/*
 * Rail state between two peers.  LOOM_PROBE_DOWN, on a surviving rail: "I
 * took rail_index out of use towards you" (the other side may not notice a
 * dead TCP path for minutes; what it sent on it must be sent again).
 * LOOM_PROBE_TRY: a rail that failed is tried again, on a fresh endpoint of
 * that rail; the peer replaces its own endpoint of the rail by a fresh one
 * and answers LOOM_PROBE_ANSWER on it; the prober sends LOOM_PROBE_CONFIRM
 * on its fresh endpoint and uses the rail, the peer uses it once CONFIRM
 * came.  rail_epoch counts the rail's connections to that peer; neither
 * side takes the rail back into use on a probe older than its own epoch,
 * nor fails it on a notice of an older one.
 */
enum loom_wire_probe_kind {
    LOOM_WIRE_PROBE_TRY    = 0,
    LOOM_WIRE_PROBE_ANSWER = 1,
    LOOM_WIRE_PROBE_DOWN   = 2,
    LOOM_WIRE_PROBE_CONFIRM = 3,
};

typedef struct loom_wire_probe {
    loom_wire_hdr_t hdr;
    uint64_t sender;
    uint32_t sender_epoch; /* the sender's incarnation */
    uint32_t rail_epoch;
    uint16_t rail_index;
    uint8_t  kind;         /* enum loom_wire_probe_kind */
    uint8_t  reserved[5];
} loom_wire_probe_t;

/*
 * Goodbye: the sender disconnects from the receiver (it finalizes), sent on
 * every rail it uses towards it, last.  The receiver then takes the errors
 * of the sender's endpoints for the sender going, not for a failed network.
 * sender_epoch keeps a goodbye from quieting a later incarnation.
 */
typedef struct loom_wire_bye {
    loom_wire_hdr_t hdr;
    uint64_t sender;
    uint32_t sender_epoch;
    uint32_t reserved;
} loom_wire_bye_t;

/* Returned ring slots, tagged with the low bits of the ring's generation so
 * that credits of a replaced ring are ignored. */
#define LOOM_WIRE_CREDITS(_gen, _count) \
    ((uint16_t)((((_gen) & 0xfu) << 12) | ((_count) & 0xfffu)))
#define LOOM_WIRE_CREDITS_GEN(_c)   (((_c) >> 12) & 0xfu)
#define LOOM_WIRE_CREDITS_COUNT(_c) ((_c) & 0xfffu)
#define LOOM_WIRE_SLOTS_MAX         0xfffu

/*
 * One slot of an eager ring, RDMA-written by the sender.  The message is
 * placed at the end of the slot: this header, the payload padded to 8
 * bytes, then loom_wire_slot_foot_t in the slot's last 8 bytes.  The
 * receiver polls the foot's tail flag at that fixed place; once it holds
 * the flag expected next (loom_eager_flag() of the ring sequence number),
 * the length in the foot says where the header starts, and the header's
 * head flag must hold the same value: a partly written slot is never read.
 * The receiver zeroes both flags when it has consumed the slot.
 */
typedef struct loom_wire_slot {
    uint32_t head;      /* flag of this message's ring sequence number */
    uint32_t seq;       /* message sequence number, as in loom_wire_send_t */
    uint16_t credits;   /* of the reverse ring, LOOM_WIRE_CREDITS or 0 */
    uint8_t  tag;       /* the upper layer's tag */
    uint8_t  gen;       /* generation of the ring written to */
    uint32_t ack;       /* as in loom_wire_send_t */
} loom_wire_slot_t;

typedef struct loom_wire_slot_foot {
    uint32_t length;    /* payload bytes */
    uint32_t tail;      /* equal to head */
} loom_wire_slot_foot_t;

#define LOOM_WIRE_SLOT_PAD(_len) (((_len) + 7u) & ~(size_t)7u)
/* Bytes written for a message of _len payload bytes, flags included. */
#define LOOM_WIRE_SLOT_BYTES(_len) \
    (sizeof(loom_wire_slot_t) + LOOM_WIRE_SLOT_PAD(_len) + sizeof(loom_wire_slot_foot_t))
#define LOOM_WIRE_SLOT_OVERHEAD (LOOM_WIRE_SLOT_BYTES(0) + 7u) /* most a slot adds */
#define LOOM_WIRE_SLOT_MIN      64u
#define LOOM_WIRE_SLOT_MAX      (1u << 20)
#define LOOM_WIRE_RING_MAX      (64u << 20) /* bytes of one ring */

/*
 * Eager ring request, sender of a direction to its receiver: replace the
 * ring that receives my messages by one of slot_count slots of slot_size
 * bytes (both 0: no ring, phase 0), and write the acknowledgement
 * (loom_wire_eager_ack_t) at box_addr, inside the region named by the key
 * that follows.  ring_before is stamped when the request leaves: the
 * receiver first consumes that many ring messages (the old ring is then
 * empty).
 */
typedef struct loom_wire_eager_req {
    loom_wire_hdr_t hdr;
    uint64_t sender;
    uint32_t req_seq;     /* never 0; the ack's head and tail flags */
    uint32_t ring_before;
    uint32_t reserved1;
    uint32_t slot_size;
    uint32_t slot_count;
    uint8_t  phase;
    uint8_t  reserved[3];
    uint64_t box_addr;
    uint32_t key_length;  /* bytes of the box key that follows */
    uint32_t reserved2;
} loom_wire_eager_req_t;

/* Status of an eager ring acknowledgement. */
enum loom_wire_eager_status {
    LOOM_WIRE_EAGER_OK      = 0, /* the ring described is in place */
    LOOM_WIRE_EAGER_REFUSED = 1, /* bad request: nothing changed */
    LOOM_WIRE_EAGER_BUDGET  = 2, /* over the receiver's eager memory budget:
                                    the previous ring stays */
};

/*
 * Acknowledgement of an eager ring request, RDMA-written by the receiver
 * into the requester's box: this header, key_length bytes of the ring's key
 * padded to 8, then a uint32_t tail equal to head.  Every process of a job
 * has the same key size, so the requester knows where the tail is before
 * it trusts anything in the ack; it takes the ack only when head and tail
 * both equal its req_seq.
 */
typedef struct loom_wire_eager_ack {
    uint32_t head;        /* req_seq of the request answered */
    uint8_t  version;     /* LOOM_WIRE_VERSION */
    uint8_t  status;      /* enum loom_wire_eager_status */
    uint8_t  phase;
    uint8_t  gen;         /* generation of the ring now in place */
    uint32_t slot_size;
    uint32_t slot_count;
    uint64_t ring_addr;
    uint32_t key_length;
    uint32_t reserved;
} loom_wire_eager_ack_t;

#define LOOM_WIRE_ACK_BYTES(_key_len) \
    (sizeof(loom_wire_eager_ack_t) + LOOM_WIRE_SLOT_PAD(_key_len) + sizeof(uint32_t))

/* Ring receiver to its sender: returned slots and, when shrink_to is not
 * LOOM_WIRE_NO_SHRINK, a request to go down to that phase (memory budget). */
typedef struct loom_wire_eager_note {
    loom_wire_hdr_t hdr;
    uint64_t sender;
    uint16_t credits;
    uint8_t  shrink_to;
    uint8_t  reserved[5];
} loom_wire_eager_note_t;

#define LOOM_WIRE_NO_SHRINK 0xffu

/*
 * A remote key: names one registered region of its owner on every rail.
 * A key is only meaningful on the rail (NIC) that issued it, so the key of
 * each rail is carried separately; region_id + epoch let the owner refuse
 * keys of regions that are gone or of an earlier incarnation of itself.
 * Followed by rail_count slots of rkey_stride bytes: each slot holds a
 * uint16_t length then that many bytes of UCT packed rkey.
 */
typedef struct loom_wire_key {
    uint64_t region_id;   /* unique for the owner's lifetime, never 0 */
    uint64_t base;        /* first byte of the region in the owner's space */
    uint64_t length;      /* bytes in the region */
    uint32_t epoch;       /* owner's incarnation; a restart changes it */
    uint16_t rail_count;  /* slots that follow */
    uint16_t rkey_stride; /* bytes per slot, including its length field */
} loom_wire_key_t;

#define LOOM_WIRE_KEY_SLOT_HDR ((uint32_t)sizeof(uint16_t))

/*
 * Push request: ask the owner of src memory to put it into dst memory of
 * dest_proc and to notify notify_proc when the data has landed.  A get is a
 * push whose destination and notified process are the requester itself; a
 * third party transfer names another process.  notice_count entries
 * (loom_wire_notice_to_t) follow: more processes told when the push ended,
 * each by a notice (an engine message, loom_wire_push_notice_t) that may
 * add one to a counter of theirs.  A request with cond_counter other than 0 waits at the
 * owner until the owner's counter of that id reached cond_threshold.  The
 * destination key (loom_wire_key_t plus its slots) comes last.
 */
/* LOOM_WIRE_PUSH_REQ: a chunk of a striped get, its rail chosen by the
 * requester: served on the rail this came by, its data completing the
 * request as it lands (LOOM_WIRE_FLAG_NOTIFY).  Any other request is
 * served by the owner's own choice of rails, striped when large (a
 * collective's pulls on the message rail alone put twice the bytes on one
 * rail as on the other). */
#define LOOM_WIRE_FLAG_ON_RAIL   0x1u

typedef struct loom_wire_push_req {
    loom_wire_hdr_t hdr;
    uint64_t request_id;  /* requester's cookie, echoed in PUSH_DONE */
    uint64_t requester;   /* process name of the sender of this request */
    uint64_t dest_proc;   /* process that receives the data */
    uint64_t notify_proc; /* process that receives PUSH_DONE */
    uint64_t src_addr;    /* in the owner's memory */
    uint64_t dst_addr;    /* in dest_proc's memory */
    uint64_t length;
    uint64_t src_region_id;
    uint32_t src_epoch;
    uint16_t notice_count; /* at most LOOM_WIRE_NOTICES_MAX */
    uint16_t reserved;
    uint64_t cond_counter;   /* 0: served at once */
    uint64_t cond_threshold;
} loom_wire_push_req_t;

#define LOOM_WIRE_NOTICES_MAX 8

typedef struct loom_wire_notice_to {
    uint64_t proc;        /* process told */
    uint64_t counter;     /* its counter that a push served adds one to; 0: none */
} loom_wire_notice_to_t;

/*
 * Checked write: on a rail whose NIC does not check keys (tcp), a put, or a
 * push served, goes as these messages, one per segment of the rail's AM
 * size, and the target places the bytes only after checking the whole write
 * [addr, addr + length) against its region table: the region exists, is of
 * region_epoch, holds the range, may be written remotely (or request_id
 * names a push request of the target's that is waiting for exactly this
 * range), and rail_epoch is the target's connection of this rail to the
 * sender, in use (a late write of a connection that failed is refused, and
 * not answered: its writer fails it with the rail).  The
 * segment's bytes follow the header, for [addr + offset, addr + offset +
 * segment).  The last segment has LOOM_WIRE_FLAG_LAST and is answered with
 * a PUT_ACK, unless write_id is 0 (nobody waits for an answer): a region
 * gone or a range refused for one segment is so for every later one
 * (region ids are never reused), so its status is the write's.
 */
#define LOOM_WIRE_FLAG_LAST      0x10u
/* LOOM_WIRE_PUT of a push served to the process it notifies (a get): the
 * target completes its request when the last segment was placed (or
 * refused); write_id is 0, and neither PUT_ACK nor PUSH_DONE follows (the
 * requester's own rail failure re-drives a get whose data never came). */
#define LOOM_WIRE_FLAG_NOTIFY    0x20u
/* LOOM_WIRE_PUT of a push served whole in this write, whose notice to the
 * target names a counter: requester and counter are set on every segment;
 * the target adds one to counter once the last segment was placed, and the
 * notice that follows adds nothing.  A write of the same push (sender,
 * requester, request_id) that comes again, its chunk re-driven on another
 * rail, is answered but not placed (push_landed.c). */
#define LOOM_WIRE_FLAG_COUNT     0x40u

typedef struct loom_wire_put {
    loom_wire_hdr_t hdr;
    uint64_t sender;
    uint64_t write_id;     /* the writer's cookie, echoed in PUT_ACK */
    uint64_t request_id;   /* push served: its request (the requester's id), else 0 */
    uint64_t region_id;
    uint64_t addr;         /* first byte of the whole write */
    uint64_t length;       /* bytes of the whole write */
    uint64_t offset;       /* of this segment in the write */
    uint32_t region_epoch;
    uint32_t rail_epoch;
    uint64_t requester;    /* LOOM_WIRE_FLAG_COUNT: who asked for the push ... */
    uint64_t counter;      /* ... and the target's counter it adds one to */
} loom_wire_put_t;

typedef struct loom_wire_put_ack {
    loom_wire_hdr_t hdr;
    uint64_t sender;
    uint64_t write_id;
    uint32_t status;       /* enum loom_wire_status */
    uint32_t reserved;
} loom_wire_put_ack_t;

/* Status codes carried on the wire (PUSH_DONE, PUT_ACK). */
enum loom_wire_status {
    LOOM_WIRE_OK           = 0,
    LOOM_WIRE_UNKNOWN_KEY  = 1, /* region id not registered (any more) */
    LOOM_WIRE_STALE_KEY    = 2, /* epoch of an earlier incarnation */
    LOOM_WIRE_OUT_OF_RANGE = 3, /* address range outside the region */
    LOOM_WIRE_BAD_REQUEST  = 4, /* malformed, or names an unknown process */
    LOOM_WIRE_IO_ERROR     = 5, /* the transfer itself failed */
    LOOM_WIRE_CANCELLED    = 6, /* a waiting push whose counter was released */
    LOOM_WIRE_LIMIT        = 7, /* refused at one of the owner's bounds: a refusal,
                                   never a broken transfer */
};


typedef struct loom_wire_push_done {
    loom_wire_hdr_t hdr;
    uint64_t sender;      /* process name of the owner that served the push */
    uint64_t request_id;
    uint64_t length;      /* bytes placed */
    uint32_t status;      /* enum loom_wire_status */
    uint32_t reserved;
} loom_wire_push_done_t;

/*
 * Endpoint address of a connect-to-ep rail, sent over a rail that connects
 * to interfaces (its wireup interface, or another rail).  Followed by
 * dev_addr_len bytes of device address and ep_addr_len bytes of endpoint
 * address.  A rail that comes back (rejoin_ep.c) is set up again with
 * CONNECTs of its next rail_epoch; the last of them, which says the
 * announcer connected, goes on the rail itself.
 */
/* LOOM_WIRE_CONNECT: sent again after no answer (the sender is still not
 * connected both ways): answered even by a receiver that told it before,
 * whose answer may be what was lost.  Answers never carry it. */
#define LOOM_WIRE_FLAG_CONNECT_AGAIN 0x1u

typedef struct loom_wire_connect {
    loom_wire_hdr_t hdr;
    uint64_t sender;       /* process name */
    uint32_t sender_epoch;
    uint16_t rail_index;   /* which rail of the sender this endpoint is on */
    uint8_t  connected;    /* 1: the sender's endpoint is connected to ours */
    uint8_t  reserved;
    uint16_t dev_addr_len;
    uint16_t ep_addr_len;
    uint32_t rail_epoch;   /* the rail's connection to the peer it sets up: 0
                              the first, then one more each time it comes back */
} loom_wire_connect_t;

/*
 * Address blob published through the runtime (modex): one per process.
 * Followed by rail_count loom_wire_rail_addr_t, each followed by its device
 * and interface addresses.
 */
typedef struct loom_wire_addr {
    uint32_t magic;        /* LOOM_WIRE_ADDR_MAGIC */
    uint8_t  version;      /* LOOM_WIRE_VERSION */
    uint8_t  rail_count;
    uint16_t reserved;
    uint64_t name;         /* process name */
    uint32_t epoch;
    uint32_t total_length; /* bytes of the whole blob */
} loom_wire_addr_t;

#define LOOM_WIRE_ADDR_MAGIC 0x6d6f6f6cu /* "loom" */
#define LOOM_WIRE_NAME_MAX   32

typedef struct loom_wire_rail_addr {
    char     tl_name[LOOM_WIRE_NAME_MAX];  /* NUL padded */
    char     dev_name[LOOM_WIRE_NAME_MAX]; /* NUL padded */
    uint32_t flags;        /* LOOM_WIRE_RAIL_* */
    uint16_t dev_addr_len;
    uint16_t iface_addr_len;
} loom_wire_rail_addr_t;

/* rail flags: the rail is used endpoint to endpoint; an interface address
 * follows (both may be set: the interface then carries CONNECT messages) */
#define LOOM_WIRE_RAIL_CONNECT_TO_IFACE 0x1u
#define LOOM_WIRE_RAIL_CONNECT_TO_EP    0x2u

/*
 * Engine messages: upper-layer messages (LOOM_WIRE_SEND or a ring slot) with
 * tag LOOM_WIRE_TAG_ENGINE, which the upper layer never uses, carry loom's
 * own requests that must run exactly once.  They travel in the sender's
 * message stream, numbered, kept and delivered once and in order across rail
 * failures, and are handed to the engine instead of the upper layer.  The
 * payload starts with its kind (enum loom_wire_engine_msg).
 */
#define LOOM_WIRE_TAG_ENGINE 255

enum loom_wire_engine_msg {
    LOOM_WIRE_ATOMIC_REQ   = 1,
    LOOM_WIRE_ATOMIC_REPLY = 2,
    LOOM_WIRE_COUNTER_ADD  = 3,
    LOOM_WIRE_PUSH_NOTICE  = 4,
    LOOM_WIRE_PUSH_MULTI   = 5,
    LOOM_WIRE_PUSH_MULTI_DONE = 6,
};

/* A push ended: told to a process of its request's notices, by the owner
 * that served it (or refused it), in order with the owner's messages and
 * never lost with a rail: a counter it adds to may be what pushes wait on. */
typedef struct loom_wire_push_notice {
    uint8_t  kind;         /* LOOM_WIRE_PUSH_NOTICE */
    uint8_t  reserved[3];
    uint32_t status;       /* enum loom_wire_status */
    uint64_t requester;    /* who asked for the push ... */
    uint64_t request_id;   /* ... and its request */
    uint64_t length;       /* bytes placed */
    uint64_t counter;      /* the receiver's counter a push that succeeded adds
                              one to, or 0 */
} loom_wire_push_notice_t;

/* Add amount to the receiver's push counter (conditional pushes wait on
 * counters, transport.h). */
typedef struct loom_wire_counter_add {
    uint8_t  kind;         /* LOOM_WIRE_COUNTER_ADD */
    uint8_t  reserved[7];
    uint64_t counter;
    uint64_t amount;
} loom_wire_counter_add_t;

/*
 * A multicast push request (transport.h, loom_push_multi): the owner's
 * region [src_addr, src_addr + length) pushed to dest_count destinations.
 * dest_count loom_wire_push_dest_t follow, each followed by its
 * destination's key of key_len bytes (as long as every key of the job).
 * The owner answers each destination with a PUSH_MULTI_DONE naming its
 * request_id; a destination that does not fit the message's length is
 * not read, and the request is refused whole.
 */
typedef struct loom_wire_push_multi {
    uint8_t  kind;          /* LOOM_WIRE_PUSH_MULTI */
    uint8_t  dest_count;    /* 1 to LOOM_WIRE_PUSH_DESTS_MAX */
    uint16_t reserved;
    uint32_t src_epoch;     /* the owner's key: its incarnation ... */
    uint64_t src_region_id; /* ... and region */
    uint64_t src_addr;
    uint64_t length;
    uint64_t cond_counter;  /* 0: each served at once */
    uint64_t cond_threshold;
} loom_wire_push_multi_t;

#define LOOM_WIRE_PUSH_DESTS_MAX 64

#define LOOM_WIRE_PUSH_DEST_NOTIFY 0x1 /* the destination gets a notice */

typedef struct loom_wire_push_dest {
    uint64_t proc;
    uint64_t dst_addr;
    uint64_t request_id;    /* the requester's, echoed in PUSH_MULTI_DONE */
    uint64_t counter;       /* with NOTIFY: the destination's counter, or 0 */
    uint16_t key_len;
    uint8_t  flags;         /* LOOM_WIRE_PUSH_DEST_* */
    uint8_t  reserved[5];
} loom_wire_push_dest_t;

/* The owner's answer for one destination of a multicast push request. */
typedef struct loom_wire_push_multi_done {
    uint8_t  kind;          /* LOOM_WIRE_PUSH_MULTI_DONE */
    uint8_t  reserved[3];
    uint32_t status;        /* enum loom_wire_status */
    uint64_t request_id;
    uint64_t length;        /* bytes placed */
} loom_wire_push_multi_done_t;

/*
 * An atomic operation on a 4- or 8-byte integer of the target's region
 * [addr, addr + size), aligned to its size, executed by the target's CPU:
 * atomic with every other atomic on that word, whichever rail or process or
 * thread of the target issued it.  The target checks it as a write (region,
 * epoch, range, remote atomic access) and answers every request with a
 * reply naming request_id, its status (enum loom_wire_status) and, for
 * every op, the value the word held before.
 */
typedef struct loom_wire_atomic {
    uint8_t  kind;         /* LOOM_WIRE_ATOMIC_REQ or _REPLY */
    uint8_t  op;           /* enum loom_atomic_op (transport.h) */
    uint8_t  size;         /* 4 or 8 */
    uint8_t  reserved;
    uint32_t status;       /* reply: enum loom_wire_status */
    uint64_t request_id;   /* the requester's */
    uint64_t region_id;
    uint64_t addr;
    uint64_t operand;
    uint64_t compare;      /* LOOM_ATOMIC_CSWAP: swap only if the word holds this */
    uint64_t result;       /* reply: the word before the operation */
    uint32_t region_epoch;
    uint32_t reserved2;
} loom_wire_atomic_t;

/* Little-endian conversion, a no-op on the x86/arm hosts loom runs on. */
#define loom_le16(_v) htole16(_v)
#define loom_le32(_v) htole32(_v)
#define loom_le64(_v) htole64(_v)
#define loom_from_le16(_v) le16toh(_v)
#define loom_from_le32(_v) le32toh(_v)
#define loom_from_le64(_v) le64toh(_v)

#endif /* LOOM_WIRE_H */
