/*
 * MPI_Allreduce on loom's pushes: every rank reduces one slice of the
 * result with half-RDMA (coll_loom_pull.c) and pushes each reduced segment
 * into every other rank's result at once, so that reducing and spreading
 * the result overlap, and the work is shared by all (a single reducer held
 * the others waiting: 1.3-3x slower than coll tuned at 8 ranks).
 *
 *  1. every rank registers its contribution and its result buffer and sends
 *     both keys to every other rank (its word that it is in the call: no
 *     one touches its buffers before);
 *  2. rank i reduces slice i (count / size elements, the first count % size
 *     slices one more), pulling every other rank's part of it into its
 *     queue, and pushes each reduced segment to every other rank, telling
 *     it (its counter of the call's total);
 *  3. once its own operations ended, each rank sends every other its word
 *     (done or failed), and returns when it has every word and either all
 *     the notices of the other slices' segments or a failure.
 *
 * With MPI_IN_PLACE a rank's contribution is its result buffer: the push
 * of slice i's segment into it comes after slice i's reducer pulled that
 * segment from it, so nothing is overwritten before it was read.
 */
#include "coll_loom_reduce.h"

#include "ompi/mca/pml/pml.h"
#include "ompi/request/request.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"

#include <stdlib.h>
#include <string.h>

/* Rank's slice: whole elements, the first ones one more. */
static void mca_coll_loom_slice(const mca_coll_loom_reduction_t *red, int rank, size_t *lo,
                                size_t *len)
{
    size_t count = red->call.bytes / red->type_size, size = (size_t)red->call.size;
    size_t each = count / size, extra = count % size, r = (size_t)rank;

    *lo  = (r * each + (r < extra ? r : extra)) * red->type_size;
    *len = (each + (r < extra ? 1 : 0)) * red->type_size;
}

/* Segment s of this rank's slice is reduced: into every other result. */
static void mca_coll_loom_spread(mca_coll_loom_reduction_t *red, unsigned s)
{
    mca_coll_loom_call_t *call = &red->call;
    const uint64_t *names = call->module->names;
    const mca_coll_loom_dest_t *src = &red->msgs[call->rank].dst;
    size_t offset = red->lo + (size_t)s * call->segment;
    loom_push_notice_to_t notice;
    loom_push_args_t args;
    loom_op_t *op;
    int rank, rc;

    for (rank = 0; rank < call->size; ++rank) {
        if (rank == call->rank) {
            continue;
        }
        op = &call->ops[call->edges++];
        memset(&args, 0, sizeof(args));
        args.owner        = names[call->rank];
        args.src_addr     = src->addr + offset;
        args.src_key      = src->key;
        args.src_key_size = src->key_size;
        args.dest         = names[rank];
        args.dst_addr     = red->msgs[rank].dst.addr + offset;
        args.dst_key      = red->msgs[rank].dst.key;
        args.dst_key_size = red->msgs[rank].dst.key_size;
        args.length       = mca_coll_loom_range_length(red, s);
        notice.proc       = names[rank];
        notice.counter    = mca_coll_loom_counter(call, MCA_COLL_LOOM_SLOT_TOTAL);
        args.notices      = &notice;
        args.notice_count = 1;
        op->cb   = mca_coll_loom_op_end;
        op->user = call;
        ++call->issued;
        rc = call->module->api->push(op, &args);
        if (LOOM_INPROGRESS != rc) {
            mca_coll_loom_op_end(op, rc);
        }
    }
}

/* Every rank's buffers, from every rank (step 1); FALL_BACK when any rank
 * cannot take part, which every rank sees alike. */
static int mca_coll_loom_exchange(mca_coll_loom_reduction_t *red)
{
    mca_coll_loom_call_t *call = &red->call;
    ompi_request_t **reqs;
    int rank, n = 0, rc = OMPI_SUCCESS;

    reqs = calloc(2 * (size_t)call->size, sizeof(*reqs));
    if (NULL == reqs) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        if (rank == call->rank) {
            continue;
        }
        rc = MCA_PML_CALL(irecv(&red->msgs[rank], sizeof(red->msgs[rank]), MPI_BYTE, rank,
                                call->tag, call->comm, &reqs[n++]));
        if (OMPI_SUCCESS == rc) {
            rc = MCA_PML_CALL(isend(&red->msgs[call->rank], sizeof(red->msgs[rank]), MPI_BYTE,
                                    rank, call->tag, MCA_PML_BASE_SEND_STANDARD, call->comm,
                                    &reqs[n++]));
        }
    }
    if (n > 0) {
        int wrc = ompi_request_wait_all((size_t)n, reqs, MPI_STATUSES_IGNORE);
        rc = (OMPI_SUCCESS != rc) ? rc : wrc;
    }
    free(reqs);
    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        if (!red->msgs[rank].src.usable || !red->msgs[rank].dst.usable) {
            return MCA_COLL_LOOM_FALL_BACK;
        }
    }
    return rc;
}

