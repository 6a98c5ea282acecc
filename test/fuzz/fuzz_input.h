/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Input format of the loom wire fuzzer (fuzz_wire.c), shared with the seed
 * corpus generator (gen_seeds.c).
 *
 * byte 0   which receiver gets the rest (enum fuzz_target, modulo the count),
 *          and which fake peer sends it (the quotient, modulo FUZZ_PEERS:
 *          a byte below FUZZ_TARGET_COUNT is the first fake peer's)
 * byte 1   FUZZ_FIX_* bits: fields the harness overwrites with values only
 *          known at run time (epochs, keys, addresses, the sequence numbers
 *          expected next), so that well-formed inputs reach past the checks
 *          a random value cannot pass; without them the bytes go as they are
 * byte 2-  the message as it arrives: an AM payload (wire header first),
 *          the bytes at the end of a ring slot, the contents of an ack box,
 *          an address blob, a packed key, or an engine message (its kind
 *          first; ATOMIC_REQ, COUNTER_ADD, PUSH_NOTICE, PUSH_MULTI, ...)
 *
 * Corpus (test/fuzz/corpus): seeds/ is gen_seeds.c's output; regressions/
 * holds the inputs of defects found, named after them (unaligned-*: wire
 * structs read in place at an AM payload's odd address; ucs-offsetof-*:
 * UCX's offsetof through a null pointer on every ucs_list walk;
 * checked-write-finished-twice: an op failed with its rail finished again
 * as the rail's endpoint closed, losing the completion behind it).
 *
 * The fake peers are the processes fuzz_peer_name(0 .. FUZZ_PEERS - 1),
 * the first FUZZ_PEER_NAME; the engine under test is FUZZ_SELF_NAME.  Each
 * fake peer is connected to it over two tcp rails on lo before the first
 * input.  An input is written as the first fake peer sends it: from another,
 * the harness puts that one's name in the sender field (a push request's
 * requester) and fixes up against that one's connection.
 */
#ifndef LOOM_FUZZ_INPUT_H
#define LOOM_FUZZ_INPUT_H

#define FUZZ_SELF_NAME 0x1001u
#define FUZZ_PEER_NAME 0x2002u
#define FUZZ_HDR_BYTES 2
/* Two fake peers: a push request asked by one can land in the other. */
#define FUZZ_PEERS 2

static inline unsigned long long fuzz_peer_name(unsigned index)
{
    return FUZZ_PEER_NAME + 2ull * index; /* even: see FUZZ_FIX_SEQ */
}

enum fuzz_target {
    FUZZ_AM_SEND,       /* the AM handlers, one per id of wire.h */
    FUZZ_AM_PUSH_REQ,
    FUZZ_AM_PUSH_DONE,
    FUZZ_AM_CONNECT,
    FUZZ_AM_EAGER_REQ,
    FUZZ_AM_EAGER_NOTE,
    FUZZ_AM_MSG_ACK,
    FUZZ_AM_PROBE,
    FUZZ_RING_SLOT,     /* written at the end of the next slot of our ring */
    FUZZ_ACK_BOX,       /* written into the box of our pending ring request */
    FUZZ_ADDRESS,       /* loom_address_parse */
    FUZZ_KEY,           /* loom_key_parse, then unpacked for rail 0 */
    /* AM handlers added later, appended so that a committed input keeps
     * its meaning */
    FUZZ_AM_BYE,
    FUZZ_AM_PUT,
    FUZZ_AM_PUT_ACK,
    FUZZ_ENGINE,        /* an engine message (kind first), wrapped by the
                           harness in the fake peer's next SEND of loom's tag */
    FUZZ_TARGET_COUNT
};

/* sender_epoch / src_epoch / region_epoch: the epoch of the process they
 * name */
#define FUZZ_FIX_EPOCH 0x01u
/* the key that follows the message (push request, ring request, ack) is
 * replaced by a valid key of a region of the fake peer; the message is cut
 * or padded to the length that key makes it */
#define FUZZ_FIX_KEY   0x02u
/* address fields are offsets into the regions they must fall in; region
 * ids are replaced by the live ones */
#define FUZZ_FIX_ADDR  0x04u
/* (engine messages and push requests: epochs as above; FUZZ_FIX_ADDR puts
 * atomics and multicast sources in self's region, and names as each
 * destination a fake peer (the one its field names, else one picked by the
 * value) with the address in that peer's region; FUZZ_FIX_KEY gives every
 * destination its fake peer's key; FUZZ_FIX_SEQ makes counters ones self
 * opened, and has notices and a push request's process to answer name
 * self (an odd value) or a fake peer (an even one)) */
/* sequence numbers, ring generation, connection ids and rail epochs: the
 * ones expected next (SEND, slot, ring request, note, MSG_ACK, probe,
 * PUT; a CONN_REPLY names the connection asked about); request and write
 * ids: those of an operation of self's waiting for that answer (PUSH_DONE,
 * PUT_ACK, a PUT with LOOM_WIRE_FLAG_NOTIFY, which also takes the range of
 * the get it answers), started for it if none waits */
#define FUZZ_FIX_SEQ   0x08u
/* ring slot and ack box: head and tail flags stamped where they belong;
 * active messages: a wire header that passes (version, type, length);
 * address blob: a blob header that passes (magic, version, length) */
#define FUZZ_FIX_FLAGS 0x10u
/* the input arrives in quiet progress (a progress thread's: nothing goes up,
 * what must run on the application's thread waits for full progress) */
#define FUZZ_FIX_QUIET 0x20u
/* the input arrives on self's second rail (rail epochs fixed up are that
 * rail's) */
#define FUZZ_FIX_RAIL  0x40u

#endif
