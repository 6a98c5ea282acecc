/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * loom BTL component: registration, open/close, init and progress.
 */
#include "btl_loom.h"

#include "opal/runtime/opal.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include <stdio.h>
#include <string.h>

static int mca_btl_loom_component_register(void);
static int mca_btl_loom_component_open(void);
static int mca_btl_loom_component_close(void);
static mca_btl_base_module_t **mca_btl_loom_component_init(int *num_btls,
                                                           bool enable_progress_threads,
                                                           bool enable_mpi_threads);
static int mca_btl_loom_component_progress(void);

loom_help_t mca_btl_loom_help = { .file = "help-mpi-btl-loom.txt" };

/* While the engine starts, its errors are kept here for the one message
 * that says the rails could not open (NULL: printed as they come). */
#define MCA_BTL_LOOM_START_ERRORS_MAX 1024
static char  *mca_btl_loom_start_errors;
static size_t mca_btl_loom_start_errors_len;

mca_btl_loom_component_t mca_btl_loom_component = {
    .super = {
        .btl_version = {
            MCA_BTL_DEFAULT_VERSION("loom"),
            .mca_open_component     = mca_btl_loom_component_open,
            .mca_close_component    = mca_btl_loom_component_close,
            .mca_register_component_params = mca_btl_loom_component_register,
        },
        .btl_data = {
            .param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT
        },
        .btl_init     = mca_btl_loom_component_init,
        .btl_progress = mca_btl_loom_component_progress,
    },
};

int mca_btl_loom_check_runtime_version(void)
{
    return loom_check_series("btl loom", "BTL interface " MCA_BTL_LOOM_INTERFACE);
}

static int mca_btl_loom_component_register(void)
{
    /* before anything of Open MPI's is used: a loom built for another
     * series must not run any further */
    int rc = mca_btl_loom_check_runtime_version();

    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    /* first: the parameters' checks below show their errors from it */
    loom_help_init(&mca_btl_loom_help, &mca_btl_loom_component);
    rc = mca_btl_loom_params_register();

    if (OPAL_SUCCESS == rc) {
        rc = mca_btl_loom_rcache_params_register();
    }
    if (OPAL_SUCCESS == rc) {
        rc = mca_btl_loom_push_params_register();
    }
    if (OPAL_SUCCESS == rc) {
        rc = mca_btl_loom_eager_params_register();
    }
    return (OPAL_SUCCESS == rc) ? mca_btl_loom_check_raw_numbers() : rc;
}

static int mca_btl_loom_component_open(void)
{
    /* the series was checked at register, which refuses before any open */
    mca_btl_loom_component.output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_btl_loom_component.output,
                              mca_btl_loom_component.verbose);
    mca_btl_loom_component.module = NULL;
    OBJ_CONSTRUCT(&mca_btl_loom_component.lock, opal_recursive_mutex_t);
    OBJ_CONSTRUCT(&mca_btl_loom_component.endpoints_lock, opal_mutex_t);
    return OPAL_SUCCESS;
}

static int mca_btl_loom_component_close(void)
{
    OBJ_DESTRUCT(&mca_btl_loom_component.endpoints_lock);
    OBJ_DESTRUCT(&mca_btl_loom_component.lock);
    if (mca_btl_loom_component.output > 0) {
        opal_output_close(mca_btl_loom_component.output);
        mca_btl_loom_component.output = -1;
    }
    return OPAL_SUCCESS;
}

static void mca_btl_loom_log(void *ctx, int level, const char *msg)
{
    (void)ctx;
    if (LOOM_LOG_ERROR == level && NULL != mca_btl_loom_start_errors) {
        size_t room = MCA_BTL_LOOM_START_ERRORS_MAX - mca_btl_loom_start_errors_len;
        int n = snprintf(mca_btl_loom_start_errors + mca_btl_loom_start_errors_len, room,
                         "%s%s", (0 == mca_btl_loom_start_errors_len) ? "" : "\n", msg);
        if (n > 0) {
            mca_btl_loom_start_errors_len += ((size_t)n < room) ? (size_t)n : room - 1;
        }
    } else if (LOOM_LOG_ERROR == level) {
        opal_output(0, "btl loom (%s): error: %s", opal_process_info.nodename, msg);
    } else if (LOOM_LOG_WARN == level) {
        opal_output(0, "btl loom (%s): warning: %s", opal_process_info.nodename, msg);
    } else {
        opal_output_verbose(level * 10, mca_btl_loom_component.output, "btl loom: %s", msg);
    }
}

/* Nothing reaches a peer any more: the upper layer must know, or it waits
 * for ever.  ob1 aborts the job with the message. */
