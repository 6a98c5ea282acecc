/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Progress: the UCT worker, then every poller the engine registered, in
 * order, on clock passes the timers, then the callbacks of finished
 * operations.  Nothing below calls up into here: a layer with work to do
 * from progress registers a poller or a timer.
 */
#include "engine/loom_engine.h"

#include <assert.h>
#include <sched.h>

/* Run an op's current stage: LOOM_OK (moved on), LOOM_ERR_AGAIN, or error. */
int loom_op_advance(loom_op_t *op)
{
    struct iovec iov;

    switch (op->kind) {
    case LOOM_OP_AM:
        return loom_am_send_now(op->peer, op->tag, op->iov, op->iovcnt, op);
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
        if (op->tag && NULL == op->peer->rails[op->rail].boot_ep) {
            return LOOM_ERR_UNREACH; /* its wireup endpoint went with the peer */
        }
        iov.iov_base = op->msg;
        iov.iov_len  = op->msg_len;
        return loom_am_issue_ep(op->peer, op->rail,
                                op->tag ? op->peer->rails[op->rail].boot_ep
                                        : op->peer->rails[op->rail].ep,
                                op->msg[1], NULL, &iov, 1);
    case LOOM_OP_ATOMIC:
        return loom_atomic_advance(op);
    case LOOM_OP_SERVE:
        if (LOOM_STAGE_ISSUE == op->stage && op->msg_len > sizeof(loom_serve_notices_t)) {
            return loom_push_serve_stripe(op); /* by chunks on any rail */
        }
        /* fall through */
    default: /* RDMA, a serve that is one put included */
        return loom_rdma_advance(op);
    }
}

/* Issue what waits in one queue until it is empty or its rail is busy;
 * false if something is still waiting. */
static bool loom_engine_drain_queue(loom_peer_t *peer, loom_opq_t *q, int *count)
{
    loom_op_t *op;
    int rc;

    /* Off the queue while it runs: finishing puts it on the done list. */
    while (NULL != (op = loom_opq_pop(q))) {
        rc = loom_op_advance(op);
        if (LOOM_ERR_AGAIN == rc) {
            loom_opq_push_front(q, op);
            return false;
        }
        ++*count;
        if (LOOM_OP_AM == op->kind && LOOM_INPROGRESS == rc) {
            loom_am_in_flight(op); /* sent, its data still read */
        } else if (LOOM_OP_AM == op->kind || LOOM_OP_CTRL == op->kind) {
            loom_op_finish(op, (rc < 0) ? rc : LOOM_OK);
        } else if (LOOM_OP_ATOMIC == op->kind) {
            if (rc < 0) {
                loom_op_finish(op, rc); /* sent, it waits for its answer */
            }
        } else if (rc < 0) {
            loom_rdma_complete(op, rc); /* a served push still answers */
        }
        /* rdma ops that went on wait for their UCT completion */
    }
    return true;
}

/* The queues of the peers that have work waiting (a poller).  The list is
 * moved aside: ops finishing here may queue work to other peers, which puts
 * them on the engine's list again, not on the one being walked.  A peer
 * stays queued while it waits here, so that whoever takes it off (a
 * disconnect) finds it on a list. */
