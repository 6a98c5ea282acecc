/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Striping: a large put or get is cut into chunks issued over every usable
 * rail to the peer.  Every rail is kept busy up to stripe_depth chunks (fewer
 * on a slow rail: loom_stripe_depth), so
 * faster rails complete and take more; near the end a chunk goes to the
 * rail expected to finish it first, from measured rates.  Chunks complete
 * in any order; the operation completes once every chunk landed.  A chunk
 * that fails because its rail failed is re-driven on the surviving rails,
 * with the key of the new rail for the same memory; a rail whose chunks stop
 * landing while other rails deliver is failed by the rail watch
 * (rail_watch.c).  With more than
 * one rail, a transfer too small to be cut goes as a single chunk, so that
 * it too is placed again if its rail fails.
 */
#include "rdma/loom_rdma.h"

#include <stdlib.h>
#include <string.h>

typedef struct loom_stripe {
    loom_op_t     *parent;
    int            kind;         /* LOOM_OP_PUT or LOOM_OP_GET */
    uint8_t       *local;
    loom_region_t *local_region;
    uint64_t       remote;
    size_t         length;
    size_t         chunk;        /* bytes per chunk (the whole length: one chunk) */
    size_t         next;         /* first byte not handed to a rail yet */
    size_t         landed;
    int            inflight;
    int            status;
    loom_opq_t     redo;         /* chunks to issue again on another rail */
    bool           waiting;      /* on the peer's list of stripes waiting for room */
    ucs_list_link_t wait_link;   /* peer->stripes_waiting, while waiting */
    ucs_list_link_t live_link;   /* engine->stripes */
    uint8_t        key[];        /* the caller's remote key, kept for every chunk */
} loom_stripe_t;

static int loom_stripe_rail_count(const loom_peer_t *peer)
{
    int i, count = 0;

    for (i = 0; i < peer->engine->rail_count; ++i) {
        count += peer->rails[i].usable;
    }
    return count;
}

bool loom_stripe_wanted(loom_peer_t *peer, size_t length)
{
    const loom_engine_config_t *config = &peer->engine->config;

    return config->stripe_threshold > 0 && length >= config->stripe_threshold &&
           loom_stripe_rail_count(peer) > 1;
}

/* Another rail could take over if the transfer's rail fails: a transfer
 * too small to be cut goes as one chunk, which is placed again on another
 * rail like any chunk whose rail failed. */
bool loom_stripe_guarded(loom_peer_t *peer)
{
    return loom_stripe_rail_count(peer) > 1;
}

static void loom_stripe_chunk_done(loom_op_t *chunk, int status);

/* A chunk of this stripe that has not read its memory whole yet: not
 * issued, or a checked write put back with bytes still to send. */
static bool loom_stripe_chunk_unsent(const loom_op_t *op, const void *stripe)
{
    return loom_stripe_chunk_done == op->cb && stripe == op->user &&
           (LOOM_STAGE_ISSUE == op->stage ||
            (LOOM_STAGE_FLUSH == op->stage && op->sent < op->length));
}

/* Its region is being deregistered while these stripes may still read it (a
 * striped serve that could not be waited for): no chunk is posted any more,
 * those waiting in the rail queues end cancelled, and so does the stripe once
 * the chunks on the wire ended. */
void loom_stripes_drop_region(loom_region_t *region)
{
    loom_engine_t *engine = region->engine;
    loom_stripe_t *stripe;
    loom_opq_t cancelled;
    loom_op_t *chunk;
    int i;

    ucs_list_head_init(&cancelled);
    ucs_list_for_each(stripe, &engine->stripes, live_link) {
        if (stripe->local_region != region) {
            continue;
        }
        stripe->local_region = NULL;
        if (LOOM_OK == stripe->status) {
            stripe->status = LOOM_ERR_CANCELLED;
        }
        for (i = 0; i < engine->rail_count; ++i) {
            loom_opq_take(&stripe->parent->peer->rails[i].rail_queue,
                          loom_stripe_chunk_unsent, stripe, &cancelled);
        }
        /* and those of a get that the owner's push window holds back */
        loom_opq_take(&stripe->parent->peer->push_held, loom_stripe_chunk_unsent, stripe,
                      &cancelled);
    }
    while (NULL != (chunk = loom_opq_pop(&cancelled))) {
        loom_rdma_complete(chunk, LOOM_ERR_CANCELLED); /* booked by its stripe */
    }
}

