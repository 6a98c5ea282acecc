/*
 * MPI_Bcast on loom's pushes, root-orchestrated (seed 002's third-party and
 * conditional RDMA):
 *
 *  1. every other rank registers its buffer and sends its address and key to
 *     the root (one small message; the registration comes from loom's cache);
 *  2. the root issues the whole schedule of a tree of fanout children per
 *     node, segment by segment: its own pushes to its children, and for
 *     every inner node a push of that node's copy of the segment to each of
 *     its children, waiting at the inner node on the counter of that segment,
 *     which the push bringing the segment adds one to; nobody handshakes per
 *     hop, and a node forwards a segment as soon as it landed;
 *  3. each push tells its destination (the segment's counter and the call's
 *     total); the root's operations complete when their data is visible,
 *     then the root sends every rank the outcome, and a rank returns once it
 *     has both the outcome and all its segments' notices.  When a push
 *     fails, the root says so at once: every rank releases its counters,
 *     which cancels the pushes waiting at it, and waits for the root's last
 *     word, sent once nothing of the call can still move.
 *
 * What coll loom cannot take (a rank whose buffer is not contiguous or
 * cannot be registered) goes, decided by the root for everyone, to the next
 * component's broadcast; so do broadcasts below coll_loom_bcast_min bytes
 * or on fewer than coll_loom_bcast_min_procs processes.
 */
#include "coll_loom_call.h"

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/base/coll_tags.h"
#include "ompi/mca/pml/pml.h"
#include "opal/util/output.h"

#include <stdlib.h>

static const unsigned mca_coll_loom_buffer_access =
    LOOM_ACCESS_LOCAL_WRITE | LOOM_ACCESS_REMOTE_WRITE | LOOM_ACCESS_REMOTE_READ;

/* The root: every rank's buffer, then the schedule, then the outcome to all. */
static int mca_coll_loom_bcast_root(mca_coll_loom_call_t *call)
{
    struct ompi_communicator_t *comm = call->comm;
    int32_t word = MCA_COLL_LOOM_DONE;
    mca_coll_loom_dest_t *dests;
    unsigned s;
    int rank, rc = OMPI_SUCCESS;

    dests = calloc((size_t)call->size, sizeof(*dests));
    if (NULL != dests) {
        dests[call->root] = call->own;
    }
    rc = mca_coll_loom_gather(call, dests, sizeof(*dests));
    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        if (NULL == dests || !dests[rank].usable) {
            word = MCA_COLL_LOOM_FALL_BACK;
        }
    }
    if (OMPI_SUCCESS == rc && MCA_COLL_LOOM_DONE == word) {
        call->ops = calloc((size_t)call->segments * (size_t)(call->size - 1),
                           sizeof(*call->ops));
        if (NULL == call->ops) {
            word = MCA_COLL_LOOM_FALL_BACK;
        }
    }
    if (OMPI_SUCCESS == rc && MCA_COLL_LOOM_DONE == word) {
        /* segment by segment, parents before their children */
        for (s = 0; s < call->segments; ++s) {
            for (rank = 1; rank < call->size; ++rank) {
                mca_coll_loom_push_edge(call, dests, s, rank);
            }
        }
        rc = mca_coll_loom_drain(call);
        if (LOOM_OK != call->failure) {
            opal_output(0, "coll loom: a broadcast of %zu bytes on %s failed: %s",
                        call->bytes, comm->c_name, call->module->api->strerror(call->failure));
            word = MCA_COLL_LOOM_ENDED; /* after FAILED */
        }
    }
    if (OMPI_SUCCESS == rc) {
        rc = mca_coll_loom_tell(call, word);
    }
    free(call->ops);
    free(dests);
    return (OMPI_SUCCESS != rc) ? rc : (MCA_COLL_LOOM_ENDED == word) ? OMPI_ERROR : word;
}

int mca_coll_loom_bcast(void *buff, int count, struct ompi_datatype_t *datatype, int root,
                        struct ompi_communicator_t *comm, mca_coll_base_module_t *base)
{
    mca_coll_loom_module_t *module = (mca_coll_loom_module_t *)base;
    ptrdiff_t true_lb, true_extent;
    mca_coll_loom_call_t call;
    size_t type_size;
    unsigned max_segments;
    bool contiguous;
    int rc;

    ompi_datatype_type_size(datatype, &type_size);
    if (count <= 0 || type_size * (size_t)count < (size_t)mca_coll_loom_component.bcast_min ||
        ompi_comm_size(comm) < mca_coll_loom_component.bcast_min_procs ||
        !mca_coll_loom_agreed(module, comm)) {
        return module->next_bcast(buff, count, datatype, root, comm, module->next_bcast_module);
    }
    ompi_datatype_get_true_extent(datatype, &true_lb, &true_extent);
    contiguous = ompi_datatype_is_contiguous_memory_layout(datatype, count);
    /* an inner node gets fanout requests per segment */
    max_segments = MCA_COLL_LOOM_REQUESTS_PER_OWNER /
                   (unsigned)mca_coll_loom_component.bcast_fanout;
    mca_coll_loom_call_init(&call, module, comm, MCA_COLL_BASE_TAG_BCAST, root,
                            (uint8_t *)buff + true_lb, type_size * (size_t)count,
                            (size_t)mca_coll_loom_component.bcast_segment, 1, max_segments);
    mca_coll_loom_register(&call, call.base, call.bytes, contiguous,
                           mca_coll_loom_buffer_access, &call.region, &call.own);
    rc = (root == call.rank) ? mca_coll_loom_bcast_root(&call)
                             : mca_coll_loom_leaf(&call, &call.own, sizeof(call.own), true);
    rc = mca_coll_loom_counted(rc, &mca_coll_loom_stats.bcasts);
    if (NULL != call.region) {
        module->api->mem_deregister(call.region);
    }
    if (MCA_COLL_LOOM_FALL_BACK == rc) {
        opal_output_verbose(10, mca_coll_loom_component.output, "coll loom: a broadcast of "
                            "%zu bytes on %s goes to the next component (a buffer not "
                            "contiguous or not registered)", call.bytes, comm->c_name);
        return module->next_bcast(buff, count, datatype, root, comm, module->next_bcast_module);
    }
    return rc;
}
