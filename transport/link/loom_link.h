/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Layer 2, link: rails (memory domain, interface, limits, wireup), a rail
 * towards one peer and its failure, control and raw active messages,
 * checked writes on the wire.
 * What this layer offers to the layers above (transport/layers.map).
 */
#ifndef LOOM_LINK_H
#define LOOM_LINK_H

#include "structures/loom_structures.h"

/* rail_iface.c */
int  loom_rail_iface_open(loom_rail_t *rail, const char *tl_name, const char *dev_name,
                          uct_iface_h *iface_p, uct_iface_attr_t *attr);
int  loom_rail_set_handlers(loom_rail_t *rail, uct_iface_h iface);

/* rail_wireup.c */
void loom_rail_wireup_open(loom_rail_t *rail);
void loom_rail_wireup_close(loom_rail_t *rail);

/* rail.c */
int  loom_rail_open(loom_engine_t *engine, loom_rail_t *rail, uct_component_h component,
                    const char *md_name, const char *tl_name, const char *dev_name);
void loom_rail_close(loom_rail_t *rail);
void loom_checked_rail_init(loom_rail_t *rail);
/* Does the rail's NIC place a peer's writes into our memory by itself, with
 * nothing that wakes a sleeper (RDMA, shared memory)?  tcp carries each
 * write as a message on a socket. */
static inline bool loom_rail_places_writes(const loom_rail_t *rail)
{
    return 0 != strcmp(rail->info.tl_name, "tcp");
}
/* iovs a message sent by zero-copy AM may have (loom_am_issue_zcopy) */
#define LOOM_AM_ZCOPY_IOV 4

/* link.c */
/* The peer goes, or we leave it: errors of its endpoints are no failures. */
static inline bool loom_peer_closing(const loom_peer_t *peer)
{
    return peer->said_bye || peer->leaving;
}
loom_peer_t *loom_peer_lookup(loom_engine_t *engine, uint64_t name);
loom_peer_t *loom_peer_of_message(loom_engine_t *engine, uint64_t name);
int  loom_peer_rdma_rail(loom_peer_t *peer);
void loom_peer_choose_am_rail(loom_peer_t *peer);
void loom_peer_next_am_rail(loom_peer_t *peer);
int  loom_peer_other_rail(const loom_peer_t *peer, int rail);
bool loom_peer_reachable(const loom_peer_t *peer);
int  loom_peer_iface_ep_create(loom_peer_t *peer, int index, uct_iface_h iface,
                              uct_ep_h *ep_p);
void loom_peer_boot_ep_renew(loom_peer_t *peer, int index);
size_t loom_connect_fill(loom_peer_t *peer, int index, unsigned flags, uint8_t *msg,
                         size_t size);
void loom_rail_watch_start(loom_peer_t *peer, int rail);
void loom_rail_watch_landed(loom_peer_t *peer, int rail);
void loom_peer_fail_rail(loom_peer_t *peer, int rail, ucs_status_t status);
ucs_status_t loom_rail_error(void *arg, uct_ep_h ep, ucs_status_t status);

/* am.c */
int  loom_am_send_raw(uct_ep_h ep, uint8_t am_id, const void *msg, size_t length);
int  loom_am_issue_ep(loom_peer_t *peer, int rail, uct_ep_h ep, uint8_t am_id,
                      const loom_wire_send_t *hdr, const struct iovec *iov, int iovcnt);
/* Send one message on a rail now: LOOM_OK, LOOM_ERR_AGAIN, or an error. */
int  loom_am_issue(loom_peer_t *peer, int rail, uint8_t am_id, const loom_wire_send_t *hdr,
                   const struct iovec *iov, int iovcnt);
int  loom_am_issue_zcopy(loom_peer_t *peer, int rail, const loom_wire_send_t *hdr,
                         const struct iovec *iov, int iovcnt, loom_op_t *op);
void loom_am_in_flight(loom_op_t *op);
int  loom_ctrl_send(loom_peer_t *peer, int rail, const void *msg, size_t length);
int  loom_ctrl_send_last(loom_peer_t *peer, int rail, const void *msg, size_t length);
int  loom_ctrl_send_refusal(loom_peer_t *peer, int rail, const void *msg, size_t length);
int  loom_connect_msg_send(loom_peer_t *peer, int rail, bool via_boot, const void *msg,
                           size_t length);
loom_peer_t *loom_ctrl_recv_peer(loom_rail_t *rail, const void *data, size_t length,
                                 uint8_t type, void *msg, size_t size, const char *what);

/* checked_write.c */
ucs_status_t loom_put_segment_post(loom_peer_t *peer, int rail, const loom_wire_put_t *hdr,
                                   const void *data, uct_mem_h memh, size_t length,
                                   uct_completion_t *comp);
ucs_status_t loom_checked_write_post(loom_peer_t *peer, int rail, const void *data,
                                     uct_mem_h memh, size_t length, uint64_t region_id,
                                     uint32_t region_epoch, uint64_t addr,
                                     uct_completion_t *comp);

#endif
