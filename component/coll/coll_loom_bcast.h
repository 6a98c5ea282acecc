/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * coll loom's broadcast inside: the tree (ranks relative to the root), the
 * counters each rank opens for a call, the root's pushes along the tree,
 * and the wait of every other rank (coll_loom_bcast_tree.c,
 * coll_loom_bcast_leaf.c).
 *
 * Every rank but the root opens counters of its own for each call (fresh
 * ids from the engine, never used before and never made again once
 * released), and tells the root the first one with its buffer:
 *   OUTCOME    the root's word, added by the root when it has one:
 *              1 the call failed, 2 nothing of it moves any more, 3 fall back
 *   TOTAL      one per segment that landed here
 *   FORWARDED  (inner nodes) one per push of this rank's copy that ended
 *   SEGMENT+s  (inner nodes) segment s landed here: its forwards wait on it
 * A rank returns once its data landed and its forwards ended, without
 * waiting for the root; a failure reaches it by a notice of a push that did
 * not land (its counter says so) or by the root's OUTCOME.
 */
#ifndef MCA_COLL_LOOM_BCAST_H
#define MCA_COLL_LOOM_BCAST_H

#include "coll_loom_call.h"

enum {
    MCA_COLL_LOOM_BCAST_OUTCOME   = 0,
    MCA_COLL_LOOM_BCAST_TOTAL     = 1,
    MCA_COLL_LOOM_BCAST_FORWARDED = 2,
    MCA_COLL_LOOM_BCAST_SEGMENT   = 3
};

/* What the root adds to OUTCOME. */
enum {
    MCA_COLL_LOOM_OUTCOME_FAILED    = 1,
    MCA_COLL_LOOM_OUTCOME_ENDED     = 2, /* after FAILED: one more */
    MCA_COLL_LOOM_OUTCOME_FALL_BACK = 3
};

/* Children of the node at v (relative to the root) in the tree. */
int mca_coll_loom_bcast_children(const mca_coll_loom_call_t *call, int v);
/* This rank relative to the root. */
int mca_coll_loom_bcast_vrank(const mca_coll_loom_call_t *call);
/* The counters a rank at v opens for the call. */
unsigned mca_coll_loom_bcast_counters(const mca_coll_loom_call_t *call, int v);
/* The push of segment s from the node at v's parent to v (call->dests),
 * waiting at the parent (unless it is the root) for the segment to land
 * there, with its notices: v's segment and total, the parent's forwards. */
void mca_coll_loom_bcast_edge(mca_coll_loom_call_t *call, unsigned s, int v);
/* The root adds amount to OUTCOME at every rank of call->dests that can hear
 * it. */
void mca_coll_loom_bcast_outcome(mca_coll_loom_call_t *call, uint64_t amount);
/* The root: every other rank's buffer as it told it, into dests[rank]; with
 * dests NULL (no memory to keep them) each rank that could take part is
 * told at once to fall back. */
int mca_coll_loom_bcast_collect(mca_coll_loom_call_t *call, mca_coll_loom_dest_t *dests);
/* After a collect that failed part way: every rank whose buffer came told
 * to fall back at once, and dests all unusable. */
void mca_coll_loom_bcast_collect_failed(mca_coll_loom_call_t *call, mca_coll_loom_dest_t *dests);
/* Any rank but the root: opens its counters, sends its buffer (call->own)
 * to the root and waits as the header says.  OMPI_SUCCESS, FALL_BACK, or an
 * error. */
int mca_coll_loom_bcast_leaf(mca_coll_loom_call_t *call);
/* The wait of any rank but the root on its counters first .. first + count
 * - 1, which it releases: OMPI_SUCCESS, FALL_BACK, or an error.  An inner
 * node of a slotted call returns once its data landed: its forwards read
 * its slot, which no push fills again before the root's flight ended; its
 * counters stay open until they ended (module->slots.forwarding). */
int mca_coll_loom_bcast_wait(mca_coll_loom_call_t *call, uint64_t first, unsigned count,
                             bool slotted);
/* The forwards of this rank's last slotted call ended, their counters
 * released: the next broadcast's first step, and MPI_Comm_free's. */
void mca_coll_loom_bcast_forwards_settle(mca_coll_loom_module_t *module);