/* Step 3: the words, and the notices of the other slices (or a failure). */
static int mca_coll_loom_finish(mca_coll_loom_reduction_t *red, uint64_t notices)
{
    mca_coll_loom_call_t *call = &red->call;
    const mca_btl_loom_coll_api_t *api = call->module->api;
    uint64_t total = mca_coll_loom_counter(call, MCA_COLL_LOOM_SLOT_TOTAL);
    int32_t mine = (LOOM_OK == call->failure) ? MCA_COLL_LOOM_DONE : MCA_COLL_LOOM_FAILED;
    int32_t *words;
    ompi_request_t **reqs;
    int rank, n = 0, done, rc = OMPI_SUCCESS;
    bool failed = (MCA_COLL_LOOM_DONE != mine);

    words = calloc((size_t)call->size, sizeof(*words));
    reqs  = calloc(2 * (size_t)call->size, sizeof(*reqs));
    if (NULL == words || NULL == reqs) {
        free(words);
        free(reqs);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        if (rank == call->rank) {
            continue;
        }
        rc = MCA_PML_CALL(irecv(&words[rank], sizeof(words[rank]), MPI_BYTE, rank, call->tag,
                                call->comm, &reqs[n++]));
        if (OMPI_SUCCESS == rc) {
            rc = MCA_PML_CALL(isend(&mine, sizeof(mine), MPI_BYTE, rank, call->tag,
                                    MCA_PML_BASE_SEND_STANDARD, call->comm, &reqs[n++]));
        }
    }
    for (;;) {
        done = 0;
        (void)ompi_request_test_all((size_t)n, reqs, &done, MPI_STATUSES_IGNORE);
        if (done) {
            for (rank = 0; rank < call->size; ++rank) {
                failed |= (MCA_COLL_LOOM_DONE != words[rank]);
            }
            if (failed || api->counter_value(total) >= notices || OMPI_SUCCESS != rc) {
                break;
            }
        }
        opal_progress();
    }
    (void)api->counters_release(total, 1);
    free(words);
    free(reqs);
    return (OMPI_SUCCESS != rc) ? rc : failed ? OMPI_ERROR : OMPI_SUCCESS;
}

int mca_coll_loom_allreduce_sliced(mca_coll_loom_reduction_t *red)
{
    mca_coll_loom_call_t *call = &red->call;
    mca_coll_loom_module_t *module = call->module;
    loom_region_t *src_region = NULL;
    uint64_t notices = 0;
    size_t lo, len;
    int rank, rc;

    if (!mca_coll_loom_queue_fits(red)) {
        return MCA_COLL_LOOM_FALL_BACK; /* every rank alike, before any message */
    }
    red->msgs = calloc((size_t)call->size, sizeof(*red->msgs));
    if (NULL == red->msgs) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    mca_coll_loom_reduction_register(red, call->base, true, &call->region,
                                     &red->msgs[call->rank].dst);
    if (red->contribution == call->base) {
        red->msgs[call->rank].src = red->msgs[call->rank].dst;
    } else {
        mca_coll_loom_reduction_register(red, red->contribution, false, &src_region,
                                         &red->msgs[call->rank].src);
    }
    rc = mca_coll_loom_exchange(red);
    if (OMPI_SUCCESS == rc) {
        for (rank = 0; rank < call->size; ++rank) {
            mca_coll_loom_slice(red, rank, &lo, &len);
            mca_coll_loom_reduction_range(red, lo, len);
            if (rank != call->rank) {
                notices += red->segments;
            }
        }
        mca_coll_loom_slice(red, call->rank, &lo, &len);
        mca_coll_loom_reduction_range(red, lo, len);
        red->reduced = mca_coll_loom_spread;
        call->ops = calloc((size_t)red->segments * (size_t)call->size, sizeof(*call->ops));
        /* a rank that cannot reduce its slice fails the call for all */
        if (NULL == call->ops || OMPI_SUCCESS != mca_coll_loom_pulls_open(red)) {
            call->failure = LOOM_ERR_NOMEM;
        } else {
            mca_coll_loom_pulls_run(red);
        }
        while (call->ended < call->issued) {
            opal_progress();
        }
        if (LOOM_OK != call->failure) {
            opal_output(0, "coll loom: an allreduce of %zu bytes on %s failed here: %s",
                        call->bytes, call->comm->c_name, module->api->strerror(call->failure));
        }
        rc = mca_coll_loom_finish(red, notices);
        mca_coll_loom_pulls_close(red);
        free(call->ops);
    }
    if (NULL != src_region) {
        module->api->mem_deregister(src_region);
    }
    if (NULL != call->region) {
        module->api->mem_deregister(call->region);
    }
    free(red->msgs);
    return rc;
}
