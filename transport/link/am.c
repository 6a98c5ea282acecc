/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Active messages: the upper layer's sends and loom's own control messages.
 */
#include "link/loom_link.h"

#include <stddef.h>
#include <string.h>

typedef struct loom_am_pack_arg {
    const loom_wire_send_t *hdr;
    const struct iovec    *iov;
    int                    iovcnt;
} loom_am_pack_arg_t;

static size_t loom_am_pack(void *dest, void *arg)
{
    const loom_am_pack_arg_t *pack = arg;
    uint8_t *p = dest;

    if (NULL != pack->hdr) {
        memcpy(p, pack->hdr, sizeof(*pack->hdr));
        p += sizeof(*pack->hdr);
    }
    p = loom_iov_pack(p, pack->iov, pack->iovcnt);
    return (size_t)(p - (uint8_t *)dest);
}

/* Send a flat message on ep now, whatever its rail's state (rail probes):
 * LOOM_OK, LOOM_ERR_AGAIN, or an error. */
int loom_am_send_raw(uct_ep_h ep, uint8_t am_id, const void *msg, size_t length)
{
    struct iovec iov = {(void *)msg, length};
    loom_am_pack_arg_t arg = {NULL, &iov, 1};
    ssize_t packed = uct_ep_am_bcopy(ep, am_id, loom_am_pack, &arg, 0);

    if (packed >= 0) {
        return LOOM_OK;
    }
    return (UCS_ERR_NO_RESOURCE == (ucs_status_t)packed) ? LOOM_ERR_AGAIN
                                                        : loom_status_to_rc((ucs_status_t)packed);
}

/* May a message go on the rail's endpoint ep now?  LOOM_OK, or why not. */
static int loom_am_ep_ready(loom_peer_t *peer, int rail, uct_ep_h ep)
{
    loom_peer_rail_t *prail = &peer->rails[rail];

    if (prail->failed) {
        return LOOM_ERR_UNREACH;
    }
    return (ep == prail->ep && !prail->usable) ? LOOM_ERR_AGAIN : LOOM_OK;
}

/* What a send the transport refused means: busy (try again), or the rail
 * failed, and the message goes on the rail that took over, if any. */
static int loom_am_refused(loom_peer_t *peer, int rail, ucs_status_t status)
{
    if (UCS_ERR_NO_RESOURCE == status) {
        return LOOM_ERR_AGAIN;
    }
    loom_log(peer->engine, LOOM_LOG_ERROR, "send to peer %#llx on rail %d failed: %s",
             (unsigned long long)peer->name, rail, ucs_status_string(status));
    loom_peer_fail_rail(peer, rail, status);
    /* another rail took over: the message goes there, after those sent again */
    return peer->rails[peer->am_rail].failed ? LOOM_ERR_IO : LOOM_ERR_AGAIN;
}

/*
 * The rail's wireup endpoint refused a CONNECT.  That says nothing of the
 * rail: when the peer renews its own wireup endpoint (connect_retry.c), UCT
 * closes the connection the two endpoints may share, which resets ours.
 * The CONNECT is lost, as an undelivered one would be, and sent again as
 * such (connect_retry.c, or the peer's own CONNECT again); it goes on a
 * fresh endpoint.
 */
static int loom_am_boot_refused(loom_peer_t *peer, int rail, ucs_status_t status)
{
    loom_log(peer->engine, LOOM_LOG_INFO, "wireup endpoint of rail %d to peer %#llx failed "
             "(%s): the next CONNECT goes on a fresh one", rail,
             (unsigned long long)peer->name, ucs_status_string(status));
    ++peer->engine->rails[rail].stats.wireup_failures;
    loom_peer_boot_ep_renew(peer, rail);
    return LOOM_ERR_UNREACH;
}

