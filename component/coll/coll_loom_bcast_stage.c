/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The root of a slotted broadcast pushes from a copy of its data, its stage,
 * and returns once the pushes are issued, as an eager send returns: every
 * push ends in the call's flight (coll_loom_bcast_flight.c).  Calls take
 * two stages in turn: the next call copies into the other while the last
 * one's pushes end, and the call after it lands that flight first.
 * Waiting for its own pushes' acknowledgements instead made the root wait
 * for every child to run: on the virtual cluster (4 ranks on 2 cores) a
 * child that was not scheduled held a 16 KiB broadcast at the root for
 * 100-400 us, where coll tuned's root had returned
 * (docs/perf/2026-12-07-stage.md).  The copy is at most
 * coll_loom_bcast_eager_max bytes.
 */
#include "coll_loom_bcast.h"

#include "ompi/datatype/ompi_datatype.h"

#include <stdlib.h>
#include <string.h>

/* Only this process reads the stage (its own pushes). */
static const unsigned mca_coll_loom_stage_access = LOOM_ACCESS_LOCAL_WRITE;

void mca_coll_loom_bcast_stage(mca_coll_loom_call_t *call, void *buff, int count,
                               struct ompi_datatype_t *datatype, bool contiguous)
{
    mca_coll_loom_slots_t *slots = &call->module->slots;
    int i = slots->stage_next, rc = OMPI_SUCCESS;

    slots->stage_next ^= 1;
    /* the slots' size: the next slotted calls fit too */
    mca_coll_loom_kept_register(call, &slots->stage[i], &slots->stage_size[i],
                                &slots->stage_region[i], slots->size, call->bytes,
                                mca_coll_loom_stage_access, &call->own);
    if (call->own.usable && contiguous) {
        memcpy(slots->stage[i], call->base, call->bytes);
    } else if (call->own.usable) {
        rc = ompi_datatype_sndrcv(buff, count, datatype, slots->stage[i], (int32_t)call->bytes,
                                  MPI_BYTE);
    }
    if (OMPI_SUCCESS != rc) {
        call->own.usable = 0; /* every rank is told to fall back */
    }
}

void mca_coll_loom_bcast_stage_free(mca_coll_loom_module_t *module)
{
    mca_coll_loom_slots_t *slots = &module->slots;
    int i;

    for (i = 0; i < 2; ++i) {
        if (NULL != slots->stage_region[i] && NULL != module->api) {
            module->api->mem_deregister(slots->stage_region[i]);
        }
        mca_coll_loom_kept_free(&slots->stage[i], &slots->stage_size[i]);
        slots->stage_region[i] = NULL;
    }
}
