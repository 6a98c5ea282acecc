/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * loom BTL module: limits, peers (add/del procs), flush and finalize.
 */
#include "btl_loom.h"

#include "opal/class/opal_bitmap.h"
#include "opal/util/proc.h"

#include <string.h>

mca_btl_loom_module_t mca_btl_loom_module_template = {
    .super = {
        .btl_component      = &mca_btl_loom_component.super,
        .btl_add_procs      = mca_btl_loom_add_procs,
        .btl_del_procs      = mca_btl_loom_del_procs,
        .btl_finalize       = mca_btl_loom_finalize,
        .btl_alloc          = mca_btl_loom_alloc,
        .btl_free           = mca_btl_loom_free,
        .btl_prepare_src    = mca_btl_loom_prepare_src,
        .btl_send           = mca_btl_loom_send,
        .btl_sendi          = mca_btl_loom_sendi,
        .btl_put            = mca_btl_loom_put,
        .btl_get            = mca_btl_loom_get,
        .btl_atomic_op      = mca_btl_loom_aop,
        .btl_atomic_fop     = mca_btl_loom_afop,
        .btl_atomic_cswap   = mca_btl_loom_acswap,
        .btl_register_mem   = mca_btl_loom_register_mem,
        .btl_deregister_mem = mca_btl_loom_deregister_mem,
        .btl_register_error = mca_btl_loom_register_error,
        .btl_flush          = mca_btl_loom_flush,
    },
    .coll_api = &mca_btl_loom_coll_api,
};

/* Smallest eager limit and send size a user may set: room for the upper
 * layer's headers (ob1's largest, a get request, carries a registration
 * key of up to MCA_BTL_REG_HANDLE_MAX_SIZE bytes).  Less and every send
 * fails, which ob1 retries for ever. */
#define MCA_BTL_LOOM_SEND_MIN 512

/*
 * Default sizes.  A rendezvous sends 128 KiB of data plus room for ob1's
 * headers in its first fragment, and so do eager messages and send
 * fragments where the module has several rails: larger messages go by
 * rendezvous, whose gets are striped over the rails.
 *
 * With one rail, eager messages take what that rail carries in one message,
 * up to 512 KiB of data plus room for ob1's headers (tcp: its segment,
 * larger by default).  On tcp both protocols copy every byte once at the
 * receiver (checked writes, checked_put.c), so eager saves the rendezvous'
 * round trip and its control messages: in alternating runs on tcp:lo, 256
 * KiB one way 62-84 -> 42-58 us, windowed bandwidth 1.15-1.38x; 512 KiB one
 * way, median of 20 runs, 105.4 -> 84.0 us, windowed bandwidth, median of
 * 70 runs, 3569 -> 4094 MB/s (docs/perf/2026-12-01.md,
 * docs/perf/2026-12-03-goals-afternoon.md).  Larger messages go by
 * rendezvous: 1 MiB eager (2 MiB segments) was slower than its rendezvous,
 * one way 256-314 against 166-230 us.
 */
#define MCA_BTL_LOOM_SEND_DEFAULT  (131072 + 64)
#define MCA_BTL_LOOM_EAGER_DEFAULT (524288 + 64)

/* A size limit: dflt, or the largest allowed if less, unless the user set
 * one, which must lie between MCA_BTL_LOOM_SEND_MIN and max (what limits
 * it: max_what). */
