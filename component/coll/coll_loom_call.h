/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * One collective call as coll loom runs it, shared by its broadcast
 * (coll_loom_bcast.c) and its reductions (coll_loom_reduce.c): the buffers
 * the ranks tell the root, the root's pushes and the word that ends the
 * call, and the wait of a contributing rank for that word.
 */
#ifndef MCA_COLL_LOOM_CALL_H
#define MCA_COLL_LOOM_CALL_H

#include "coll_loom.h"

/* The root's word on a call: DONE, FALL_BACK (before any push), or FAILED
 * and then, once every push ended, ENDED. */
enum { MCA_COLL_LOOM_DONE = 0, MCA_COLL_LOOM_FALL_BACK = 1, MCA_COLL_LOOM_FAILED = 2,
       MCA_COLL_LOOM_ENDED = 3 };

typedef struct mca_coll_loom_word {
    int32_t  word;
} mca_coll_loom_word_t;

/* Requests one call sends one owner at most, which bounds its segments:
 * half of btl loom's window of unanswered requests per owner (1024), so
 * that none is held back at the requester even with another call beside
 * it. */
#define MCA_COLL_LOOM_REQUESTS_PER_OWNER 512

/* The tag of the slots told to a broadcast's root, taken in a later call
 * (coll_loom_bcast_slot.c): not a collective's (coll_tags.h), which another
 * component's receive could match meanwhile.  Open MPI 4.1 and 5.0 use no
 * tag from -2 to -6 (-1 is MPI_ANY_TAG; 5.0 makes its communicators with
 * -7 to -9). */
#define MCA_COLL_LOOM_TAG_SLOTS (-5)

/* One call as this rank runs it. */
typedef struct mca_coll_loom_call {
    mca_coll_loom_module_t *module;
    struct ompi_communicator_t *comm;
    int      tag;           /* of the call's messages (the collective's) */
    int      root;
    int      rank;
    int      size;
    uint8_t *base;          /* the buffer data lands in: its first byte */
    size_t   bytes;
    size_t   segment;
    unsigned segments;
    int      fanout;        /* a broadcast's tree: children per node */
    loom_region_t *region;  /* base's registration */
    mca_coll_loom_dest_t own;
    mca_coll_loom_dest_t *dests; /* the root's: every rank's (a broadcast) */
    /* the root's operations, and the word it sends while they end */
    loom_op_t *ops;         /* the broadcast tree's pushes (edges of them issued) */
    size_t   edges;
    mca_coll_loom_word_t told;
    size_t   issued;        /* every operation of the root's, ended or not */
    size_t   ended;
    bool     failure_told;  /* a flight: its ranks were told FAILED */
    struct mca_coll_loom_call *next; /* a flight: the next of every module's */
    int      failure;       /* the first operation's error */
    /* how the root tells a failure while its operations end (NULL: the
     * word FAILED to every rank) */
    void   (*tell_failed)(struct mca_coll_loom_call *call);
} mca_coll_loom_call_t;

/* Sets up call for bytes at base, in segments of about segment bytes (a
 * multiple of unit, at most max_segments of them). */
void mca_coll_loom_call_init(mca_coll_loom_call_t *call, mca_coll_loom_module_t *module,
                             struct ompi_communicator_t *comm, int tag, int root, void *base,
                             size_t bytes, size_t segment, size_t unit, unsigned max_segments);
size_t mca_coll_loom_segment_length(const mca_coll_loom_call_t *call, unsigned s);
/* Registers [addr, addr + bytes) with access and fills dest (dest->usable
 * 0 when it cannot take part); *region_p is NULL then. */
void mca_coll_loom_register(mca_coll_loom_call_t *call, void *addr, size_t bytes, bool usable,
                            unsigned access, loom_region_t **region_p,
                            mca_coll_loom_dest_t *dest);
/* The callback of the root's operations (op->user is the call). */
void mca_coll_loom_op_end(loom_op_t *op, int status);
/* Asks for the push args describes as op, counted in call->issued; cb ends
 * it (op->user is the call), at once when the push is refused. */
