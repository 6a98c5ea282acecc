/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The engine: owns the UCT worker and the rails, drives progress and the
 * operation queues.
 */
#include "engine/loom_engine.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* The receiver of each message type of wire.h (the wire fuzzer feeds the
 * same table): the rails dispatch to them, set up by the engine. */
const loom_am_handler_t loom_am_handlers[] = {
    {LOOM_WIRE_SEND,      loom_am_recv_send},
    {LOOM_WIRE_PUSH_REQ,  loom_push_req_recv},
    {LOOM_WIRE_PUSH_DONE, loom_push_done_recv},
    {LOOM_WIRE_CONNECT,   loom_connect_recv},
    {LOOM_WIRE_EAGER_REQ, loom_eager_req_recv},
    {LOOM_WIRE_EAGER_NOTE, loom_eager_note_recv},
    {LOOM_WIRE_MSG_ACK,   loom_msg_ack_recv},
    {LOOM_WIRE_PROBE,     loom_probe_recv},
    {LOOM_WIRE_BYE,       loom_bye_recv},
    {LOOM_WIRE_PUT,       loom_checked_put_recv},
    {LOOM_WIRE_PUT_ACK,   loom_put_ack_recv},
};
const size_t loom_am_handler_count = sizeof(loom_am_handlers) / sizeof(loom_am_handlers[0]);

/* The channels a message tries, in order (chan.h): the peer's eager ring
 * when it has one that takes the message, else an active message. */
static const loom_chan_t loom_chan_ring = {
    "eager ring", loom_eager_send, loom_eager_rx_next, loom_eager_rx_done
};
static const loom_chan_t loom_chan_am = {
    "active message", loom_am_chan_send, NULL, NULL
};

/* An engine message of a peer, delivered once and in order (wire.h):
 * handed, with its length checked, to the layer of its kind. */
static void loom_engine_msg_recv(loom_peer_t *peer, int rail, const void *data, size_t length)
{
    uint8_t kind = (length > 0) ? *(const uint8_t *)data : 0;

    if ((LOOM_WIRE_ATOMIC_REQ == kind || LOOM_WIRE_ATOMIC_REPLY == kind) &&
        sizeof(loom_wire_atomic_t) == length) {
        loom_atomic_recv(peer, rail, data, length);
    } else if (LOOM_WIRE_COUNTER_ADD == kind && sizeof(loom_wire_counter_add_t) == length) {
        loom_counter_recv(peer, rail, data, length);
    } else if (LOOM_WIRE_PUSH_NOTICE == kind && sizeof(loom_wire_push_notice_t) == length) {
        loom_push_notice_recv(peer->engine, rail, peer->name, data);
    } else if (LOOM_WIRE_PUSH_MULTI == kind && sizeof(loom_wire_push_multi_t) <= length) {
        loom_push_multi_recv(peer, rail, data, length);
    } else if (LOOM_WIRE_PUSH_MULTI_DONE == kind &&
               sizeof(loom_wire_push_multi_done_t) == length) {
        loom_push_multi_done_recv(peer, rail, data);
    } else {
        ++peer->engine->rails[rail].stats.refused;
        loom_log(peer->engine, LOOM_LOG_WARN, "an engine message of kind %u and %zu bytes "
                 "from peer %#llx; dropped", kind, length, (unsigned long long)peer->name);
    }
}

/* What runs from progress after the UCT worker, in this order: failures
 * first (nothing goes on a rail found failed), messages of new peers, the
 * eager rings, the queues, then the watches and timers. */
static void loom_engine_pollers(loom_engine_t *engine)
{
    loom_progress_register(engine, loom_peer_failures_progress);
    loom_progress_register(engine, loom_msg_strangers_progress);
    loom_progress_register(engine, loom_early_connects_progress);
    loom_progress_register(engine, loom_eager_progress);
    loom_progress_register(engine, loom_push_notices_progress);
    loom_progress_register(engine, loom_progress_queues);
    loom_progress_register(engine, loom_rejoin_progress);
    loom_progress_register_timer(engine, loom_rail_watch);
    loom_progress_register_timer(engine, loom_rejoin_timer);
    loom_progress_register_timer(engine, loom_connect_retry_progress);
    loom_progress_register_timer(engine, loom_tcp_liveness_sweep);
    loom_progress_register_timer(engine, loom_msg_watch);
    loom_progress_register_timer(engine, loom_msg_idle_acks);
    loom_progress_register_timer(engine, loom_rcache_reclaim);
}

