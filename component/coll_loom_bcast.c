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
#include "coll_loom.h"

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/base/coll_tags.h"
#include "ompi/mca/pml/pml.h"
#include "ompi/request/request.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"

#include <stdlib.h>
#include <string.h>

/* The root's word on a call: DONE, FALL_BACK (before any push), or FAILED
 * and then, once every push ended, ENDED. */
enum { MCA_COLL_LOOM_DONE = 0, MCA_COLL_LOOM_FALL_BACK = 1, MCA_COLL_LOOM_FAILED = 2,
       MCA_COLL_LOOM_ENDED = 3 };

typedef struct mca_coll_loom_word {
    int32_t  word;
    uint32_t segments;      /* the root's: every rank waits for as many */
} mca_coll_loom_word_t;

/* Counters of one call: the communicator, the call's number, and a slot
 * (segment s is s + 1; the call's total is the last). */
#define MCA_COLL_LOOM_SLOT_TOTAL 0xffffffu
/* Segments of one call at most: counters and pushes waiting at a node stay
 * well inside btl loom's bounds (btl_loom_push_counters, _push_waiting). */
#define MCA_COLL_LOOM_SEGMENTS_MAX 1024

/* A rank's buffer as the root learns it. */
typedef struct mca_coll_loom_dest {
    uint64_t addr;
    uint32_t key_size;
    uint32_t usable;        /* 0: this rank cannot take part (fall back) */
    uint8_t  key[LOOM_OP_MSG_MAX];
} mca_coll_loom_dest_t;

/* One broadcast as this rank runs it. */
typedef struct mca_coll_loom_call {
    mca_coll_loom_module_t *module;
    struct ompi_communicator_t *comm;
    int      root;
    int      rank;
    int      size;
    uint8_t *base;          /* the buffer's first byte */
    size_t   bytes;
    size_t   segment;
    unsigned segments;
    uint64_t counters;      /* the call's first counter id (slot 0) */
    loom_region_t *region;
    mca_coll_loom_dest_t own;
    /* the root's operations, and the word it sends while they end */
    loom_op_t *ops;
    mca_coll_loom_word_t told;
    size_t   issued;
    size_t   ended;
    int      failure;       /* the first operation's error */
} mca_coll_loom_call_t;

static uint64_t mca_coll_loom_counter(const mca_coll_loom_call_t *call, uint32_t slot)
{
    return call->counters | slot;
}

/* The tree, on ranks relative to the root. */
static int mca_coll_loom_real(const mca_coll_loom_call_t *call, int v)
{
    return (v + call->root) % call->size;
}

static int mca_coll_loom_parent(int v)
{
    return (v - 1) / mca_coll_loom_component.bcast_fanout;
}

/* Register this rank's buffer and pack its key into own (own.usable 0 if
 * it cannot take part). */
static void mca_coll_loom_register(mca_coll_loom_call_t *call, bool contiguous)
{
    size_t key_size = 0;

    memset(&call->own, 0, sizeof(call->own));
    call->own.addr = (uint64_t)(uintptr_t)call->base;
    if (!contiguous ||
        LOOM_OK != call->module->api->mem_register(call->base, call->bytes,
                                                   LOOM_ACCESS_LOCAL_WRITE |
                                                   LOOM_ACCESS_REMOTE_WRITE |
                                                   LOOM_ACCESS_REMOTE_READ, &call->region,
                                                   call->own.key, &key_size)) {
        call->region = NULL;
        return;
    }
    call->own.key_size = (uint32_t)key_size;
    call->own.usable   = 1;
}

static void mca_coll_loom_op_end(loom_op_t *op, int status)
{
    mca_coll_loom_call_t *call = op->user;

    ++call->ended;
    if (LOOM_OK != status && LOOM_OK == call->failure) {
        call->failure = status;
    }
}

/* The push of segment s from the node at v's parent to v. */
static void mca_coll_loom_push_edge(mca_coll_loom_call_t *call,
                                    const mca_coll_loom_dest_t *dests, unsigned s, int v)
{
    const uint64_t *names = call->module->names;
    int to = mca_coll_loom_real(call, v), from = mca_coll_loom_real(call, mca_coll_loom_parent(v));
    size_t offset = (size_t)s * call->segment;
    loom_push_notice_to_t notices[2];
    loom_push_args_t args;
    loom_op_t *op = &call->ops[call->issued++];
    int rc;

    memset(&args, 0, sizeof(args));
    args.owner        = names[from];
    args.src_addr     = dests[from].addr + offset;
    args.src_key      = dests[from].key;
    args.src_key_size = dests[from].key_size;
    args.dest         = names[to];
    args.dst_addr     = dests[to].addr + offset;
    args.dst_key      = dests[to].key;
    args.dst_key_size = dests[to].key_size;
    args.length       = (call->bytes - offset < call->segment) ? call->bytes - offset
                                                               : call->segment;
    if (from != call->root) {
        /* waits at the inner node for its copy of the segment */
        args.cond_counter   = mca_coll_loom_counter(call, s + 1);
        args.cond_threshold = 1;
    }
    notices[0].proc    = names[to];
    notices[0].counter = mca_coll_loom_counter(call, s + 1);
    notices[1].proc    = names[to];
    notices[1].counter = mca_coll_loom_counter(call, MCA_COLL_LOOM_SLOT_TOTAL);
    args.notices       = notices;
    args.notice_count  = 2;
    op->cb   = mca_coll_loom_op_end;
    op->user = call;
    rc = call->module->api->push(op, &args);
    if (LOOM_INPROGRESS != rc) {
        mca_coll_loom_op_end(op, rc);
    }
}

