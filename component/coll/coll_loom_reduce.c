/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * MPI_Reduce on loom's pushes, with seed 002's half-RDMA (coll_loom_reduce.h;
 * MPI_Allreduce is coll_loom_allreduce.c's).  It is root-orchestrated:
 *
 *  1. every other rank registers its contribution and sends address and
 *     key to the root;
 *  2. the root reduces the whole buffer through its staging queue
 *     (coll_loom_pull.c): each segment of every rank is a push the root asks
 *     the owner for, reduced as it lands; nobody else does anything but
 *     wait;
 *  3. the root's word ends the call, as for a broadcast; a failure is told
 *     at once and every rank returns an error.
 *
 * MPI_Allreduce has every rank reduce a slice (coll_loom_allreduce.c).
 * Predefined operations on contiguous predefined types only; the rest
 * (user operations, and with them derived types, small reductions, small
 * communicators) goes to the next component, decided alike at every rank
 * (mca_coll_loom_reduce_takes, coll_loom_pull.c).
 */
#include "coll_loom_reduce.h"
#include "coll_loom_select.h"

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/base/coll_tags.h"
#include "ompi/mca/pml/pml.h"
#include "opal/util/output.h"

#include <stdlib.h>

/* The root: every rank's contribution, the reduction, the word to all. */
static int mca_coll_loom_reduce_root(mca_coll_loom_reduction_t *red)
{
    mca_coll_loom_call_t *call = &red->call;
    int32_t word = MCA_COLL_LOOM_DONE;
    int rank, rc = OMPI_SUCCESS;

    red->msgs = calloc((size_t)call->size, sizeof(*red->msgs));
    rc = mca_coll_loom_gather(call, red->msgs, sizeof(*red->msgs));
    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        if (NULL == red->msgs ||
            (rank != call->root && !mca_coll_loom_dest_usable(&red->msgs[rank].src))) {
            word = MCA_COLL_LOOM_FALL_BACK;
        }
    }
    if (OMPI_SUCCESS == rc && MCA_COLL_LOOM_DONE == word &&
        OMPI_SUCCESS != mca_coll_loom_pulls_open(red)) {
        word = MCA_COLL_LOOM_FALL_BACK;
    }
    if (OMPI_SUCCESS == rc && MCA_COLL_LOOM_DONE == word) {
        mca_coll_loom_pulls_run(red);
        rc = mca_coll_loom_drain(call);
        if (LOOM_OK != call->failure) {
            opal_output(0, "coll loom: a reduction of %zu bytes on %s failed: %s", call->bytes,
                        call->comm->c_name, call->module->api->strerror(call->failure));
            word = MCA_COLL_LOOM_ENDED; /* after FAILED */
        }
    }
    if (OMPI_SUCCESS == rc) {
        rc = mca_coll_loom_tell(call, word);
    }
    mca_coll_loom_pulls_close(red);
    free(red->msgs);
    return (OMPI_SUCCESS != rc) ? rc : (MCA_COLL_LOOM_ENDED == word) ? OMPI_ERROR : word;
}

int mca_coll_loom_reduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                         struct ompi_op_t *op, int root, struct ompi_communicator_t *comm,
                         mca_coll_base_module_t *base)
{
    mca_coll_loom_module_t *module = (mca_coll_loom_module_t *)base;
    mca_coll_loom_reduction_t red;
    mca_coll_loom_reduce_msg_t mine;
    loom_region_t *src_region = NULL;
    mca_coll_loom_trial_t trial = {.choice = NULL};
    size_t type_size;
    int rc = MCA_COLL_LOOM_FALL_BACK;

    ompi_datatype_type_size(dtype, &type_size);
    if (mca_coll_loom_reduce_takes(module, count, dtype, op, comm,
                                   mca_coll_loom_component.reduce_min) &&
        mca_coll_loom_choose(module, MCA_COLL_LOOM_OP_REDUCE, type_size * (size_t)count,
                             &trial)) {
        mca_coll_loom_reduction_init(&red, module, sbuf,
                                     (ompi_comm_rank(comm) == root) ? rbuf : NULL, count,
                                     dtype, op, root, MCA_COLL_BASE_TAG_REDUCE, comm);
        if (root == red.call.rank) {
            /* its own contribution is reduced where it is */
            mca_coll_loom_reduction_range(&red, 0, red.call.bytes);
            rc = mca_coll_loom_reduce_root(&red);
        } else {
            memset(&mine, 0, sizeof(mine));
            mca_coll_loom_reduction_register(&red, red.contribution, false, &src_region,
                                             &mine.src);
            rc = mca_coll_loom_leaf(&red.call, &mine, sizeof(mine));
            if (NULL != src_region) {
                module->api->mem_deregister(src_region);
            }
        }
        if (MCA_COLL_LOOM_FALL_BACK == rc) {
            mca_coll_loom_said_fall_back(&red);
        }
        rc = mca_coll_loom_counted(rc, &mca_coll_loom_stats.reduces);
    }
    if (MCA_COLL_LOOM_FALL_BACK == rc) {
        rc = module->next_reduce(sbuf, rbuf, count, dtype, op, root, comm,
                                 module->next_reduce_module);
    }
    return mca_coll_loom_chosen(module, comm, &trial, rc);
}
