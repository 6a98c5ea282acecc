/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Checked writes on the wire (the writer's side): a LOOM_WIRE_PUT message,
 * header and one segment of data, that the target checks against its
 * region table before it places a byte (checked_put.c receives it).
 */
#include "link/loom_link.h"

#include <string.h>

typedef struct loom_put_pack {
    const loom_wire_put_t *hdr;
    const void            *data;
    size_t                 length;
} loom_put_pack_t;

static size_t loom_put_pack(void *dest, void *arg)
{
    const loom_put_pack_t *pack = arg;

    memcpy(dest, pack->hdr, sizeof(*pack->hdr));
    memcpy((uint8_t *)dest + sizeof(*pack->hdr), pack->data, pack->length);
    return sizeof(*pack->hdr) + pack->length;
}

/* Post one segment: the transport's status.  comp (may be NULL) learns when
 * a zero-copy segment's data may be reused. */
ucs_status_t loom_put_segment_post(loom_peer_t *peer, int rail, const loom_wire_put_t *hdr,
                                   const void *data, uct_mem_h memh, size_t length,
                                   uct_completion_t *comp)
{
    uct_ep_h ep = peer->rails[rail].ep;

    if (peer->engine->rails[rail].checked_zcopy && length > 0) {
        uct_iov_t iov;

        loom_uct_iov_set(&iov, (void *)data, length, memh);
        return uct_ep_am_zcopy(ep, LOOM_WIRE_PUT, hdr, sizeof(*hdr), &iov, 1, 0, comp);
    } else {
        loom_put_pack_t pack = {hdr, data, length};
        ssize_t packed = uct_ep_am_bcopy(ep, LOOM_WIRE_PUT, loom_put_pack, &pack, 0);

        return (packed >= 0) ? UCS_OK : (ucs_status_t)packed;
    }
}

/* A write nobody waits an answer for: an eager ring slot or a ring
 * acknowledgement, whose protocol tells by itself what arrived.  The target
 * checks it as any other write (a ring freed there is a region gone, so a
 * late write into it is refused and counted) and sends no PUT_ACK (write id
 * 0).  It is one segment: rings on a checked rail fit one (eager.c). */
ucs_status_t loom_checked_write_post(loom_peer_t *peer, int rail, const void *data,
                                     uct_mem_h memh, size_t length, uint64_t region_id,
                                     uint32_t region_epoch, uint64_t addr,
                                     uct_completion_t *comp)
{
    loom_wire_put_t hdr;

    if (length > peer->engine->rails[rail].checked_seg) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    memset(&hdr, 0, sizeof(hdr));
    loom_wire_hdr_fill(&hdr.hdr, LOOM_WIRE_PUT, 0, sizeof(hdr) + length);
    hdr.hdr.flags    = LOOM_WIRE_FLAG_LAST;
    hdr.sender       = loom_le64(peer->engine->config.name);
    hdr.region_id    = loom_le64(region_id);
    hdr.addr         = loom_le64(addr);
    hdr.length       = loom_le64((uint64_t)length);
    hdr.region_epoch = region_epoch;
    hdr.rail_epoch   = loom_le32(peer->rails[rail].rail_epoch);
    return loom_put_segment_post(peer, rail, &hdr, data, memh, length, comp);
}
