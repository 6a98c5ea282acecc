/*
 * The engine: owns the UCT worker and the rails, drives progress and the
 * operation queues.
 */
#include "loom_internal.h"

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
    engine->config = *config;
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
    loom_hash_init(&engine->peers);
    loom_hash_init(&engine->regions);
    loom_hash_init(&engine->requests);
    loom_hash_init(&engine->early_connects);
    ucs_list_head_init(&engine->eager.active);
    ucs_list_head_init(&engine->acks_owed);
    ucs_list_head_init(&engine->busy_peers);
    ucs_list_head_init(&engine->retired);
    ucs_list_head_init(&engine->failing);
    ucs_list_head_init(&engine->owned_ops);

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
    for (i = engine->rail_count - 1; i >= 0; --i) {
        loom_rail_close(&engine->rails[i]);
    }
    while (!ucs_list_is_empty(&engine->retired)) { /* no rail can complete them now */
        free(ucs_list_extract_head(&engine->retired, loom_peer_t, retired_link));
    }
    loom_stripe_free_all(engine);
    loom_msg_strangers_free(engine);
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

/* Run an op's current stage: LOOM_OK (moved on), LOOM_ERR_AGAIN, or error. */
int loom_op_advance(loom_op_t *op)
{
    struct iovec iov;

    switch (op->kind) {
    case LOOM_OP_AM:
        return loom_am_send_now(op->peer, op->tag, op->iov, op->iovcnt);
    case LOOM_OP_CTRL:
        if (!op->tag && op->peer->rails[op->rail].failed) {
            op->rail = op->peer->am_rail; /* its rail failed while it waited */
        }
        if (LOOM_WIRE_EAGER_REQ == op->msg[1]) {
            loom_eager_req_stamp(op->peer, op->msg); /* its counters are those of now */
        } else if (LOOM_WIRE_EAGER_NOTE == op->msg[1]) {
            loom_eager_note_stamp(op->peer, op->msg); /* credits of the ring of now */
        } else if (LOOM_WIRE_MSG_ACK == op->msg[1]) {
            loom_msg_ack_stamp(op->peer, op->msg); /* what was delivered by now */
        }
        iov.iov_base = op->msg;
        iov.iov_len  = op->msg_len;
        return loom_am_issue_ep(op->peer, op->rail,
                                op->tag ? op->peer->rails[op->rail].boot_ep
                                        : op->peer->rails[op->rail].ep,
                                op->msg[1], NULL, &iov, 1);
    default:
        return loom_rdma_advance(op);
    }
}

/* Issue what waits in one queue until it is empty or its rail is busy;
 * false if something is still waiting. */
static bool loom_engine_drain_queue(loom_peer_t *peer, loom_opq_t *q, int *count)
{
    loom_op_t *op;
    int rc;

    /* Off the queue while it runs: finishing reuses op->next. */
    while (NULL != (op = loom_opq_pop(q))) {
        rc = loom_op_advance(op);
        if (LOOM_ERR_AGAIN == rc) {
            loom_opq_push_front(q, op);
            return false;
        }
        ++*count;
        if (LOOM_OP_AM == op->kind || LOOM_OP_CTRL == op->kind) {
            loom_op_finish(op, (rc < 0) ? rc : LOOM_OK);
        } else if (rc < 0) {
            loom_rdma_complete(op, rc); /* a served push still answers */
        }
        /* rdma ops that went on wait for their UCT completion */
    }
    return true;
}

static int loom_engine_drain_queues(loom_engine_t *engine)
{
    /* Move the list aside: ops finishing here may queue work to other peers,
     * which puts them on the engine's list again, not on the one being
     * walked.  A peer stays queued while it waits here, so that whoever
     * takes it off (a disconnect) finds it on a list. */
    ucs_list_link_t list;
    loom_peer_t *peer;
    int count = 0, i;
    bool idle;

    ucs_list_head_init(&list);
    ucs_list_splice_tail(&list, &engine->busy_peers);
    ucs_list_head_init(&engine->busy_peers);
    while (!ucs_list_is_empty(&list)) {
        peer         = ucs_list_extract_head(&list, loom_peer_t, busy_link);
        peer->queued = false;
        /* messages sent again after a rail failed go before anything new */
        idle = loom_msg_resend_progress(peer) &&
               loom_engine_drain_queue(peer, &peer->queue, &count);
        for (i = 0; i < engine->rail_count; ++i) {
            idle &= loom_engine_drain_queue(peer, &peer->rails[i].rail_queue, &count);
        }
        if (!idle) {
            loom_peer_mark_busy(peer);
        }
    }
    return count;
}

static int loom_engine_run_callbacks(loom_engine_t *engine)
{
    loom_op_t *op;
    int count = 0;

    while (NULL != (op = engine->done_head)) {
        engine->done_head = op->next;
        if (NULL == engine->done_head) {
            engine->done_tail = NULL;
        }
        if (op->rkey_valid) {
            uct_rkey_release(engine->rails[op->rail].component, &op->rkey);
            op->rkey_valid = false;
        }
        op->peer->owed -= loom_op_owed(op);
        --op->peer->outstanding;
        --engine->outstanding;
        ++count;
        op->cb(op, op->status);
    }
    return count;
}

/*
 * A rank that polls without finding work may be what holds the work up: on
 * tcp (and soft-RoCE) the kernel processes the packets, in softirq context
 * that falls back to ksoftirqd, which runs on this core only when the rank
 * lets it.  Two ranks bound to two cores and several rails were measured
 * 10x slower for it (README, Striping).  After yield_after_us without work,
 * each empty call yields; a call that finds work resets the clock.
 */
static void loom_engine_idle(loom_engine_t *engine, int count)
{
    uint64_t now;

    if (0 == engine->config.yield_after_us) {
        return;
    }
    now = loom_now_ns();
    if (count > 0) {
        engine->last_busy = now;
    } else if (now - engine->last_busy > engine->config.yield_after_us * 1000ull) {
        sched_yield();
    }
}

int loom_engine_progress(loom_engine_t *engine)
{
    int count;

    /* Callbacks may call back into the engine; do not nest. */
    if (engine->in_progress) {
        return 0;
    }
    engine->in_progress = true;
    count  = (int)uct_worker_progress(engine->worker);
    if (!ucs_list_is_empty(&engine->failing)) {
        count += loom_peer_failures_progress(engine);
    }
    if (NULL != engine->strangers_head) {
        count += loom_msg_strangers_progress(engine);
    }
    count += loom_eager_progress(engine);
    if (!ucs_list_is_empty(&engine->busy_peers)) {
        count += loom_engine_drain_queues(engine);
    }
    loom_rail_watch(engine);
    loom_tcp_liveness_sweep(engine);
    loom_msg_watch(engine);
    loom_msg_idle_acks(engine);
    loom_rejoin_progress(engine);
    if (NULL != engine->done_head) {
        count += loom_engine_run_callbacks(engine);
    }
    loom_engine_idle(engine, count);
    engine->in_progress = false;
    return count;
}

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
