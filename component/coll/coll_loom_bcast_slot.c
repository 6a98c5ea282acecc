/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Small broadcasts without the ranks' first message (coll_loom.h,
 * mca_coll_loom_slots_t).  A broadcast through pushes needs the address,
 * key and counters of every rank's buffer, and a rank can tell them only
 * once it entered the call: the root waits for that message before its
 * first push, one round trip that costs a small broadcast more than its
 * data (a forced 64 KiB broadcast on the virtual cluster: 0.47-0.52 ms
 * against coll tuned's 0.09-0.31, docs/perf/2026-12-07-waits.md).
 *
 * So each rank but the root keeps two slots per communicator, and early in
 * each call of at most coll_loom_bcast_eager_max bytes tells the root where
 * the next may land: the slot this call does not use, its address and key,
 * and fresh counters (engine-issued, never used before), on a tag of coll
 * loom's own (MCA_COLL_LOOM_TAG_SLOTS).  The root takes them when it enters
 * the next broadcast on the communicator, whatever component carries it,
 * or when the communicator is freed (one left in flight would go to the
 * next communicator that reuses its id), so that it does not wait for them
 * in the call that tells them (MPI_Comm_free runs an attribute's deletion
 * for it).  The next call from the same root, if
 * it fits the slots, is pushed there at once; each rank copies its data
 * out.  Whether a call is slotted
 * follows from the sizes and roots of the calls before it, which every rank
 * sees alike, so all take the same path without a word.  The slots grow to
 * the next power of two above the largest such call, never above
 * coll_loom_bcast_eager_max, and shrink after every MCA_COLL_LOOM_SLOT_WINDOW
 * such calls to what the largest of them needed; a call that does not
 * fit, or comes from another root, goes the way of any broadcast and
 * renews the slots.
 */
#include "coll_loom_bcast.h"

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/pml/pml.h"
#include "ompi/request/request.h"
#include "opal/util/output.h"

#include <stdlib.h>
#include <string.h>

#define MCA_COLL_LOOM_SLOT_MIN 4096
/* Calls after which the slots shrink to what the largest of them needed */
#define MCA_COLL_LOOM_SLOT_WINDOW 64

static const unsigned mca_coll_loom_slot_access = LOOM_ACCESS_LOCAL_WRITE |
                                                  LOOM_ACCESS_REMOTE_WRITE |
                                                  LOOM_ACCESS_REMOTE_READ;

bool mca_coll_loom_bcast_slots_kept(size_t bytes)
{
    return bytes <= (size_t)mca_coll_loom_component.bcast_eager_max;
}

bool mca_coll_loom_bcast_slotted(const mca_coll_loom_module_t *module, int root, size_t bytes)
{
    return 0 != module->slots.size && bytes <= module->slots.size && root == module->slots.root;
}

/* Segments a slot of size bytes has counters for: a call that fits has at
 * most these (its segments are never smaller than coll_loom_bcast_segment). */
static unsigned mca_coll_loom_slot_segments(size_t size)
{
    size_t segment = (size_t)mca_coll_loom_component.bcast_segment;
    size_t segments = (size + segment - 1) / segment;

    return (segments > MCA_COLL_LOOM_REQUESTS_PER_OWNER) ? MCA_COLL_LOOM_REQUESTS_PER_OWNER
                                                          : (unsigned)segments;
}

/* The slots' size and root after a call: the same at every rank, which
 * counts the same calls (time would differ from rank to rank).  They grow
 * at once to what a call needs, and shrink to the largest need of a window
 * of calls: a phase of large broadcasts leaves no large slots behind. */
static void mca_coll_loom_slots_advance(mca_coll_loom_slots_t *slots,
                                        const mca_coll_loom_call_t *call)
{
    size_t max = (size_t)mca_coll_loom_component.bcast_eager_max, need = MCA_COLL_LOOM_SLOT_MIN;

    while (need < call->bytes) {
        need <<= 1;
    }
    if (need > max) {
        need = max;
    }
    if (need > slots->size) {
        slots->size = need;
    }
    if (need > slots->window_max) {
        slots->window_max = need;
    }
    if (++slots->window_calls >= MCA_COLL_LOOM_SLOT_WINDOW) {
        slots->size         = slots->window_max;
        slots->window_max   = 0;
        slots->window_calls = 0;
    }
    slots->root = call->root;
}

/* What this rank told of slot and nobody will use any more: its counters. */
static void mca_coll_loom_slot_forget(const mca_btl_loom_coll_api_t *api,
                                      mca_coll_loom_slot_t *slot)
{
    if (0 != slot->counters) {
        (void)api->counters_release(slot->told.counters, slot->counters);
        slot->counters = 0;
    }
    slot->told.usable = 0;
}

/* MPI_Comm_free of a communicator with slots owed to this rank, or told by
 * it: taken, or sent, and a flight rooted here ended, while the
 * communicator still works (attributes go first).  Not at the module's
 * end: a request there would hold the communicator being destroyed, and
 * destroy it again when it ends. */
static int mca_coll_loom_slots_comm_freed(MPI_Comm comm, int keyval, void *value, void *extra)
{
    mca_coll_loom_module_t *module = value;

    (void)comm;
    (void)keyval;
    (void)extra;
    /* a broadcast after this (in a later attribute's deletion) hooks again */
    module->slots.hooked = false;
    /* the flight too, here rather than in the module's destructor, which
     * may run inside progress (a last reference dropped by a request) */
    mca_coll_loom_bcast_flight_land(module, 0);
    mca_coll_loom_bcast_slots_settle(module);
    return MPI_SUCCESS;
}

/* The attribute whose deletion settles the slots of a communicator; a
 * communicator of Open MPI's own (MPI_COMM_WORLD, MPI_COMM_SELF) lives
 * until MPI_Finalize, whose id nobody reuses: what is owed there is left. */
static void mca_coll_loom_slots_hook(mca_coll_loom_module_t *module,
                                     struct ompi_communicator_t *comm)
{
    int keyval = MPI_KEYVAL_INVALID, rc;

    if (module->slots.hooked || OMPI_COMM_IS_INTRINSIC(comm)) {
        return;
    }
    /* a key of its own, freed at once: the attribute keeps it until its
     * deletion, which still calls back (nothing is left at MPI_Finalize) */
    rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, mca_coll_loom_slots_comm_freed, &keyval,
                                 NULL);
    if (MPI_SUCCESS == rc) {
        rc = PMPI_Comm_set_attr(comm, keyval, module);
        (void)PMPI_Comm_free_keyval(&keyval);
    }
    if (MPI_SUCCESS != rc) {
        opal_output(0, "coll loom: no hook on %s for its broadcast slots at MPI_Comm_free "
                    "(%d): a slot in flight then could reach the communicator that reuses "
                    "its id", comm->c_name, rc);
    }
    module->slots.hooked = true;
}

