/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * What loom's BTL offers its collective component (coll loom, a separate
 * .so): the engine's pushes, counters and registrations, each taken under
 * the BTL's lock.  The collective finds it through the BTL module of any
 * endpoint ob1's BML holds (mca_btl_loom_module_t.coll_api), so neither
 * component links the other.
 */
#ifndef MCA_BTL_LOOM_COLL_API_H
#define MCA_BTL_LOOM_COLL_API_H

#include "opal/mca/btl/btl.h"

#include "loom/transport.h"

struct mca_btl_base_endpoint_t;

#define MCA_BTL_LOOM_COLL_API_VERSION 3

typedef struct mca_btl_loom_coll_api {
    unsigned version;
    /* The process name pushes use for the endpoint's process, connecting to
     * it now if it was not (0: it cannot be reached); for this process (or
     * NULL), its own name. */
    uint64_t (*name)(struct mca_btl_base_endpoint_t *endpoint);
    int      (*push)(loom_op_t *op, const loom_push_args_t *args);
    uint64_t (*counter_value)(uint64_t counter);
    /* LOOM_ERR_NOT_FOUND, a failure a notice told of, or LOOM_OK. */
    int      (*counter_status)(uint64_t counter);
    /* Adds amount to counter at process proc (in order with this process's
     * messages to it; dropped there if it was released). */
    int      (*counter_add)(uint64_t proc, uint64_t counter, uint64_t amount);
    /* count fresh counters (loom_counters_open): never handed out before,
     * never made again by a late notice once released. */
    int      (*counters_open)(unsigned count, uint64_t *first);
    /* Releases counters first .. first + count - 1; returns the pushes that
     * waited on them and were cancelled. */
    unsigned (*counters_release)(uint64_t first, unsigned count);
    /* Registers [addr, addr + length) with access, and packs its key into
     * key (*key_size bytes, at most LOOM_OP_MSG_MAX). */
    int      (*mem_register)(void *addr, size_t length, unsigned access,
                             loom_region_t **region_p, void *key, size_t *key_size);
    void     (*mem_deregister)(loom_region_t *region);
    /* loom_mem_revoke: for a buffer whose call failed, so that a late push
     * fails at the NIC instead of landing after the call returned. */
    void     (*mem_revoke)(loom_region_t *region);
    const char *(*strerror)(int rc);
} mca_btl_loom_coll_api_t;

/* What coll loom reads of loom's BTL module (mca_btl_loom_module_t starts
 * with these two, checked where the BTL builds): the base module ob1's BML
 * holds, then the offer. */
typedef struct mca_btl_loom_coll_view {
    mca_btl_base_module_t super;
    const mca_btl_loom_coll_api_t *coll_api;
} mca_btl_loom_coll_view_t;

#endif
