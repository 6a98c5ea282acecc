/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Channels: the ways an upper-layer message travels to a peer, each with
 * its own wire format: plain active messages (am_chan.c) and the peer's
 * eager ring (eager_tx.c, eager_rx.c).  The messages layer (msg_send.c,
 * msg_deliver.c) numbers, keeps, orders and acknowledges messages and
 * reaches a channel only through this interface; the engine lists the
 * channels in the order a message tries them (loom_engine_t.chans).
 */
#ifndef LOOM_CHAN_H
#define LOOM_CHAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct loom_peer;
struct loom_op;

/* One message leaving. */
typedef struct loom_chan_out {
    uint8_t             tag;
    const struct iovec *iov;
    int                 iovcnt;
    size_t              length;
    bool                ack_now; /* the peer is asked to acknowledge at once */
    struct loom_op     *op;      /* NULL: the data must be copied out now; else the
                                    channel may send from iov and complete op later */
    int                 rail;    /* set by the channel that took it: where it went */
} loom_chan_out_t;

/* One message that arrived whole on a channel the receiver reads. */
typedef struct loom_chan_in {
    uint32_t    seq;     /* its sequence number */
    uint32_t    ack;     /* the sender's acknowledgement, as on the wire */
    uint16_t    credits; /* ring credits it returns (LOOM_WIRE_CREDITS) */
    uint8_t     tag;
    const void *data;
    size_t      length;
    int         rail;    /* it came on */
    void       *slot;    /* the channel's own: what consume lets go of */
} loom_chan_in_t;

typedef struct loom_chan {
    const char *name;
    /* Send the message now, stamped with the peer's next sequence number:
     * LOOM_OK, LOOM_INPROGRESS (sent, but its data is read until out->op
     * completes), LOOM_ERR_AGAIN (not by this channel now: the next one may
     * take it), or an error. */
    int  (*send)(struct loom_peer *peer, loom_chan_out_t *out);
    /* For a channel the receiver reads (NULL for one whose messages are
     * handed up as they arrive, loom_msg_recv): the next message that
     * arrived whole, in the order it was written: 1 (*in set), 0 none yet.
     * One that arrived broken the channel refuses and skips itself. */
    int  (*next)(struct loom_peer *peer, loom_chan_in_t *in);
    /* Done with what next returned: the channel may reuse its memory. */
    void (*consume)(struct loom_peer *peer, loom_chan_in_t *in);
} loom_chan_t;

#define LOOM_CHANS_MAX 4

#endif
