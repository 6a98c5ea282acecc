/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The reducer's side of coll loom's half-RDMA (coll_loom_reduce.h): a
 * staging queue of depth segments per other rank, kept full by pushes this
 * rank asks the owners for, each segment reduced into the result as it
 * lands; and what MPI_Reduce and MPI_Allreduce both decide: whether coll
 * loom takes a reduction.
 */
#include "coll_loom_reduce.h"

#include "ompi/datatype/ompi_datatype.h"
#include "opal/runtime/opal_progress.h"
#include "opal/sys/atomic.h"
#include "opal/util/output.h"

#include <stdlib.h>
#include <string.h>

void mca_coll_loom_reduction_init(mca_coll_loom_reduction_t *red,
                                  mca_coll_loom_module_t *module, const void *sbuf, void *rbuf,
                                  int count, struct ompi_datatype_t *dtype,
                                  struct ompi_op_t *op, int root, int tag,
                                  struct ompi_communicator_t *comm)
{
    size_t segment = (size_t)mca_coll_loom_component.reduce_segment, queue;
    ptrdiff_t lb, extent;

    memset(red, 0, sizeof(*red));
    ompi_datatype_type_size(dtype, &red->type_size);
    ompi_datatype_get_true_extent(dtype, &lb, &extent);
    red->op    = op;
    red->dtype = dtype;
    red->depth = (unsigned)mca_coll_loom_component.reduce_depth;
    /* smaller segments where the queue would outgrow its bound */
    queue = (size_t)(ompi_comm_size(comm) - 1) * red->depth;
    if (queue * segment > (size_t)mca_coll_loom_component.reduce_staging) {
        segment  = (size_t)mca_coll_loom_component.reduce_staging / queue;
        segment -= segment % red->type_size; /* whole elements, still within */
    }
    mca_coll_loom_call_init(&red->call, module, comm, tag, root,
                            (NULL == rbuf) ? NULL : (uint8_t *)rbuf + lb,
                            red->type_size * (size_t)count, segment, red->type_size,
                            MCA_COLL_LOOM_REQUESTS_PER_OWNER);
    red->contribution = (MPI_IN_PLACE == sbuf) ? red->call.base : (const uint8_t *)sbuf + lb;
}

void mca_coll_loom_reduction_register(mca_coll_loom_reduction_t *red, const void *buf, bool rw,
                                      loom_region_t **region_p, mca_coll_loom_dest_t *dest)
{
    unsigned access = LOOM_ACCESS_REMOTE_READ;

    if (rw) {
        access |= LOOM_ACCESS_LOCAL_WRITE | LOOM_ACCESS_REMOTE_WRITE;
    }
    mca_coll_loom_register(&red->call, (void *)(uintptr_t)buf, red->call.bytes, true, access,
                           region_p, dest);
}

void mca_coll_loom_reduction_range(mca_coll_loom_reduction_t *red, size_t lo, size_t len)
{
    red->lo       = lo;
    red->len      = len;
    red->segments = (unsigned)((len + red->call.segment - 1) / red->call.segment);
}

size_t mca_coll_loom_range_length(const mca_coll_loom_reduction_t *red, unsigned s)
{
    size_t offset = (size_t)s * red->call.segment;

    return (red->len - offset < red->call.segment) ? red->len - offset : red->call.segment;
}

static void mca_coll_loom_pull_end(loom_op_t *op, int status)
{
    mca_coll_loom_call_t *call = op->user;

    /* the failure before the flag (mca_coll_loom_op_end says why) */
    if (LOOM_OK != status && LOOM_OK == call->failure) {
        call->failure = status;
    }
    opal_atomic_wmb();
    ((mca_coll_loom_pull_t *)op)->ended = true;
    mca_coll_loom_op_end(op, status);
}

static mca_coll_loom_pull_t *mca_coll_loom_pull_of(mca_coll_loom_reduction_t *red, int rank,
                                                   unsigned s)
{
    return &red->pulls[(size_t)rank * red->depth + s % red->depth];
}

/* Where rank's slot for segment s starts (this rank has none). */
static uint8_t *mca_coll_loom_slot(const mca_coll_loom_reduction_t *red, int rank, unsigned s)
{
    const mca_coll_loom_call_t *call = &red->call;
    size_t queue = (size_t)((rank - call->rank - 1 + call->size) % call->size);

    return (uint8_t *)(uintptr_t)red->staging.addr +
           (queue * red->depth + s % red->depth) * call->segment;
}

