/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The upper layer's put and get: the remote key checked and the range
 * within its region, then striped over the rails or posted on one.
 */
#include "rdma/loom_rdma.h"

static int loom_rdma_start(loom_peer_t *peer, loom_op_t *op, int kind, void *local,
                           loom_region_t *local_region, uint64_t remote_addr,
                           const void *remote_key, size_t remote_key_size, size_t length)
{
    const loom_wire_key_t *key;
    int rc;

    op->count_request = 0; /* the upper layer's memory: a put counts nothing */
    rc = loom_key_parse(peer->engine, remote_key, remote_key_size, &key);
    if (LOOM_OK != rc) {
        ++peer->engine->rails[peer->am_rail].stats.refused;
        return rc;
    }
    /* not given to a NIC that would write or read outside the region */
    if (!loom_key_covers(key, remote_addr, length)) {
        loom_log(peer->engine, LOOM_LOG_ERROR, "%s of %zu bytes at %#llx: outside the "
                 "region of its key", (LOOM_OP_PUT == kind) ? "put" : "get", length,
                 (unsigned long long)remote_addr);
        return LOOM_ERR_RANGE;
    }
    if (loom_stripe_guarded(peer)) {
        return loom_stripe_start(peer, op, kind, local, local_region, remote_addr,
                                 remote_key, remote_key_size, length,
                                 loom_stripe_wanted(peer, length));
    }
    return loom_rdma_post(peer, op, kind, loom_peer_rdma_rail(peer), local, local_region,
                          remote_addr, key, length);
}

int loom_put(loom_peer_t *peer, loom_op_t *op, void *local, loom_region_t *local_region,
             uint64_t remote_addr, const void *remote_key, size_t remote_key_size,
             size_t length)
{
    return loom_rdma_start(peer, op, LOOM_OP_PUT, local, local_region, remote_addr,
                           remote_key, remote_key_size, length);
}

int loom_get(loom_peer_t *peer, loom_op_t *op, void *local, loom_region_t *local_region,
             uint64_t remote_addr, const void *remote_key, size_t remote_key_size,
             size_t length)
{
    return loom_rdma_start(peer, op, LOOM_OP_GET, local, local_region, remote_addr,
                           remote_key, remote_key_size, length);
}