/* Rate a rail is assumed to have before anything was measured. */
static double loom_rail_initial_rate(const loom_rail_t *rail)
{
    double rate = rail->info.bandwidth_mbs * 1e6;

    return (rate > 0) ? rate : 1e9;
}

double loom_rail_rate(const loom_rail_t *rail)
{
    return (rail->flow.rate > 0) ? rail->flow.rate : loom_rail_initial_rate(rail);
}

double loom_engine_rail_rate(const loom_engine_t *engine, int rail)
{
    return (rail >= 0 && rail < engine->rail_count) ? loom_rail_rate(&engine->rails[rail]) : 0;
}

/*
 * Chunks a rail takes to one peer at once: stripe_depth, or fewer where that
 * many would queue more than stripe_queue_us of data at the rail's measured
 * rate.  Whatever goes to the peer behind them on that rail (an
 * acknowledgement, a push's notice, a pipeline's next segment) waits for
 * what is queued: on the virtual cluster's 200 mbit rails four chunks of
 * 128 KiB were 20 ms per rail, and a broadcast's chain took 1.3x as long as
 * with one (docs/user/coll-loom.md).  Fast rails keep stripe_depth.
 */
static unsigned loom_stripe_depth(const loom_engine_t *engine, int rail, size_t chunk)
{
    const loom_engine_config_t *config = &engine->config;
    double rate = engine->rails[rail].flow.rate, chunks;

    if (0 == config->stripe_queue_us || rate <= 0) {
        return config->stripe_depth; /* nothing measured yet */
    }
    chunks = rate * config->stripe_queue_us * 1e-6 / (double)chunk;
    if (chunks < 1) {
        return 1;
    }
    return (chunks < config->stripe_depth) ? (unsigned)chunks : config->stripe_depth;
}

/* Bytes per chunk of a transfer to peer: stripe_chunk, or less where a rail's
 * queue budget (loom_stripe_depth) would not hold two, so that a slow rail
 * still has one chunk on the wire while the next waits (whole pages, 16 KiB
 * at least).  On 200 mbit rails 64 KiB chunks took a broadcast's chain 0.93x
 * the time of 128 KiB ones. */
#define LOOM_STRIPE_CHUNK_MIN 16384
static size_t loom_stripe_chunk_size(const loom_peer_t *peer)
{
    const loom_engine_t *engine = peer->engine;
    size_t chunk = engine->config.stripe_chunk, budget;
    double rate;
    int i;

    if (0 == engine->config.stripe_queue_us || chunk <= LOOM_STRIPE_CHUNK_MIN) {
        return chunk;
    }
    for (i = 0; i < engine->rail_count; ++i) {
        rate = engine->rails[i].flow.rate;
        if (!peer->rails[i].usable || rate <= 0) {
            continue;
        }
        budget = (size_t)(rate * engine->config.stripe_queue_us * 1e-6 / 2) & ~(size_t)4095;
        if (budget < chunk) {
            chunk = (budget > LOOM_STRIPE_CHUNK_MIN) ? budget : LOOM_STRIPE_CHUNK_MIN;
        }
    }
    return chunk;
}

/* The rail's bytes in flight the way kind moves them: puts leave through
 * the rail, gets come in through it. */
static size_t *loom_rail_flow_bytes(loom_rail_t *rail, int kind)
{
    return (LOOM_OP_GET == kind) ? &rail->flow.bytes_in : &rail->flow.bytes_out;
}

/* When the rail's chunks going kind's way finish, the next one included:
 * those to and from every peer, which share the rail (with one peer's alone
 * four nodes' allreduce put twice as many bytes on one rail as on the
 * other, and ran at 1.55x the rails' limit). */
static double loom_stripe_finish_time(loom_peer_t *peer, int rail, int kind, size_t chunk)
{
    loom_rail_t *r = &peer->engine->rails[rail];

    return (double)(*loom_rail_flow_bytes(r, kind) + chunk) / loom_rail_rate(r);
}