/* Asks rank for its contribution to segment s, into its slot for s. */
static void mca_coll_loom_pull(mca_coll_loom_reduction_t *red, int rank, unsigned s)
{
    mca_coll_loom_call_t *call = &red->call;
    const mca_coll_loom_dest_t *src = &red->msgs[rank].src;
    mca_coll_loom_pull_t *pull = mca_coll_loom_pull_of(red, rank, s);
    loom_push_args_t args;

    memset(&args, 0, sizeof(args));
    args.owner        = call->module->names[rank];
    args.src_addr     = src->addr + red->lo + (size_t)s * call->segment;
    args.src_key      = src->key;
    args.src_key_size = src->key_size;
    args.dest         = call->module->names[call->rank];
    args.dst_addr     = (uint64_t)(uintptr_t)mca_coll_loom_slot(red, rank, s);
    args.dst_key      = red->staging.key;
    args.dst_key_size = red->staging.key_size;
    args.length       = mca_coll_loom_range_length(red, s);
    pull->ended = false;
    mca_coll_loom_issue(call, &pull->op, mca_coll_loom_pull_end, &args);
}

static size_t mca_coll_loom_queue_bytes(const mca_coll_loom_reduction_t *red)
{
    return (size_t)(red->call.size - 1) * red->depth * red->call.segment;
}

bool mca_coll_loom_queue_fits(const mca_coll_loom_reduction_t *red)
{
    size_t bytes = mca_coll_loom_queue_bytes(red);

    if (bytes <= (size_t)mca_coll_loom_component.reduce_staging) {
        return true;
    }
    opal_output_verbose(10, mca_coll_loom_component.output, "coll loom: a reduction on %s "
                        "needs a queue of %zu bytes, more than coll_loom_reduce_staging",
                        red->call.comm->c_name, bytes);
    return false;
}

int mca_coll_loom_pulls_open(mca_coll_loom_reduction_t *red)
{
    mca_coll_loom_call_t *call = &red->call;
    mca_coll_loom_module_t *module = call->module;
    size_t bytes = mca_coll_loom_queue_bytes(red);

    if (!mca_coll_loom_queue_fits(red)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    red->pulls = calloc((size_t)call->size * red->depth, sizeof(*red->pulls));
    if (NULL == red->pulls) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    /* kept by the module from call to call (its registration is cached) */
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
    const mca_coll_loom_pull_t *pull = mca_coll_loom_pull_of(red, rank, s);

    while (!*(volatile const bool *)&pull->ended && LOOM_OK == red->call.failure) {
        mca_coll_loom_wait_step(NULL);
    }
    opal_atomic_rmb();
    return LOOM_OK == red->call.failure;
}

void mca_coll_loom_pulls_run(mca_coll_loom_reduction_t *red)
{
    mca_coll_loom_call_t *call = &red->call;
    unsigned s, first = (red->depth < red->segments) ? red->depth : red->segments;
    int rank;

    for (s = 0; s < first; ++s) {
        for (rank = 0; rank < call->size; ++rank) {
            if (rank != call->rank) {
                mca_coll_loom_pull(red, rank, s);
            }
        }
    }
    for (s = 0; s < red->segments && LOOM_OK == call->failure; ++s) {
        size_t offset = red->lo + (size_t)s * call->segment;
        size_t length = mca_coll_loom_range_length(red, s);

        if (red->contribution != call->base) {
            memcpy(call->base + offset, red->contribution + offset, length);
        }
        for (rank = 0; rank < call->size; ++rank) {
            if (rank == call->rank) {
                continue;
            }
            if (!mca_coll_loom_landed(red, rank, s)) {
                return;
            }
            (void)MPI_Reduce_local(mca_coll_loom_slot(red, rank, s), call->base + offset,
                                   (int)(length / red->type_size), red->dtype, red->op);
            if (s + red->depth < red->segments) {
                mca_coll_loom_pull(red, rank, s + red->depth);
            }
        }
        if (NULL != red->reduced) {
            red->reduced(red, s);
        }
    }
}

void mca_coll_loom_pulls_close(mca_coll_loom_reduction_t *red)
{
    if (NULL != red->staging_region) {
        red->call.module->api->mem_deregister(red->staging_region);
        red->staging_region = NULL;
    }
    free(red->pulls);
    red->pulls = NULL;
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
 * type, of at least min bytes (-1: none), on a communicator large enough and
 * reached through loom everywhere.  Every rank decides alike. */
bool mca_coll_loom_reduce_takes(mca_coll_loom_module_t *module, int count,
                                struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                struct ompi_communicator_t *comm, int min)
{
    size_t type_size;

    ompi_datatype_type_size(dtype, &type_size);
    return mca_coll_loom_agreed(module, comm) && count > 0 && min >= 0 &&
           ompi_datatype_is_predefined(dtype) &&
           mca_coll_loom_op_predefined(op) &&
           ompi_datatype_is_contiguous_memory_layout(dtype, count) &&
           type_size * (size_t)count >= (size_t)min &&
           ompi_comm_size(comm) >= mca_coll_loom_component.reduce_min_procs;
}

void mca_coll_loom_said_fall_back(const mca_coll_loom_reduction_t *red)
{
    opal_output_verbose(10, mca_coll_loom_component.output, "coll loom: a reduction of %zu "
                        "bytes on %s goes to the next component (a buffer not registered, or "
                        "no room for the staging queue)", red->call.bytes,
                        red->call.comm->c_name);
}
