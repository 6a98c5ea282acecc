/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * loom BTL RDMA: memory registration handles, put and get (atomics:
 * btl_loom_atomic.c).
 */
#include "btl_loom.h"

#include <stdlib.h>

/* Only the access the upper layer asks for (ob1: remote read for the data a
 * peer gets, local write for the buffer of its own get, remote write for a
 * peer's put). */
static unsigned mca_btl_loom_access(uint32_t flags)
{
    unsigned access = 0;

    if (flags & MCA_BTL_REG_FLAG_LOCAL_WRITE) {
        access |= LOOM_ACCESS_LOCAL_WRITE;
    }
    if (flags & MCA_BTL_REG_FLAG_REMOTE_WRITE) {
        access |= LOOM_ACCESS_REMOTE_WRITE;
    }
    if (flags & MCA_BTL_REG_FLAG_REMOTE_READ) {
        access |= LOOM_ACCESS_REMOTE_READ;
    }
    if (flags & MCA_BTL_REG_FLAG_REMOTE_ATOMIC) {
        access |= LOOM_ACCESS_REMOTE_ATOMIC;
    }
    return access;
}

struct mca_btl_base_registration_handle_t *
mca_btl_loom_register_mem(struct mca_btl_base_module_t *btl,
                          struct mca_btl_base_endpoint_t *endpoint, void *base, size_t size,
                          uint32_t flags)
{
    mca_btl_loom_module_t *module = (mca_btl_loom_module_t *)btl;
    mca_btl_loom_reg_t *reg;
    int rc;

    (void)endpoint;
    reg = malloc(sizeof(*reg) + module->key_size);
    if (NULL == reg) {
        return NULL;
    }
    MCA_BTL_LOOM_LOCK();
    rc = loom_mem_register_cached(module->engine, base, size, mca_btl_loom_access(flags),
                                  &reg->region);
    if (LOOM_OK == rc) {
        rc = loom_key_pack(reg->region, reg->key, module->key_size);
        if (LOOM_OK != rc) {
            loom_mem_deregister(reg->region);
        }
    }
    MCA_BTL_LOOM_UNLOCK();
    if (LOOM_OK != rc) {
        free(reg);
        return NULL;
    }
    /* What the upper layer ships to peers is exactly the packed key. */
    return (struct mca_btl_base_registration_handle_t *)reg->key;
}

static mca_btl_loom_reg_t *mca_btl_loom_reg_of(struct mca_btl_base_registration_handle_t *h)
{
    return (mca_btl_loom_reg_t *)((char *)h - offsetof(mca_btl_loom_reg_t, key));
}

int mca_btl_loom_deregister_mem(struct mca_btl_base_module_t *btl,
                                struct mca_btl_base_registration_handle_t *handle)
{
    mca_btl_loom_reg_t *reg = mca_btl_loom_reg_of(handle);

    (void)btl;
    MCA_BTL_LOOM_LOCK();
    loom_mem_deregister(reg->region);
    MCA_BTL_LOOM_UNLOCK();
    free(reg);
    return OPAL_SUCCESS;
}

static void mca_btl_loom_rdma_done(loom_op_t *op, int status)
{
    mca_btl_loom_rdma_t *rdma = op->user;

    rdma->cbfunc(&rdma->module->super, rdma->endpoint, rdma->local_address,
                 rdma->local_handle, rdma->cbcontext, rdma->cbdata,
                 mca_btl_loom_rc_to_opal(status));
    free(rdma);
}

/* An RDMA or atomic operation whose completion goes to cbfunc; NULL when out
 * of memory. */
static mca_btl_loom_rdma_t *
mca_btl_loom_rdma_new(mca_btl_loom_module_t *module, struct mca_btl_base_endpoint_t *endpoint,
                      const mca_btl_loom_request_t *req,
                      mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    mca_btl_loom_rdma_t *rdma = malloc(sizeof(*rdma));

    if (NULL != rdma) {
        rdma->module        = module;
        rdma->endpoint      = endpoint;
        rdma->local_address = req->local_address;
        rdma->local_handle  = req->local_handle;
        rdma->cbfunc        = cbfunc;
        rdma->cbcontext     = cbcontext;
        rdma->cbdata        = cbdata;
        rdma->op.cb         = mca_btl_loom_rdma_done;
        rdma->op.user       = rdma;
    }
    return rdma;
}

static loom_region_t *mca_btl_loom_local_region(const mca_btl_loom_request_t *req)
{
    return (NULL != req->local_handle) ? mca_btl_loom_reg_of(req->local_handle)->region : NULL;
}