static void mca_btl_loom_peer_lost(void *ctx, loom_peer_t *peer, const char *msg)
{
    mca_btl_loom_module_t *module = mca_btl_loom_component.module;
    mca_btl_base_endpoint_t *endpoint;
    char text[600];

    (void)ctx;
    if (NULL == module) {
        return;
    }
    MCA_BTL_LOOM_MUTEX_LOCK(&mca_btl_loom_component.endpoints_lock);
    for (endpoint = module->endpoints; NULL != endpoint; endpoint = endpoint->next) {
        if (endpoint->peer == peer) {
            break;
        }
    }
    MCA_BTL_LOOM_MUTEX_UNLOCK(&mca_btl_loom_component.endpoints_lock);
    snprintf(text, sizeof(text), "btl loom (%s): %s%s%s", opal_process_info.nodename, msg,
             (NULL != endpoint) ? " - process " : "",
             (NULL != endpoint) ? OPAL_NAME_PRINT(endpoint->proc->proc_name) : "");
    /* what to do, once for the job; ob1 prints text as it aborts */
    LOOM_HELP_SHOW(&mca_btl_loom_help, "peer lost", "btl loom (%s): %s - process %s",
                   opal_process_info.nodename, msg,
                   (NULL != endpoint) ? OPAL_NAME_PRINT(endpoint->proc->proc_name) : "unknown");
    if (NULL != module->error_cb) {
        module->error_cb(&module->super, MCA_BTL_ERROR_FLAGS_FATAL,
                         (NULL != endpoint) ? endpoint->proc : NULL, text);
    }
}

/* A message came from a process ob1 has not asked us to reach yet (it adds
 * peers when it first sends to them): connect to it from its modex entry,
 * so that its messages are ordered and acknowledged from the first one.
 * The reference is dropped with the engine. */
static loom_peer_t *mca_btl_loom_peer_find(void *ctx, loom_engine_t *engine, uint64_t name)
{
    opal_process_name_t proc_name;
    loom_peer_t *peer = NULL;
    size_t size = 0;
    void *blob = NULL;
    int rc;

    (void)ctx;
    proc_name.jobid = (opal_jobid_t)(name >> 32);
    proc_name.vpid  = (opal_vpid_t)(name & 0xffffffffu);
    OPAL_MODEX_RECV(rc, &mca_btl_loom_component.super.btl_version, &proc_name, &blob, &size);
    if (OPAL_SUCCESS != rc) {
        return NULL;
    }
    rc = loom_peer_connect(engine, blob, size, &peer);
    free(blob);
    return (LOOM_OK == rc) ? peer : NULL;
}

uint64_t mca_btl_loom_my_name(void)
{
    opal_process_name_t name = OPAL_PROC_MY_NAME;
    uint64_t value = ((uint64_t)name.jobid << 32) | name.vpid;

    /* 0 is reserved by the engine; a jobid is never 0 for an MPI process. */
    return value ? value : UINT64_C(1) << 63;
}