/*
 * The rail to give the next chunk to, or -1 to wait for room.  Every rail is
 * kept busy up to its depth in chunks, so each delivers at its own pace and
 * faster rails take more chunks.  Among rails with room the one expected to
 * finish the chunk first wins.  Near the end of a transfer (what is left
 * would not fill the rails' pipelines) a chunk rather waits for a faster
 * full rail than go to a slow one it would finish later on.  A transfer
 * of one chunk smaller than LOOM_STRIPE_CHUNK_MIN never waits: it goes to
 * the rail expected to finish it first (32 threads' pushes of 4 KiB held
 * to the depth took 121 s where they took 1.5); larger ones keep to the
 * depth, or a broadcast chain's 64 KiB segments pile up on the rails ahead
 * of what follows them (4 MiB at 200 mbit: 115 ms against 95).
 */
static int loom_stripe_pick_rail(loom_peer_t *peer, int kind, size_t chunk, size_t chunk_size,
                                 size_t left, bool whole)
{
    loom_engine_t *engine = peer->engine;
    double best_finish = 0, full_finish = 0, finish;
    size_t pipeline = 0;
    unsigned depth;
    int i, best = -1, full = -1;

    for (i = 0; i < engine->rail_count; ++i) {
        if (!peer->rails[i].usable) {
            continue;
        }
        depth     = loom_stripe_depth(engine, i, chunk_size);
        pipeline += depth * chunk_size;
        finish    = loom_stripe_finish_time(peer, i, kind, chunk);
        if (peer->rails[i].inflight_chunks >= depth && !(whole && chunk < LOOM_STRIPE_CHUNK_MIN)) {
            if (full < 0 || finish < full_finish) {
                full        = i;
                full_finish = finish;
            }
        } else if (best < 0 || finish < best_finish) {
            best        = i;
            best_finish = finish;
        }
    }
    if (best >= 0 && full >= 0 && left < pipeline && full_finish < best_finish) {
        return -1;
    }
    return best;
}

static void loom_stripe_free(loom_stripe_t *stripe)
{
    ucs_list_del(&stripe->live_link);
    free(stripe);
}

/* The engine goes: stripes whose chunks a dead rail never completed. */
void loom_stripe_free_all(loom_engine_t *engine)
{
    while (!ucs_list_is_empty(&engine->stripes)) {
        loom_stripe_free(ucs_list_head(&engine->stripes, loom_stripe_t, live_link));
    }
}

/* A rate sample needs this long a window: shorter ones see bursts of
 * completions, not the rail. */
#define LOOM_RATE_WINDOW_NS 20000000ull

static void loom_rail_flow_issue(loom_rail_t *rail)
{
    ++rail->flow.inflight;
}

/*
 * Learn the rail's rate from the pace at which its chunks land while others
 * wait behind them.  A window opens at a completion with chunks still in
 * flight, and closes after LOOM_RATE_WINDOW_NS; one that runs dry first is
 * forgotten.  Counting from a chunk's issue, or across a rail left idle,
 * measured how much work the rail was given and how long the first chunk
 * took to come back (a get waits in its owner's queue), not what the rail
 * carries: a rail that measured low was given smaller and fewer chunks, and
 * measured lower still (3 MB/s of a 25 MB/s rail, and an allreduce over
 * coll tuned 1.5x as long, in one run of two).
 */
static void loom_rail_flow_done(loom_rail_t *rail, size_t landed)
{
    loom_rail_flow_t *flow = &rail->flow;
    uint64_t now = loom_now_ns(), elapsed = now - flow->window_start;
    double sample;

    --flow->inflight;
    if (0 == flow->window_start || 0 == flow->inflight) {
        /* opens a window, or forgets one that ran dry */
        flow->window_start = (flow->inflight > 0) ? now : 0;
        flow->window_bytes = 0;
        return;
    }
    flow->window_bytes += landed;
    if (elapsed < LOOM_RATE_WINDOW_NS) {
        return;
    }
    if (flow->window_bytes > 0) {
        sample     = (double)flow->window_bytes * 1e9 / (double)elapsed;
        flow->rate = (flow->rate > 0) ? 0.5 * flow->rate + 0.5 * sample : sample;
        loom_log(rail->engine, LOOM_LOG_DEBUG, "rail %d: %zu B in %.3f ms (%u in flight): "
                 "%.1f MB/s, rate now %.1f MB/s", rail->index, flow->window_bytes,
                 elapsed / 1e6, flow->inflight, sample / 1e6, flow->rate / 1e6);
    }
    flow->window_start = now;
    flow->window_bytes = 0;
}