int loom_am_issue_ep(loom_peer_t *peer, int rail, uct_ep_h ep, uint8_t am_id,
                     const loom_wire_send_t *hdr, const struct iovec *iov, int iovcnt)
{
    loom_am_pack_arg_t arg = {hdr, iov, iovcnt};
    ssize_t packed;
    int rc = loom_am_ep_ready(peer, rail, ep);

    if (LOOM_OK != rc) {
        return rc;
    }
    packed = uct_ep_am_bcopy(ep, am_id, loom_am_pack, &arg, 0);
    if (packed >= 0) {
        return LOOM_OK;
    }
    if (ep != peer->rails[rail].ep && UCS_ERR_NO_RESOURCE != (ucs_status_t)packed) {
        return loom_am_boot_refused(peer, rail, (ucs_status_t)packed);
    }
    return loom_am_refused(peer, rail, (ucs_status_t)packed); /* busy, or the rail failed */
}

int loom_am_issue(loom_peer_t *peer, int rail, uint8_t am_id, const loom_wire_send_t *hdr,
                  const struct iovec *iov, int iovcnt)
{
    return loom_am_issue_ep(peer, rail, peer->rails[rail].ep, am_id, hdr, iov, iovcnt);
}

static void loom_am_zcopy_done(uct_completion_t *self)
{
    loom_op_t *op = loom_container_of(self, loom_op_t, comp);

    loom_wire_untrack(op);
    loom_op_finish(op, (UCS_OK == self->status) ? LOOM_OK : LOOM_ERR_IO);
}

/* Send a message of the upper layer from where its data lies (the rail
 * needs no memory handle for it): LOOM_OK when it left at once,
 * LOOM_INPROGRESS when the rail still reads iov (op completes when it is
 * done, after loom_am_in_flight), else as loom_am_issue. */
int loom_am_issue_zcopy(loom_peer_t *peer, int rail, const loom_wire_send_t *hdr,
                        const struct iovec *iov, int iovcnt, loom_op_t *op)
{
    uct_iov_t uiov[LOOM_AM_ZCOPY_IOV];
    ucs_status_t status;
    int rc = loom_am_ep_ready(peer, rail, peer->rails[rail].ep), i;

    if (LOOM_OK != rc) {
        return rc;
    }
    for (i = 0; i < iovcnt; ++i) {
        loom_uct_iov_set(&uiov[i], iov[i].iov_base, iov[i].iov_len, UCT_MEM_HANDLE_NULL);
    }
    loom_uct_comp_arm(&op->comp, loom_am_zcopy_done);
    status = uct_ep_am_zcopy(peer->rails[rail].ep, LOOM_WIRE_SEND, hdr, sizeof(*hdr), uiov,
                             iovcnt, 0, &op->comp);
    if (UCS_OK == status) {
        return LOOM_OK;
    }
    if (UCS_INPROGRESS == status) {
        op->rail = rail;
        return LOOM_INPROGRESS;
    }
    return loom_am_refused(peer, rail, status);
}

/* A message whose data the rail still reads: it completes with the rail's
 * completion, or fails with the rail (the RDMA layer fails them). */
void loom_am_in_flight(loom_op_t *op)
{
    op->stage = LOOM_STAGE_WAIT;
    loom_wire_track(op);
}

/* Queue a control message (it carries its own header) for peer. */
static loom_op_t *loom_ctrl_op_new(loom_peer_t *peer, int rail, const void *msg,
                                   size_t length)
{
    loom_op_t *op;

    if (length > LOOM_OP_MSG_MAX) {
        return NULL;
    }
    op = loom_op_alloc_ctrl(peer->engine);
    if (NULL != op) {
        loom_op_start(peer, op, LOOM_OP_CTRL, LOOM_STAGE_SEND);
        memcpy(op->msg, msg, length);
        op->msg_len = length;
        op->rail    = rail;
    }
    return op;
}

/* Queue a control message ahead of what waits for its rail, or behind it. */
static int loom_ctrl_queue(loom_peer_t *peer, int rail, const void *msg, size_t length,
                           bool first)
{
    loom_op_t *op = loom_ctrl_op_new(peer, rail, msg, length);

    if (NULL == op) {
        return (length > LOOM_OP_MSG_MAX) ? LOOM_ERR_INVALID : LOOM_ERR_NOMEM;
    }
    if (first) {
        loom_op_queue_front(peer, op);
    } else {
        loom_op_queue(peer, op);
    }
    return LOOM_OK;
}

