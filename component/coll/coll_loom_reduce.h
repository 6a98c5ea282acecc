/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * coll loom's reductions: what MPI_Reduce (coll_loom_reduce.c) and
 * MPI_Allreduce (coll_loom_allreduce.c) share.  A rank reduces a range of
 * the result with seed 002's half-RDMA: it asks every other rank to push
 * its contribution to that range, segment by segment, into a staging queue
 * of its own (depth segments per rank in flight), and reduces each segment
 * as it lands, in rank order (the same result on every run).
 */
#ifndef MCA_COLL_LOOM_REDUCE_H
#define MCA_COLL_LOOM_REDUCE_H

#include "coll_loom_call.h"

/* What a rank tells the others: its contribution, and where the result
 * goes (Allreduce only). */
typedef struct mca_coll_loom_reduce_msg {
    mca_coll_loom_dest_t src;
    mca_coll_loom_dest_t dst;
} mca_coll_loom_reduce_msg_t;

/* One slot of the staging queue and the push filling it. */
typedef struct mca_coll_loom_pull {
    loom_op_t op;           /* first: the callback finds the pull from it */
    bool      ended;
} mca_coll_loom_pull_t;

typedef struct mca_coll_loom_reduction mca_coll_loom_reduction_t;

/* One reduction as this rank runs it. */
struct mca_coll_loom_reduction {
    mca_coll_loom_call_t call;   /* call.base: the result; call.segment */
    const uint8_t *contribution; /* this rank's */
    struct ompi_op_t *op;
    struct ompi_datatype_t *dtype;
    size_t   type_size;
    unsigned depth;              /* segments in flight per rank */
    mca_coll_loom_reduce_msg_t *msgs; /* every rank's buffers */
    struct ompi_request_t **reqs;     /* Allreduce: two per rank */
    int32_t *words;                   /* Allreduce: every rank's word */
    /* the range this rank reduces, and what follows each of its segments */
    size_t   lo;
    size_t   len;
    unsigned segments;
    void   (*reduced)(mca_coll_loom_reduction_t *red, unsigned s);
    /* the queue */
    mca_coll_loom_pull_t *pulls; /* depth slots per rank */
    mca_coll_loom_dest_t staging;
    loom_region_t *staging_region;
};

/* Fills the common fields, and call.segment so that the staging queue stays
 * within coll_loom_reduce_staging. */
void mca_coll_loom_reduction_init(mca_coll_loom_reduction_t *red,
                                  mca_coll_loom_module_t *module, const void *sbuf, void *rbuf,
                                  int count, struct ompi_datatype_t *dtype,
                                  struct ompi_op_t *op, int root, int tag,
                                  struct ompi_communicator_t *comm);
/* Registers buf for others to read (and write, rw) into dest. */
void mca_coll_loom_reduction_register(mca_coll_loom_reduction_t *red, const void *buf, bool rw,
                                      loom_region_t **region_p, mca_coll_loom_dest_t *dest);
/* Sets the range [lo, lo + len) this rank reduces. */
void mca_coll_loom_reduction_range(mca_coll_loom_reduction_t *red, size_t lo, size_t len);
size_t mca_coll_loom_range_length(const mca_coll_loom_reduction_t *red, unsigned s);
/* The queue stays within coll_loom_reduce_staging (the same answer at
 * every rank: segments of a call are one size everywhere). */
bool mca_coll_loom_queue_fits(const mca_coll_loom_reduction_t *red);
/* The queue: OMPI_SUCCESS, or an error (no memory, or beyond the bound). */
int mca_coll_loom_pulls_open(mca_coll_loom_reduction_t *red);
/* Reduces the range (red->reduced after each segment); stops early when an
 * operation failed (call.failure).  Every operation issued is counted in
 * call.issued, ended in call.ended. */
void mca_coll_loom_pulls_run(mca_coll_loom_reduction_t *red);
void mca_coll_loom_pulls_close(mca_coll_loom_reduction_t *red);

/* Whether coll loom takes a reduction of at least min bytes (-1: none),
 * the same answer at every rank. */
bool mca_coll_loom_reduce_takes(mca_coll_loom_module_t *module, int count,
                                struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                struct ompi_communicator_t *comm, int min);
/* Says (verbose 10) that a reduction goes to the next component. */
void mca_coll_loom_said_fall_back(const mca_coll_loom_reduction_t *red);

#endif
