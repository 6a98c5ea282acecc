/*
 * MPI_Reduce and MPI_Allreduce on loom's pushes, with seed 002's half-RDMA:
 * the contributions are RDMA (pushed by their owners, asked by the root),
 * the reducer's side is a receive queue its CPU parses, reducing each
 * segment as it lands.
 *
 *  1. every other rank registers its contribution (and, for Allreduce, its
 *     result buffer) and sends address and key to the root;
 *  2. the root keeps coll_loom_reduce_depth segments of every other rank in
 *     flight into a staging queue of its own: each is a push the root asks
 *     the owner for, landing in that rank's next slot;
 *  3. segment by segment, in rank order (the same result on every run), the
 *     root reduces each landed slot into its result and asks for the
 *     segment that slot takes next; nobody else does anything but wait;
 *  4. Allreduce: as soon as a segment is reduced, the root issues its
 *     broadcast tree (coll_loom_bcast.c's schedule) from its result into
 *     everyone's, so reduction and broadcast overlap;
 *  5. the root's word ends the call, as for a broadcast; a failure is told
 *     at once and every rank returns an error.
 *
 * Predefined operations on contiguous predefined types only; the rest
 * (user operations, derived types, small reductions, small communicators)
 * goes to the next component, decided by the root for everyone where it
 * depends on more than the arguments every rank passes alike.
 */
#include "coll_loom_call.h"

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/base/coll_tags.h"
#include "ompi/mca/pml/pml.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"

#include <stdlib.h>
#include <string.h>

/* What a rank tells the root: its contribution, and where the result goes
 * (Allreduce only). */
typedef struct mca_coll_loom_reduce_msg {
    mca_coll_loom_dest_t src;
    mca_coll_loom_dest_t dst;
} mca_coll_loom_reduce_msg_t;

/* One slot of the root's staging queue and the push filling it. */
typedef struct mca_coll_loom_pull {
    loom_op_t op;           /* first: the callback finds the pull from it */
    bool      ended;
} mca_coll_loom_pull_t;

/* One reduction as this rank runs it. */
typedef struct mca_coll_loom_reduction {
    mca_coll_loom_call_t call;
    const uint8_t *contribution; /* this rank's */
    struct ompi_op_t *op;
    struct ompi_datatype_t *dtype;
    size_t   type_size;
    bool     all;           /* Allreduce: the result goes to every rank */
    unsigned depth;         /* segments in flight per rank */
    /* the root's */
    mca_coll_loom_reduce_msg_t *msgs;
    mca_coll_loom_pull_t *pulls;  /* depth slots per rank */
    mca_coll_loom_dest_t *dsts;   /* Allreduce: every rank's result buffer */
    mca_coll_loom_dest_t staging;
    loom_region_t *staging_region;
} mca_coll_loom_reduction_t;

static void mca_coll_loom_pull_end(loom_op_t *op, int status)
{
    ((mca_coll_loom_pull_t *)op)->ended = true;
    mca_coll_loom_op_end(op, status);
}

/* Where rank's slot j of the staging queue starts (the root has none). */
static uint64_t mca_coll_loom_slot_addr(const mca_coll_loom_reduction_t *red, int rank,
                                        unsigned j)
{
    const mca_coll_loom_call_t *call = &red->call;
    size_t queue = (size_t)((rank - call->root - 1 + call->size) % call->size);

    return red->staging.addr + (queue * red->depth + j) * call->segment;
}

/* Asks rank for its segment s, into its slot for s. */
static void mca_coll_loom_pull(mca_coll_loom_reduction_t *red, int rank, unsigned s)
{
    mca_coll_loom_call_t *call = &red->call;
    const mca_coll_loom_dest_t *src = &red->msgs[rank].src;
    mca_coll_loom_pull_t *pull = &red->pulls[(size_t)rank * red->depth + s % red->depth];
    loom_push_args_t args;
    int rc;

    memset(&args, 0, sizeof(args));
    args.owner        = call->module->names[rank];
    args.src_addr     = src->addr + (size_t)s * call->segment;
    args.src_key      = src->key;
    args.src_key_size = src->key_size;
    args.dest         = call->module->names[call->root];
    args.dst_addr     = mca_coll_loom_slot_addr(red, rank, s % red->depth);
    args.dst_key      = red->staging.key;
    args.dst_key_size = red->staging.key_size;
    args.length       = mca_coll_loom_segment_length(call, s);
    pull->ended   = false;
    pull->op.cb   = mca_coll_loom_pull_end;
    pull->op.user = call;
    ++call->issued;
    rc = call->module->api->push(&pull->op, &args);
    if (LOOM_INPROGRESS != rc) {
        mca_coll_loom_pull_end(&pull->op, rc);
    }
}

