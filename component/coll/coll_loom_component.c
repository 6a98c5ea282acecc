/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * coll loom's component: its MCA parameters, and the module it offers a
 * communicator (coll_loom_module.c).
 */
#include "coll_loom.h"

#include "opal/util/output.h"

/* help-mpi-coll-loom.txt: the user-facing errors (common/loom_help.h) */
static loom_help_t mca_coll_loom_help = { .file = "help-mpi-coll-loom.txt" };

static int mca_coll_loom_register(void);
static int mca_coll_loom_open(void);
static int mca_coll_loom_close(void);
static int mca_coll_loom_init_query(bool enable_progress_threads, bool enable_mpi_threads);

mca_coll_loom_component_t mca_coll_loom_component = {
    .super = {
        .collm_version = {
            MCA_COLL_LOOM_BASE_VERSION,
            .mca_component_name            = "loom",
            .mca_component_major_version   = 1,
            .mca_component_minor_version   = 0,
            .mca_component_release_version = 0,
            .mca_open_component            = mca_coll_loom_open,
            .mca_close_component           = mca_coll_loom_close,
            .mca_register_component_params = mca_coll_loom_register,
        },
        .collm_data = {
            MCA_BASE_METADATA_PARAM_CHECKPOINT
        },
        .collm_init_query = mca_coll_loom_init_query,
        .collm_comm_query = mca_coll_loom_comm_query,
    },
};

static void mca_coll_loom_param(const char *name, const char *help, int level, int *storage)
{
    (void)mca_base_component_var_register(&mca_coll_loom_component.super.collm_version, name,
                                          help, MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, level,
                                          MCA_BASE_VAR_SCOPE_READONLY, storage);
}

