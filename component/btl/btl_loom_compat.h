/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * What differs between the Open MPI series btl loom builds against: 4.1
 * (BTL interface 3.1.0) and 5.0 (3.3.0).  Everything else in the BTL is
 * the same source for both; a difference found later goes here, not into
 * an #if in the code.
 *
 *   4.1                                  5.0
 *   opal/threads/mutex.h                 opal/mca/threads/mutex.h
 *   opal/mca/pmix/pmix.h, OPAL_PMIX_*    opal/mca/pmix/pmix-internal.h, PMIX_*
 *   OPAL_MODULE_DECLSPEC                 OPAL_DECLSPEC
 *   opal_proc_t.proc_hostname            opal_get_proc_hostname() (a copy)
 *   receive callback (btl, tag, des,     receive callback (btl, receive
 *   cbdata)                              descriptor: endpoint, segments, tag,
 *                                        cbdata)
 *   osc rdma: any BTL with put/get       osc rdma: only one whose put completes
 *                                        at the target
 *                                        (MCA_BTL_FLAGS_RDMA_REMOTE_COMPLETION)
 */
#ifndef MCA_BTL_LOOM_COMPAT_H
#define MCA_BTL_LOOM_COMPAT_H

#include "opal_config.h"
#include "opal/mca/btl/btl.h"
#include "opal/util/proc.h"
#include "common/loom_compat.h"

#include <stdlib.h>
#include <string.h>

#if BTL_VERSION == 310
#include "opal/mca/pmix/pmix.h"
#include "opal/threads/mutex.h"
#define MCA_BTL_LOOM_INTERFACE      "3.1.0"
#define MCA_BTL_LOOM_DECLSPEC       OPAL_MODULE_DECLSPEC
#define MCA_BTL_LOOM_MODEX_SCOPE    OPAL_PMIX_GLOBAL
#define MCA_BTL_LOOM_EXTRA_FLAGS    0
/* without loom's atomics, osc pt2pt carries one-sided communication */
#define MCA_BTL_LOOM_ATOMICS_MAY_BE_OFF 1
#elif BTL_VERSION == 330
#include "opal/mca/pmix/pmix-internal.h"
#include "opal/mca/threads/mutex.h"
#define MCA_BTL_LOOM_INTERFACE      "3.3.0"
#define MCA_BTL_LOOM_DECLSPEC       OPAL_DECLSPEC
#define MCA_BTL_LOOM_MODEX_SCOPE    PMIX_GLOBAL
/* a put or get completes once placed at the target (a checked write's
 * answer on tcp, the rail's flush elsewhere): osc rdma may drive loom */
#define MCA_BTL_LOOM_EXTRA_FLAGS    MCA_BTL_FLAGS_RDMA_REMOTE_COMPLETION
/* without them osc rdma runs its active-message emulation of RDMA through
 * loom, which needs the sender of each message; loom's receive descriptor
 * names none (mca_btl_loom_deliver) and the emulation aborts on that */
#define MCA_BTL_LOOM_ATOMICS_MAY_BE_OFF 0
#else
#error "loom builds against BTL interface 3.1.0 (Open MPI 4.1) or 3.3.0 (Open MPI 5.0)"
#endif

/* The host a process runs on, into buf (for messages). */
static inline const char *mca_btl_loom_proc_host(const opal_proc_t *proc, char *buf,
                                                 size_t size)
{
#if BTL_VERSION == 310
    snprintf(buf, size, "%s", NULL != proc->proc_hostname ? proc->proc_hostname : "unknown host");
#else
    char *host = opal_get_proc_hostname(proc);

    snprintf(buf, size, "%s", NULL != host ? host : "unknown host");
    free(host);
#endif
    return buf;
}

/* Hands a message to the upper layer that registered its tag. */
static inline void mca_btl_loom_deliver(mca_btl_base_module_t *btl,
                                        const mca_btl_active_message_callback_t *reg,
                                        mca_btl_base_tag_t tag, const void *data, size_t length)
{
    mca_btl_base_segment_t segment;

    segment.seg_addr.pval = (void *)data;
    segment.seg_len       = length;
#if BTL_VERSION == 310
    mca_btl_base_descriptor_t des;

    memset(&des, 0, sizeof(des));
    des.des_segments      = &segment;
    des.des_segment_count = 1;
    reg->cbfunc(btl, tag, &des, reg->cbdata);
#else
    /* no endpoint: ob1 reads none; osc rdma drives loom directly
     * (MCA_BTL_LOOM_EXTRA_FLAGS) rather than through the active-message
     * emulation, the one user that needs it */
    mca_btl_base_receive_descriptor_t des = {
        .endpoint          = NULL,
        .des_segments      = &segment,
        .des_segment_count = 1,
        .tag               = tag,
        .cbdata            = reg->cbdata,
    };

    reg->cbfunc(btl, &des);
#endif
}

#endif
