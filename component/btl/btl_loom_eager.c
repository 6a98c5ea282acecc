/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Eager RDMA rings: their MCA parameters (checked by name) and their MPI_T
 * performance variables.
 */
#include "btl_loom.h"

#include "opal/mca/base/mca_base_pvar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *mca_btl_loom_eager_rdma_default   = "rdma";
static char *mca_btl_loom_eager_sizes_default  = "256,1024,8256";
static char *mca_btl_loom_eager_counts_default = "8,8,8";
static char *mca_btl_loom_eager_thresholds_default = "";

int mca_btl_loom_eager_params_register(void)
{
    mca_btl_loom_component_t *c = &mca_btl_loom_component;

    c->eager_rdma = mca_btl_loom_eager_rdma_default;
    mca_btl_loom_param_register("eager_rdma", "Where small messages go through per-connection "
        "eager RDMA rings that grow on demand: \"on\" (every rail that can), \"rdma\" (RDMA "
        "rails only, not tcp: on tcp a ring measured no faster than a message) or \"off\"",
        MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_4, &c->eager_rdma);
    c->eager_slot_sizes = mca_btl_loom_eager_sizes_default;
    mca_btl_loom_param_register("eager_slot_sizes", "Bytes per ring slot in each phase, smallest "
        "first, comma separated (up to 4 phases; each a multiple of 8 from 64 to 1048576; "
        "loom's header and flags take up to 31 bytes of a slot)",
        MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_5, &c->eager_slot_sizes);
    c->eager_slot_counts = mca_btl_loom_eager_counts_default;
    mca_btl_loom_param_register("eager_slot_counts", "Slots of the ring in each phase, comma "
        "separated, one per slot size (1-4095)",
        MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_5, &c->eager_slot_counts);
    c->eager_thresholds = mca_btl_loom_eager_thresholds_default;
    mca_btl_loom_param_register("eager_thresholds", "Largest message each phase's ring takes, "
        "comma separated; empty: the slot size less 31 bytes. A larger message asks the "
        "receiver for the smallest phase that takes it and goes by active message meanwhile",
        MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_5, &c->eager_thresholds);
    c->eager_msgs_before_ring = 16;
    mca_btl_loom_param_register("eager_msgs_before_ring", "Messages to a peer before loom asks "
        "it for the first ring (0-1000000)", MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5,
        &c->eager_msgs_before_ring);
    c->eager_start_slots = 2;
    mca_btl_loom_param_register("eager_start_slots", "Slots a new ring starts with (at most its "
        "phase's btl_loom_eager_slot_counts); a ring that a stream of messages finds full "
        "doubles them up to that count and goes back when the stream stops, so that only "
        "sustained traffic pays for many slots (0: every slot at once; 1-4095)",
        MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5, &c->eager_start_slots);
    c->eager_idle_shrink = 2000;
    mca_btl_loom_param_register("eager_idle_shrink", "Milliseconds a ring's larger slots may go "
        "unused before it goes down to the phase its recent messages needed (none at all: "
        "no ring); 0: never (0-3600000)", MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_5,
        &c->eager_idle_shrink);
    c->eager_wait_shrink = 10;
    mca_btl_loom_param_register("eager_wait_shrink", "Milliseconds a rank that waits and "
        "would sleep (btl_loom_block_when_idle) polls instead, because peers may write into "
        "its rings by RDMA, which wakes no sleeper, before it asks those peers to drop the "
        "rings and sleeps; their next messages come by active message (0: never ask; rings "
        "then go after btl_loom_eager_idle_shrink; 0-3600000)", MCA_BASE_VAR_TYPE_INT,
        OPAL_INFO_LVL_5, &c->eager_wait_shrink);
    c->eager_budget = 0;
    mca_btl_loom_param_register("eager_budget", "Bytes of eager rings and send slots per process; "
        "a ring that would go past it makes the least recently used ring shrink first, and "
        "is refused meanwhile (0: no limit)", MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5,
        &c->eager_budget);
    c->eager_ack_timeout = 1000;
    mca_btl_loom_param_register("eager_ack_timeout", "Milliseconds to wait for a peer to "
        "acknowledge a ring request before its messages go by active message (10-600000)",
        MCA_BASE_VAR_TYPE_INT, OPAL_INFO_LVL_6, &c->eager_ack_timeout);
    c->eager_cycle = false;
    mca_btl_loom_param_register("eager_cycle", "Testing: change the ring's phase after every "
        "message, through every phase and back to none", MCA_BASE_VAR_TYPE_BOOL,
        OPAL_INFO_LVL_9, &c->eager_cycle);
    return OPAL_SUCCESS;
}