static int mca_coll_loom_register(void)
{
    mca_coll_loom_component_t *c = &mca_coll_loom_component;

    if (OPAL_SUCCESS != loom_check_series("coll loom", MCA_COLL_LOOM_INTERFACE)) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    loom_help_init(&mca_coll_loom_help, &mca_coll_loom_component);
    c->priority = 40;
    mca_coll_loom_param("priority", "Priority of coll loom (above coll tuned's 30: its "
        "broadcast wins where every process is reached through btl loom)", OPAL_INFO_LVL_6,
        &c->priority);
    c->verbose = 0;
    mca_coll_loom_param("verbose", "Verbosity: 10 says, per communicator, why coll loom "
        "steps aside", OPAL_INFO_LVL_9, &c->verbose);
    /* measured (docs/perf/2026-12-07-select.md): across nodes whose rails bound
     * the broadcast (the virtual cluster at 200 mbit) coll loom took 0.55-0.67x
     * coll tuned's time from 64 KiB and 0.36-0.42x from 1 MiB, at 4 ranks; on
     * the cluster unshaped 0.8-1.4x from run to run, where measured selection
     * (coll_loom_select) decides per communicator; on one node (8 ranks,
     * tcp:lo) 1.5-4.4x at every size (docs/perf/2026-12-04-coll.md) */
    c->bcast_min = 65536;
    mca_coll_loom_param("bcast_min", "Broadcasts of fewer bytes go to the next component "
        "(0-1073741824)", OPAL_INFO_LVL_6, &c->bcast_min);
    c->bcast_min_procs = 2;
    mca_coll_loom_param("bcast_min_procs", "On communicators of fewer processes broadcasts "
        "go to the next component (2-1000000)", OPAL_INFO_LVL_6, &c->bcast_min_procs);
    c->bcast_one_node = 0;
    mca_coll_loom_param("bcast_one_node", "Take broadcasts on a communicator whose ranks all "
        "run on one node (0: leave them to the next component, measured faster there; 1: "
        "take them)", OPAL_INFO_LVL_6, &c->bcast_one_node);
    /* on 200 mbit rails a 4-node chain took 98 ms for 4 MiB in 64 KiB
     * segments, 106 ms in 256 KiB ones (each hop waits for one segment) */
    c->bcast_segment = 65536;
    mca_coll_loom_param("bcast_segment", "Bytes per segment of a broadcast: a node forwards "
        "each segment as soon as it landed (4096-1073741824)", OPAL_INFO_LVL_6,
        &c->bcast_segment);
    c->bcast_fanout = 2;
    mca_coll_loom_param("bcast_fanout", "Children of each node of the broadcast tree "
        "below coll_loom_bcast_chain_min bytes (1: a chain; 1-64)", OPAL_INFO_LVL_6,
        &c->bcast_fanout);
    /* a chain sends every byte once from each node, a tree of fanout 2 twice
     * from each inner node: when bandwidth bounds a broadcast, the chain's
     * longer pipeline costs less than the tree's second copy
     * (docs/user/coll-loom.md) */
    c->bcast_chain_min = 1048576;
    mca_coll_loom_param("bcast_chain_min", "Broadcasts of at least this many bytes run on a "
        "chain (each rank forwards every segment to the next, pipelined) instead of the tree "
        "of coll_loom_bcast_fanout (0-1073741824)", OPAL_INFO_LVL_6, &c->bcast_chain_min);
    /* a small broadcast waited a round trip for the ranks' buffers before its
     * first push (coll_loom_bcast_slot.c) */
    c->bcast_eager_max = 262144;
    mca_coll_loom_param("bcast_eager_max", "Broadcasts of at most this many bytes land in a "
        "slot each rank keeps per communicator (a power of two, grown to the largest such "
        "broadcast, shrunk to the largest of the last 64) and told the root in the call before, so the root pushes at once, from a "
        "copy of its data of the same size, and returns, and each rank copies its data out; "
        "larger ones land in the ranks' own buffers after each rank told the root where (0: "
        "never in slots; 0-16777216)", OPAL_INFO_LVL_6,
        &c->bcast_eager_max);
    /* measured (docs/perf/2026-12-04-coll.md): from 2 MiB coll loom's MPI_Reduce took
     * 0.12-0.21x coll tuned's time on one node (8 ranks) and 0.29-0.73x on
     * the virtual cluster (4 nodes, rails unshaped and at 200 mbit); from
     * 256 KiB 0.49-0.65x on one node and 0.55-0.56x at 200 mbit, at 64 KiB
     * 1.5x on one node (docs/perf/2026-12-07-select.md); its
     * MPI_Allreduce took 1.05-1.24x on the cluster at 200 mbit and 0.9-3x on
     * one node, so it is left to the next component unless asked for; with
     * its pulls on both rails (docs/perf/2026-12-06-allreduce-rails.md) 4 MiB
     * at 200 mbit took 145-152 ms, 1.05-1.1x coll tuned's 135-141 */
    c->reduce_min = 262144;
    mca_coll_loom_param("reduce_min", "MPI_Reduce calls of fewer bytes go to the next "
        "component (0-1073741824)", OPAL_INFO_LVL_6, &c->reduce_min);
    c->allreduce_min = -1;
    mca_coll_loom_param("allreduce_min", "MPI_Allreduce calls of fewer bytes go to the next "
        "component (-1: all of them, as measured slower; 0-1073741824)", OPAL_INFO_LVL_6,
        &c->allreduce_min);
    c->reduce_min_procs = 2;
    mca_coll_loom_param("reduce_min_procs", "On communicators of fewer processes reductions "
        "(MPI_Reduce, MPI_Allreduce) go to the next component (2-1000000)", OPAL_INFO_LVL_6,
        &c->reduce_min_procs);
    c->reduce_segment = 262144;
    mca_coll_loom_param("reduce_segment", "Bytes per segment of a reduction: the root reduces "
        "each segment as it lands, and an allreduce broadcasts it once reduced "
        "(4096-1073741824)", OPAL_INFO_LVL_6, &c->reduce_segment);
    c->reduce_depth = 2;
    mca_coll_loom_param("reduce_depth", "Segments of each rank's contribution in flight to "
        "the root of a reduction at once (1-64)", OPAL_INFO_LVL_6, &c->reduce_depth);
    c->reduce_staging = 33554432;
    mca_coll_loom_param("reduce_staging", "Bytes a reducer may keep as the queue the "
        "contributions land in (depth segments per other rank; segments shrink to fit, "
        "and a reduction that still does not fit goes to the next component; "
        "65536-1073741824)", OPAL_INFO_LVL_6, &c->reduce_staging);
    /* measured on tcp:lo (docs/user/coll-loom.md): coll loom's allgather was faster than
     * coll tuned's from 2 MiB at 8 ranks and 1 MiB at 4, and slower at 2; on
     * the cluster at 200 mbit 0.70-0.88x from 64 KiB, unshaped 0.65-2.2x from
     * run to run (docs/perf/2026-12-07-select.md): measured selection decides */
    c->allgather_min = 65536;
    mca_coll_loom_param("allgather_min", "Allgathers of a result of fewer bytes go to the "
        "next component (0-1073741824)", OPAL_INFO_LVL_6, &c->allgather_min);
    c->allgather_min_procs = 4;
    mca_coll_loom_param("allgather_min_procs", "On communicators of fewer processes "
        "allgathers go to the next component (2-1000000)", OPAL_INFO_LVL_6,
        &c->allgather_min_procs);
    /* measured (docs/perf/2026-12-04-coll.md): on one node (8 ranks) 1.2-4.3x coll
     * tuned's time; across the virtual cluster 0.5-0.98x from 2 MiB */
    c->allgather_one_node = 0;
    mca_coll_loom_param("allgather_one_node", "Take allgathers on a communicator whose ranks "
        "all run on one node (0: leave them to the next component, measured faster there; "
        "1: take them)", OPAL_INFO_LVL_6, &c->allgather_one_node);
    c->allgather_segment = 262144;
    mca_coll_loom_param("allgather_segment", "Bytes per push of a rank's block of an "
        "allgather (4096-1073741824)", OPAL_INFO_LVL_6, &c->allgather_segment);
    c->allgather_window = 2;
    mca_coll_loom_param("allgather_window", "Pushes of its block a rank of an allgather has "
        "in flight at once, to the next rank after it first (1-1024)", OPAL_INFO_LVL_6,
        &c->allgather_window);
    /* the thresholds above were measured on one cluster; which side wins
     * depends on what bounds a call where it runs (coll_loom_select.c) */
    c->select = 1;
    mca_coll_loom_param("select", "How coll loom decides to take a call its thresholds let "
        "it take: 1: measured, per communicator, operation and size class (the bit length "
        "of its bytes): after a warm-up pair, its first calls alternate between coll loom "
        "and the next component (coll_loom_select_pairs pairs at most, fewer when one "
        "side's best took twice the other's), each timed at its slowest rank, and the side "
        "with the better best (coll loom by coll_loom_select_margin) takes the class from "
        "then on (at verbose 10 coll loom says which and the times); 0: the thresholds alone",
        OPAL_INFO_LVL_6, &c->select);
    c->select_pairs = 3;
    mca_coll_loom_param("select_pairs", "Pairs of calls (one through coll loom, one through "
        "the next component) measured at most per size class before coll_loom_select "
        "decides (1-64)", OPAL_INFO_LVL_6, &c->select_pairs);
    /* a few calls on a loaded node measure within 10% or so: coll loom takes
     * a class only where it was clearly faster, so that a pick by noise costs
     * little either way */
    c->select_margin = -10;
    mca_coll_loom_param("select_margin", "Percent by which coll loom may be slower than the "
        "next component and still take a size class under coll_loom_select (0: only where it "
        "was faster; -10: only where it was at least 10% faster; -99-100000)",
        OPAL_INFO_LVL_6, &c->select_margin);
    mca_coll_loom_pvars_register();
    return OMPI_SUCCESS;
}

