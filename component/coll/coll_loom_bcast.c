/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * MPI_Bcast on loom's pushes, root-orchestrated (seed 002's third-party and
 * conditional RDMA):
 *
 *  1. every other rank registers its buffer, opens counters of its own for
 *     the call and sends address, key and counters to the root (one small
 *     message; the registration comes from loom's cache);
 *  2. the root issues the whole schedule of a tree of fanout children per
 *     node (a chain from coll_loom_bcast_chain_min bytes), segment by
 *     segment: its own pushes to its children, and for every inner node
 *     a push of that node's copy of the segment to each of its children,
 *     waiting at the inner node on that node's counter of the segment,
 *     which the push bringing the segment adds one to; nobody handshakes
 *     per hop, and a node forwards a segment as soon as it landed;
 *  3. each push tells its destination (the segment's counter and the total)
 *     and the inner node it read (its forwards); a rank returns once all
 *     its segments landed and its forwards ended, the root once its
 *     operations ended (a slotted call's root and inner nodes sooner:
 *     coll_loom_bcast_stage.c, coll_loom_bcast_flight.c,
 *     coll_loom_bcast_leaf.c).  When a push fails, the notices of it say so
 *     and the root's OUTCOME counter at every rank too: each releases its counters,
 *     which cancels the pushes waiting there, and returns an error once the
 *     root says that nothing of the call can still move
 *     (coll_loom_bcast.h).
 *
 * What coll loom cannot take (a rank whose buffer is not contiguous or
 * cannot be registered, or that has no room for its counters) goes,
 * decided by the root for everyone, to the next component's broadcast; so
 * do broadcasts below coll_loom_bcast_min bytes, on fewer than
 * coll_loom_bcast_min_procs processes, or on one node (unless
 * coll_loom_bcast_one_node).
 */
#include "coll_loom_bcast.h"
#include "coll_loom_select.h"

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/base/coll_tags.h"
#include "ompi/mca/pml/pml.h"
#include "opal/util/output.h"

#include <stdlib.h>
#include <string.h>

static const unsigned mca_coll_loom_buffer_access =
    LOOM_ACCESS_LOCAL_WRITE | LOOM_ACCESS_REMOTE_WRITE | LOOM_ACCESS_REMOTE_READ;

/* The root's word while its pushes end: a failure at once, so that ranks
 * release their counters and what waits on them is cancelled. */
static void mca_coll_loom_bcast_failed(mca_coll_loom_call_t *call)
{
    mca_coll_loom_bcast_outcome(call, MCA_COLL_LOOM_OUTCOME_FAILED);
}

/* A rank that told dest is told at once to fall back in the call dest was
 * for. */
static void mca_coll_loom_bcast_fall_back_now(mca_coll_loom_call_t *call, int rank,
                                              const mca_coll_loom_dest_t *dest)
{
    if (dest->usable) {
        (void)call->module->api->counter_add(call->module->names[rank],
                                             dest->counters + MCA_COLL_LOOM_BCAST_OUTCOME,
                                             MCA_COLL_LOOM_OUTCOME_FALL_BACK);
    }
}

void mca_coll_loom_bcast_collect_failed(mca_coll_loom_call_t *call, mca_coll_loom_dest_t *dests)
{
    int rank;

    for (rank = 0; rank < call->size; ++rank) {
        if (rank != call->root) {
            mca_coll_loom_bcast_fall_back_now(call, rank, &dests[rank]);
        }
    }
    memset(dests, 0, (size_t)call->size * sizeof(*dests));
}

int mca_coll_loom_bcast_collect(mca_coll_loom_call_t *call, mca_coll_loom_dest_t *dests)
{
    mca_coll_loom_dest_t scratch;
    int rank, rc = OMPI_SUCCESS;

    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        if (rank == call->root) {
            continue;
        }
        rc = MCA_PML_CALL(recv((NULL == dests) ? &scratch : &dests[rank], sizeof(scratch),
                               MPI_BYTE, rank, call->tag, call->comm, MPI_STATUS_IGNORE));
        if (NULL == dests && OMPI_SUCCESS == rc) {
            /* no memory to keep them: each rank is told to fall back at once */
            mca_coll_loom_bcast_fall_back_now(call, rank, &scratch);
        }
    }
    return rc;
}

/* Every rank's buffer and counters, and whether all can take part. */
static int32_t mca_coll_loom_bcast_gather(mca_coll_loom_call_t *call, int *rc)
{
    mca_coll_loom_dest_t *dests = call->dests;
    /* the root's own buffer too: its type may be laid out otherwise */
    int32_t word = call->own.usable ? MCA_COLL_LOOM_DONE : MCA_COLL_LOOM_FALL_BACK;
    int rank;

    *rc = mca_coll_loom_bcast_collect(call, dests);
    for (rank = 0; rank < call->size && OMPI_SUCCESS == *rc; ++rank) {
        if (rank != call->root &&
            (NULL == dests || !mca_coll_loom_dest_usable(&dests[rank]) ||
             dests[rank].segments != call->segments)) {
            word = MCA_COLL_LOOM_FALL_BACK;
        }
    }
    return word;
}

/* The root: every rank's buffer (told in this call, or slots told before),
 * then the schedule, then the outcome. */
static int mca_coll_loom_bcast_root(mca_coll_loom_call_t *call, bool slotted)
{
    struct ompi_communicator_t *comm = call->comm;
    mca_coll_loom_call_t *run = call; /* a slotted call's: a flight's, on the heap */
    int32_t word;
    unsigned s;
    int v, rc = OMPI_SUCCESS;

    if (slotted) {
        word = mca_coll_loom_bcast_tickets(call);
    } else {
        call->dests = calloc((size_t)call->size, sizeof(*call->dests));
        if (NULL != call->dests) {
            call->dests[call->root] = call->own;
        }
        word = mca_coll_loom_bcast_gather(call, &rc);
    }
    if (OMPI_SUCCESS == rc && MCA_COLL_LOOM_DONE == word) {
        call->ops = calloc((size_t)call->segments * (size_t)(call->size - 1),
                           sizeof(*call->ops));
        if (NULL != call->ops && slotted) {
            run = mca_coll_loom_bcast_flight_new(call); /* takes the ops and dests */
        }
        if (NULL == run || NULL == run->ops) {
            run  = call;
            word = MCA_COLL_LOOM_FALL_BACK;
        }
    }
    if (MCA_COLL_LOOM_FALL_BACK == word && NULL != call->dests) {
        mca_coll_loom_bcast_outcome(call, MCA_COLL_LOOM_OUTCOME_FALL_BACK);
    }
    if (OMPI_SUCCESS == rc && MCA_COLL_LOOM_DONE == word) {
        /* segment by segment, parents before their children */
        run->tell_failed = mca_coll_loom_bcast_failed;
        for (s = 0; s < run->segments; ++s) {
            for (v = 1; v < run->size; ++v) {
                mca_coll_loom_bcast_edge(run, s, v);
            }
        }
        if (run != call && mca_coll_loom_bcast_flight_go(run)) {
            run = call; /* the flight ends the rest */
        } else {
            rc = mca_coll_loom_drain(run);
        }
        if (LOOM_OK != run->failure) {
            opal_output(0, "coll loom: a broadcast of %zu bytes on %s failed: %s",
                        run->bytes, comm->c_name, run->module->api->strerror(run->failure));
            /* after FAILED: nothing of the call moves any more */
            mca_coll_loom_bcast_outcome(run, MCA_COLL_LOOM_OUTCOME_ENDED -
                                                 MCA_COLL_LOOM_OUTCOME_FAILED);
            word = MCA_COLL_LOOM_ENDED;
        }
    }
    if (run != call) {
        mca_coll_loom_bcast_flight_free(run); /* one that failed, all ended */
    }
    free(call->ops);
    if (!slotted) {
        free(call->dests);
    }
    return (OMPI_SUCCESS != rc) ? rc : (MCA_COLL_LOOM_ENDED == word) ? OMPI_ERROR : word;
}

int mca_coll_loom_bcast(void *buff, int count, struct ompi_datatype_t *datatype, int root,
                        struct ompi_communicator_t *comm, mca_coll_base_module_t *base)
{
    mca_coll_loom_module_t *module = (mca_coll_loom_module_t *)base;
    ptrdiff_t true_lb, true_extent;
    mca_coll_loom_trial_t trial = {.choice = NULL};
    mca_coll_loom_call_t call;
    size_t type_size, bytes;
    unsigned max_segments;
    bool contiguous, slotted;
    int fanout, rc;

    /* the pushes of the call before the last end before this call's land
     * in the slots they filled, or its data is copied into their stage */
    mca_coll_loom_bcast_flight_land(module, 1);
    mca_coll_loom_bcast_slots_settle(module);
    ompi_datatype_type_size(datatype, &type_size);
    bytes = type_size * (size_t)(count > 0 ? count : 0);
    if (!mca_coll_loom_agreed(module, comm) || 0 == bytes ||
        bytes < (size_t)mca_coll_loom_component.bcast_min ||
        ompi_comm_size(comm) < mca_coll_loom_component.bcast_min_procs ||
        (module->one_node && !mca_coll_loom_component.bcast_one_node)) {
        return module->next_bcast(buff, count, datatype, root, comm, module->next_bcast_module);
    }
    if (!mca_coll_loom_choose(module, MCA_COLL_LOOM_OP_BCAST, bytes, &trial)) {
        rc = module->next_bcast(buff, count, datatype, root, comm, module->next_bcast_module);
        return mca_coll_loom_chosen(module, comm, &trial, rc);
    }
    ompi_datatype_get_true_extent(datatype, &true_lb, &true_extent);
    contiguous = ompi_datatype_is_contiguous_memory_layout(datatype, count);
    fanout = (bytes >= (size_t)mca_coll_loom_component.bcast_chain_min)
                 ? 1 : mca_coll_loom_component.bcast_fanout;
    /* an inner node gets fanout requests per segment */
    max_segments = MCA_COLL_LOOM_REQUESTS_PER_OWNER / (unsigned)fanout;
    mca_coll_loom_call_init(&call, module, comm, MCA_COLL_BASE_TAG_BCAST, root,
                            (uint8_t *)buff + true_lb, bytes,
                            (size_t)mca_coll_loom_component.bcast_segment, 1, max_segments);
    call.fanout = fanout;
    slotted = mca_coll_loom_bcast_slotted(module, root, bytes);
    if (root == call.rank && slotted) {
        mca_coll_loom_bcast_stage(&call, buff, count, datatype, contiguous);
    } else if (root == call.rank || !slotted) {
        mca_coll_loom_register(&call, call.base, call.bytes, contiguous,
                               mca_coll_loom_buffer_access, &call.region, &call.own);
    }
    rc = (root == call.rank) ? mca_coll_loom_bcast_root(&call, slotted)
         : slotted           ? mca_coll_loom_bcast_slot_leaf(&call, buff, count, datatype,
                                                             contiguous)
                             : mca_coll_loom_bcast_leaf(&call);
    rc = mca_coll_loom_counted(rc, &mca_coll_loom_stats.bcasts);
    if (slotted && OMPI_SUCCESS == rc) {
        mca_coll_loom_count(&mca_coll_loom_stats.bcast_slots);
    }
    if (NULL != call.region && OMPI_SUCCESS != rc && MCA_COLL_LOOM_FALL_BACK != rc) {
        /* a push of a failed call may still come (the root lost its owner):
         * it must not land in this buffer once the call returned */
        module->api->mem_revoke(call.region);
    } else if (NULL != call.region) {
        module->api->mem_deregister(call.region);
    }
    if (root == call.rank && mca_coll_loom_bcast_slots_kept(bytes)) {
        mca_coll_loom_bcast_slots_owed(&call);
    }
    if (MCA_COLL_LOOM_FALL_BACK == rc) {
        opal_output_verbose(10, mca_coll_loom_component.output, "coll loom: a broadcast of "
                            "%zu bytes on %s goes to the next component (a buffer not "
                            "contiguous or not registered, or no room for counters)",
                            call.bytes, comm->c_name);
        rc = module->next_bcast(buff, count, datatype, root, comm, module->next_bcast_module);
    }
    return mca_coll_loom_chosen(module, comm, &trial, rc);
}