void mca_coll_loom_issue(mca_coll_loom_call_t *call, loom_op_t *op, loom_op_cb_t cb,
                         const loom_push_args_t *args);
/* The operations ended so far, read with what their callbacks wrote before
 * (call->failure): callbacks run in whichever thread progresses loom. */
size_t mca_coll_loom_ended(const mca_coll_loom_call_t *call);
/* A push of this rank's memory (its buffer from) into rank to's (dest), at
 * the same offset in both, as the call's next operation. */
void mca_coll_loom_push_own(mca_coll_loom_call_t *call, const mca_coll_loom_dest_t *from, int to,
                            const mca_coll_loom_dest_t *dest, size_t offset, size_t length);
/* The root: waits until every operation issued ended; a failure is told
 * at once (call->tell_failed), so that pushes waiting on counters that will
 * not grow are cancelled (each rank releases its counters). */
int mca_coll_loom_drain(mca_coll_loom_call_t *call);
/* The root: every other rank's message (msg_size bytes, at most two
 * dests) into msgs[rank], or nowhere when msgs is NULL (no memory). */
int mca_coll_loom_gather(mca_coll_loom_call_t *call, void *msgs, size_t msg_size);
/* The root's word to every other rank. */
int mca_coll_loom_tell(mca_coll_loom_call_t *call, int32_t word);
/* Any rank but the root of a call that only reads its memory: sends mine
 * (its buffers) to the root, then waits for the root's word.  Returns
 * OMPI_SUCCESS, FALL_BACK, or an error. */
int mca_coll_loom_leaf(mca_coll_loom_call_t *call, const void *mine, size_t mine_size);
/* Calls where every rank talks to every other (coll_loom_all.c).  Every
 * rank's message of msg_size bytes into msgs[rank] (this rank's own is
 * there already), from every other rank; reqs holds 2 * size requests. */
int mca_coll_loom_exchange(mca_coll_loom_call_t *call, void *msgs, size_t msg_size,
                           struct ompi_request_t **reqs);
/* The exchange without memory for it: this rank says it cannot take part
 * (a zeroed message, at most two dests) and takes the others'; FALL_BACK,
 * or an error. */
int mca_coll_loom_exchange_bare(mca_coll_loom_call_t *call, size_t msg_size);
/* The end: this rank's word (failed when call->failure says so) to every
 * other, and theirs into words (size of them); OMPI_SUCCESS when every word
 * says done.  A rank sends it once its own operations ended. */
int mca_coll_loom_words(mca_coll_loom_call_t *call, int32_t *words,
                        struct ompi_request_t **reqs);
/* One step of a wait for other ranks: progress, and first the core to
 * whoever else may run on it (sched_yield: back at once where nobody may);
 * with since (when the wait began, 0 before its first step), only once it
 * waited btl_loom_yield_after us.  Such a wait is for another rank's
 * progress, and where ranks share cores (4 ranks on 2 on the virtual
 * cluster) spinning kept the rank waited for off its core: an allgather
 * took 7-30% longer spinning first, a forced 4 MiB broadcast 8.6 ms
 * spinning throughout and 6.1-6.9 ms yielding.  A broadcast's rank waits
 * for data pushed to it, which comes within tens of us in a slotted call:
 * yielding from its first step cost a 16 KiB one 132 us where it took 35
 * spinning first (docs/perf/2026-12-07-stage.md), and the engine's own
 * yield after that idle time does not do for it: a rank whose pushes still
 * move is not idle.  A larger broadcast's waits yield at once (its chain
 * was 10-20% slower spinning first).  Never with btl_loom_yield_after 0. */
void mca_coll_loom_wait_step(int64_t *since);
/* Counts a call coll loom ran (pvars): carried, fallen back or failed by
 * rc; returns rc. */
int mca_coll_loom_counted(int rc, int64_t *carried);
/* Whether every rank reaches every other through loom and was given the
 * same coll_loom_* parameters, asked once per communicator: the first thing
 * each entry point does (a collective: every rank gets here in the same
 * call; a rank deciding by its own parameters first might not). */
bool mca_coll_loom_agreed(mca_coll_loom_module_t *module, struct ompi_communicator_t *comm);

#endif
