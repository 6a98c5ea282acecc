/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * MPI_Allgather on loom's pushes: every rank pushes its own block into
 * every other rank's result, segment by segment, from progress; nobody
 * handshakes per block or per step (coll tuned's ring takes size - 1
 * steps, each a send and a receive).
 *
 *  1. every rank registers its result buffer and sends its key to every
 *     other rank (its word that it is in the call: no one writes into its
 *     buffer before);
 *  2. each rank puts its own block in place (unless MPI_IN_PLACE) and
 *     pushes it from there into every other rank's result, segment by
 *     segment, to the next rank after it first, then the one after that,
 *     with coll_loom_allgather_window pushes in flight: so each rank takes
 *     in about one stream at a time, as in a ring, but nobody waits for a
 *     step (all pushes at once took up to 1.7x longer from 4 MiB: every
 *     rank took in every stream at once);
 *  3. once its pushes ended (a push of its own memory ends only once the
 *     data is in the destination's memory), each rank sends every other its
 *     word (done or failed) and returns when it has every word: by then
 *     every block is in place everywhere.
 *
 * A rank whose buffers are not contiguous, or cannot be registered, says
 * so with its key, and every rank leaves the call to the next component;
 * so do calls below coll_loom_allgather_min bytes (the whole result), on
 * fewer than coll_loom_allgather_min_procs processes, or on one node (unless
 * coll_loom_allgather_one_node).
 */
#include "coll_loom_call.h"
#include "coll_loom_select.h"

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/base/coll_tags.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"

#include <stdlib.h>
#include <string.h>

static const unsigned mca_coll_loom_result_access =
    LOOM_ACCESS_LOCAL_WRITE | LOOM_ACCESS_REMOTE_WRITE | LOOM_ACCESS_REMOTE_READ;

/* One allgather as this rank runs it: call.bytes is one block. */
typedef struct mca_coll_loom_allgather {
    mca_coll_loom_call_t call;    /* call.base: the result's first byte */
    const uint8_t *block;         /* this rank's block to copy in, or NULL */
    mca_coll_loom_dest_t *dests;  /* every rank's result */
    int32_t *words;
    struct ompi_request_t **reqs; /* two per rank */
} mca_coll_loom_allgather_t;

/* Push number n of this rank's: segment n % segments of its block to the
 * n / segments-th rank after it. */
static void mca_coll_loom_allgather_push(mca_coll_loom_allgather_t *ag, size_t n)
{
    mca_coll_loom_call_t *call = &ag->call;
    unsigned s = (unsigned)(n % call->segments);
    int to = (call->rank + 1 + (int)(n / call->segments)) % call->size;

    mca_coll_loom_push_own(call, &ag->dests[call->rank], to, &ag->dests[to],
                           (size_t)call->rank * call->bytes + (size_t)s * call->segment,
                           mca_coll_loom_segment_length(call, s));
}

static int mca_coll_loom_allgather_run(mca_coll_loom_allgather_t *ag)
{
    mca_coll_loom_call_t *call = &ag->call;
    mca_coll_loom_dest_t *mine = &ag->dests[call->rank];
    size_t total, window;
    int rank, rc;

    call->ops = calloc((size_t)call->segments * (size_t)(call->size - 1), sizeof(*call->ops));
    if (NULL != call->ops) {
        mca_coll_loom_register(call, call->base, call->bytes * (size_t)call->size,
                               mine->usable, mca_coll_loom_result_access, &call->region, mine);
    } else {
        mine->usable = 0;
    }
    rc = mca_coll_loom_exchange(call, ag->dests, sizeof(*ag->dests), ag->reqs);
    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        if (!mca_coll_loom_dest_usable(&ag->dests[rank])) {
            return MCA_COLL_LOOM_FALL_BACK; /* every rank alike */
        }
    }
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    if (NULL != ag->block) {
        memcpy(call->base + (size_t)call->rank * call->bytes, ag->block, call->bytes);
    }
    total = (size_t)call->segments * (size_t)(call->size - 1);
    window = (size_t)mca_coll_loom_component.allgather_window;
    /* after a failure nothing more is issued: the call fails at every rank */
    while ((call->issued < total && LOOM_OK == call->failure) ||
           mca_coll_loom_ended(call) < call->issued) {
        if (call->issued < total && LOOM_OK == call->failure &&
            call->issued - mca_coll_loom_ended(call) < window) {
            mca_coll_loom_allgather_push(ag, call->issued);
        } else {
            mca_coll_loom_wait_step(NULL);
        }
    }
    if (LOOM_OK != call->failure) {
        opal_output(0, "coll loom: an allgather of %zu bytes on %s failed here: %s",
                    call->bytes * (size_t)call->size, call->comm->c_name,
                    call->module->api->strerror(call->failure));
    }
    return mca_coll_loom_words(call, ag->words, ag->reqs);
}