/* "a,b,c" into values[]; an empty list gives 0 values. */
static int mca_btl_loom_eager_list(const char *param, const char *list, uint32_t *values,
                                   unsigned *count_p)
{
    const char *p = (NULL == list) ? "" : list;
    unsigned count = 0;
    char *end;

    while ('\0' != *p) {
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || (',' != *end && '\0' != *end) || v > UINT32_MAX) {
            LOOM_HELP_SHOW(&mca_btl_loom_help, "param list",
                           "btl loom: MCA parameter btl_loom_%s=\"%s\": expected a comma "
                           "separated list of numbers", param, list);
            return OPAL_ERR_BAD_PARAM;
        }
        if (count == LOOM_EAGER_MAX_PHASES) {
            LOOM_HELP_SHOW(&mca_btl_loom_help, "param list too long",
                           "btl loom: MCA parameter btl_loom_%s=\"%s\": at most %d phases",
                           param, list, LOOM_EAGER_MAX_PHASES);
            return OPAL_ERR_BAD_PARAM;
        }
        values[count++] = (uint32_t)v;
        p = ('\0' == *end) ? end : end + 1;
    }
    *count_p = count;
    return OPAL_SUCCESS;
}

/* Fill the engine configuration; the engine checks each phase's geometry. */
int mca_btl_loom_eager_config(loom_engine_config_t *config)
{
    mca_btl_loom_component_t *c = &mca_btl_loom_component;
    uint32_t sizes[LOOM_EAGER_MAX_PHASES], counts[LOOM_EAGER_MAX_PHASES];
    uint32_t thresholds[LOOM_EAGER_MAX_PHASES];
    unsigned n_sizes, n_counts, n_thresholds, p;

    if (0 == strcmp(c->eager_rdma, "on")) {
        config->eager_mode = LOOM_EAGER_ON;
    } else if (0 == strcmp(c->eager_rdma, "rdma")) {
        config->eager_mode = LOOM_EAGER_RDMA_ONLY;
    } else if (0 == strcmp(c->eager_rdma, "off")) {
        config->eager_mode = LOOM_EAGER_OFF;
    } else {
        LOOM_HELP_SHOW(&mca_btl_loom_help, "param eager rdma",
                       "btl loom: invalid value \"%s\" for MCA parameter btl_loom_eager_rdma: "
                       "give \"on\", \"rdma\" or \"off\"", c->eager_rdma);
        return OPAL_ERR_BAD_PARAM;
    }
    if (OPAL_SUCCESS != mca_btl_loom_eager_list("eager_slot_sizes", c->eager_slot_sizes,
                                                sizes, &n_sizes) ||
        OPAL_SUCCESS != mca_btl_loom_eager_list("eager_slot_counts", c->eager_slot_counts,
                                                counts, &n_counts) ||
        OPAL_SUCCESS != mca_btl_loom_eager_list("eager_thresholds", c->eager_thresholds,
                                                thresholds, &n_thresholds) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("eager_msgs_before_ring",
                                                 c->eager_msgs_before_ring, 0, 1000000) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("eager_start_slots", c->eager_start_slots,
                                                 0, 4095) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("eager_idle_shrink", c->eager_idle_shrink,
                                                 0, 3600000) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("eager_wait_shrink", c->eager_wait_shrink,
                                                 0, 3600000) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("eager_ack_timeout", c->eager_ack_timeout,
                                                 10, 600000)) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (n_counts != n_sizes || (0 != n_thresholds && n_thresholds != n_sizes)) {
        LOOM_HELP_SHOW(&mca_btl_loom_help, "param eager phases",
                       "btl loom: MCA parameters btl_loom_eager_slot_sizes (%u phases), "
                       "btl_loom_eager_slot_counts (%u) and btl_loom_eager_thresholds (%u) "
                       "must name the same phases", n_sizes, n_counts, n_thresholds);
        return OPAL_ERR_BAD_PARAM;
    }
    config->eager_phase_count = n_sizes;
    for (p = 0; p < n_sizes; ++p) {
        config->eager_phases[p].slot_size  = sizes[p];
        config->eager_phases[p].slot_count = counts[p];
        config->eager_phases[p].threshold  = n_thresholds ? thresholds[p] : 0;
    }
    config->eager_msgs_before_ring = (unsigned)c->eager_msgs_before_ring;
    config->eager_start_slots      = (unsigned)c->eager_start_slots;
    config->eager_idle_ms          = (unsigned)c->eager_idle_shrink;
    config->eager_wait_shrink_ms   = (unsigned)c->eager_wait_shrink;
    config->eager_budget           = c->eager_budget;
    config->eager_ack_timeout_ms   = (unsigned)c->eager_ack_timeout;
    config->eager_cycle            = c->eager_cycle;
    return OPAL_SUCCESS;
}

/* ---- performance variables ----------------------------------------------------- */

#define MCA_BTL_LOOM_EAGER_STAT(_f) offsetof(loom_eager_stats_t, _f)