int loom_engine_create(const loom_engine_config_t *config, loom_engine_t **engine_p)
{
    loom_rail_choice_t choices[LOOM_MAX_RAILS];
    loom_engine_t *engine;
    ucs_status_t status;
    int rc, count = 0, i;

    if (NULL == config || NULL == config->rails || 0 == config->name) {
        return LOOM_ERR_INVALID;
    }
    engine = calloc(1, sizeof(*engine));
    if (NULL == engine) {
        return LOOM_ERR_NOMEM;
    }
    engine->config   = *config;
    engine->wake_fd  = -1;
    engine->clock_every = 1; /* paced from the first passes on */
    (void)loom_engine_clock_read(engine);
    if (strlen(config->rails) >= sizeof(engine->rails_spec)) {
        loom_log(engine, LOOM_LOG_ERROR, "btl_loom_rails: %zu characters, at most %zu",
                 strlen(config->rails), sizeof(engine->rails_spec) - 1);
        free(engine);
        return LOOM_ERR_INVALID;
    }
    snprintf(engine->rails_spec, sizeof(engine->rails_spec), "%s", config->rails);
    engine->config.rails    = engine->rails_spec;
    engine->epoch           = loom_random_id();
    engine->next_region_id  = 1;
    engine->next_request_id = 1;
    engine->am_handlers      = loom_am_handlers;
    engine->am_handler_count = loom_am_handler_count;
    engine->ep_error         = loom_rail_error;
    engine->engine_recv      = loom_engine_msg_recv;
    loom_hash_init(&engine->peers);
    loom_hash_init(&engine->regions);
    loom_hash_init(&engine->requests);
    loom_hash_init(&engine->early_connects);
    loom_push_cond_init(engine);
    ucs_list_head_init(&engine->eager.active);
    ucs_list_head_init(&engine->acks_owed);
    ucs_list_head_init(&engine->busy_peers);
    ucs_list_head_init(&engine->retired);
    ucs_list_head_init(&engine->failing);
    ucs_list_head_init(&engine->owned_ops);
    ucs_list_head_init(&engine->done);
    ucs_list_head_init(&engine->stripes);
    ucs_list_head_init(&engine->strangers);

    status = ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &engine->async);
    if (UCS_OK != status) {
        loom_log(engine, LOOM_LOG_ERROR, "cannot create UCS async context: %s",
                 ucs_status_string(status));
        free(engine);
        return LOOM_ERR_IO;
    }
    status = uct_worker_create(engine->async, config->threads ? UCS_THREAD_MODE_SERIALIZED
                                                              : UCS_THREAD_MODE_SINGLE,
                               &engine->worker);
    if (UCS_OK != status) {
        loom_log(engine, LOOM_LOG_ERROR, "cannot create UCT worker: %s",
                 ucs_status_string(status));
        rc = LOOM_ERR_IO;
        goto err;
    }

    (void)loom_rcache_init(engine); /* may stay off: registrations go uncached */
    rc = loom_rails_select(engine, config->rails, config->max_rails, choices, &count);
    if (LOOM_OK != rc) {
        goto err;
    }
    for (i = 0; i < count; ++i) {
        engine->rail_count = i + 1;
        rc = loom_rail_open(engine, &engine->rails[i], choices[i].component,
                            choices[i].md_name, choices[i].tl_name, choices[i].dev_name);
        if (LOOM_OK != rc) {
            goto err;
        }
        if (engine->rails[i].md_attr.rkey_packed_size + LOOM_WIRE_KEY_SLOT_HDR >
            engine->rkey_stride) {
            engine->rkey_stride = engine->rails[i].md_attr.rkey_packed_size +
                                  LOOM_WIRE_KEY_SLOT_HDR;
        }
    }
    if (config->am_rail >= engine->rail_count) {
        loom_log(engine, LOOM_LOG_ERROR, "btl_loom_am_rail=%d names no rail: there are %d "
                 "(0-%d, or -1)", config->am_rail, engine->rail_count, engine->rail_count - 1);
        rc = LOOM_ERR_INVALID;
        goto err;
    }
    /* a chunk must fit every rail's RDMA limit */
    if (engine->config.stripe_chunk > loom_engine_rdma_max(engine)) {
        engine->config.stripe_chunk = loom_engine_rdma_max(engine);
    }
    if (0 == engine->config.stripe_chunk) {
        engine->config.stripe_threshold = 0;
    }
    if (0 == engine->config.stripe_depth) {
        engine->config.stripe_depth = 1;
    }
    rc = loom_eager_init(engine);
    if (LOOM_OK != rc) {
        goto err;
    }
    if (sizeof(loom_wire_push_req_t) + loom_key_size(engine) > LOOM_OP_MSG_MAX) {
        loom_log(engine, LOOM_LOG_ERROR, "remote keys of %zu bytes do not fit a push "
                 "request; use fewer rails", loom_key_size(engine));
        rc = LOOM_ERR_INVALID;
        goto err;
    }
    rc = loom_address_pack(engine);
    if (LOOM_OK != rc) {
        goto err;
    }
    loom_tcp_liveness_init(engine);
    loom_engine_wake_init(engine);
    loom_engine_pollers(engine);
    engine->chans[engine->chan_count++] = &loom_chan_ring;
    engine->chans[engine->chan_count++] = &loom_chan_am;
    *engine_p = engine;
    return LOOM_OK;