static bool mca_coll_loom_check(const char *name, int value, int min, int max)
{
    if (value >= min && value <= max) {
        return true;
    }
    LOOM_HELP_SHOW(&mca_coll_loom_help, "param out of range",
                   "coll loom: coll_loom_%s is %d, must be %d-%d; coll loom steps aside",
                   name, value, min, max);
    return false;
}

static int mca_coll_loom_open(void)
{
    mca_coll_loom_component_t *c = &mca_coll_loom_component;

    c->output = opal_output_open(NULL);
    opal_output_set_verbosity(c->output, c->verbose);
    return OMPI_SUCCESS;
}

static int mca_coll_loom_close(void)
{
    mca_coll_loom_bcast_flights_fini();
    return OMPI_SUCCESS;
}

static int mca_coll_loom_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    mca_coll_loom_component_t *c = &mca_coll_loom_component;

    (void)enable_progress_threads;
    (void)enable_mpi_threads;
    if (!mca_coll_loom_check("bcast_min", c->bcast_min, 0, 1 << 30) ||
        !mca_coll_loom_check("bcast_min_procs", c->bcast_min_procs, 2, 1000000) ||
        !mca_coll_loom_check("bcast_one_node", c->bcast_one_node, 0, 1) ||
        !mca_coll_loom_check("allreduce_min", c->allreduce_min, -1, 1 << 30) ||
        !mca_coll_loom_check("allgather_one_node", c->allgather_one_node, 0, 1) ||
        !mca_coll_loom_check("bcast_segment", c->bcast_segment, 4096, 1 << 30) ||
        !mca_coll_loom_check("bcast_fanout", c->bcast_fanout, 1, 64) ||
        !mca_coll_loom_check("bcast_chain_min", c->bcast_chain_min, 0, 1 << 30) ||
        !mca_coll_loom_check("bcast_eager_max", c->bcast_eager_max, 0, 1 << 24) ||
        !mca_coll_loom_check("reduce_min", c->reduce_min, 0, 1 << 30) ||
        !mca_coll_loom_check("reduce_min_procs", c->reduce_min_procs, 2, 1000000) ||
        !mca_coll_loom_check("reduce_segment", c->reduce_segment, 4096, 1 << 30) ||
        !mca_coll_loom_check("reduce_depth", c->reduce_depth, 1, 64) ||
        !mca_coll_loom_check("reduce_staging", c->reduce_staging, 65536, 1 << 30) ||
        !mca_coll_loom_check("allgather_min", c->allgather_min, 0, 1 << 30) ||
        !mca_coll_loom_check("allgather_min_procs", c->allgather_min_procs, 2, 1000000) ||
        !mca_coll_loom_check("allgather_segment", c->allgather_segment, 4096, 1 << 30) ||
        !mca_coll_loom_check("allgather_window", c->allgather_window, 1, 1024) ||
        !mca_coll_loom_check("select", c->select, 0, 1) ||
        !mca_coll_loom_check("select_pairs", c->select_pairs, 1, 64) ||
        !mca_coll_loom_check("select_margin", c->select_margin, -99, 100000)) {
        return OMPI_ERROR;
    }
    return OMPI_SUCCESS;
}