/* The word to every rank but the root: blocking, or started (reqs). */
static int mca_coll_loom_tell(mca_coll_loom_call_t *call, int32_t word, ompi_request_t **reqs)
{
    mca_coll_loom_word_t msg = {word, call->segments};
    int rank, rc = OMPI_SUCCESS;

    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        if (rank == call->root) {
            continue;
        }
        if (NULL == reqs) {
            rc = MCA_PML_CALL(send(&msg, sizeof(msg), MPI_BYTE, rank, MCA_COLL_BASE_TAG_BCAST,
                                   MCA_PML_BASE_SEND_STANDARD, call->comm));
        } else {
            call->told = msg;
            rc = MCA_PML_CALL(isend(&call->told, sizeof(call->told), MPI_BYTE, rank,
                                    MCA_COLL_BASE_TAG_BCAST, MCA_PML_BASE_SEND_STANDARD,
                                    call->comm, &reqs[rank]));
        }
    }
    return rc;
}

/* Issue the schedule and wait until every push ended; a failure is told at
 * once, so that pushes waiting on counters that will not grow are
 * cancelled (each rank releases its counters). */
static int mca_coll_loom_run(mca_coll_loom_call_t *call, const mca_coll_loom_dest_t *dests)
{
    ompi_request_t **reqs = NULL;
    unsigned s;
    int v, rc = OMPI_SUCCESS;

    /* segment by segment, parents before their children */
    for (s = 0; s < call->segments; ++s) {
        for (v = 1; v < call->size; ++v) {
            mca_coll_loom_push_edge(call, dests, s, v);
        }
    }
    while (call->ended < call->issued) {
        if (LOOM_OK != call->failure && NULL == reqs) {
            reqs = calloc((size_t)call->size, sizeof(*reqs));
            if (NULL == reqs) {
                return OMPI_ERR_OUT_OF_RESOURCE;
            }
            rc = mca_coll_loom_tell(call, MCA_COLL_LOOM_FAILED, reqs);
        }
        opal_progress();
    }
    if (NULL != reqs) {
        for (v = 0; v < call->size; ++v) {
            if (NULL != reqs[v]) {
                (void)ompi_request_wait(&reqs[v], MPI_STATUS_IGNORE);
            }
        }
        free(reqs);
    }
    return rc;
}

/* The root: every rank's buffer, then the schedule, then the outcome to all. */
static int mca_coll_loom_bcast_root(mca_coll_loom_call_t *call, bool contiguous)
{
    struct ompi_communicator_t *comm = call->comm;
    int32_t word = MCA_COLL_LOOM_DONE;
    mca_coll_loom_dest_t *dests;
    int rank, rc = OMPI_SUCCESS;

    dests = calloc((size_t)call->size, sizeof(*dests));
    if (NULL == dests) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    mca_coll_loom_register(call, contiguous);
    dests[call->root] = call->own;
    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        if (rank != call->root) {
            rc = MCA_PML_CALL(recv(&dests[rank], sizeof(dests[rank]), MPI_BYTE, rank,
                                   MCA_COLL_BASE_TAG_BCAST, comm, MPI_STATUS_IGNORE));
        }
    }
    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        if (!dests[rank].usable) {
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
        rc = mca_coll_loom_run(call, dests);
        if (LOOM_OK != call->failure) {
            opal_output(0, "coll loom: a broadcast of %zu bytes on %s failed: %s",
                        call->bytes, comm->c_name, call->module->api->strerror(call->failure));
            word = MCA_COLL_LOOM_ENDED; /* after FAILED */
        }
    }
    if (OMPI_SUCCESS == rc) {
        rc = mca_coll_loom_tell(call, word, NULL);
    }
    free(call->ops);
    free(dests);
    return (OMPI_SUCCESS != rc) ? rc : (MCA_COLL_LOOM_ENDED == word) ? OMPI_ERROR : word;
}

/* Every notice of this rank came: the total, and each segment's (a notice
 * that came late would make a released counter again).  *landed segments
 * were seen already: each poll looks only at those after them. */
