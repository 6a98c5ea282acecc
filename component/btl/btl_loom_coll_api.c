/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The BTL's side of what coll loom uses (btl_loom_coll_api.h): thin, locked
 * calls into the engine of the one loom module.
 */
#include "btl/btl_loom.h"

#include <stddef.h>

/* coll loom finds the offer through mca_btl_loom_coll_view_t. */
_Static_assert(offsetof(mca_btl_loom_module_t, coll_api) ==
               offsetof(mca_btl_loom_coll_view_t, coll_api),
               "mca_btl_loom_module_t must start as mca_btl_loom_coll_view_t");

static loom_engine_t *mca_btl_loom_coll_engine(void)
{
    return mca_btl_loom_component.module->engine;
}

static uint64_t mca_btl_loom_coll_name(struct mca_btl_base_endpoint_t *endpoint)
{
    loom_peer_t *peer;
    uint64_t name;

    if (NULL == endpoint || endpoint->self) {
        return mca_btl_loom_my_name();
    }
    MCA_BTL_LOOM_LOCK();
    peer = mca_btl_loom_endpoint_peer(endpoint);
    name = (NULL == peer) ? 0 : loom_peer_name(peer);
    MCA_BTL_LOOM_UNLOCK();
    return name;
}

static int mca_btl_loom_coll_push(loom_op_t *op, const loom_push_args_t *args)
{
    int rc;

    MCA_BTL_LOOM_LOCK();
    rc = loom_push(mca_btl_loom_coll_engine(), op, args);
    MCA_BTL_LOOM_UNLOCK();
    return rc;
}

static uint64_t mca_btl_loom_coll_counter_value(uint64_t counter)
{
    uint64_t value;

    MCA_BTL_LOOM_LOCK();
    value = loom_counter_value(mca_btl_loom_coll_engine(), counter);
    MCA_BTL_LOOM_UNLOCK();
    return value;
}

static int mca_btl_loom_coll_counter_status(uint64_t counter)
{
    int rc;

    MCA_BTL_LOOM_LOCK();
    rc = loom_counter_status(mca_btl_loom_coll_engine(), counter);
    MCA_BTL_LOOM_UNLOCK();
    return rc;
}

static int mca_btl_loom_coll_counter_add(uint64_t proc, uint64_t counter, uint64_t amount)
{
    int rc;

    MCA_BTL_LOOM_LOCK();
    rc = loom_counter_add_at(mca_btl_loom_coll_engine(), proc, counter, amount);
    MCA_BTL_LOOM_UNLOCK();
    return rc;
}

static int mca_btl_loom_coll_counters_open(unsigned count, uint64_t *first)
{
    int rc;

    MCA_BTL_LOOM_LOCK();
    rc = loom_counters_open(mca_btl_loom_coll_engine(), count, first);
    MCA_BTL_LOOM_UNLOCK();
    return rc;
}

static unsigned mca_btl_loom_coll_counters_release(uint64_t first, unsigned count)
{
    unsigned cancelled = 0, i;

    MCA_BTL_LOOM_LOCK();
    for (i = 0; i < count; ++i) {
        cancelled += loom_counter_release(mca_btl_loom_coll_engine(), first + i);
    }
    MCA_BTL_LOOM_UNLOCK();
    return cancelled;
}

static int mca_btl_loom_coll_mem_register(void *addr, size_t length, unsigned access,
                                          loom_region_t **region_p, void *key,
                                          size_t *key_size)
{
    loom_engine_t *engine = mca_btl_loom_coll_engine();
    int rc;

    MCA_BTL_LOOM_LOCK();
    *key_size = loom_key_size(engine);
    rc = loom_mem_register_cached(engine, addr, length, access, region_p);
    if (LOOM_OK == rc) {
        rc = loom_key_pack(*region_p, key, *key_size);
        if (LOOM_OK != rc) {
            loom_mem_deregister(*region_p);
        }
    }
    MCA_BTL_LOOM_UNLOCK();
    return rc;
}

static void mca_btl_loom_coll_mem_deregister(loom_region_t *region)
{
    MCA_BTL_LOOM_LOCK();
    loom_mem_deregister(region);
    MCA_BTL_LOOM_UNLOCK();
}

static void mca_btl_loom_coll_mem_revoke(loom_region_t *region)
{
    MCA_BTL_LOOM_LOCK();
    loom_mem_revoke(region);
    MCA_BTL_LOOM_UNLOCK();
}

const mca_btl_loom_coll_api_t mca_btl_loom_coll_api = {
    .version          = MCA_BTL_LOOM_COLL_API_VERSION,
    .name             = mca_btl_loom_coll_name,
    .push             = mca_btl_loom_coll_push,
    .counter_value    = mca_btl_loom_coll_counter_value,
    .counter_status   = mca_btl_loom_coll_counter_status,
    .counter_add      = mca_btl_loom_coll_counter_add,
    .counters_open    = mca_btl_loom_coll_counters_open,
    .counters_release = mca_btl_loom_coll_counters_release,
    .mem_register     = mca_btl_loom_coll_mem_register,
    .mem_deregister   = mca_btl_loom_coll_mem_deregister,
    .mem_revoke       = mca_btl_loom_coll_mem_revoke,
    .strerror         = loom_strerror,
};
