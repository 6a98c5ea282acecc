/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * A broadcast at every rank but the root (coll_loom_bcast.h): its counters,
 * its buffer told to the root, and the wait for its data and its forwards,
 * which has a way out whatever fails: a push that did not land marks its
 * counters, the root's OUTCOME says the rest, and the counters released
 * cancel what waits here, so that the root's pushes all end.
 */
#include "coll_loom_bcast.h"

#include "ompi/mca/pml/pml.h"
#include "opal/runtime/opal_progress.h"

#include <string.h>

/* Whether a notice told of a push of this call that did not land here or
 * did not read this rank's copy. */
static bool mca_coll_loom_bcast_told_failed(const mca_btl_loom_coll_api_t *api, uint64_t first,
                                            bool forwards)
{
    return LOOM_OK != api->counter_status(first + MCA_COLL_LOOM_BCAST_TOTAL) ||
           (forwards && LOOM_OK != api->counter_status(first + MCA_COLL_LOOM_BCAST_FORWARDED));
}

int mca_coll_loom_bcast_leaf(mca_coll_loom_call_t *call)
{
    const mca_btl_loom_coll_api_t *api = call->module->api;
    unsigned count = mca_coll_loom_bcast_counters(call, mca_coll_loom_bcast_vrank(call));
    uint64_t first = 0;
    int rc;

    if (call->own.usable && LOOM_OK != api->counters_open(count, &first)) {
        call->own.usable = 0; /* at the bound: every rank falls back */
    }
    call->own.counters = call->own.usable ? first : 0;
    call->own.segments = call->segments;
    rc = MCA_PML_CALL(send(&call->own, sizeof(call->own), MPI_BYTE, call->root, call->tag,
                           MCA_PML_BASE_SEND_STANDARD, call->comm));
    if (OMPI_SUCCESS == rc && mca_coll_loom_bcast_slots_kept(call->bytes)) {
        rc = mca_coll_loom_bcast_slots_tell(call, false);
    }
    if (OMPI_SUCCESS != rc || !call->own.usable) {
        if (0 != first) {
            (void)api->counters_release(first, count);
        }
        return (OMPI_SUCCESS != rc) ? rc : MCA_COLL_LOOM_FALL_BACK;
    }
    return mca_coll_loom_bcast_wait(call, first, count, false);
}

/* Every segment of the call here.  An inner node's segment counters count as
 * each push lands (they are its pushes' first notices, push_landed.c), where
 * its TOTAL waits for the root's notice after the push was acknowledged, a
 * round trip later; a leaf's TOTAL is the counter that counts on landing. */
static bool mca_coll_loom_bcast_landed(const mca_btl_loom_coll_api_t *api, uint64_t first,
                                       unsigned segments, bool inner)
{
    unsigned s;

    if (!inner) {
        return api->counter_value(first + MCA_COLL_LOOM_BCAST_TOTAL) == segments;
    }
    for (s = 0; s < segments; ++s) {
        if (api->counter_value(first + MCA_COLL_LOOM_BCAST_SEGMENT + s) < 1) {
            return false;
        }
    }
    return true;
}

/* The wait on counters first .. first + count - 1 of a call of segments
 * whose pushes from this rank are forwards.  With keep, it may end once the
 * data landed, before the forwards did: then *kept says so and the counters
 * stay open (the conditional pushes still to come from the root wait on
 * them); else they are released. */
static int mca_coll_loom_bcast_await(const mca_btl_loom_coll_api_t *api, uint64_t first,
                                     unsigned count, unsigned segments, uint64_t forwards,
                                     bool keep, bool *kept)
{
    int64_t since = 0;
    uint64_t outcome;
    bool failed = false;

    for (;;) {
        outcome = api->counter_value(first + MCA_COLL_LOOM_BCAST_OUTCOME);
        if (outcome >= MCA_COLL_LOOM_OUTCOME_ENDED) {
            break; /* fell back, or failed and nothing moves any more */
        }
        if (!failed && mca_coll_loom_bcast_landed(api, first, segments, 0 != forwards)) {
            if (0 == forwards ||
                api->counter_value(first + MCA_COLL_LOOM_BCAST_FORWARDED) == forwards) {
                break; /* every segment here, and read by every child's push */
            }
            if (keep) {
                *kept = true;
                return OMPI_SUCCESS;
            }
        }
        if (!failed && (MCA_COLL_LOOM_OUTCOME_FAILED == outcome ||
                        mca_coll_loom_bcast_told_failed(api, first, 0 != forwards))) {
            /* cancels the pushes waiting here, so that the root's all end;
             * the root's word is still to come */
            failed = true;
            (void)api->counters_release(first + MCA_COLL_LOOM_BCAST_TOTAL, count - 1);
        }
        /* a slotted call's data comes at once: spun for before a yield */
        mca_coll_loom_wait_step(keep ? &since : NULL);
    }
    (void)api->counters_release(first, failed ? 1 : count);
    if (MCA_COLL_LOOM_OUTCOME_FALL_BACK == outcome) {
        return MCA_COLL_LOOM_FALL_BACK;
    }
    return (failed || MCA_COLL_LOOM_OUTCOME_ENDED == outcome) ? OMPI_ERROR : OMPI_SUCCESS;
}

int mca_coll_loom_bcast_wait(mca_coll_loom_call_t *call, uint64_t first, unsigned count,
                             bool slotted)
{
    mca_coll_loom_forwarding_t *forwarding = &call->module->slots.forwarding;
    int children = mca_coll_loom_bcast_children(call, mca_coll_loom_bcast_vrank(call));
    uint64_t forwards = (uint64_t)call->segments * (uint64_t)children;
    bool kept = false;
    int rc;

    rc = mca_coll_loom_bcast_await(call->module->api, first, count, call->segments, forwards,
                                   slotted, &kept);
    if (kept) {
        forwarding->first    = first;
        forwarding->count    = count;
        forwarding->segments = call->segments;
        forwarding->forwards = forwards;
    }
    return rc;
}

void mca_coll_loom_bcast_forwards_settle(mca_coll_loom_module_t *module)
{
    mca_coll_loom_forwarding_t *forwarding = &module->slots.forwarding;
    bool kept = false;

    if (0 == forwarding->count) {
        return;
    }
    /* a forward that failed here is the root's to tell (its flight) */
    (void)mca_coll_loom_bcast_await(module->api, forwarding->first, forwarding->count,
                                    forwarding->segments, forwarding->forwards, false, &kept);
    memset(forwarding, 0, sizeof(*forwarding));
}
