/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * loom BTL endpoints connected on first use, and the engine's return codes
 * in Open MPI's terms: what the module, the send path, RDMA and the
 * collective's API all reach, so that none of them calls another for it.
 */
#include "btl_loom.h"

#include "opal/util/output.h"
#include "opal/util/proc.h"

#include <stdlib.h>

int mca_btl_loom_rc_to_opal(int rc)
{
    switch (rc) {
    case LOOM_OK:
    case LOOM_INPROGRESS:    return OPAL_SUCCESS;
    case LOOM_ERR_AGAIN:     return OPAL_ERR_OUT_OF_RESOURCE;
    case LOOM_ERR_NOMEM:     return OPAL_ERR_OUT_OF_RESOURCE;
    case LOOM_ERR_LIMIT:     return OPAL_ERR_OUT_OF_RESOURCE; /* a peer's bound */
    case LOOM_ERR_INVALID:   return OPAL_ERR_BAD_PARAM;
    case LOOM_ERR_UNREACH:   return OPAL_ERR_UNREACH;
    case LOOM_ERR_NOT_FOUND: return OPAL_ERR_NOT_FOUND;
    default:                 return OPAL_ERROR;
    }
}

/* The endpoint's peer, connected on first use; NULL if it cannot be.
 * Under the lock. */
loom_peer_t *mca_btl_loom_endpoint_peer(struct mca_btl_base_endpoint_t *endpoint)
{
    opal_proc_t *proc = endpoint->proc;
    int rc;

    if (OPAL_LIKELY(NULL != endpoint->peer)) {
        return endpoint->peer;
    }
    if (NULL == endpoint->addr_blob) {
        return NULL; /* failed before, and said so */
    }
    rc = loom_peer_connect(endpoint->module->engine, endpoint->addr_blob,
                           endpoint->addr_blob_len, &endpoint->peer);
    free(endpoint->addr_blob);
    endpoint->addr_blob = NULL;
    if (LOOM_OK != rc) {
        char host[256];

        endpoint->peer = NULL;
        opal_output(0, "btl loom: cannot connect to %s on %s: %s",
                    OPAL_NAME_PRINT(proc->proc_name),
                    mca_btl_loom_proc_host(proc, host, sizeof(host)),
                    loom_strerror(rc));
    }
    return endpoint->peer;
}
