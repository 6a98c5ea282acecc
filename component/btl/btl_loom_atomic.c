/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * loom BTL atomics (BTL 3.1 btl_atomic_op, _fop, _cswap): loom_atomic, run
 * by the target's CPU, so they are atomic with the target's own CPU atomics
 * too (MCA_BTL_ATOMIC_SUPPORTS_GLOB).
 */
#include "btl_loom.h"

#include <stdlib.h>

/* loom's operation for a BTL one, or -1. */
static int mca_btl_loom_atomic_op(mca_btl_base_atomic_op_t op)
{
    switch (op) {
    case MCA_BTL_ATOMIC_ADD:  return LOOM_ATOMIC_ADD;
    case MCA_BTL_ATOMIC_AND:  return LOOM_ATOMIC_AND;
    case MCA_BTL_ATOMIC_OR:   return LOOM_ATOMIC_OR;
    case MCA_BTL_ATOMIC_XOR:  return LOOM_ATOMIC_XOR;
    case MCA_BTL_ATOMIC_LAND: return LOOM_ATOMIC_LAND;
    case MCA_BTL_ATOMIC_LOR:  return LOOM_ATOMIC_LOR;
    case MCA_BTL_ATOMIC_LXOR: return LOOM_ATOMIC_LXOR;
    case MCA_BTL_ATOMIC_SWAP: return LOOM_ATOMIC_SWAP;
    case MCA_BTL_ATOMIC_MIN:  return LOOM_ATOMIC_MIN;
    case MCA_BTL_ATOMIC_MAX:  return LOOM_ATOMIC_MAX;
    default:                  return -1;
    }
}

static int mca_btl_loom_atomic(struct mca_btl_base_module_t *btl,
                               struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                               uint64_t remote_address,
                               struct mca_btl_base_registration_handle_t *local_handle,
                               struct mca_btl_base_registration_handle_t *remote_handle,
                               int atomic_op, uint64_t operand, uint64_t compare, int flags,
                               mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                               void *cbdata)
{
    mca_btl_loom_request_t req = {.kind = MCA_BTL_LOOM_ATOMIC, .local_address = local_address,
                                  .remote_address = remote_address,
                                  .local_handle = local_handle, .remote_handle = remote_handle,
                                  .size = (flags & MCA_BTL_ATOMIC_FLAG_32BIT) ? 4 : 8,
                                  .atomic_op = atomic_op, .operand = operand,
                                  .compare = compare};

    if (atomic_op < 0 || (flags & MCA_BTL_ATOMIC_FLAG_FLOAT)) {
        return OPAL_ERR_NOT_AVAILABLE;
    }
    return mca_btl_loom_issue((mca_btl_loom_module_t *)btl, endpoint, &req, cbfunc, cbcontext,
                              cbdata);
}

int mca_btl_loom_aop(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     uint64_t remote_address,
                     struct mca_btl_base_registration_handle_t *remote_handle,
                     mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                     mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    (void)order;
    return mca_btl_loom_atomic(btl, endpoint, NULL, remote_address, NULL, remote_handle,
                               mca_btl_loom_atomic_op(op), operand, 0, flags, cbfunc,
                               cbcontext, cbdata);
}

int mca_btl_loom_afop(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      void *local_address, uint64_t remote_address,
                      struct mca_btl_base_registration_handle_t *local_handle,
                      struct mca_btl_base_registration_handle_t *remote_handle,
                      mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                      mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    (void)order;
    return mca_btl_loom_atomic(btl, endpoint, local_address, remote_address, local_handle,
                               remote_handle, mca_btl_loom_atomic_op(op), operand, 0, flags,
                               cbfunc, cbcontext, cbdata);
}

int mca_btl_loom_acswap(struct mca_btl_base_module_t *btl,
                        struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                        uint64_t remote_address,
                        struct mca_btl_base_registration_handle_t *local_handle,
                        struct mca_btl_base_registration_handle_t *remote_handle,
                        uint64_t compare, uint64_t value, int flags, int order,
                        mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                        void *cbdata)
{
    (void)order;
    return mca_btl_loom_atomic(btl, endpoint, local_address, remote_address, local_handle,
                               remote_handle, LOOM_ATOMIC_CSWAP, value, compare, flags, cbfunc,
                               cbcontext, cbdata);
}