static UCS_F_NOINLINE int loom_progress_busy_peers(loom_engine_t *engine)
{
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

int loom_progress_queues(loom_engine_t *engine)
{
    /* the check alone on every pass: the walk's stack frame when needed */
    return ucs_list_is_empty(&engine->busy_peers) ? 0 : loom_progress_busy_peers(engine);
}

static int loom_engine_run_callbacks(loom_engine_t *engine)
{
    loom_op_t *op;
    int count = 0;

    while (NULL != (op = loom_opq_pop(&engine->done))) {
        if (op->rkey_valid) {
            uct_rkey_release(engine->rails[op->rail].component, &op->rkey);
            op->rkey_valid = false;
        }
        op->peer->owed -= op->owed;
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
 * 10x slower for it (docs/design/striping.md).  After yield_after_us without work,
 * each empty call yields, unless the upper layer says its caller only
 * polls (config.may_idle_cb); a call that finds work starts over.  The idle
 * time is counted from the first clock pass without work (loom_clock_pass):
 * no clock read on a call that finds work, or on most empty ones.
 */
static void loom_engine_idle(loom_engine_t *engine, int count)
{
    uint64_t now;

    if (0 == engine->config.yield_after_us) {
        return;
    }
    if (count > 0) {
        engine->idle_since = 0;
        engine->yielding   = false;
        return;
    }
    if (!engine->yielding && loom_clock_pass(engine)) {
        now = loom_engine_clock(engine); /* read in this pass */
        if (0 == engine->idle_since) {
            engine->idle_since = now;
        } else if (now - engine->idle_since > engine->config.yield_after_us * 1000ull) {
            engine->yielding = NULL == engine->config.may_idle_cb ||
                               engine->config.may_idle_cb(engine->config.cb_ctx);
            if (!engine->yielding) {
                engine->idle_since = now; /* the caller polls: asked again later */
            }
        }
    }
    if (engine->yielding) {
        sched_yield();
    }
}

/*
 * A clock pass reads the clock and sets how many passes until the next one,
 * from what the passes since the last took each: about LOOM_CLOCK_PASS_NS
 * apart, so that idle time and timers run late by that at most, whatever a
 * pass costs (0.1 us polling shared memory, 10 us of system calls polling
 * tcp in a virtual machine).  Passes far apart (the application computed
 * between them) make the next clock pass come at once, and measure again.
 */
static void loom_clock_pace(loom_engine_t *engine)
{
    uint64_t now = loom_engine_clock_read(engine), pass_ns;
    unsigned passes = engine->passes - engine->clock_passes;

    pass_ns = loom_elapsed_ns(now, engine->clock_pass_ns) / (passes ? passes : 1);
    engine->clock_pass_ns = now;
    engine->clock_passes  = engine->passes;
    if (pass_ns * LOOM_CLOCK_EVERY_MAX <= LOOM_CLOCK_PASS_NS) {
        engine->clock_every = LOOM_CLOCK_EVERY_MAX;
    } else if (pass_ns >= LOOM_CLOCK_PASS_NS) {
        engine->clock_every = 1;
    } else {
        engine->clock_every = (unsigned)(LOOM_CLOCK_PASS_NS / pass_ns);
    }
}

static int loom_engine_progress_run(loom_engine_t *engine, bool quiet)
{
    int count, i;

    /* Callbacks may call back into the engine; do not nest. */
    if (engine->in_progress) {
        return 0;
    }
    engine->in_progress = true;
    engine->quiet       = quiet;
    ++engine->passes;
    engine->clock_due = engine->sleepers ||
                        engine->passes - engine->clock_passes >= engine->clock_every;
    count = (int)uct_worker_progress(engine->worker);
    for (i = 0; i < engine->poller_count; ++i) {
        count += engine->pollers[i](engine);
    }
    /* The clock read after what this pass received, so that stamps taken
     * so far are behind it (timers count from later ones, by timers before
     * them or by other threads, with loom_elapsed_ns).  Most passes skip
     * both (a clock read is a system call where the clock source is not
     * the TSC). */
    if (loom_clock_pass(engine)) {
        loom_clock_pace(engine);
        for (i = 0; i < engine->timer_count; ++i) {
            count += engine->timers[i](engine);
        }
    }
    if (!quiet && !ucs_list_is_empty(&engine->done)) {
        count += loom_engine_run_callbacks(engine);
    }
    if (count > 0) {
        engine->eager.wait_since = 0; /* whatever waited, it is not idle */
    }
    if (!quiet) {
        loom_engine_idle(engine, count);
    }
    engine->quiet       = false;
    engine->in_progress = false;
    return count;
}

int loom_engine_progress(loom_engine_t *engine)
{
    return loom_engine_progress_run(engine, false);
}

int loom_engine_progress_quiet(loom_engine_t *engine)
{
    if (engine->quiet_kept >= LOOM_QUIET_KEPT_MAX) {
        /* what it keeps for the application is at the bound: it holds back
         * as if there were no helper, and senders wait on their rails and
         * windows until the application's thread takes the copies */
        return LOOM_ERR_LIMIT;
    }
    return loom_engine_progress_run(engine, true);
}

/*
 * Why past the window rather than busy: an upper layer's blocking send of a
 * few bytes (osc pt2pt's compare-and-swap reply, made while it holds a
 * lock) that is not complete on return waits in progress, where the peer's
 * next requests reach the upper layer below it and spin for that lock, on
 * both sides at once, for ever; a peer slow to acknowledge (a loaded
 * machine) must not turn into that.  The message leaves now, behind what
 * was queued before it: a copy queued instead would need the caller's
 * progress later, which a caller that then blocks outside MPI (Open MPI's
 * connect/accept) never gives.  From inside progress, which drains the
 * queues itself, only when nothing is queued.
 */
int loom_am_send_past_window(loom_peer_t *peer, uint8_t tag, const struct iovec *iov,
                             int iovcnt)
{
    int rc = loom_am_send(peer, tag, iov, iovcnt, NULL), count = 0;

    if (LOOM_ERR_AGAIN != rc || !loom_msg_logging(peer) ||
        loom_iov_length(iov, iovcnt) > LOOM_OP_MSG_MAX) {
        return rc;
    }
    peer->msg.past_window = true;
    if (peer->engine->in_progress || loom_engine_drain_queue(peer, &peer->queue, &count)) {
        rc = loom_am_send(peer, tag, iov, iovcnt, NULL);
    }
    peer->msg.past_window = false;
    return rc;
}

/* A message to the peer would leave now: none queued before it, the
 * window open. */
static bool loom_msg_would_leave(loom_peer_t *peer)
{
    return ucs_list_is_empty(&peer->queue) && loom_msg_can_send(peer);
}

/*
 * Why wait here rather than say busy: as for loom_am_send_past_window, for
 * a message it does not take (larger, or beyond its bounds).  Quiet
 * progress takes the acknowledgements in without handing anything up.  A
 * peer that computes long costs one budget per window filled, not one per
 * message.
 */
int loom_peer_window_wait(loom_peer_t *peer, uint64_t budget_ns)
{
    loom_engine_t *engine = peer->engine;
    loom_msg_state_t *msg = &peer->msg;
    uint64_t end;

    if (!loom_msg_logging(peer) || msg->window_stalled || engine->in_progress ||
        msg->log_count < engine->config.msg_window) {
        return LOOM_ERR_AGAIN;
    }
    end = loom_now_ns() + budget_ns;
    while (!loom_msg_would_leave(peer)) {
        if (peer->lost || loom_now_ns() > end ||
            LOOM_ERR_LIMIT == loom_engine_progress_quiet(engine)) {
            msg->window_stalled = msg->log_count >= engine->config.msg_window;
            return LOOM_ERR_AGAIN;
        }
    }
    return LOOM_OK;
}

/* A layer's work to do from progress, run in the order registered. */
void loom_progress_register(loom_engine_t *engine, loom_poller_fn_t poller)
{
    assert(engine->poller_count < LOOM_POLLERS_MAX);
    engine->pollers[engine->poller_count++] = poller;
}

/* A layer's timekeeping: on clock passes only, after the pollers. */
void loom_progress_register_timer(loom_engine_t *engine, loom_poller_fn_t timer)
{
    assert(engine->timer_count < LOOM_TIMERS_MAX);
    engine->timers[engine->timer_count++] = timer;
}
