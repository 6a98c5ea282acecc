/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The broadcast's tree and its pushes (coll_loom_bcast.h): fanout children
 * per node, ranks relative to the root; each edge's push waits at its
 * parent on the segment's counter and tells the child and the parent.
 */
#include "coll_loom_bcast.h"

#include "opal/util/output.h"

#include <string.h>

static int mca_coll_loom_bcast_real(const mca_coll_loom_call_t *call, int v)
{
    return (v + call->root) % call->size;
}

static int mca_coll_loom_bcast_parent(const mca_coll_loom_call_t *call, int v)
{
    return (v - 1) / call->fanout;
}

int mca_coll_loom_bcast_vrank(const mca_coll_loom_call_t *call)
{
    return (call->rank - call->root + call->size) % call->size;
}

int mca_coll_loom_bcast_children(const mca_coll_loom_call_t *call, int v)
{
    int fanout = call->fanout;
    long first = (long)v * fanout + 1;

    if (first >= call->size) {
        return 0;
    }
    return (call->size - first < fanout) ? (int)(call->size - first) : fanout;
}

unsigned mca_coll_loom_bcast_counters(const mca_coll_loom_call_t *call, int v)
{
    return (0 == mca_coll_loom_bcast_children(call, v))
               ? MCA_COLL_LOOM_BCAST_TOTAL + 1
               : MCA_COLL_LOOM_BCAST_SEGMENT + call->segments;
}

void mca_coll_loom_bcast_edge(mca_coll_loom_call_t *call, unsigned s, int v)
{
    const mca_coll_loom_dest_t *dests = call->dests;
    const uint64_t *names = call->module->names;
    int to = mca_coll_loom_bcast_real(call, v);
    int from = mca_coll_loom_bcast_real(call, mca_coll_loom_bcast_parent(call, v));
    size_t offset = (size_t)s * call->segment;
    loom_push_notice_to_t notices[3];
    loom_push_args_t args;
    unsigned n = 0;

    memset(&args, 0, sizeof(args));
    args.owner        = names[from];
    args.src_addr     = dests[from].addr + offset;
    args.src_key      = dests[from].key;
    args.src_key_size = dests[from].key_size;
    args.dest         = names[to];
    args.dst_addr     = dests[to].addr + offset;
    args.dst_key      = dests[to].key;
    args.dst_key_size = dests[to].key_size;
    args.length       = mca_coll_loom_segment_length(call, s);
    if (mca_coll_loom_bcast_children(call, v) > 0) {
        notices[n].proc    = names[to]; /* its own forwards of the segment wait on it */
        notices[n++].counter = dests[to].counters + MCA_COLL_LOOM_BCAST_SEGMENT + s;
    }
    notices[n].proc      = names[to];
    notices[n++].counter = dests[to].counters + MCA_COLL_LOOM_BCAST_TOTAL;
    if (from != call->root) {
        /* waits at the inner node for its copy of the segment, which must
         * not be changed until the push read it: the node is told too */
        args.cond_counter    = dests[from].counters + MCA_COLL_LOOM_BCAST_SEGMENT + s;
        args.cond_threshold  = 1;
        notices[n].proc      = names[from];
        notices[n++].counter = dests[from].counters + MCA_COLL_LOOM_BCAST_FORWARDED;
    }
    args.notices      = notices;
    args.notice_count = n;
    mca_coll_loom_issue(call, &call->ops[call->edges++], mca_coll_loom_op_end,
                        &args);
}

void mca_coll_loom_bcast_outcome(mca_coll_loom_call_t *call, uint64_t amount)
{
    const mca_btl_loom_coll_api_t *api = call->module->api;
    const mca_coll_loom_dest_t *dests = call->dests;
    int rank, rc;

    for (rank = 0; rank < call->size; ++rank) {
        if (rank == call->root || 0 == dests[rank].counters) {
            continue; /* a rank without counters decided for itself */
        }
        rc = api->counter_add(call->module->names[rank],
                              dests[rank].counters + MCA_COLL_LOOM_BCAST_OUTCOME, amount);
        if (LOOM_OK != rc) {
            opal_output(0, "coll loom: the outcome of a broadcast on %s could not reach rank "
                        "%d: %s", call->comm->c_name, rank, api->strerror(rc));
        }
    }
}
