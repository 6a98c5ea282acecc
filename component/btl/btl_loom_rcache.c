/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The registration cache's MCA parameters and performance variables
 * (the cache itself is the engine's: transport/memory/region_cache.c).
 */
#include "btl_loom.h"

#include "opal/mca/base/mca_base_pvar.h"

#include <stddef.h>

int mca_btl_loom_rcache_params_register(void)
{
    mca_btl_loom_component_t *c = &mca_btl_loom_component;

    c->rcache_size = 1024;
    mca_btl_loom_param_register("rcache_size", "MiB of memory whose registration loom keeps "
        "after Open MPI deregistered it, so that a buffer sent or received again is not "
        "registered again (lazy deregistration; the least recently used go first); every "
        "use still gets a key of its own, refused once that use ended (0: no cache; else "
        "1-1048576)", MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_4, &c->rcache_size);
    c->rcache_regions = 4096;
    mca_btl_loom_param_register("rcache_regions", "Registrations the cache keeps at most "
        "(1-1000000)", MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, &c->rcache_regions);
    c->rcache_idle = 10000;
    mca_btl_loom_param_register("rcache_idle", "Milliseconds a cached registration may go "
        "unused before loom deregisters it (0: kept until evicted or its memory is "
        "unmapped; else 10-3600000)", MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5,
        &c->rcache_idle);
    return OPAL_SUCCESS;
}

int mca_btl_loom_rcache_config(loom_engine_config_t *config)
{
    mca_btl_loom_component_t *c = &mca_btl_loom_component;

    if (OPAL_SUCCESS != mca_btl_loom_check_range("rcache_size", c->rcache_size, 0, 1048576) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("rcache_regions", c->rcache_regions, 1,
                                                 1000000) ||
        (0 != c->rcache_idle &&
         OPAL_SUCCESS != mca_btl_loom_check_range("rcache_idle", c->rcache_idle, 10,
                                                  3600000))) {
        return OPAL_ERR_BAD_PARAM;
    }
    config->rcache_max_bytes   = (size_t)c->rcache_size << 20;
    config->rcache_max_regions = (unsigned long)c->rcache_regions;
    config->rcache_idle_ms     = (unsigned)c->rcache_idle;
    return OPAL_SUCCESS;
}

#define MCA_BTL_LOOM_RCACHE_STAT(_f) offsetof(loom_rcache_stats_t, _f)

static const mca_btl_loom_stat_desc_t mca_btl_loom_rcache_pvars[] = {
    {"rcache_hits", "Registrations served from the registration cache",
     MCA_BTL_LOOM_RCACHE_STAT(hits), MCA_BASE_PVAR_CLASS_COUNTER},
    {"rcache_misses", "Memory ranges the registration cache registered on the rails",
     MCA_BTL_LOOM_RCACHE_STAT(misses), MCA_BASE_PVAR_CLASS_COUNTER},
    {"rcache_evictions", "Cached registrations dropped for the cache's bounds, after going "
     "unused for btl_loom_rcache_idle, or at the end", MCA_BTL_LOOM_RCACHE_STAT(evictions),
     MCA_BASE_PVAR_CLASS_COUNTER},
    {"rcache_invalidations", "Cached registrations dropped because their memory was "
     "unmapped (freed to the system)", MCA_BTL_LOOM_RCACHE_STAT(invalidations),
     MCA_BASE_PVAR_CLASS_COUNTER},
    {"rcache_bypassed", "Registrations the cache could not take (pages without the access "
     "needed), registered without it", MCA_BTL_LOOM_RCACHE_STAT(bypassed),
     MCA_BASE_PVAR_CLASS_COUNTER},
    {"rcache_regions", "Registrations in the cache now", MCA_BTL_LOOM_RCACHE_STAT(regions),
     MCA_BASE_PVAR_CLASS_LEVEL},
    {"rcache_bytes", "Bytes of memory registered through the cache now",
     MCA_BTL_LOOM_RCACHE_STAT(bytes), MCA_BASE_PVAR_CLASS_LEVEL},
};

static mca_btl_loom_stat_ctx_t mca_btl_loom_rcache_ctxs[sizeof(mca_btl_loom_rcache_pvars) /
                                                   sizeof(mca_btl_loom_rcache_pvars[0])];

static const void *mca_btl_loom_rcache_stats(const loom_engine_t *engine)
{
    return loom_engine_rcache_stats(engine);
}

const mca_btl_loom_stat_table_t mca_btl_loom_rcache_table =
    MCA_BTL_LOOM_STAT_TABLE(mca_btl_loom_rcache_pvars, mca_btl_loom_rcache_ctxs,
                            mca_btl_loom_rcache_stats);