static int mca_btl_loom_limit(const char *name, size_t *value, size_t dflt, size_t max,
                              const char *max_what)
{
    if (0 == *value) {
        *value = (max < dflt) ? max : dflt;
    } else if (*value < MCA_BTL_LOOM_SEND_MIN || *value > max) {
        LOOM_HELP_SHOW(&mca_btl_loom_help, "param size limit",
                       "btl loom: invalid value %zu for MCA parameter btl_loom_%s: must be "
                       "between %d (room for the upper layer's headers) and %zu (%s), or 0 "
                       "for the largest", *value, name, MCA_BTL_LOOM_SEND_MIN, max, max_what);
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}

/* A generic size of the rendezvous: dflt where left at 0, and no more than
 * max either way. */
static void mca_btl_loom_rndv_size(size_t *value, size_t dflt, size_t max)
{
    if (0 == *value) {
        *value = dflt;
    }
    if (*value > max) {
        *value = max;
    }
}

int mca_btl_loom_module_init(mca_btl_loom_module_t *module, loom_engine_t *engine)
{
    mca_btl_base_module_t *btl = &module->super;
    size_t am_max = loom_engine_am_max(engine), rdma_max = loom_engine_rdma_max(engine);
    size_t eager_default;
    double bandwidth = 0, latency = 0;
    int rail, rc;

    module->key_size = loom_key_size(engine);
    if (module->key_size > MCA_BTL_REG_HANDLE_MAX_SIZE) {
        opal_output(0, "btl loom: remote keys of %zu bytes exceed the %d bytes Open MPI "
                    "carries; name fewer rails in btl_loom_rails", module->key_size,
                    MCA_BTL_REG_HANDLE_MAX_SIZE);
        return OPAL_ERR_BAD_PARAM;
    }
    /* an eager message is one send: no larger than a send fragment */
    eager_default = (1 == loom_engine_rail_count(engine)) ? MCA_BTL_LOOM_EAGER_DEFAULT
                                                          : MCA_BTL_LOOM_SEND_DEFAULT;
    rc = mca_btl_loom_limit("max_send_size", &btl->btl_max_send_size, eager_default, am_max,
                            "what the rails carry in one message");
    if (OPAL_SUCCESS == rc) {
        rc = mca_btl_loom_limit("eager_limit", &btl->btl_eager_limit, eager_default,
                                btl->btl_max_send_size, "btl_loom_max_send_size, or what "
                                "the rails carry in one message");
    }
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    mca_btl_loom_rndv_size(&btl->btl_rndv_eager_limit, MCA_BTL_LOOM_SEND_DEFAULT,
                           btl->btl_eager_limit);
    mca_btl_loom_rndv_size(&btl->btl_rdma_pipeline_frag_size, rdma_max, rdma_max);
    if (0 == btl->btl_rdma_pipeline_send_length) {
        btl->btl_rdma_pipeline_send_length = (btl->btl_max_send_size < MCA_BTL_LOOM_SEND_DEFAULT)
                                                 ? btl->btl_max_send_size
                                                 : MCA_BTL_LOOM_SEND_DEFAULT;
    }
    if (0 == btl->btl_min_rdma_pipeline_size) {
        btl->btl_min_rdma_pipeline_size = btl->btl_eager_limit;
    }
    /* UCT's estimates, summed over the rails for bandwidth (Mb/s as ob1 weighs
     * BTLs), worst rail for latency (us). */
    for (rail = 0; rail < loom_engine_rail_count(engine); ++rail) {
        const loom_rail_info_t *info = loom_engine_rail_info(engine, rail);
        bandwidth += info->bandwidth_mbs * 8;
        if (info->latency_us > latency) {
            latency = info->latency_us;
        }
    }
    if (0 == btl->btl_bandwidth) {
        btl->btl_bandwidth = (uint32_t)(bandwidth > 1 ? bandwidth : 1);
    }
    if (0 == btl->btl_latency) {
        btl->btl_latency = (uint32_t)(latency > 1 ? latency : 1);
    }
    btl->btl_registration_handle_size = module->key_size;
    btl->btl_get_limit                = rdma_max;
    btl->btl_put_limit                = rdma_max;
    btl->btl_get_alignment            = 0;
    btl->btl_put_alignment            = 0;
    /* Get by push names our buffer to its owner: it must be registered. */
    btl->btl_get_local_registration_threshold = 0;
    btl->btl_put_local_registration_threshold = 0;

    rc = mca_btl_loom_frags_init(module);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    /* Set last: the component's error path destructs frags only if set. */
    module->engine = engine;
    opal_output_verbose(20, mca_btl_loom_component.output, "btl loom: %d rail(s), eager "
                        "limit %zu, max send %zu, rdma limit %zu, bandwidth %u, latency %u",
                        loom_engine_rail_count(engine), btl->btl_eager_limit,
                        btl->btl_max_send_size, rdma_max, btl->btl_bandwidth,
                        btl->btl_latency);
    return OPAL_SUCCESS;
}

/* An endpoint for proc, not connected yet; NULL if proc runs without loom. */
static struct mca_btl_base_endpoint_t *mca_btl_loom_endpoint_create(
    mca_btl_loom_module_t *module, opal_proc_t *proc)
{
    struct mca_btl_base_endpoint_t *endpoint;
    size_t size = 0;
    void *blob = NULL;
    int rc;

    OPAL_MODEX_RECV(rc, &mca_btl_loom_component.super.btl_version, &proc->proc_name,
                    &blob, &size);
    if (OPAL_SUCCESS != rc) {
        /* The peer runs without loom: not reachable by us, not an error. */
        return NULL;
    }
    endpoint = calloc(1, sizeof(*endpoint));
    if (NULL == endpoint) {
        free(blob);
        return NULL;
    }
    endpoint->proc          = proc;
    endpoint->module        = module;
    endpoint->addr_blob     = blob;
    endpoint->addr_blob_len = size;
    MCA_BTL_LOOM_MUTEX_LOCK(&mca_btl_loom_component.endpoints_lock);
    endpoint->next = module->endpoints;
    if (NULL != module->endpoints) {
        module->endpoints->prev = endpoint;
    }
    module->endpoints = endpoint;
    MCA_BTL_LOOM_MUTEX_UNLOCK(&mca_btl_loom_component.endpoints_lock);
    return endpoint;
}

/* Under the lock. */
static void mca_btl_loom_endpoint_destroy(mca_btl_loom_module_t *module,
                                          struct mca_btl_base_endpoint_t *endpoint)
{
    MCA_BTL_LOOM_MUTEX_LOCK(&mca_btl_loom_component.endpoints_lock);
    if (NULL != endpoint->prev) {
        endpoint->prev->next = endpoint->next;
    } else {
        module->endpoints = endpoint->next;
    }
    if (NULL != endpoint->next) {
        endpoint->next->prev = endpoint->prev;
    }
    MCA_BTL_LOOM_MUTEX_UNLOCK(&mca_btl_loom_component.endpoints_lock);
    if (NULL != endpoint->peer) {
        loom_peer_disconnect(endpoint->peer);
    }
    free(endpoint->addr_blob);
    free(endpoint);
}

/*
 * ob1 adds peers holding its bml lock, and may do so from a receive
 * callback that runs in our progress, holding our lock.  So adding must
 * not wait for our lock: the endpoints connect now if nobody holds it,
 * else on their first use.
 */
int mca_btl_loom_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                           struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                           opal_bitmap_t *reachable)
{
    mca_btl_loom_module_t *module = (mca_btl_loom_module_t *)btl;
    bool locked = (0 == MCA_BTL_LOOM_TRYLOCK());
    size_t i;

    for (i = 0; i < nprocs; ++i) {
        bool self = (procs[i] == opal_proc_local_get());

        if (NULL != peers[i]) {
            continue; /* already added */
        }
        if (self && !(btl->btl_flags & MCA_BTL_FLAGS_ATOMIC_FOPS)) {
            continue; /* btl self carries everything else to this process */
        }
        peers[i] = mca_btl_loom_endpoint_create(module, procs[i]);
        if (NULL != peers[i] && self) {
            peers[i]->self = true; /* never connected: no address needed */
            free(peers[i]->addr_blob);
            peers[i]->addr_blob = NULL;
        } else if (NULL != peers[i] && locked && NULL == mca_btl_loom_endpoint_peer(peers[i])) {
            mca_btl_loom_endpoint_destroy(module, peers[i]);
            peers[i] = NULL;
        }
        if (NULL != peers[i] && NULL != reachable) {
            opal_bitmap_set_bit(reachable, (int)i);
        }
    }
    if (locked) {
        MCA_BTL_LOOM_UNLOCK();
    }
    return OPAL_SUCCESS;
}

