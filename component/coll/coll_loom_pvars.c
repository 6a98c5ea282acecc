/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * coll loom's performance variables (MPI_T): what it carried, what it left
 * to the next component, and what failed.  The pushes themselves are btl
 * loom's (btl_loom_push_*).
 */
#include "coll_loom.h"

#include "common/loom_pvar.h"
#include "opal/sys/atomic.h"

mca_coll_loom_stats_t mca_coll_loom_stats;

static int mca_coll_loom_pvar_read(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    (void)obj;
    *(unsigned long *)value = (unsigned long)*(volatile int64_t *)pvar->ctx;
    return OPAL_SUCCESS;
}

static void mca_coll_loom_pvar(const char *name, const char *description, int64_t *counter)
{
    loom_pvar_register(&mca_coll_loom_component.super.collm_version, name, description, MCA_BASE_PVAR_CLASS_COUNTER,
                       mca_coll_loom_pvar_read, counter);
}

static void mca_coll_loom_pvar_level(const char *name, const char *description, int64_t *level)
{
    loom_pvar_register(&mca_coll_loom_component.super.collm_version, name, description,
                       MCA_BASE_PVAR_CLASS_LEVEL, mca_coll_loom_pvar_read, level);
}

void mca_coll_loom_pvars_register(void)
{
    mca_coll_loom_stats_t *s = &mca_coll_loom_stats;

    mca_coll_loom_pvar("bcasts", "Broadcasts coll loom carried on pushes", &s->bcasts);
    mca_coll_loom_pvar("bcast_slots", "Broadcasts coll loom carried that landed in the slots "
                       "the ranks keep per communicator and told the root in the call before "
                       "(coll_loom_bcast_eager_max), without a message from them first",
                       &s->bcast_slots);
    mca_coll_loom_pvar("bcast_flights", "Slotted broadcasts whose root returned once its pushes "
                       "were issued (from a copy of its data) and before they all ended (ended "
                       "from progress, or at the next broadcast on the communicator)",
                       &s->bcast_flights);
    mca_coll_loom_pvar("reduces", "MPI_Reduce calls coll loom carried on pushes",
                       &s->reduces);
    mca_coll_loom_pvar("allreduces", "MPI_Allreduce calls coll loom carried on pushes",
                       &s->allreduces);
    mca_coll_loom_pvar("allgathers", "MPI_Allgather calls coll loom carried on pushes",
                       &s->allgathers);
    mca_coll_loom_pvar("fallbacks", "Calls coll loom could have taken by their size and "
                       "communicator but left to the next component (a buffer not contiguous "
                       "or not registered, no room for a staging queue)", &s->fallbacks);
    mca_coll_loom_pvar("failures", "Calls coll loom ran that returned an error here (a push "
                       "failed)", &s->failures);
    mca_coll_loom_pvar("trials", "Calls run to measure coll loom against the next component "
                       "(coll_loom_select 1), through either", &s->trials);
    mca_coll_loom_pvar("chose_loom", "Size classes of an operation on a communicator that "
                       "coll loom took after measuring it faster", &s->chose_loom);
    mca_coll_loom_pvar("chose_next", "Size classes of an operation on a communicator left to "
                       "the next component after measuring it faster (or a call through coll "
                       "loom failed)", &s->chose_next);
    mca_coll_loom_pvar_level("bcast_slot_bytes", "Bytes this process holds in broadcast slots "
                             "and its copies as a slotted broadcast's root, over all "
                             "communicators (they follow the largest call of the last "
                             "64 that could land in them)", &s->slot_bytes);
}

void mca_coll_loom_count(int64_t *counter)
{
    mca_coll_loom_count_add(counter, 1);
}

void mca_coll_loom_count_add(int64_t *counter, int64_t delta)
{
    (void)opal_atomic_add_fetch_64(counter, delta); /* calls of several threads */
}