/* Book a finished chunk: landed, to re-drive (its rail died), or failed. */
static void loom_stripe_account(loom_stripe_t *stripe, loom_op_t *chunk, int status)
{
    loom_peer_t *peer = stripe->parent->peer;
    loom_rail_t *rail = &peer->engine->rails[chunk->rail];
    bool landed = (LOOM_OK == status);

    *loom_rail_flow_bytes(rail, stripe->kind) -= chunk->length;
    --peer->rails[chunk->rail].inflight_chunks;
    --peer->engine->chunks_inflight;
    --stripe->inflight;
    loom_rail_flow_done(rail, landed ? chunk->length : 0);
    if (landed) {
        /* one landing late on a rail out of use says nothing of those in use */
        if (!peer->rails[chunk->rail].failed) {
            loom_rail_watch_landed(peer, chunk->rail);
        }
        stripe->landed += chunk->length;
        ++rail->stats.chunks;
        loom_op_free_owned(peer->engine, chunk);
    } else if (LOOM_OK == stripe->status && peer->rails[chunk->rail].failed &&
               loom_stripe_rail_count(peer) > 0) {
        ucs_list_add_tail(&stripe->redo, &chunk->queue_link);
    } else {
        if (LOOM_OK == stripe->status) {
            stripe->status = status;
        }
        loom_op_free_owned(peer->engine, chunk);
    }
}

/* Post one chunk on a rail; LOOM_OK once it is on its way (its completion
 * comes through loom_stripe_chunk_done), else it was booked as failed. */
static void loom_stripe_post(loom_stripe_t *stripe, loom_op_t *chunk, int rail, size_t offset,
                             size_t length)
{
    loom_peer_t *peer = stripe->parent->peer;
    int rc;

    chunk->cb        = loom_stripe_chunk_done;
    chunk->user      = stripe;
    chunk->offset    = offset;
    /* a push served whole in this chunk counts as it lands (push_landed.c) */
    chunk->count_request   = (length == stripe->length) ? stripe->parent->count_request : 0;
    chunk->count_requester = stripe->parent->count_requester;
    chunk->count_counter   = stripe->parent->count_counter;
    if (0 == peer->rails[rail].inflight_chunks) {
        loom_rail_watch_start(peer, rail);
    }
    *loom_rail_flow_bytes(&peer->engine->rails[rail], stripe->kind) += length;
    ++peer->rails[rail].inflight_chunks;
    ++peer->engine->chunks_inflight;
    ++stripe->inflight;
    loom_rail_flow_issue(&peer->engine->rails[rail]);
    rc = loom_rdma_post(peer, chunk, stripe->kind, rail, stripe->local + offset,
                        stripe->local_region, stripe->remote + offset,
                        (const loom_wire_key_t *)stripe->key, length);
    if (rc < 0) {
        chunk->rail   = rail;
        chunk->length = length;
        loom_stripe_account(stripe, chunk, rc);
    }
}

/* Hand out chunks (first those to re-drive) while the chosen rail has room;
 * finish the operation once nothing is left in flight. */
