/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The root of a slotted broadcast returns once its pushes are issued (from
 * its stage, coll_loom_bcast_stage.c): its buffer may change then, and
 * every rank gets the data from the root or from an inner node.  The
 * pushes, its own and those it asked the inner nodes for (their copies
 * forwarded to their children), end after the root returned: the call's
 * state, kept on the heap from the start, is a flight of the module
 * (coll_loom.h), which ends it
 *  - at the start of the next broadcast on the communicator but one: that
 *    call's pushes fill the other half of the slots and its data goes to
 *    the other half of the stage, so the last call's may still end while
 *    the next is pushed (at most two flights per communicator),
 *  - at MPI_Comm_free and at the module's end, and
 *  - meanwhile from Open MPI's progress, wherever the process is: a flight
 *    whose push failed tells the ranks (OUTCOME FAILED, then ENDED once
 *    nothing of it moves any more), which wait for that word before they
 *    return an error; a root computing or in a point-to-point call must not
 *    leave them waiting.
 * A push refused before the root returned makes it wait for all, as any
 * broadcast does, and return the error.  (Measured:
 * docs/perf/2026-12-07-flights.md, docs/perf/2026-12-07-stage.md.)
 */
#include "coll_loom_bcast.h"

#include "opal/runtime/opal_progress.h"
#include "opal/sys/atomic.h"
#include "opal/util/output.h"

#include <stdlib.h>

/* Every module's flight, for the progress callback. */
static opal_mutex_t mca_coll_loom_flights_lock = OPAL_MUTEX_STATIC_INIT;
static mca_coll_loom_call_t *mca_coll_loom_flights;
static volatile int32_t mca_coll_loom_flights_count;
static bool mca_coll_loom_flights_registered;

mca_coll_loom_call_t *mca_coll_loom_bcast_flight_new(mca_coll_loom_call_t *call)
{
    mca_coll_loom_call_t *flight = malloc(sizeof(*flight));

    if (NULL == flight) {
        return NULL;
    }
    *flight      = *call;
    flight->next = NULL;
    call->ops    = NULL;
    call->module->slots.tickets = NULL; /* the next call's are taken anew */
    return flight;
}

/* What the root owes the ranks of a flight: FAILED once a push failed,
 * ENDED once nothing moves any more.  True once every push ended. */
static bool mca_coll_loom_flight_step(mca_coll_loom_call_t *flight)
{
    bool ended = mca_coll_loom_ended(flight) == flight->issued; /* then its failure */

    if (LOOM_OK != flight->failure && !flight->failure_told) {
        opal_output(0, "coll loom: a broadcast of %zu bytes on %s failed after its root "
                    "returned: %s", flight->bytes, flight->comm->c_name,
                    flight->module->api->strerror(flight->failure));
        mca_coll_loom_bcast_outcome(flight, MCA_COLL_LOOM_OUTCOME_FAILED);
        flight->failure_told = true;
    }
    if (ended && LOOM_OK != flight->failure) {
        mca_coll_loom_bcast_outcome(flight, MCA_COLL_LOOM_OUTCOME_ENDED -
                                                MCA_COLL_LOOM_OUTCOME_FAILED);
    }
    return ended;
}

void mca_coll_loom_bcast_flight_free(mca_coll_loom_call_t *flight)
{
    free(flight->ops);
    free(flight->dests);
    free(flight);
}

static int mca_coll_loom_flights_progress(void)
{
    mca_coll_loom_call_t **link, *flight;
    int ended = 0;

    if (0 == mca_coll_loom_flights_count ||
        0 != opal_mutex_trylock(&mca_coll_loom_flights_lock)) {
        return 0;
    }
    for (link = &mca_coll_loom_flights; NULL != (flight = *link);) {
        if (!mca_coll_loom_flight_step(flight)) {
            link = &flight->next;
            continue;
        }
        *link = flight->next;
        --flight->module->flights;
        --mca_coll_loom_flights_count;
        mca_coll_loom_bcast_flight_free(flight);
        ++ended;
    }
    opal_mutex_unlock(&mca_coll_loom_flights_lock);
    return ended;
}

/* The module's flights but its newest keep (the list is newest first), out
 * of the progress callback's reach: a list of them, or NULL. */
static mca_coll_loom_call_t *mca_coll_loom_flights_detach(mca_coll_loom_module_t *module,
                                                          unsigned keep)
{
    mca_coll_loom_call_t **link, *flight, *detached = NULL;
    unsigned seen = 0;

    opal_mutex_lock(&mca_coll_loom_flights_lock);
    for (link = &mca_coll_loom_flights; NULL != (flight = *link);) {
        if (flight->module != module || seen++ < keep) {
            link = &flight->next;
            continue;
        }
        *link        = flight->next;
        flight->next = detached;
        detached     = flight;
        --module->flights;
        --mca_coll_loom_flights_count;
    }
    opal_mutex_unlock(&mca_coll_loom_flights_lock);
    return detached;
}

void mca_coll_loom_bcast_flight_land(mca_coll_loom_module_t *module, unsigned keep)
{
    mca_coll_loom_call_t *flight, *next;
    int64_t since = 0;

    /* only this thread adds the module's flights: fewer, and it has none to land */
    if (module->flights <= keep) {
        return;
    }
    for (flight = mca_coll_loom_flights_detach(module, keep); NULL != flight; flight = next) {
        next = flight->next;
        while (!mca_coll_loom_flight_step(flight)) {
            mca_coll_loom_wait_step(&since);
        }
        mca_coll_loom_bcast_flight_free(flight);
    }
}

bool mca_coll_loom_bcast_flight_go(mca_coll_loom_call_t *flight)
{
    mca_coll_loom_module_t *module = flight->module;
    size_t ended = mca_coll_loom_ended(flight); /* then its failure */

    if (LOOM_OK != flight->failure) {
        return false; /* refused at once: the caller waits for all, and tells */
    }
    if (ended == flight->issued) {
        mca_coll_loom_bcast_flight_free(flight); /* nothing left in flight */
        return true;
    }
    opal_mutex_lock(&mca_coll_loom_flights_lock);
    if (!mca_coll_loom_flights_registered) {
        mca_coll_loom_flights_registered = (OPAL_SUCCESS ==
                                            opal_progress_register(mca_coll_loom_flights_progress));
    }
    mca_coll_loom_count(&mca_coll_loom_stats.bcast_flights);
    ++module->flights;
    flight->next = mca_coll_loom_flights; /* the newest first */
    mca_coll_loom_flights = flight;
    ++mca_coll_loom_flights_count;
    opal_mutex_unlock(&mca_coll_loom_flights_lock);
    if (!mca_coll_loom_flights_registered) {
        mca_coll_loom_bcast_flight_land(module, 0); /* without the callback: ended here */
    }
    return true;
}

void mca_coll_loom_bcast_flights_fini(void)
{
    if (mca_coll_loom_flights_registered) {
        (void)opal_progress_unregister(mca_coll_loom_flights_progress);
        mca_coll_loom_flights_registered = false;
    }
}