err:
    loom_engine_destroy(engine);
    return rc;
}

void loom_engine_destroy(loom_engine_t *engine)
{
    loom_peer_t *peer;
    loom_region_t *region;
    loom_early_t *early;
    size_t pos;
    int i;

    if (NULL == engine) {
        return;
    }
    /* Peers and regions left by the user are released here. */
    for (pos = 0; NULL != (peer = loom_hash_next(&engine->peers, &pos)); pos = 0) {
        peer->refcount = 1;
        loom_peer_disconnect(peer);
    }
    loom_eager_fini(engine);
    for (pos = 0; NULL != (region = loom_hash_next(&engine->regions, &pos)); pos = 0) {
        loom_mem_deregister(region);
    }
    loom_rcache_fini(engine); /* before the rails: it deregisters on them */
    loom_engine_wake_fini(engine);
    for (i = engine->rail_count - 1; i >= 0; --i) {
        loom_rail_close(&engine->rails[i]);
    }
    while (!ucs_list_is_empty(&engine->retired)) { /* no rail can complete them now */
        free(ucs_list_extract_head(&engine->retired, loom_peer_t, retired_link));
    }
    loom_stripe_free_all(engine);
    loom_msg_strangers_free(engine);
    loom_push_cond_fini(engine);
    while (!ucs_list_is_empty(&engine->owned_ops)) {
        loom_op_free_owned(engine, ucs_list_head(&engine->owned_ops, loom_op_t, owned_link));
    }
    if (NULL != engine->worker) {
        uct_worker_destroy(engine->worker);
    }
    if (NULL != engine->async) {
        ucs_async_context_destroy(engine->async);
    }
    loom_hash_fini(&engine->peers);
    loom_hash_fini(&engine->regions);
    loom_hash_fini(&engine->requests);
    for (pos = 0; NULL != (early = loom_hash_next(&engine->early_connects, &pos));) {
        free(early);
    }
    loom_hash_fini(&engine->early_connects);
    free(engine->addr_blob);
    free(engine);
}

/* ---- operations ---------------------------------------------------------- */

/* ---- accessors ----------------------------------------------------------- */

int loom_engine_rail_count(const loom_engine_t *engine)
{
    return engine->rail_count;
}

const loom_rail_info_t *loom_engine_rail_info(const loom_engine_t *engine, int rail)
{
    return (rail >= 0 && rail < engine->rail_count) ? &engine->rails[rail].info : NULL;
}

loom_rail_stats_t *loom_engine_rail_stats(loom_engine_t *engine, int rail)
{
    return (rail >= 0 && rail < engine->rail_count) ? &engine->rails[rail].stats : NULL;
}

const loom_rcache_stats_t *loom_engine_rcache_stats(const loom_engine_t *engine)
{
    return &engine->rcaches.stats;
}

uint32_t loom_engine_epoch(const loom_engine_t *engine)
{
    return engine->epoch;
}

size_t loom_engine_am_max(const loom_engine_t *engine)
{
    size_t max = SIZE_MAX;
    int i;

    for (i = 0; i < engine->rail_count; ++i) {
        if (engine->rails[i].info.am_max < max) {
            max = engine->rails[i].info.am_max;
        }
    }
    return max;
}

size_t loom_engine_rdma_max(const loom_engine_t *engine)
{
    size_t max = SIZE_MAX;
    int i;

    for (i = 0; i < engine->rail_count; ++i) {
        if (engine->rails[i].info.put_max < max) {
            max = engine->rails[i].info.put_max;
        }
    }
    return max;
}

int loom_engine_address(loom_engine_t *engine, void **blob_p, size_t *length_p)
{
    *blob_p   = engine->addr_blob;
    *length_p = engine->addr_blob_len;
    return LOOM_OK;
}

size_t loom_engine_outstanding(const loom_engine_t *engine)
{
    return engine->outstanding;
}