static const mca_btl_loom_stat_desc_t mca_btl_loom_eager_pvars[] = {
    {"eager_registered_bytes", "Bytes of eager rings and send slots registered now",
     MCA_BTL_LOOM_EAGER_STAT(registered_bytes), MCA_BASE_PVAR_CLASS_LEVEL},
    {"eager_registered_max", "Most bytes of eager rings and send slots registered at once",
     MCA_BTL_LOOM_EAGER_STAT(registered_max), MCA_BASE_PVAR_CLASS_HIGHWATERMARK},
    {"eager_peer_bytes_max", "Most bytes of eager rings and send slots one peer ever had "
     "(both directions)", MCA_BTL_LOOM_EAGER_STAT(peer_bytes_max),
     MCA_BASE_PVAR_CLASS_HIGHWATERMARK},
    {"eager_enlargements", "Rings this process asked to grow, acknowledged",
     MCA_BTL_LOOM_EAGER_STAT(enlargements), MCA_BASE_PVAR_CLASS_COUNTER},
    {"eager_shrinks", "Rings this process asked to shrink, acknowledged",
     MCA_BTL_LOOM_EAGER_STAT(shrinks), MCA_BASE_PVAR_CLASS_COUNTER},
    {"eager_slot_growths", "Of the enlargements, rings that kept their phase and doubled "
     "their slots because a stream of messages found them full",
     MCA_BTL_LOOM_EAGER_STAT(slot_growths), MCA_BASE_PVAR_CLASS_COUNTER},
    {"eager_refused", "Ring requests, acknowledgements and notes refused (malformed, stale "
     "key, over budget)", MCA_BTL_LOOM_EAGER_STAT(refused), MCA_BASE_PVAR_CLASS_COUNTER},
    {"eager_ack_timeouts", "Ring requests a peer did not acknowledge in time",
     MCA_BTL_LOOM_EAGER_STAT(ack_timeouts), MCA_BASE_PVAR_CLASS_COUNTER},
    {"eager_ring_sent", "Messages written into peers' rings",
     MCA_BTL_LOOM_EAGER_STAT(ring_sent), MCA_BASE_PVAR_CLASS_COUNTER},
    {"eager_ring_received", "Messages taken from this process's rings",
     MCA_BTL_LOOM_EAGER_STAT(ring_received), MCA_BASE_PVAR_CLASS_COUNTER},
    {"eager_ring_polled", "Times this process had nothing to do and polled rather than "
     "slept (btl_loom_block_when_idle, the progress thread): a peer may write into one of "
     "its rings by RDMA, which wakes no sleeper", MCA_BTL_LOOM_EAGER_STAT(ring_polled),
     MCA_BASE_PVAR_CLASS_COUNTER},
    {"eager_wait_shrinks", "Rings a waiting rank asked their writer to drop so that it "
     "could sleep (btl_loom_block_when_idle): the writer's next messages come by active "
     "message, which wakes a sleeper", MCA_BTL_LOOM_EAGER_STAT(wait_shrinks),
     MCA_BASE_PVAR_CLASS_COUNTER},
};

#define MCA_BTL_LOOM_EAGER_NPVARS \
    (sizeof(mca_btl_loom_eager_pvars) / sizeof(mca_btl_loom_eager_pvars[0]))

static mca_btl_loom_stat_ctx_t
    mca_btl_loom_eager_ctxs[MCA_BTL_LOOM_EAGER_NPVARS + LOOM_EAGER_MAX_PHASES + 1];

static const void *mca_btl_loom_eager_stats(const loom_engine_t *engine)
{
    return loom_engine_eager_stats(engine);
}

int mca_btl_loom_eager_pvars_register(loom_engine_t *engine)
{
    char name[64], description[160];
    size_t i;

    static const mca_btl_loom_stat_table_t table = {
        mca_btl_loom_eager_pvars, MCA_BTL_LOOM_EAGER_NPVARS, mca_btl_loom_eager_ctxs,
        mca_btl_loom_eager_stats};

    mca_btl_loom_stat_table_add(&table, engine);
    for (i = 0; i <= LOOM_EAGER_MAX_PHASES; ++i) {
        snprintf(name, sizeof(name), "eager_rings_phase%zu", i);
        snprintf(description, sizeof(description), i ? "Peers whose ring here is in phase %zu"
                 : "Connected peers with no ring here (phase %zu)", i);
        mca_btl_loom_stat_pvar_add(&mca_btl_loom_eager_ctxs[MCA_BTL_LOOM_EAGER_NPVARS + i],
                                   engine, mca_btl_loom_eager_stats,
                                   MCA_BTL_LOOM_EAGER_STAT(rings) + i * sizeof(unsigned long),
                                   name, description, MCA_BASE_PVAR_CLASS_LEVEL);
    }
    return OPAL_SUCCESS;
}

void mca_btl_loom_eager_pvars_release(void)
{
    size_t i;

    for (i = 0; i < sizeof(mca_btl_loom_eager_ctxs) / sizeof(mca_btl_loom_eager_ctxs[0]); ++i) {
        mca_btl_loom_eager_ctxs[i].engine = NULL;
    }
}