/* The staging queue: depth segments of every other rank, kept by the
 * module from call to call (its registration comes from loom's cache). */
static int mca_coll_loom_staging(mca_coll_loom_reduction_t *red)
{
    mca_coll_loom_call_t *call = &red->call;
    mca_coll_loom_module_t *module = call->module;
    size_t bytes = (size_t)(call->size - 1) * red->depth * call->segment;

    if (bytes > (size_t)mca_coll_loom_component.reduce_staging) {
        opal_output_verbose(10, mca_coll_loom_component.output, "coll loom: a reduction on %s "
                            "needs a queue of %zu bytes, more than coll_loom_reduce_staging",
                            call->comm->c_name, bytes);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (module->staging_size < bytes) {
        free(module->staging);
        module->staging_size = 0;
        if (0 != posix_memalign(&module->staging, 4096, bytes)) {
            module->staging = NULL;
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        module->staging_size = bytes;
    }
    mca_coll_loom_register(call, module->staging, bytes, true,
                           LOOM_ACCESS_LOCAL_WRITE | LOOM_ACCESS_REMOTE_WRITE,
                           &red->staging_region, &red->staging);
    return red->staging.usable ? OMPI_SUCCESS : OMPI_ERR_OUT_OF_RESOURCE;
}

/* Segment s of rank's contribution landed (or the call failed). */
static bool mca_coll_loom_landed(mca_coll_loom_reduction_t *red, int rank, unsigned s)
{
    const mca_coll_loom_pull_t *pull = &red->pulls[(size_t)rank * red->depth + s % red->depth];

    while (!pull->ended && LOOM_OK == red->call.failure) {
        opal_progress();
    }
    return LOOM_OK == red->call.failure;
}

/* Steps 2-4: the queue kept full, each segment reduced as it lands, and
 * for Allreduce broadcast as soon as it is reduced. */
static void mca_coll_loom_reduce_segments(mca_coll_loom_reduction_t *red)
{
    mca_coll_loom_call_t *call = &red->call;
    unsigned s, first = (red->depth < call->segments) ? red->depth : call->segments;
    int rank;

    for (s = 0; s < first; ++s) {
        for (rank = 0; rank < call->size; ++rank) {
            if (rank != call->root) {
                mca_coll_loom_pull(red, rank, s);
            }
        }
    }
    for (s = 0; s < call->segments && LOOM_OK == call->failure; ++s) {
        size_t offset = (size_t)s * call->segment, length = mca_coll_loom_segment_length(call, s);

        if (red->contribution != call->base) {
            memcpy(call->base + offset, red->contribution + offset, length);
        }
        for (rank = 0; rank < call->size; ++rank) {
            if (rank == call->root) {
                continue;
            }
            if (!mca_coll_loom_landed(red, rank, s)) {
                return;
            }
            (void)MPI_Reduce_local((void *)(uintptr_t)mca_coll_loom_slot_addr(red, rank,
                                                                             s % red->depth),
                                   call->base + offset, (int)(length / red->type_size),
                                   red->dtype, red->op);
            if (s + red->depth < call->segments) {
                mca_coll_loom_pull(red, rank, s + red->depth);
            }
        }
        for (rank = 1; red->all && rank < call->size; ++rank) {
            mca_coll_loom_push_edge(call, red->dsts, s, rank);
        }
    }
}

/* The root: every rank's buffers, the reduction, the word to all. */
static int mca_coll_loom_reduce_root(mca_coll_loom_reduction_t *red)
{
    mca_coll_loom_call_t *call = &red->call;
    int32_t word = MCA_COLL_LOOM_DONE;
    int rank, rc = OMPI_SUCCESS;

    red->msgs  = calloc((size_t)call->size, sizeof(*red->msgs));
    red->pulls = calloc((size_t)call->size * red->depth, sizeof(*red->pulls));
    if (red->all) {
        /* the broadcast's: the root's result and everyone's buffer for it */
        red->dsts = calloc((size_t)call->size, sizeof(*red->dsts));
        call->ops = calloc((size_t)call->segments * (size_t)(call->size - 1),
                           sizeof(*call->ops));
    }
    if (NULL == red->msgs || NULL == red->pulls ||
        (red->all && (NULL == red->dsts || NULL == call->ops))) {
        word = MCA_COLL_LOOM_FALL_BACK; /* after every rank's message */
    }
    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        mca_coll_loom_reduce_msg_t ignored, *msg;

        msg = (NULL == red->msgs) ? &ignored : &red->msgs[rank];

        if (rank != call->root) {
            rc = MCA_PML_CALL(recv(msg, sizeof(*msg), MPI_BYTE, rank, call->tag, call->comm,
                                   MPI_STATUS_IGNORE));
            if (!msg->src.usable || (red->all && !msg->dst.usable)) {
                word = MCA_COLL_LOOM_FALL_BACK;
            }
        }
        if (NULL != red->dsts) {
            red->dsts[rank] = (rank == call->root) ? call->own : msg->dst;
        }
    }
    if (OMPI_SUCCESS == rc && MCA_COLL_LOOM_DONE == word &&
        ((red->all && !call->own.usable) || OMPI_SUCCESS != mca_coll_loom_staging(red))) {
        word = MCA_COLL_LOOM_FALL_BACK;
    }
    if (OMPI_SUCCESS == rc && MCA_COLL_LOOM_DONE == word) {
        mca_coll_loom_reduce_segments(red);
        rc = mca_coll_loom_drain(call);
        if (LOOM_OK != call->failure) {
            opal_output(0, "coll loom: a%s reduction of %zu bytes on %s failed: %s",
                        red->all ? "n all-" : "", call->bytes, call->comm->c_name,
                        call->module->api->strerror(call->failure));
            word = MCA_COLL_LOOM_ENDED; /* after FAILED */
        }
    }
    if (OMPI_SUCCESS == rc) {
        rc = mca_coll_loom_tell(call, word);
    }
    if (NULL != red->staging_region) {
        call->module->api->mem_deregister(red->staging_region);
    }
    free(call->ops);
    free(red->dsts);
    free(red->pulls);
    free(red->msgs);
    return (OMPI_SUCCESS != rc) ? rc : (MCA_COLL_LOOM_ENDED == word) ? OMPI_ERROR : word;
}

/* MPI's predefined reductions (all commutative); ompi/op/op.h, which
 * says so of an operation, is not among the headers Open MPI installs. */
static bool mca_coll_loom_op_predefined(struct ompi_op_t *op)
{
    const MPI_Op predefined[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND,
                                 MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
    size_t i;

    for (i = 0; i < sizeof(predefined) / sizeof(predefined[0]); ++i) {
        if (op == predefined[i]) {
            return true;
        }
    }
    return false;
}

/* What coll loom takes: a predefined operation on a contiguous predefined
 * type, large enough, on a communicator large enough and reached through
 * loom everywhere.  Every rank decides alike. */
static bool mca_coll_loom_reduce_takes(mca_coll_loom_module_t *module, int count,
                                       struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                       struct ompi_communicator_t *comm)
{
    size_t type_size;

    ompi_datatype_type_size(dtype, &type_size);
    return count > 0 && ompi_datatype_is_predefined(dtype) && mca_coll_loom_op_predefined(op) &&
           ompi_datatype_is_contiguous_memory_layout(dtype, count) &&
           type_size * (size_t)count >= (size_t)mca_coll_loom_component.reduce_min &&
           ompi_comm_size(comm) >= mca_coll_loom_component.reduce_min_procs &&
           mca_coll_loom_agreed(module, comm);
}

/* Runs one reduction at this rank; FALL_BACK when the root decided that
 * the next component takes it. */
static int mca_coll_loom_reduction(mca_coll_loom_module_t *module, const void *sbuf, void *rbuf,
                                   int count, struct ompi_datatype_t *dtype,
                                   struct ompi_op_t *op, int root, bool all,
                                   struct ompi_communicator_t *comm)
{
    static const unsigned access = LOOM_ACCESS_LOCAL_WRITE | LOOM_ACCESS_REMOTE_WRITE |
                                   LOOM_ACCESS_REMOTE_READ;
    mca_coll_loom_reduction_t red;
    mca_coll_loom_reduce_msg_t mine;
    loom_region_t *src_region = NULL;
    size_t segment = (size_t)mca_coll_loom_component.reduce_segment, queue;
    ptrdiff_t lb, extent;
    bool receives;
    int rc;

    memset(&red, 0, sizeof(red));
    ompi_datatype_type_size(dtype, &red.type_size);
    ompi_datatype_get_true_extent(dtype, &lb, &extent);
    receives  = all || ompi_comm_rank(comm) == root;
    red.op    = op;
    red.dtype = dtype;
    red.all   = all;
    red.depth = (unsigned)mca_coll_loom_component.reduce_depth;
    /* smaller segments where the root's queue would outgrow its bound */
    queue = (size_t)(ompi_comm_size(comm) - 1) * red.depth;
    if (queue * segment > (size_t)mca_coll_loom_component.reduce_staging) {
        segment = (size_t)mca_coll_loom_component.reduce_staging / queue;
    }
    mca_coll_loom_call_init(&red.call, module, comm,
                            all ? MCA_COLL_BASE_TAG_ALLREDUCE : MCA_COLL_BASE_TAG_REDUCE, root,
                            receives ? (uint8_t *)rbuf + lb : NULL,
                            red.type_size * (size_t)count, segment, red.type_size);
    red.contribution = (MPI_IN_PLACE == sbuf) ? red.call.base : (const uint8_t *)sbuf + lb;
    memset(&mine, 0, sizeof(mine));
    if (all) {
        /* the result is broadcast from the root's buffer into everyone's */
        mca_coll_loom_register(&red.call, red.call.base, red.call.bytes, true, access,
                               &red.call.region, &red.call.own);
        mine.dst = red.call.own;
    }
    if (root == red.call.rank) {
        rc = mca_coll_loom_reduce_root(&red);
    } else {
        if (red.contribution == red.call.base) {
            mine.src = mine.dst; /* in place: the result buffer, registered */
        } else {
            mca_coll_loom_register(&red.call, (void *)red.contribution, red.call.bytes, true,
                                   LOOM_ACCESS_REMOTE_READ, &src_region, &mine.src);
        }
        rc = mca_coll_loom_leaf(&red.call, &mine, sizeof(mine), all);
    }
    if (NULL != src_region) {
        module->api->mem_deregister(src_region);
    }
    if (NULL != red.call.region) {
        module->api->mem_deregister(red.call.region);
    }
    if (MCA_COLL_LOOM_FALL_BACK == rc) {
        opal_output_verbose(10, mca_coll_loom_component.output, "coll loom: a reduction of "
                            "%zu bytes on %s goes to the next component (a buffer not "
                            "registered, or no memory for the root's queue)", red.call.bytes,
                            comm->c_name);
    }
    return rc;
}

int mca_coll_loom_reduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                         struct ompi_op_t *op, int root, struct ompi_communicator_t *comm,
                         mca_coll_base_module_t *base)
{
    mca_coll_loom_module_t *module = (mca_coll_loom_module_t *)base;
    int rc = MCA_COLL_LOOM_FALL_BACK;

    if (mca_coll_loom_reduce_takes(module, count, dtype, op, comm)) {
        rc = mca_coll_loom_reduction(module, sbuf, rbuf, count, dtype, op, root, false, comm);
    }
    if (MCA_COLL_LOOM_FALL_BACK == rc) {
        rc = module->next_reduce(sbuf, rbuf, count, dtype, op, root, comm,
                                 module->next_reduce_module);
    }
    return rc;
}

int mca_coll_loom_allreduce(const void *sbuf, void *rbuf, int count,
                            struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                            struct ompi_communicator_t *comm, mca_coll_base_module_t *base)
{
    mca_coll_loom_module_t *module = (mca_coll_loom_module_t *)base;
    int rc = MCA_COLL_LOOM_FALL_BACK;

    if (mca_coll_loom_reduce_takes(module, count, dtype, op, comm)) {
        /* the root moves with each call: the reductions' work spreads */
        rc = mca_coll_loom_reduction(module, sbuf, rbuf, count, dtype, op,
                                     (int)(module->calls % (uint32_t)ompi_comm_size(comm)),
                                     true, comm);
    }
    if (MCA_COLL_LOOM_FALL_BACK == rc) {
        rc = module->next_allreduce(sbuf, rbuf, count, dtype, op, comm,
                                    module->next_allreduce_module);
    }
    return rc;
}