/* What this rank tells the root, started: the root takes it in a later call,
 * so a send that waited for it (a rendezvous, were the eager limit below its
 * size) would wait for ever; it ends at the next broadcast's start or at
 * MPI_Comm_free (mca_coll_loom_bcast_slots_settle), from a copy of its own. */
static int mca_coll_loom_slot_send(mca_coll_loom_call_t *call, const mca_coll_loom_dest_t *told)
{
    mca_coll_loom_slots_t *slots = &call->module->slots;

    if (NULL == slots->sent && NULL == (slots->sent = malloc(sizeof(*slots->sent)))) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    *slots->sent = *told;
    mca_coll_loom_slots_hook(call->module, call->comm);
    return MCA_PML_CALL(isend(slots->sent, sizeof(*slots->sent), MPI_BYTE, call->root,
                              MCA_COLL_LOOM_TAG_SLOTS, MCA_PML_BASE_SEND_STANDARD, call->comm,
                              &slots->sending));
}

void mca_coll_loom_kept_free(uint8_t **buf, size_t *buf_size)
{
    mca_coll_loom_count_add(&mca_coll_loom_stats.slot_bytes, -(int64_t)*buf_size);
    free(*buf);
    *buf      = NULL;
    *buf_size = 0;
}

void mca_coll_loom_kept_register(mca_coll_loom_call_t *call, uint8_t **buf, size_t *buf_size,
                                 loom_region_t **region, size_t size, size_t bytes,
                                 unsigned access, mca_coll_loom_dest_t *dest)
{
    const mca_btl_loom_coll_api_t *api = call->module->api;
    loom_region_t *old = *region;
    void *grown = NULL;

    if (*buf_size != size) {
        /* grown or shrunk: the old buffer's key goes with it */
        if (NULL != old) {
            api->mem_deregister(old);
            old = NULL;
        }
        mca_coll_loom_kept_free(buf, buf_size);
        if (0 == posix_memalign(&grown, MCA_COLL_LOOM_SLOT_MIN, size)) {
            *buf      = grown;
            *buf_size = size;
            mca_coll_loom_count_add(&mca_coll_loom_stats.slot_bytes, (int64_t)size);
        }
    }
    /* registered again each time (a hit in loom's cache), so that a key
     * refused after a rail came back is not used again */
    mca_coll_loom_register(call, *buf, bytes, NULL != *buf, access, region, dest);
    if (NULL != old) {
        api->mem_deregister(old);
    }
}