int mca_btl_loom_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                           struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers)
{
    mca_btl_loom_module_t *module = (mca_btl_loom_module_t *)btl;
    size_t i;

    (void)procs;
    MCA_BTL_LOOM_LOCK();
    for (i = 0; i < nprocs; ++i) {
        struct mca_btl_base_endpoint_t *endpoint;

        /* bml may hand the same endpoint twice (send and RDMA lists): only
         * destroy what is still ours, without touching the pointer before. */
        MCA_BTL_LOOM_MUTEX_LOCK(&mca_btl_loom_component.endpoints_lock);
        endpoint = module->endpoints;
        while (NULL != endpoint && endpoint != peers[i]) {
            endpoint = endpoint->next;
        }
        MCA_BTL_LOOM_MUTEX_UNLOCK(&mca_btl_loom_component.endpoints_lock);
        if (NULL != endpoint) {
            mca_btl_loom_endpoint_destroy(module, endpoint);
        }
    }
    MCA_BTL_LOOM_UNLOCK();
    return OPAL_SUCCESS;
}

int mca_btl_loom_flush(struct mca_btl_base_module_t *btl,
                       struct mca_btl_base_endpoint_t *endpoint)
{
    mca_btl_loom_module_t *module = (mca_btl_loom_module_t *)btl;
    int rc = LOOM_OK;

    MCA_BTL_LOOM_LOCK();
    if (NULL != endpoint) {
        rc = (NULL != endpoint->peer) ? loom_peer_flush(endpoint->peer) : LOOM_OK;
    } else {
        while (loom_engine_outstanding(module->engine) > 0) {
            loom_engine_progress(module->engine);
        }
    }
    MCA_BTL_LOOM_UNLOCK();
    return mca_btl_loom_rc_to_opal(rc);
}

int mca_btl_loom_register_error(struct mca_btl_base_module_t *btl,
                                mca_btl_base_module_error_cb_fn_t cbfunc)
{
    ((mca_btl_loom_module_t *)btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

int mca_btl_loom_finalize(struct mca_btl_base_module_t *btl)
{
    mca_btl_loom_module_t *module = (mca_btl_loom_module_t *)btl;

    mca_btl_loom_thread_stop_join();
    MCA_BTL_LOOM_LOCK(); /* pvar reads hold it too */
    mca_btl_loom_pvars_release();
    mca_btl_loom_eager_pvars_release();
    mca_btl_loom_stat_table_release(&mca_btl_loom_rcache_table);
    mca_btl_loom_stat_table_release(&mca_btl_loom_push_table);
    mca_btl_loom_stat_table_release(&mca_btl_loom_block_table);
    while (NULL != module->endpoints) {
        mca_btl_loom_endpoint_destroy(module, module->endpoints);
    }
    mca_btl_loom_component.module = NULL;
    loom_engine_destroy(module->engine);
    MCA_BTL_LOOM_UNLOCK();
    mca_btl_loom_frags_fini(module);
    free(module);
    return OPAL_SUCCESS;
}