/* Sets up ag; what this rank cannot take part with (buffers not
 * contiguous) leaves its dest unusable, for the others to see. */
static void mca_coll_loom_allgather_init(mca_coll_loom_allgather_t *ag,
                                         mca_coll_loom_module_t *module, const void *sbuf,
                                         int scount, struct ompi_datatype_t *sdtype, void *rbuf,
                                         int rcount, struct ompi_datatype_t *rdtype,
                                         struct ompi_communicator_t *comm, size_t block)
{
    int size = ompi_comm_size(comm);
    ptrdiff_t rlb, rextent, slb, sextent;
    bool usable;

    memset(ag, 0, sizeof(*ag));
    ompi_datatype_get_true_extent(rdtype, &rlb, &rextent);
    mca_coll_loom_call_init(&ag->call, module, comm, MCA_COLL_BASE_TAG_ALLGATHER, 0,
                            (uint8_t *)rbuf + rlb, block,
                            (size_t)mca_coll_loom_component.allgather_segment, 1,
                            MCA_COLL_LOOM_REQUESTS_PER_OWNER);
    usable = ompi_datatype_is_contiguous_memory_layout(rdtype, rcount * size);
    if (MPI_IN_PLACE != sbuf) {
        ompi_datatype_get_true_extent(sdtype, &slb, &sextent);
        ag->block = (const uint8_t *)sbuf + slb;
        usable &= ompi_datatype_is_contiguous_memory_layout(sdtype, scount);
    }
    ag->dests = calloc((size_t)size, sizeof(*ag->dests));
    ag->words = calloc((size_t)size, sizeof(*ag->words));
    ag->reqs  = calloc(2 * (size_t)size, sizeof(*ag->reqs));
    if (NULL != ag->dests) {
        ag->dests[ag->call.rank].usable = usable ? 1 : 0;
    }
}

/* The whole result in bytes (the same at every rank: the type signatures
 * match), large enough, on a communicator large enough and reached through
 * loom everywhere.  Every rank decides alike. */
static bool mca_coll_loom_allgather_takes(mca_coll_loom_module_t *module, int rcount,
                                          struct ompi_datatype_t *rdtype,
                                          struct ompi_communicator_t *comm, size_t *block)
{
    size_t type_size;

    ompi_datatype_type_size(rdtype, &type_size);
    *block = type_size * (size_t)(rcount > 0 ? rcount : 0);
    return mca_coll_loom_agreed(module, comm) && *block > 0 &&
           *block * (size_t)ompi_comm_size(comm) >=
               (size_t)mca_coll_loom_component.allgather_min &&
           ompi_comm_size(comm) >= mca_coll_loom_component.allgather_min_procs &&
           (!module->one_node || mca_coll_loom_component.allgather_one_node);
}

int mca_coll_loom_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                            void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                            struct ompi_communicator_t *comm, mca_coll_base_module_t *base)
{
    mca_coll_loom_module_t *module = (mca_coll_loom_module_t *)base;
    mca_coll_loom_allgather_t ag;
    mca_coll_loom_trial_t trial = {.choice = NULL};
    size_t block;
    int rc = MCA_COLL_LOOM_FALL_BACK;

    if (mca_coll_loom_allgather_takes(module, rcount, rdtype, comm, &block) &&
        mca_coll_loom_choose(module, MCA_COLL_LOOM_OP_ALLGATHER,
                             block * (size_t)ompi_comm_size(comm), &trial)) {
        mca_coll_loom_allgather_init(&ag, module, sbuf, scount, sdtype, rbuf, rcount, rdtype,
                                     comm, block);
        if (NULL == ag.dests || NULL == ag.words || NULL == ag.reqs) {
            rc = mca_coll_loom_exchange_bare(&ag.call, sizeof(*ag.dests));
        } else {
            rc = mca_coll_loom_allgather_run(&ag);
        }
        if (NULL != ag.call.region) {
            module->api->mem_deregister(ag.call.region);
        }
        free(ag.call.ops);
        free(ag.dests);
        free(ag.words);
        free(ag.reqs);
        if (MCA_COLL_LOOM_FALL_BACK == rc) {
            opal_output_verbose(10, mca_coll_loom_component.output, "coll loom: an allgather "
                                "of %zu bytes on %s goes to the next component (a buffer not "
                                "contiguous or not registered)", block * ag.call.size,
                                comm->c_name);
        }
        rc = mca_coll_loom_counted(rc, &mca_coll_loom_stats.allgathers);
    }
    if (MCA_COLL_LOOM_FALL_BACK == rc) {
        rc = module->next_allgather(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm,
                                    module->next_allgather_module);
    }
    return mca_coll_loom_chosen(module, comm, &trial, rc);
}
