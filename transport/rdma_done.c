/*
 * The end of an RDMA operation: counted, a served push answered, and the
 * op handed to the done list.
 */
#include "loom_internal.h"

void loom_rdma_account(loom_op_t *op)
{
    loom_rail_stats_t *stats = &op->peer->engine->rails[op->rail].stats;

    switch (op->kind) {
    case LOOM_OP_PUT:
        stats->bytes_sent += op->length;
        ++stats->puts;
        break;
    case LOOM_OP_SERVE:
        stats->bytes_sent += op->length;
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

void loom_rdma_complete(loom_op_t *op, int rc)
{
    loom_checked_put_forget(op); /* a late acknowledgement finds nothing */
    /* A serve that notified early was counted and reported then. */
    if (!op->done_sent) {
        if (LOOM_OK == rc) {
            loom_rdma_account(op);
        }
        if (LOOM_OP_SERVE == op->kind && !op->write_notified) {
            loom_push_done_send(op->peer->engine, op->notify, op->rail, op->id, op->length, rc,
                                false);
        }
    }
    loom_op_finish(op, rc);
}
