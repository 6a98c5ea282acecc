/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Measured selection (coll_loom_select.h).  Whether coll loom's pushes beat
 * the next component's messages depends on what bounds the call: where the
 * wire does (the virtual cluster's rails at 200 mbit), a chain that sends
 * every byte once from the root won by 2.7x; where the processes' CPU does
 * (the same cluster unshaped, ranks and kernel on 2 cores), the same chain
 * lost by 1.6-3x (docs/perf/2026-12-07-waits.md).  Neither the rails'
 * nominal speed nor the node tells which, so each communicator measures
 * its own: per operation and size class, pairs of calls, and the faster
 * takes the class.  Every rank counts the same calls alike (a collective's
 * size is the same at every rank), and the decision is made from times
 * every rank agreed on, so every rank takes the same path.
 */
#include "coll_loom_select.h"

#include "opal/util/output.h"

#include <stdlib.h>

static const char *const mca_coll_loom_op_names[MCA_COLL_LOOM_OPS] = {
    "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Allgather"};

static double mca_coll_loom_now_us(void)
{
    return (double)mca_coll_loom_now_ns() / 1e3;
}

/* The decision on every rank: counted, and said at verbose 10. */
static void mca_coll_loom_decided(const mca_coll_loom_trial_t *trial,
                                  struct ompi_communicator_t *comm)
{
    const mca_coll_loom_choice_t *choice = trial->choice;
    bool loom = MCA_COLL_LOOM_CHOICE_LOOM == choice->decided;

    mca_coll_loom_count(loom ? &mca_coll_loom_stats.chose_loom : &mca_coll_loom_stats.chose_next);
    opal_output_verbose(10, mca_coll_loom_component.output, "coll loom: %s of %zu bytes "
                        "(and its size class) on %s: coll loom %.0f us, the next component "
                        "%.0f us (the best of %u pair(s) after a warm-up): %s", trial->op_name,
                        trial->bytes, comm->c_name, choice->loom_us, choice->next_us,
                        (unsigned)choice->pairs,
                        loom ? "coll loom takes them" : "the next component takes them");
}

bool mca_coll_loom_choose(mca_coll_loom_module_t *module, int op, size_t bytes,
                          mca_coll_loom_trial_t *trial)
{
    mca_coll_loom_choice_t *choice;

    trial->choice = NULL;
    if (NULL == module->choices) {
        return true; /* coll_loom_select 0 (mca_coll_loom_agreed made them) */
    }
    choice = &module->choices[op * MCA_COLL_LOOM_SIZE_CLASSES +
                              mca_coll_loom_choice_class(bytes)];
    if (MCA_COLL_LOOM_CHOICE_MEASURING != choice->decided) {
        return MCA_COLL_LOOM_CHOICE_LOOM == choice->decided;
    }
    trial->choice   = choice;
    trial->op_name  = mca_coll_loom_op_names[op];
    trial->bytes    = bytes;
    trial->loom     = !choice->second;
    trial->start_us = mca_coll_loom_now_us();
    mca_coll_loom_count(&mca_coll_loom_stats.trials);
    return trial->loom;
}

int mca_coll_loom_chosen(mca_coll_loom_module_t *module, struct ompi_communicator_t *comm,
                         mca_coll_loom_trial_t *trial, int rc)
{
    mca_coll_loom_choice_t *choice = trial->choice;
    double mine[2], slowest[2];

    if (NULL == choice) {
        return rc;
    }
    if (trial->loom) {
        choice->pending_us = (OMPI_SUCCESS == rc) ? mca_coll_loom_now_us() - trial->start_us
                                                  : MCA_COLL_LOOM_CHOICE_FAILED_US;
        choice->second = 1;
        return rc;
    }
    choice->second = 0;
    mine[0] = choice->pending_us;
    mine[1] = mca_coll_loom_now_us() - trial->start_us;
    if (OMPI_SUCCESS != module->next_allreduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, comm,
                                               module->next_allreduce_module)) {
        /* an error of the next component's reaches every rank alike */
        choice->decided = MCA_COLL_LOOM_CHOICE_NEXT;
    } else {
        (void)mca_coll_loom_choice_add(choice, slowest[0], slowest[1],
                                       (unsigned)mca_coll_loom_component.select_pairs,
                                       mca_coll_loom_component.select_margin);
    }
    if (MCA_COLL_LOOM_CHOICE_MEASURING != choice->decided) {
        mca_coll_loom_decided(trial, comm);
    }
    return rc;
}
