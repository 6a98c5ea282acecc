/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Measured selection (coll_loom_select 1, the default): a call that coll
 * loom's thresholds let it take is, for the first calls of its size class
 * on its communicator, measured against the next component's, and the
 * faster one takes the class from then on (the same at every rank).
 */
#ifndef MCA_COLL_LOOM_SELECT_H
#define MCA_COLL_LOOM_SELECT_H

#include "coll_loom.h"
#include "coll_loom_choice.h"

enum {
    MCA_COLL_LOOM_OP_BCAST,
    MCA_COLL_LOOM_OP_REDUCE,
    MCA_COLL_LOOM_OP_ALLREDUCE,
    MCA_COLL_LOOM_OP_ALLGATHER,
    MCA_COLL_LOOM_OPS
};

/* size classes: a call's bit length, 0-64 */
#define MCA_COLL_LOOM_SIZE_CLASSES 65

/* One call's part in the measuring (none when choice is NULL). */
typedef struct mca_coll_loom_trial {
    mca_coll_loom_choice_t *choice;
    const char *op_name;
    size_t bytes;
    double start_us;
    bool loom; /* this call runs through coll loom */
} mca_coll_loom_trial_t;

/* Whether coll loom runs a call its thresholds let it take: always with
 * coll_loom_select 0; else as its class decided, or, while the class is
 * measured, in turns (coll loom first).  Fills trial for
 * mca_coll_loom_chosen. */
bool mca_coll_loom_choose(mca_coll_loom_module_t *module, int op, size_t bytes,
                          mca_coll_loom_trial_t *trial);

/* After the call (rc its result): records its time, and after a pair asks
 * every rank for the slowest times of the pair (the next component's
 * allreduce) and decides when it can.  Returns rc. */
int mca_coll_loom_chosen(mca_coll_loom_module_t *module, struct ompi_communicator_t *comm,
                         mca_coll_loom_trial_t *trial, int rc);

#endif