static void loom_stripe_pump(loom_stripe_t *stripe)
{
    loom_peer_t *peer = stripe->parent->peer;
    size_t chunk_size = stripe->chunk;

    while (LOOM_OK == stripe->status && (!ucs_list_is_empty(&stripe->redo) || stripe->next < stripe->length)) {
        loom_op_t *chunk = ucs_list_is_empty(&stripe->redo) ? NULL :
                           ucs_list_head(&stripe->redo, loom_op_t, queue_link);
        size_t offset, length;
        int rail;

        if (NULL != chunk) {
            length = chunk->length;
        } else {
            length = stripe->length - stripe->next;
            length = (length < chunk_size) ? length : chunk_size;
        }
        rail = loom_stripe_pick_rail(peer, stripe->kind, length, chunk_size,
                                     stripe->length - stripe->next,
                                     chunk_size >= stripe->length);
        if (rail < 0) {
            if (0 == loom_stripe_rail_count(peer)) {
                loom_log(peer->engine, loom_peer_closing(peer) ? LOOM_LOG_DEBUG : LOOM_LOG_ERROR,
                         "no rail to peer %#llx is left for a striped transfer of %zu bytes", (unsigned long long)peer->name,
                         stripe->length);
                stripe->status = LOOM_ERR_UNREACH;
            } else if (!stripe->waiting) {
                /* the rail is full with other chunks to this peer: go on
                 * when one of them completes */
                stripe->waiting      = true;
                ucs_list_add_tail(&peer->stripes_waiting, &stripe->wait_link);
            }
            break;
        }
        if (NULL != chunk) {
            ucs_list_del(&chunk->queue_link);
            offset = chunk->offset;
            ++peer->engine->rails[rail].stats.failovers;
        } else {
            chunk = loom_op_alloc_owned(peer->engine);
            if (NULL == chunk) {
                stripe->status = LOOM_ERR_NOMEM;
                break;
            }
            offset        = stripe->next;
            stripe->next += length;
        }
        loom_stripe_post(stripe, chunk, rail, offset, length);
    }
    if (0 == stripe->inflight && (LOOM_OK != stripe->status || stripe->landed == stripe->length)) {
        loom_op_t *chunk;

        while (NULL != (chunk = loom_opq_pop(&stripe->redo))) {
            loom_op_free_owned(peer->engine, chunk);
        }
        loom_op_finish(stripe->parent, stripe->status);
        loom_stripe_free(stripe);
    }
}

static void loom_stripe_chunk_done(loom_op_t *chunk, int status)
{
    loom_stripe_t *stripe = chunk->user, *waiting;
    loom_peer_t *peer = stripe->parent->peer;
    ucs_list_link_t list;

    loom_stripe_account(stripe, chunk, status);
    if (!stripe->waiting) {
        loom_stripe_pump(stripe);
    }
    /* room was made on a rail to this peer: let waiting stripes use it */
    ucs_list_head_init(&list);
    ucs_list_splice_tail(&list, &peer->stripes_waiting); /* a pump may wait again */
    ucs_list_head_init(&peer->stripes_waiting);
    while (!ucs_list_is_empty(&list)) {
        waiting = ucs_list_extract_head(&list, loom_stripe_t, wait_link);
        waiting->waiting = false;
        loom_stripe_pump(waiting); /* may finish and free it */
    }
}

int loom_stripe_start(loom_peer_t *peer, loom_op_t *op, int kind, void *local,
                      loom_region_t *local_region, uint64_t remote_addr,
                      const void *remote_key, size_t remote_key_size, size_t length,
                      bool cut)
{
    loom_stripe_t *stripe = calloc(1, sizeof(*stripe) + remote_key_size);

    if (NULL == stripe) {
        return LOOM_ERR_NOMEM;
    }
    stripe->parent       = op;
    stripe->kind         = kind;
    stripe->local        = local;
    stripe->local_region = local_region;
    stripe->remote       = remote_addr;
    stripe->length       = length;
    stripe->chunk        = cut ? loom_stripe_chunk_size(peer) : (length ? length : 1);
    stripe->status       = LOOM_OK;
    memcpy(stripe->key, remote_key, remote_key_size);
    ucs_list_head_init(&stripe->redo);
    ucs_list_add_head(&peer->engine->stripes, &stripe->live_link);
    loom_op_start(peer, op, LOOM_OP_STRIPE, LOOM_STAGE_WAIT);
    op->length = length;
    op->rail   = loom_peer_rdma_rail(peer);
    loom_stripe_pump(stripe);
    return LOOM_INPROGRESS;
}
