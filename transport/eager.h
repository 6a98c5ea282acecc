/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Eager RDMA rings, private to the engine.
 *
 * Per peer and direction: the receiver owns a registered ring of slots that
 * the sender RDMA-writes messages into; the sender owns registered send
 * slots of the same geometry.  Phase 0 has no ring (messages go by active
 * message); the sender asks for a bigger ring when a message does not fit
 * (loom_wire_eager_req_t), the receiver drains and replaces its ring and
 * RDMA-writes an acknowledgement (loom_wire_eager_ack_t) into a box of the
 * sender's, which the sender takes only once its head and tail flags both
 * arrived.  Rings shrink the same way when idle or over the memory budget.
 *
 * Order: every message of a direction, by ring or by AM, carries its
 * sequence number (reliable.c); the receiver delivers in that order, holding
 * an AM that overtook a ring message and leaving a ring message that
 * overtook an AM in its slot.
 */
#ifndef LOOM_EAGER_H
#define LOOM_EAGER_H

#include "loom/transport.h"
#include "base/wire.h"
#include "chan.h"

#include <ucs/datastruct/list.h>
#include <uct/api/uct.h>

struct loom_peer;
struct loom_engine;
struct loom_rail;

/* A cell of the engine's registered control area: a box the ack of one of
 * our requests lands in, or the source of an ack we write. */
typedef struct loom_eager_box {
    struct loom_eager_box *next_free;
    struct loom_eager_chunk *chunk;
    uint8_t          *mem;
    uct_completion_t  comp;      /* an ack written from here */
    uct_rkey_bundle_t rkey;      /* ... and the requester's key for it */
    int               rkey_rail; /* -1: no rkey held */
    uint64_t          remote_region; /* that key's region and epoch (wire order), */
    uint32_t          remote_epoch;  /* for a checked write (checked_put.c) */
} loom_eager_box_t;

#define LOOM_EAGER_BOXES_PER_CHUNK 32
/* messages that find a ring full before it doubles its slots */
#define LOOM_EAGER_FULL_GROW 8
typedef struct loom_eager_chunk {
    struct loom_eager_chunk *next;
    loom_region_t    *region;
    uint8_t          *mem;
    loom_eager_box_t  boxes[LOOM_EAGER_BOXES_PER_CHUNK];
} loom_eager_chunk_t;

/* Registered slots: a receive ring, or a sender's send slots. */
typedef struct loom_eager_mem {
    uint8_t       *buf;
    loom_region_t *region;
    uint32_t       slot_size;
    uint32_t       slot_count;
} loom_eager_mem_t;

typedef struct loom_eager_txslot {
    uct_completion_t comp;
    struct loom_eager_tx *tx;
    bool             busy;      /* its put has not completed locally */
} loom_eager_txslot_t;

/* Sending side of a direction. */
typedef struct loom_eager_tx {
    unsigned          phase;      /* ring in use, 0: none */
    unsigned          want;       /* phase asked for (while pending) */
    uint32_t          want_slots; /* and its slot count */
    unsigned          full;       /* messages that found the ring full since the
                                     last change or idle window */
    bool              pending;    /* a request awaits its ack */
    bool              disabled;   /* the ring's rail failed: messages by AM */
    bool              req_lost;   /* the request's rail failed while it was under
                                     way: its ack may never come, and no backoff
                                     follows giving up on it */
    bool              shrink_asked; /* the receiver asked us to go down to shrink_to
                                       while a request was under way */
    unsigned          shrink_to;
    uint32_t          req_seq;
    uint64_t          req_time;
    uint64_t          retry_after; /* no request before (after timeout or refusal) */
    loom_eager_box_t *box;        /* where the ack lands */
    int               rail;       /* the ring's rail */
    uint8_t           gen;        /* generation of the receiver's ring */
    loom_eager_mem_t  mem;        /* our send slots */
    loom_eager_txslot_t *slots;
    unsigned          busy;       /* send slots with a put in flight */
    bool              retiring;   /* dropped with puts in flight: free at the last */
    int               retiring_rail; /* the rail those puts are on */
    uint32_t          slot;       /* next slot to write */
    uint32_t          credits;    /* slots of the receiver's ring free */
    uint64_t          remote_addr;
    uct_rkey_bundle_t rkey;
    bool              rkey_valid;
    uint64_t          remote_region; /* the ring's region and epoch (wire order), */
    uint32_t          remote_epoch;  /* for a checked write (checked_put.c) */
    uint32_t          ring_sent;  /* messages written into rings, ever */
    unsigned long     msgs;       /* messages to the peer, for msgs_before_ring */
    uint64_t          last_use;
    uint64_t          window_start; /* idle shrink: since when ... */
    size_t            window_max;   /* ... the largest message was this */
} loom_eager_tx_t;

/* Receiving side of a direction. */
typedef struct loom_eager_rx {
    unsigned          phase;
    int               rail;       /* the rail the sender's requests come by */
    uint8_t           gen;
    loom_eager_mem_t  mem;        /* the ring */
    uint32_t          slot;       /* next slot to read */
    uint32_t          ring_recv;  /* ring messages delivered, ever */
    bool              rail_lost;  /* the ring's rail failed since the last request
                                     served: ring messages in flight on it may never
                                     come (they come again by AM), so the next
                                     request does not wait for them */
    uint32_t          credits_owed; /* slots consumed, not yet returned */
    uint64_t          last_use;
    bool              hinted;     /* asked the sender to shrink; not answered yet */
    uint32_t          served_seq; /* latest request taken: older ones are refused */
    bool              note_queued; /* a note waits to leave with the credits */
    size_t            req_len;    /* a request waiting for the ring to drain */
    uint8_t           req[LOOM_OP_MSG_MAX];
    loom_eager_box_t *ack_box;    /* an ack the endpoint had no room for yet */
    uint64_t          ack_addr;
} loom_eager_rx_t;

/* Per peer. */
typedef struct loom_eager_peer {
    loom_eager_tx_t  tx;
    loom_eager_rx_t  rx;
    ucs_list_link_t  link;        /* on engine->eager.active */
    bool             active;
} loom_eager_peer_t;

/* Per engine. */
typedef struct loom_eager_engine {
    loom_eager_stats_t stats;
    loom_eager_chunk_t *chunks;
    loom_eager_box_t  *free_boxes;
    size_t             box_size;
    ucs_list_link_t    active;    /* peers with a ring or a request */
    uint64_t           next_check;
    bool               rail_ok[LOOM_MAX_RAILS]; /* the rail can carry rings */
    uint64_t           wait_since;      /* engine clock when a wait first could not
                                           sleep for a ring written by RDMA; 0 once
                                           a pass finds work */
    bool               evict_wanted;    /* the budget refused a ring to grow: */
    uint64_t           evict_except;    /* shrink another than this peer's */
    bool               evict_except_tx; /* ring of this direction */
} loom_eager_engine_t;

#endif