/* slot of size bytes, registered, with fresh counters, told to the root;
 * slot->told.usable 0 when one of them could not be had. */
static int mca_coll_loom_slot_tell(mca_coll_loom_call_t *call, mca_coll_loom_slot_t *slot,
                                   size_t size)
{
    const mca_btl_loom_coll_api_t *api = call->module->api;
    unsigned segments = mca_coll_loom_slot_segments(size);
    unsigned count = MCA_COLL_LOOM_BCAST_SEGMENT + segments;
    uint64_t first = 0;

    mca_coll_loom_kept_register(call, &slot->buf, &slot->buf_size, &slot->region, size, size,
                                mca_coll_loom_slot_access, &slot->told);
    if (slot->told.usable && LOOM_OK != api->counters_open(count, &first)) {
        slot->told.usable = 0; /* at the bound: the root makes every rank fall back */
    }
    if (slot->told.usable) {
        slot->told.counters = first;
        slot->told.segments = segments;
        slot->counters      = count;
    }
    return mca_coll_loom_slot_send(call, &slot->told);
}

int mca_coll_loom_bcast_slots_tell(mca_coll_loom_call_t *call, bool slotted)
{
    mca_coll_loom_slots_t *slots = &call->module->slots;
    int rc;

    if (slotted) {
        slots->next ^= 1; /* the other is this call's */
    }
    /* not used by this call: told again */
    mca_coll_loom_slot_forget(call->module->api, &slots->slot[slots->next]);
    mca_coll_loom_slots_advance(slots, call);
    rc = mca_coll_loom_slot_tell(call, &slots->slot[slots->next], slots->size);
    if (OMPI_SUCCESS != rc) {
        opal_output(0, "coll loom: a broadcast slot could not be told to the root of %s (%d)",
                    call->comm->c_name, rc);
    }
    return rc;
}

void mca_coll_loom_bcast_slots_owed(mca_coll_loom_call_t *call)
{
    mca_coll_loom_slots_t *slots = &call->module->slots;
    const mca_btl_loom_coll_api_t *api = call->module->api;

    /* what this rank told another root before goes unused */
    mca_coll_loom_slot_forget(api, &slots->slot[0]);
    mca_coll_loom_slot_forget(api, &slots->slot[1]);
    mca_coll_loom_slots_advance(slots, call);
    mca_coll_loom_slots_hook(call->module, call->comm);
    slots->owed = call->comm;
}

/* The slots owed to this rank, taken. */
static int mca_coll_loom_bcast_slots_take(mca_coll_loom_module_t *module)
{
    mca_coll_loom_slots_t *slots = &module->slots;
    mca_coll_loom_call_t call;
    int rc;

    if (NULL == slots->owed) {
        return OMPI_SUCCESS;
    }
    mca_coll_loom_call_init(&call, module, slots->owed, MCA_COLL_LOOM_TAG_SLOTS,
                            ompi_comm_rank(slots->owed), NULL, 0, 1, 1, 1);
    slots->owed = NULL;
    if (NULL == slots->tickets) {
        slots->tickets = calloc((size_t)call.size, sizeof(*slots->tickets));
    }
    /* without memory to keep them each rank is told at once to fall back in
     * the call its slot was for */
    if (NULL != slots->tickets) {
        memset(slots->tickets, 0, (size_t)call.size * sizeof(*slots->tickets));
    }
    rc = mca_coll_loom_bcast_collect(&call, slots->tickets);
    if (OMPI_SUCCESS != rc && NULL != slots->tickets) {
        opal_output(0, "coll loom: the broadcast slots of %s could not be taken (%d): the "
                    "next broadcast from this rank goes to the next component",
                    call.comm->c_name, rc);
        /* those taken are told now, as without memory; none is usable */
        mca_coll_loom_bcast_collect_failed(&call, slots->tickets);
    }
    return rc;
}

