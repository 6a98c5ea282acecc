/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The end of an RDMA operation: counted, a served push answered, and the
 * op handed to the done list.
 */
#include "rdma/loom_rdma.h"

#include <stdlib.h>

void loom_rdma_account(loom_op_t *op)
{
    loom_rail_stats_t *stats;

    if (op->rail < 0 || (LOOM_OP_PUSH_REQ == op->kind &&
                         op->notify != op->peer->engine->config.name)) {
        return; /* a push between other processes: in the push statistics */
    }
    stats = &op->peer->engine->rails[op->rail].stats;

    switch (op->kind) {
    case LOOM_OP_PUT:
        stats->bytes_sent += op->length;
        ++stats->puts;
        break;
    case LOOM_OP_SERVE:
        if (LOOM_STAGE_CHUNKS != op->stage) {
            stats->bytes_sent += op->length; /* striped: counted by its chunks */
        }
        ++stats->pushes_served;
        break;
    default: /* gets, native or by push */
        stats->bytes_received += op->length;
        ++stats->gets;
        break;
    }
}

/* PUSH_DONE goes by the rail the data went by when that rail reaches the
 * process to notify: on another rail it could wait behind bulk data in a
 * TCP stream and hold up the completion of this rail's chunks. */
void loom_push_done_send(loom_engine_t *engine, uint64_t notify_name, int rail,
                         uint64_t request_id, uint64_t length, int rc, bool refusal)
{
    loom_peer_t *notify = loom_peer_lookup(engine, notify_name);
    loom_wire_push_done_t done;

    if (notify_name == engine->config.name) {
        loom_push_answered(engine, -1, notify_name, request_id, length, rc,
                           loom_strerror(rc)); /* ours */
        return;
    }
    if (NULL == notify) {
        /* it disconnected meanwhile: nobody waits for the notice */
        loom_log(engine, LOOM_LOG_INFO, "push request %llu: process %#llx to notify is gone",
                 (unsigned long long)request_id, (unsigned long long)notify_name);
        return;
    }
    memset(&done, 0, sizeof(done));
    loom_wire_hdr_fill(&done.hdr, LOOM_WIRE_PUSH_DONE, 0, sizeof(done));
    done.request_id = loom_le64(request_id);
    done.sender     = loom_le64(engine->config.name);
    done.length     = loom_le64(length);
    done.status     = loom_le32(loom_rc_to_wire(rc));
    if (rail < 0 || !notify->rails[rail].usable) {
        rail = notify->am_rail;
    }
    if (!refusal) {
        (void)loom_ctrl_send(notify, rail, &done, sizeof(done)); /* one per serve op */
    } else if (LOOM_ERR_AGAIN == loom_ctrl_send_refusal(notify, rail, &done, sizeof(done))) {
        loom_msg_over_limit(engine, rail, notify_name, "the refusal of a push request");
    }
}

/* Notices are engine messages (reliable, in order with our messages); one
 * to ourselves waits for progress (push_cond.c). */
void loom_push_notices_send(loom_engine_t *engine, const loom_serve_notices_t *notices,
                            uint64_t request_id, uint64_t length, int rc)
{
    loom_wire_push_notice_t msg;
    loom_notice_held_t *own;
    loom_peer_t *peer;
    uint32_t i;

    memset(&msg, 0, sizeof(msg));
    msg.kind       = LOOM_WIRE_PUSH_NOTICE;
    msg.status     = loom_le32(loom_rc_to_wire(rc));
    msg.requester  = loom_le64(notices->requester);
    msg.request_id = loom_le64(request_id);
    msg.length     = loom_le64(length);
    for (i = 0; i < notices->count; ++i) {
        msg.counter = loom_le64(notices->to[i].counter);
        ++engine->push.stats.notices_sent;
        if (notices->to[i].proc == engine->config.name) {
            own = malloc(sizeof(*own));
            if (NULL == own) {
                loom_log(engine, LOOM_LOG_ERROR, "out of memory keeping a notice of push "
                         "request %llu to this process", (unsigned long long)request_id);
                continue;
            }
            own->owner  = engine->config.name;
            own->notice = msg;
            ucs_list_add_tail(&engine->push.own, &own->link);
            ++engine->push.held;
            continue;
        }
        peer = loom_peer_lookup(engine, notices->to[i].proc);
        if (NULL == peer ||
            loom_engine_msg_send(peer, &msg, sizeof(msg), NULL) < 0) {
            loom_log(engine, LOOM_LOG_WARN, "push request %llu: process %#llx to tell is "
                     "gone", (unsigned long long)request_id,
                     (unsigned long long)notices->to[i].proc);
        }
    }
}

