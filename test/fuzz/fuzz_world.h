/*
 * The world the wire fuzzer runs in: the engine under test ("self") and a
 * fake peer engine in the same process, connected to each other over UCT
 * tcp on lo, with an eager ring of the peer's in self and a registered
 * region on each side for pushes, ring acks and rings to land in.
 *
 * Messages the fuzzer injects name the fake peer as their sender, so they
 * get past the sender lookup; what self answers (push completions, acks,
 * RDMA writes) really goes to the fake peer, whose engine receives it.
 *
 * A put and a get (by push request: tcp has no get) of self's to the fake
 * peer are kept under way, sent and waiting for their answers when an
 * input comes: an injected PUT_ACK, PUSH_DONE or notifying PUT can name an
 * operation that waits for it, and whatever the input does to the rail
 * meets operations in flight.  Each must complete once: a second
 * completion aborts.
 */
#ifndef LOOM_FUZZ_WORLD_H
#define LOOM_FUZZ_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom_internal.h"

#define FUZZ_REGION_BYTES 65536u
/* Bytes of the put and the get self keeps under way. */
#define FUZZ_OP_BYTES 512u

typedef struct fuzz_world {
    loom_engine_t *self;
    loom_engine_t *other;       /* the fake peer's own engine */
    loom_peer_t   *peer;        /* the fake peer, as self sees it */
    loom_peer_t   *back;        /* self, as the fake peer sees it */
    uint8_t       *self_mem;    /* source of pushes self serves */
    loom_region_t *self_region;
    uint8_t       *other_mem;   /* where pushes, acks and rings of self land */
    loom_region_t *other_region;
    uint8_t        other_key[LOOM_OP_MSG_MAX]; /* packed key of other_region */
    size_t         key_size;
    uint8_t       *get_mem;     /* where self's get lands: registered without */
    loom_region_t *get_region;  /* remote write, so only the push answering it may */
    loom_op_t      put_op;      /* self's put to the fake peer, while put_busy */
    loom_op_t      get_op;      /* self's get from it, while get_busy */
    bool           put_busy;
    bool           get_busy;
    unsigned long  delivered;   /* messages self handed to the upper layer */
    uint64_t       checksum;    /* of their bytes: every byte is read */
    unsigned long  resets;
} fuzz_world_t;

/* Set up; false (and a message on stderr) when tcp:lo is not usable. */
bool fuzz_world_open(fuzz_world_t *w);
void fuzz_world_close(fuzz_world_t *w);
/* Progress both engines this many times. */
void fuzz_world_progress(fuzz_world_t *w, int rounds);
/* Set up again if an input took the connection down (a rail failed, the
 * peer was lost, it said goodbye): every input starts from a connected
 * pair, with self's put and get under way. */
void fuzz_world_heal(fuzz_world_t *w);
/* Give self a receive ring from the fake peer again if an input dropped it
 * (a ring request of phase 0); false if it cannot be had. */
bool fuzz_world_ring(fuzz_world_t *w);
/* Self's put (get) to the fake peer, sent and waiting for its answer,
 * started now if none is under way; NULL if none can be had.  Only self
 * progresses meanwhile, so that the fake peer has not answered yet. */
loom_op_t *fuzz_world_put(fuzz_world_t *w);
loom_op_t *fuzz_world_get(fuzz_world_t *w);
/* Between inputs: abort if the put or the get lost its completion. */
void fuzz_world_check(const fuzz_world_t *w);

#endif
