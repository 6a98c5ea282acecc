/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The world the wire fuzzer runs in: the engine under test ("self") and
 * FUZZ_PEERS fake peer engines in the same process, each connected to self
 * over two UCT tcp rails on lo, with an eager ring of each fake peer's in
 * self and a registered region on every side for pushes, ring acks and
 * rings to land in.
 *
 * An input comes from one of the fake peers (fuzz_input.h): it names that
 * peer as its sender, so it gets past the sender lookup, and what self
 * answers (push completions, acks, RDMA writes) really goes to that peer,
 * whose engine receives it.  With two of them a push request can name a
 * third process: asked by one, served by self, landing in the other.
 *
 * A put and a get (by push request: tcp has no get) of self's to each fake
 * peer are kept under way, sent and waiting for their answers when an
 * input comes: an injected PUT_ACK, PUSH_DONE or notifying PUT can name an
 * operation that waits for it, and whatever the input does to the rail
 * meets operations in flight.  A fake peer holds their messages unanswered
 * until its pair closes, so that one put and one get last until an input
 * ends them.  Each must complete once: a second completion, or none by the
 * time the pair has closed, aborts.
 *
 * The engines live for the whole run, as a process's engine does; an
 * input that takes a connection down gets both sides of that pair
 * disconnected and connected again, a fresh pair for the next input.
 */
#ifndef LOOM_FUZZ_WORLD_H
#define LOOM_FUZZ_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fuzz_input.h"
#include "engine/loom_engine.h"

#define FUZZ_REGION_BYTES 65536u
/* Counters of self's that inputs add to and pushes wait on (FUZZ_FIX_SEQ). */
#define FUZZ_COUNTERS 4u
/* Bytes of the put and the get self keeps under way. */
#define FUZZ_OP_BYTES 512u
/* Room for the message of either as the fake peer holds it: the put's
 * header and bytes, the push request's header and key. */
#define FUZZ_HELD_BYTES (sizeof(loom_wire_put_t) + FUZZ_OP_BYTES + LOOM_OP_MSG_MAX)

/* Both engines drive two tcp rails on lo: striped serves, a second rail an
 * input can arrive on (FUZZ_FIX_RAIL), one that fails while the other
 * carries on. */
#define FUZZ_RAILS 2

struct fuzz_fake;

/* A fake peer's handlers' argument on one of its rails. */
typedef struct fuzz_peer_rail {
    struct fuzz_fake *fake;
    int               index;
} fuzz_peer_rail_t;

/* An operation of self's kept under way, and its message as the fake peer
 * holds it. */
typedef struct fuzz_op {
    loom_op_t op;
    bool      busy;          /* started, its callback not run yet */
    uint64_t  held_id;       /* write or request id of the message held */
    size_t    held_length;   /* 0: none held */
    uint8_t   held[FUZZ_HELD_BYTES];
} fuzz_op_t;

/* One fake peer: its engine, and the pair it makes with self. */
typedef struct fuzz_fake {
    struct fuzz_world *world;
    int            index;       /* in world->fakes */
    uint64_t       name;        /* fuzz_peer_name(index) */
    loom_engine_t *engine;      /* its own engine */
    loom_peer_t   *peer;        /* the fake peer, as self sees it */
    loom_peer_t   *back;        /* self, as the fake peer sees it */
    uint8_t       *mem;         /* where pushes, acks and rings of self land */
    loom_region_t *region;
    uint8_t        key[LOOM_OP_MSG_MAX]; /* packed key of region */
    fuzz_peer_rail_t rails[FUZZ_RAILS];
    fuzz_op_t      put;         /* self's put to it */
    fuzz_op_t      get;         /* self's get from it */
} fuzz_fake_t;

typedef struct fuzz_world {
    loom_engine_t *self;
    int            rail;        /* the rail of self's the input arrives on */
    fuzz_fake_t    fakes[FUZZ_PEERS];
    fuzz_fake_t   *from;        /* the fake peer the input comes from */
    uint8_t       *self_mem;    /* source of pushes self serves */
    loom_region_t *self_region;
    uint8_t       *get_mem;     /* where self's gets land (one slice per fake */
    loom_region_t *get_region;  /* peer), registered without remote write, so
                                   only the push answering a get may write */
    size_t         key_size;
    uint64_t       counter_first; /* FUZZ_COUNTERS counters self opened */
    unsigned long  delivered;   /* messages the engines handed to the upper layer */
    uint64_t       checksum;    /* of their bytes: every byte is read */
    unsigned long  resets;
} fuzz_world_t;

/* Set up the engines, their regions and connected pairs; false (and a
 * message on stderr) when tcp:lo is not usable. */
bool fuzz_world_open(fuzz_world_t *w);
/* Progress every engine this many times. */
void fuzz_world_progress(fuzz_world_t *w, int rounds);
/* After an input: a pair it took down (a rail failed, the peer was lost,
 * it said goodbye) disconnects on both sides and connects again. */
void fuzz_world_heal(fuzz_world_t *w);
/* Before an input: self's puts and gets under way, started again if an
 * input ended them. */
void fuzz_world_ops(fuzz_world_t *w);
/* The fake peer a process name picks: the one of that name, else one
 * picked by the value, so that any value names some fake peer. */
fuzz_fake_t *fuzz_world_fake(fuzz_world_t *w, uint64_t name);
/* Give self a receive ring from the fake peer again if an input dropped it
 * (a ring request of phase 0); false if it cannot be had. */
bool fuzz_world_ring(fuzz_fake_t *f);
/* Self's put (get) to the fake peer, sent and waiting for its answer,
 * started now if none is under way; NULL if none can be had, or it is not
 * sent after a few of self's progress calls. */
loom_op_t *fuzz_world_put(fuzz_fake_t *f);
loom_op_t *fuzz_world_get(fuzz_fake_t *f);
/* After an input: abort if a put or a get lost its completion. */
void fuzz_world_check(const fuzz_world_t *w);

#endif