void loom_push_answered(loom_engine_t *engine, int rail, uint64_t owner, uint64_t request_id,
                        uint64_t length, int rc, const char *why)
{
    loom_op_t *op = loom_hash_get(&engine->requests, request_id);
    bool local = rail < 0;

    if (NULL == op || LOOM_OP_PUSH_REQ != op->kind || op->stage != LOOM_STAGE_WAIT ||
        (op->rail < 0) != local || (!local && op->peer->name != owner) ||
        (LOOM_OK == rc && length != op->length)) {
        if (!local) {
            ++engine->rails[rail].stats.refused;
        }
        /* unknown: a request failed with its rail (and re-driven) or given
         * up; its late answer is no news */
        loom_log(engine, (NULL == op) ? LOOM_LOG_INFO : LOOM_LOG_WARN,
                 "refused a push completion for %s request %llu",
                 (NULL == op) ? "unknown" : "mismatched", (unsigned long long)request_id);
        return;
    }
    loom_hash_remove(&engine->requests, op->id);
    if (!local && LOOM_ERR_IO == rc && !op->peer->rails[op->rail].failed) {
        /* the owner's write back to us on that rail broke: so did the rail
         * (the owner's notice may still be on its way), and a striped chunk
         * is then placed again on another */
        loom_peer_fail_rail(op->peer, op->rail, UCS_ERR_IO_ERROR);
    }
    if (LOOM_OK != rc && LOOM_ERR_IO != rc && op->notify == engine->config.name) {
        loom_log(engine, LOOM_LOG_ERROR, "peer %#llx refused our get of %zu bytes: %s",
                 (unsigned long long)op->peer->name, op->length, why);
    } else if (LOOM_OK != rc && LOOM_ERR_IO != rc) {
        loom_log(engine, LOOM_LOG_ERROR, "%s refused our push of %zu bytes to %#llx: %s",
                 local ? "this process" : "the owner", op->length,
                 (unsigned long long)op->notify, why);
    }
    loom_rdma_complete(op, rc);
}

/* The requester was told its serve is done, before the serve ends (UCT
 * still holds its data): counted when told, as every serve is, and no
 * longer among the requester's serves bounded here, since its window
 * already moved on. */
void loom_serve_told(loom_op_t *op)
{
    loom_rdma_account(op);
    op->done_sent = true;
    --op->peer->serves;
}

void loom_rdma_complete(loom_op_t *op, int rc)
{
    loom_checked_put_forget(op); /* a late acknowledgement finds nothing */
    /* A serve that notified early was counted and reported then. */
    if (!op->done_sent) {
        if (LOOM_OK == rc) {
            loom_rdma_account(op);
        }
        if (LOOM_OP_SERVE == op->kind) {
            loom_push_done_send(op->peer->engine, op->notify, op->rail, op->id, op->length, rc,
                                false);
        }
    }
    if (LOOM_OP_SERVE == op->kind) {
        loom_serve_notices_t notices;

        memcpy(&notices, op->msg, sizeof(notices));
        loom_push_notices_send(op->peer->engine, &notices, op->id,
                               (LOOM_OK == rc) ? op->length : 0, rc);
    }
    loom_op_finish(op, rc);
}

static void loom_rdma_comp(uct_completion_t *self)
{
    loom_op_t *op = loom_container_of(self, loom_op_t, comp);

    loom_wire_untrack(op);
    loom_rdma_complete(op, (UCS_OK == self->status) ? LOOM_OK : LOOM_ERR_IO);
}

void loom_rdma_comp_init(loom_op_t *op)
{
    loom_uct_comp_arm(&op->comp, loom_rdma_comp);
}

int loom_rdma_wait_on(loom_op_t *op, ucs_status_t status)
{
    if (UCS_OK == status) {
        loom_rdma_complete(op, LOOM_OK);
        return LOOM_OK;
    }
    if (UCS_INPROGRESS == status) {
        op->stage = LOOM_STAGE_WAIT;
        loom_wire_track(op); /* a failing rail fails it */
        return LOOM_OK;
    }
    return loom_status_to_rc(status);
}