int loom_ctrl_send(loom_peer_t *peer, int rail, const void *msg, size_t length)
{
    /* ahead of RDMA waiting for the rail: a completion notice must not wait
     * for the next chunk's data */
    return loom_ctrl_queue(peer, rail, msg, length, true);
}

/* Behind everything queued to the rail: a goodbye is the last word. */
int loom_ctrl_send_last(loom_peer_t *peer, int rail, const void *msg, size_t length)
{
    return loom_ctrl_queue(peer, rail, msg, length, false);
}

static void loom_ctrl_refusal_free(loom_op_t *op, int status)
{
    (void)status;
    --op->peer->refusals;
    loom_op_free_owned(op->peer->engine, op);
}

/* Send the answer to a request of the peer that was refused: at most
 * LOOM_REFUSALS_MAX wait per peer, so that requests sent faster than the
 * answers can leave do not make us queue without end.  LOOM_ERR_AGAIN
 * at the bound. */
int loom_ctrl_send_refusal(loom_peer_t *peer, int rail, const void *msg, size_t length)
{
    loom_op_t *op;

    if (peer->refusals >= LOOM_REFUSALS_MAX) {
        return LOOM_ERR_AGAIN;
    }
    op = loom_ctrl_op_new(peer, rail, msg, length);
    if (NULL == op) {
        return LOOM_ERR_NOMEM;
    }
    op->cb = loom_ctrl_refusal_free;
    ++peer->refusals;
    loom_op_queue_front(peer, op);
    return LOOM_OK;
}

/*
 * Queue a CONNECT message ahead of everything else to the peer: what is
 * queued may be waiting for exactly this connection.  With via_boot it goes
 * on the rail's bootstrap endpoint.
 */
int loom_connect_msg_send(loom_peer_t *peer, int rail, bool via_boot, const void *msg,
                          size_t length)
{
    loom_op_t *op = loom_ctrl_op_new(peer, rail, msg, length);

    if (NULL == op) {
        return (length > LOOM_OP_MSG_MAX) ? LOOM_ERR_INVALID : LOOM_ERR_NOMEM;
    }
    op->tag = via_boot; /* the engine's progress: use boot_ep */
    loom_op_queue_front(peer, op);
    return LOOM_OK;
}

/* Control messages that name their sender right after the header. */
#define LOOM_SENDER_FIRST(_type) \
    _Static_assert(offsetof(_type, sender) == sizeof(loom_wire_hdr_t), \
                   #_type ": sender right after the header")
LOOM_SENDER_FIRST(loom_wire_msg_ack_t);
LOOM_SENDER_FIRST(loom_wire_probe_t);
LOOM_SENDER_FIRST(loom_wire_eager_req_t);
LOOM_SENDER_FIRST(loom_wire_eager_note_t);

/*
 * Such a message checked (loom_wire_hdr_check), its first size bytes
 * copied to msg, and its sender looked up.  NULL when it is malformed or
 * its sender is not connected: refused on the rail, and said so, naming
 * the message ('what'; NULL: a message that may still come from a peer
 * just disconnected, counted only).
 */
loom_peer_t *loom_ctrl_recv_peer(loom_rail_t *rail, const void *data, size_t length,
                                 uint8_t type, void *msg, size_t size, const char *what)
{
    loom_peer_t *peer;
    uint64_t sender;

    if (!loom_wire_hdr_check(rail, data, length, type, size)) {
        return NULL;
    }
    memcpy(msg, data, size);
    memcpy(&sender, (const uint8_t *)data + sizeof(loom_wire_hdr_t), sizeof(sender));
    peer = loom_peer_lookup(rail->engine, loom_from_le64(sender));
    if (NULL == peer) {
        ++rail->stats.refused;
        if (NULL != what) {
            loom_log(rail->engine, LOOM_LOG_WARN, "rail %s:%s: refused a %s from process "
                     "%#llx, not connected", rail->info.tl_name, rail->info.dev_name, what,
                     (unsigned long long)loom_from_le64(sender));
        }
    }
    return peer;
}