static mca_btl_base_module_t **mca_btl_loom_component_init(int *num_btls,
                                                           bool enable_progress_threads,
                                                           bool enable_mpi_threads)
{
    mca_btl_loom_module_t *module;
    mca_btl_base_module_t **btls;
    loom_engine_config_t config;
    loom_engine_t *engine;
    void *blob;
    size_t blob_len;
    int rc;

    (void)enable_progress_threads;
    *num_btls = 0;
    memset(&config, 0, sizeof(config));
    config.threads             = enable_mpi_threads || mca_btl_loom_component.progress_thread;
    config.rails               = mca_btl_loom_component.rails;
    config.max_rails           = mca_btl_loom_component.max_rails;
    config.name                = mca_btl_loom_my_name();
    config.force_connect_to_ep = mca_btl_loom_component.force_connect_to_ep;
    config.rails_repeat        = mca_btl_loom_component.rails_repeat;
    config.tcp_seg_size        = (size_t)mca_btl_loom_component.tcp_seg_size;
    config.tcp_sockbuf         = (size_t)mca_btl_loom_component.tcp_sockbuf;
    config.tcp_keepalive_s     = (unsigned)mca_btl_loom_component.tcp_keepalive;
    config.yield_after_us      = (unsigned)mca_btl_loom_component.yield_after;
    config.trust_network       = mca_btl_loom_component.tcp_trust_network;
    config.stream_copy_min     = (size_t)mca_btl_loom_component.tcp_stream_copy;
    config.stream_copy_reuse   = (size_t)mca_btl_loom_component.tcp_stream_reuse;
    config.am_zcopy_min        = (size_t)mca_btl_loom_component.zcopy_threshold;
    config.stripe_threshold    = (size_t)mca_btl_loom_component.stripe_threshold;
    config.stripe_chunk        = (size_t)mca_btl_loom_component.stripe_chunk;
    config.stripe_depth        = (unsigned)mca_btl_loom_component.stripe_depth;
    config.stripe_queue_us     = (unsigned)mca_btl_loom_component.stripe_queue;
    config.rail_timeout_ms     = (unsigned)mca_btl_loom_component.rail_timeout;
    config.am_rail             = mca_btl_loom_component.am_rail;
    config.am_round_robin      = 0 == strcmp(mca_btl_loom_component.am_policy, "round_robin");
    config.msg_window          = (unsigned)mca_btl_loom_component.msg_window;
    config.rail_rejoin_ms      = (unsigned)mca_btl_loom_component.rail_rejoin;
    config.peer_find_cb        = mca_btl_loom_peer_find;
    config.recv_cb             = mca_btl_loom_recv;
    config.tag_count           = MCA_BTL_TAG_MAX; /* what the trigger table holds */
    config.log_cb              = mca_btl_loom_log;
    config.peer_lost_cb        = mca_btl_loom_peer_lost;
    config.may_idle_cb         = mca_btl_loom_caller_may_idle;
    config.verbose             = mca_btl_loom_component.verbose;
    /* each shows its help message, which says loom does not run */
    if (OPAL_SUCCESS != mca_btl_loom_eager_config(&config) ||
        OPAL_SUCCESS != mca_btl_loom_rcache_config(&config) ||
        OPAL_SUCCESS != mca_btl_loom_push_config(&config)) {
        return NULL;
    }
    /* the engine's errors go into the one message (printed as they come
     * when the help file is missing: the fallback line names none) */
    mca_btl_loom_start_errors = mca_btl_loom_help.found ? calloc(1, MCA_BTL_LOOM_START_ERRORS_MAX)
                                                          : NULL;
    mca_btl_loom_start_errors_len = 0;
    rc = loom_engine_create(&config, &engine);
    if (LOOM_OK != rc) {
        LOOM_HELP_SHOW(&mca_btl_loom_help, "rails cannot open",
                       "btl loom (%s): cannot start with btl_loom_rails=%s, "
                       "btl_loom_eager_slot_sizes=%s, btl_loom_eager_slot_counts=%s: %s; "
                       "loom disabled%s", opal_process_info.nodename,
                       mca_btl_loom_component.rails, mca_btl_loom_component.eager_slot_sizes,
                       mca_btl_loom_component.eager_slot_counts, loom_strerror(rc),
                       (NULL != mca_btl_loom_start_errors) ? mca_btl_loom_start_errors : "");
    }
    free(mca_btl_loom_start_errors);
    mca_btl_loom_start_errors = NULL;
    if (LOOM_OK != rc) {
        return NULL;
    }

    module = calloc(1, sizeof(*module));
    btls   = calloc(1, sizeof(*btls));
    if (NULL == module || NULL == btls) {
        goto err;
    }
    *module = mca_btl_loom_module_template;
    /* not in the registered flags: ompi_info of 5.0 cannot name it */
    module->super.btl_flags |= MCA_BTL_LOOM_EXTRA_FLAGS;
    if (OPAL_SUCCESS != mca_btl_loom_module_init(module, engine)) {
        goto err;
    }
    loom_engine_address(engine, &blob, &blob_len);
    OPAL_MODEX_SEND(rc, MCA_BTL_LOOM_MODEX_SCOPE, &mca_btl_loom_component.super.btl_version,
                    blob, blob_len);
    if (OPAL_SUCCESS != rc) {
        opal_output(0, "btl loom: cannot publish rail addresses: %d", rc);
        goto err;
    }
    (void)mca_btl_loom_pvars_register(engine);
    (void)mca_btl_loom_eager_pvars_register(engine);
    mca_btl_loom_stat_table_add(&mca_btl_loom_rcache_table, engine);
    mca_btl_loom_stat_table_add(&mca_btl_loom_push_table, engine);
    mca_btl_loom_stat_table_add(&mca_btl_loom_block_table, engine);
    mca_btl_loom_component.module = module;
    mca_btl_loom_caller_init(); /* before the first progress call */
    if (OPAL_SUCCESS != mca_btl_loom_thread_start(engine)) {
        mca_btl_loom_component.module = NULL;
        goto err;
    }
    btls[0] = &module->super;
    *num_btls = 1;
    return btls;

err:
    if (NULL != module && NULL != module->engine) {
        mca_btl_loom_frags_fini(module);
    }
    free(module);
    free(btls);
    loom_engine_destroy(engine);
    return NULL;
}

/* Threads waiting in MPI all progress: one at a time drives the engine,
 * the others do not wait for it. */
static int mca_btl_loom_component_progress(void)
{
    mca_btl_loom_module_t *module;
    bool block = false;
    int count = 0;

    if (NULL == mca_btl_loom_component.module ||
        0 != MCA_BTL_LOOM_TRYLOCK()) {
        return 0;
    }
    module = mca_btl_loom_component.module; /* not finalized meanwhile */
    if (NULL != module) {
        count = loom_engine_progress(module->engine);
        block = mca_btl_loom_block_armed(module->engine, count);
    }
    MCA_BTL_LOOM_UNLOCK();
    if (block) {
        mca_btl_loom_block(module->engine); /* outside the lock: others go on */
    }
    return count;
}