/* On a peer: completes through op's callback. */
static int mca_btl_loom_start(mca_btl_loom_module_t *module, loom_peer_t *peer, loom_op_t *op,
                              const mca_btl_loom_request_t *req)
{
    switch (req->kind) {
    case MCA_BTL_LOOM_PUT:
        return loom_put(peer, op, req->local_address, mca_btl_loom_local_region(req),
                        req->remote_address, req->remote_handle, module->key_size, req->size);
    case MCA_BTL_LOOM_GET:
        return loom_get(peer, op, req->local_address, mca_btl_loom_local_region(req),
                        req->remote_address, req->remote_handle, module->key_size, req->size);
    default:
        return loom_atomic(peer, op, req->atomic_op, (unsigned)req->size, req->remote_address,
                           req->remote_handle, module->key_size, req->operand, req->compare,
                           req->local_address);
    }
}

/* On this process's own memory: done on return. */
static int mca_btl_loom_start_local(mca_btl_loom_module_t *module,
                                    const mca_btl_loom_request_t *req)
{
    switch (req->kind) {
    case MCA_BTL_LOOM_PUT:
        return loom_local_put(module->engine, req->local_address, req->remote_address,
                              req->remote_handle, module->key_size, req->size);
    case MCA_BTL_LOOM_GET:
        return loom_local_get(module->engine, req->local_address, req->remote_address,
                              req->remote_handle, module->key_size, req->size);
    default:
        return loom_local_atomic(module->engine, req->atomic_op, (unsigned)req->size,
                                 req->remote_address, req->remote_handle, module->key_size,
                                 req->operand, req->compare, req->local_address);
    }
}

int mca_btl_loom_issue(mca_btl_loom_module_t *module, struct mca_btl_base_endpoint_t *endpoint,
                       const mca_btl_loom_request_t *req,
                       mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                       void *cbdata)
{
    mca_btl_loom_rdma_t *rdma;
    loom_peer_t *peer;
    int rc;

    if (NULL == req->remote_handle) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (endpoint->self) {
        MCA_BTL_LOOM_LOCK();
        rc = mca_btl_loom_start_local(module, req);
        MCA_BTL_LOOM_UNLOCK();
        if (LOOM_OK != rc) {
            return mca_btl_loom_rc_to_opal(rc);
        }
        cbfunc(&module->super, endpoint, req->local_address, req->local_handle, cbcontext,
               cbdata, OPAL_SUCCESS);
        return OPAL_SUCCESS;
    }
    rdma = mca_btl_loom_rdma_new(module, endpoint, req, cbfunc, cbcontext, cbdata);
    if (NULL == rdma) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    MCA_BTL_LOOM_LOCK();
    peer = mca_btl_loom_endpoint_peer(endpoint);
    rc   = (NULL == peer) ? LOOM_ERR_UNREACH : mca_btl_loom_start(module, peer, &rdma->op, req);
    MCA_BTL_LOOM_UNLOCK();
    if (rc < 0) {
        free(rdma);
        return mca_btl_loom_rc_to_opal(rc);
    }
    return OPAL_SUCCESS;
}

int mca_btl_loom_put(struct mca_btl_base_module_t *btl,
                     struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                     uint64_t remote_address,
                     struct mca_btl_base_registration_handle_t *local_handle,
                     struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                     int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
                     void *cbcontext, void *cbdata)
{
    mca_btl_loom_request_t req = {.kind = MCA_BTL_LOOM_PUT, .local_address = local_address,
                                  .remote_address = remote_address,
                                  .local_handle = local_handle, .remote_handle = remote_handle,
                                  .size = size};

    (void)flags;
    (void)order;
    return mca_btl_loom_issue((mca_btl_loom_module_t *)btl, endpoint, &req, cbfunc, cbcontext,
                              cbdata);
}

int mca_btl_loom_get(struct mca_btl_base_module_t *btl,
                     struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                     uint64_t remote_address,
                     struct mca_btl_base_registration_handle_t *local_handle,
                     struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                     int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
                     void *cbcontext, void *cbdata)
{
    mca_btl_loom_request_t req = {.kind = MCA_BTL_LOOM_GET, .local_address = local_address,
                                  .remote_address = remote_address,
                                  .local_handle = local_handle, .remote_handle = remote_handle,
                                  .size = size};

    (void)flags;
    (void)order;
    return mca_btl_loom_issue((mca_btl_loom_module_t *)btl, endpoint, &req, cbfunc, cbcontext,
                              cbdata);
}
