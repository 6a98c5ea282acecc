/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Third-party and conditional pushes: their MCA parameters (the bounds on
 * what other processes can make this one keep) and performance variables
 * (the pushes themselves are the engine's: transport/push*.c).
 */
#include "btl_loom.h"

#include "opal/mca/base/mca_base_pvar.h"

#include <stddef.h>

int mca_btl_loom_push_params_register(void)
{
    mca_btl_loom_component_t *c = &mca_btl_loom_component;

    c->push_counters = 4096;
    mca_btl_loom_param_register("push_counters", "Completion counters this process keeps "
        "for conditional pushes (a collective opens its own for each call and releases "
        "them, and a communicator's small broadcasts keep a few per rank between calls, "
        "coll_loom_bcast_eager_max; other counters are made by the first push waiting on one "
        "or the first "
        "addition to one); beyond, a push or an addition naming a new one is refused, and "
        "a collective that cannot open its own steps aside (16-1000000)",
        MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_6, &c->push_counters);
    c->push_waiting = 4096;
    mca_btl_loom_param_register("push_waiting", "Pushes that may wait here on a counter at "
        "once, from all processes; beyond, a push request is refused and its requester and "
        "notified processes are told (a broadcast through coll loom fails with an error: "
        "keep it above coll loom's segments per call times the tree's fanout; 16-1000000)",
        MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_6, &c->push_waiting);
    return OPAL_SUCCESS;
}

int mca_btl_loom_push_config(loom_engine_config_t *config)
{
    mca_btl_loom_component_t *c = &mca_btl_loom_component;

    if (OPAL_SUCCESS != mca_btl_loom_check_range("push_counters", c->push_counters, 16,
                                                 1000000) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("push_waiting", c->push_waiting, 16,
                                                 1000000)) {
        return OPAL_ERR_BAD_PARAM;
    }
    config->push_counters_max = (unsigned)c->push_counters;
    config->push_waiting_max  = (unsigned)c->push_waiting;
    return OPAL_SUCCESS;
}

#define MCA_BTL_LOOM_PUSH_STAT(_f) offsetof(loom_push_stats_t, _f)

static const mca_btl_loom_stat_desc_t mca_btl_loom_push_pvars[] = {
    {"push_requested", "Third-party or own pushes this process asked for",
     MCA_BTL_LOOM_PUSH_STAT(requested), MCA_BASE_PVAR_CLASS_COUNTER},
    {"push_served", "Pushes this process sent as the owner of the memory (gets by push "
     "included)", MCA_BTL_LOOM_PUSH_STAT(served), MCA_BASE_PVAR_CLASS_COUNTER},
    {"push_waited", "Pushes that waited here on a completion counter",
     MCA_BTL_LOOM_PUSH_STAT(waited), MCA_BASE_PVAR_CLASS_COUNTER},
    {"push_fired", "Waiting pushes whose counter reached their threshold",
     MCA_BTL_LOOM_PUSH_STAT(fired), MCA_BASE_PVAR_CLASS_COUNTER},
    {"push_cancelled", "Waiting pushes cancelled (their counter released, or their "
     "requester gone)", MCA_BTL_LOOM_PUSH_STAT(cancelled), MCA_BASE_PVAR_CLASS_COUNTER},
    {"push_refused", "Push requests refused here (keys, ranges, bounds)",
     MCA_BTL_LOOM_PUSH_STAT(refused), MCA_BASE_PVAR_CLASS_COUNTER},
    {"push_multi_requested", "Multicast push requests this process sent (one names "
     "several destinations)", MCA_BTL_LOOM_PUSH_STAT(multi_requested),
     MCA_BASE_PVAR_CLASS_COUNTER},
    {"push_multi_served", "Destinations of multicast push requests this process served "
     "as the owner", MCA_BTL_LOOM_PUSH_STAT(multi_served), MCA_BASE_PVAR_CLASS_COUNTER},
    {"push_notices_sent", "Processes told of pushes this process ended",
     MCA_BTL_LOOM_PUSH_STAT(notices_sent), MCA_BASE_PVAR_CLASS_COUNTER},
    {"push_notices_received", "Notices of pushes that reached this process",
     MCA_BTL_LOOM_PUSH_STAT(notices_received), MCA_BASE_PVAR_CLASS_COUNTER},
    {"push_counter_adds", "Additions to this process's completion counters",
     MCA_BTL_LOOM_PUSH_STAT(counter_adds), MCA_BASE_PVAR_CLASS_COUNTER},
    {"push_counted_on_landing", "Of those additions, pushes counted by their checked "
     "write as it landed, a round trip before their notice (tcp rails)",
     MCA_BTL_LOOM_PUSH_STAT(counted_on_landing), MCA_BASE_PVAR_CLASS_COUNTER},
    {"push_waiting", "Pushes waiting here on a counter now",
     MCA_BTL_LOOM_PUSH_STAT(waiting), MCA_BASE_PVAR_CLASS_LEVEL},
    {"push_counters", "Completion counters kept here now",
     MCA_BTL_LOOM_PUSH_STAT(counters), MCA_BASE_PVAR_CLASS_LEVEL},
};

static mca_btl_loom_stat_ctx_t mca_btl_loom_push_ctxs[sizeof(mca_btl_loom_push_pvars) /
                                                   sizeof(mca_btl_loom_push_pvars[0])];

static const void *mca_btl_loom_push_stats(const loom_engine_t *engine)
{
    return loom_engine_push_stats(engine);
}

const mca_btl_loom_stat_table_t mca_btl_loom_push_table =
    MCA_BTL_LOOM_STAT_TABLE(mca_btl_loom_push_pvars, mca_btl_loom_push_ctxs,
                            mca_btl_loom_push_stats);