/* Small broadcasts' slots (coll_loom_bcast_slot.c, coll_loom.h). */
/* Whether a call of bytes tells and takes slots (coll_loom_bcast_eager_max). */
bool mca_coll_loom_bcast_slots_kept(size_t bytes);
/* Whether a call of bytes from root lands in the slots told to it. */
bool mca_coll_loom_bcast_slotted(const mca_coll_loom_module_t *module, int root, size_t bytes);
/* The root of a slotted call: the slots as the call's dests (call->dests,
 * kept by the module), its own buffer (call->own) among them; DONE, or
 * FALL_BACK when a rank's slot or this rank's buffer cannot take part. */
int32_t mca_coll_loom_bcast_tickets(mca_coll_loom_call_t *call);
/* Any other rank of a slotted call: tells its other slot, waits for the data
 * in this call's, then copies it into buff (count of datatype, laid out as
 * it may be). */
int mca_coll_loom_bcast_slot_leaf(mca_coll_loom_call_t *call, void *buff, int count,
                                  struct ompi_datatype_t *datatype, bool contiguous);
/* Any rank but the root, in each call that keeps slots, whatever becomes of
 * it, before its wait: the slot this call does not use told to the root. */
int mca_coll_loom_bcast_slots_tell(mca_coll_loom_call_t *call, bool slotted);
/* The root of each call that keeps slots, once its pushes ended, whatever
 * became of them: every other rank told a slot in the call, to be taken. */
void mca_coll_loom_bcast_slots_owed(mca_coll_loom_call_t *call);
/* Every broadcast on the communicator first, and MPI_Comm_free: this rank's
 * slot told in the last call sent, and the slots owed to it taken (a
 * receive from every other rank). */
void mca_coll_loom_bcast_slots_settle(mca_coll_loom_module_t *module);
/* The module's slots at its end. */
void mca_coll_loom_bcast_slots_free(mca_coll_loom_module_t *module);

/* A buffer kept from call to call (a slot, the root's stage) at *buf, of
 * *buf_size bytes, registered as *region: replaced when not of size bytes
 * (its key with it), then registered again for its first bytes (a hit in
 * loom's cache), described in dest (usable 0 when that failed). */
void mca_coll_loom_kept_register(mca_coll_loom_call_t *call, uint8_t **buf, size_t *buf_size,
                                 loom_region_t **region, size_t size, size_t bytes,
                                 unsigned access, mca_coll_loom_dest_t *dest);
/* Such a buffer freed (its region deregistered before), counted out of
 * coll_loom_bcast_slot_bytes. */
void mca_coll_loom_kept_free(uint8_t **buf, size_t *buf_size);
/* The root of a slotted call: its data copied into the module's stage,
 * registered, as call->own; own unusable (the call falls back, every rank
 * told) when that could not be done. */
void mca_coll_loom_bcast_stage(mca_coll_loom_call_t *call, void *buff, int count,
                              struct ompi_datatype_t *datatype, bool contiguous);
/* The stage at the module's end (its flight landed). */
void mca_coll_loom_bcast_stage_free(mca_coll_loom_module_t *module);

/* The root's pushes that end after it returned (coll_loom_bcast_flight.c). */
/* A copy of the root's slotted call on the heap, owning its ops (call->ops
 * is left NULL) and dests (the slots told, taken from the module); NULL
 * without memory, call unchanged. */
mca_coll_loom_call_t *mca_coll_loom_bcast_flight_new(mca_coll_loom_call_t *call);
/* Once the edges are issued: true unless one was refused already (the rest
 * ends as the module's flight, or ended: the flight is no longer the
 * caller's); false then (the caller waits for all, tells, and frees the
 * flight). */
bool mca_coll_loom_bcast_flight_go(mca_coll_loom_call_t *flight);
void mca_coll_loom_bcast_flight_free(mca_coll_loom_call_t *flight);
/* The module's flights but the newest keep ended here: each broadcast's
 * start keeps one (the last call's, whose slots and stage it does not
 * write), MPI_Comm_free and the module's end none. */
void mca_coll_loom_bcast_flight_land(mca_coll_loom_module_t *module, unsigned keep);


#endif