static bool mca_coll_loom_all_landed(const mca_coll_loom_call_t *call, unsigned segments,
                                     unsigned *landed)
{
    const mca_btl_loom_coll_api_t *api = call->module->api;

    if (api->counter_value(mca_coll_loom_counter(call, MCA_COLL_LOOM_SLOT_TOTAL)) < segments) {
        return false;
    }
    while (*landed < segments &&
           0 != api->counter_value(mca_coll_loom_counter(call, *landed + 1))) {
        ++*landed;
    }
    return *landed == segments;
}

/* Any other rank: its buffer to the root, then the outcome and its data. */
static int mca_coll_loom_bcast_leaf(mca_coll_loom_call_t *call, bool contiguous)
{
    const mca_btl_loom_coll_api_t *api = call->module->api;
    mca_coll_loom_word_t msg = {MCA_COLL_LOOM_FAILED, 0};
    unsigned landed = 0;
    int rc;

    mca_coll_loom_register(call, contiguous);
    rc = MCA_PML_CALL(send(&call->own, sizeof(call->own), MPI_BYTE, call->root,
                           MCA_COLL_BASE_TAG_BCAST, MCA_PML_BASE_SEND_STANDARD, call->comm));
    if (OMPI_SUCCESS == rc) {
        rc = MCA_PML_CALL(recv(&msg, sizeof(msg), MPI_BYTE, call->root,
                               MCA_COLL_BASE_TAG_BCAST, call->comm, MPI_STATUS_IGNORE));
    }
    if (OMPI_SUCCESS != rc || MCA_COLL_LOOM_FALL_BACK == msg.word) {
        return (OMPI_SUCCESS != rc) ? rc : msg.word;
    }
    while (MCA_COLL_LOOM_DONE == msg.word &&
           !mca_coll_loom_all_landed(call, msg.segments, &landed)) {
        opal_progress();
    }
    /* a failure cancels the pushes waiting here; the root's last word says
     * that nothing of the call moves any more */
    (void)api->counters_release(mca_coll_loom_counter(call, 1), msg.segments);
    (void)api->counters_release(mca_coll_loom_counter(call, MCA_COLL_LOOM_SLOT_TOTAL), 1);
    if (MCA_COLL_LOOM_FAILED == msg.word) {
        rc = MCA_PML_CALL(recv(&msg, sizeof(msg), MPI_BYTE, call->root,
                               MCA_COLL_BASE_TAG_BCAST, call->comm, MPI_STATUS_IGNORE));
        return (OMPI_SUCCESS != rc) ? rc : OMPI_ERROR;
    }
    return OMPI_SUCCESS;
}

/* Whether every rank reaches every other through loom, asked once per
 * communicator (a collective: every rank gets here in the same call). */
static bool mca_coll_loom_agreed(mca_coll_loom_module_t *module, struct ompi_communicator_t *comm)
{
    int mine = module->reached ? 1 : 0, all = 0;

    if (0 == module->agreed) {
        if (OMPI_SUCCESS != module->next_allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm,
                                                   module->next_allreduce_module)) {
            all = 0;
        }
        module->agreed = all ? 1 : -1;
        if (!all) {
            opal_output_verbose(10, mca_coll_loom_component.output, "coll loom: btl loom does "
                                "not reach every rank of %s from every rank: its broadcasts "
                                "go to the next component", comm->c_name);
        }
    }
    return 1 == module->agreed;
}

int mca_coll_loom_bcast(void *buff, int count, struct ompi_datatype_t *datatype, int root,
                        struct ompi_communicator_t *comm, mca_coll_base_module_t *base)
{
    mca_coll_loom_module_t *module = (mca_coll_loom_module_t *)base;
    ptrdiff_t true_lb, true_extent;
    mca_coll_loom_call_t call;
    size_t type_size, segment_min;
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
    memset(&call, 0, sizeof(call));
    call.module   = module;
    call.comm     = comm;
    call.root     = root;
    call.rank     = ompi_comm_rank(comm);
    call.size     = ompi_comm_size(comm);
    call.base     = (uint8_t *)buff + true_lb;
    call.bytes    = type_size * (size_t)count;
    segment_min   = (call.bytes + MCA_COLL_LOOM_SEGMENTS_MAX - 1) / MCA_COLL_LOOM_SEGMENTS_MAX;
    call.segment  = (size_t)mca_coll_loom_component.bcast_segment;
    if (call.segment < segment_min) {
        call.segment = segment_min;
    }
    call.segments = (unsigned)((call.bytes + call.segment - 1) / call.segment);
    call.counters = ((uint64_t)(ompi_comm_get_cid(comm) & 0xffff) << 48) |
                    ((uint64_t)(++module->calls & 0xffffff) << 24);
    rc = (root == call.rank) ? mca_coll_loom_bcast_root(&call, contiguous)
                             : mca_coll_loom_bcast_leaf(&call, contiguous);
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