void mca_coll_loom_bcast_slots_settle(mca_coll_loom_module_t *module)
{
    mca_coll_loom_slots_t *slots = &module->slots;
    int rc;

    mca_coll_loom_bcast_forwards_settle(module);
    if (NULL != slots->sending) {
        rc = ompi_request_wait(&slots->sending, MPI_STATUS_IGNORE);
        if (OMPI_SUCCESS != rc) {
            opal_output(0, "coll loom: a broadcast slot told to a root could not be sent (%d)",
                        rc);
        }
        slots->sending = NULL;
    }
    (void)mca_coll_loom_bcast_slots_take(module); /* says why it failed */
}

int32_t mca_coll_loom_bcast_tickets(mca_coll_loom_call_t *call)
{
    mca_coll_loom_slots_t *slots = &call->module->slots;
    int32_t word = MCA_COLL_LOOM_DONE;
    int rank;

    if (NULL == slots->tickets) {
        return MCA_COLL_LOOM_FALL_BACK; /* every rank was told when they came */
    }
    call->dests = slots->tickets;
    call->dests[call->root] = call->own;
    for (rank = 0; rank < call->size; ++rank) {
        if (!mca_coll_loom_dest_usable(&call->dests[rank]) ||
            (rank != call->root && call->dests[rank].segments < call->segments)) {
            word = MCA_COLL_LOOM_FALL_BACK;
        }
    }
    return word;
}

int mca_coll_loom_bcast_slot_leaf(mca_coll_loom_call_t *call, void *buff, int count,
                                  struct ompi_datatype_t *datatype, bool contiguous)
{
    const mca_btl_loom_coll_api_t *api = call->module->api;
    mca_coll_loom_slot_t *slot = &call->module->slots.slot[call->module->slots.next];
    uint64_t first = slot->told.counters;
    unsigned counters = slot->counters;
    bool usable = 0 != slot->told.usable;
    int rc;

    slot->counters    = 0; /* this call's: the wait releases them */
    slot->told.usable = 0;
    rc = mca_coll_loom_bcast_slots_tell(call, true);
    if (OMPI_SUCCESS != rc || !usable) {
        if (0 != counters) {
            (void)api->counters_release(first, counters);
        }
        /* the root saw an unusable slot in what this rank told */
        return (OMPI_SUCCESS != rc) ? rc : MCA_COLL_LOOM_FALL_BACK;
    }
    rc = mca_coll_loom_bcast_wait(call, first, counters, true);
    if (OMPI_SUCCESS != rc && MCA_COLL_LOOM_FALL_BACK != rc && NULL != slot->region) {
        /* a late push must not land in the slot once told again */
        api->mem_revoke(slot->region);
        slot->region = NULL;
    }
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    if (contiguous) {
        memcpy(call->base, slot->buf, call->bytes);
        return OMPI_SUCCESS;
    }
    return ompi_datatype_sndrcv(slot->buf, (int32_t)call->bytes, MPI_BYTE, buff, count,
                                datatype);
}

void mca_coll_loom_bcast_slots_free(mca_coll_loom_module_t *module)
{
    mca_coll_loom_slots_t *slots = &module->slots;
    int i;

    if (NULL != module->api && 0 != slots->forwarding.count) {
        /* MPI_Finalize's communicators only (the others were settled), past
         * its fence: every rank has its data, so every forward fired */
        (void)module->api->counters_release(slots->forwarding.first, slots->forwarding.count);
    }
    for (i = 0; i < 2; ++i) {
        if (NULL != module->api) {
            mca_coll_loom_slot_forget(module->api, &slots->slot[i]);
            if (NULL != slots->slot[i].region) {
                module->api->mem_deregister(slots->slot[i].region);
            }
        }
        mca_coll_loom_kept_free(&slots->slot[i].buf, &slots->slot[i].buf_size);
    }
    mca_coll_loom_bcast_stage_free(module);
    free(slots->tickets);
    if (NULL != slots->sending) {
        /* MPI_Finalize's communicators only (the others were settled): its
         * copy stays with the request */
        (void)ompi_request_free(&slots->sending);
    } else {
        free(slots->sent);
    }
    memset(slots, 0, sizeof(*slots));
}
