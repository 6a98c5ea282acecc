/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * MPI_T performance variables: loom's counters, per rail and in total, so a
 * user (or a test) can see which rail carried how much.
 */
#include "btl_loom.h"

#include "common/loom_pvar.h"

#include <stdio.h>

typedef struct mca_btl_loom_pvar {
    const char *name;
    const char *description;
    size_t      offset;     /* of the counter in loom_rail_stats_t */
} mca_btl_loom_pvar_t;

static const mca_btl_loom_pvar_t mca_btl_loom_pvars[] = {
    {"bytes_sent", "Bytes loom moved out of this process (messages, puts, served "
     "pushes)", offsetof(loom_rail_stats_t, bytes_sent)},
    {"bytes_received", "Bytes that arrived in this process through loom (messages "
     "and gets)", offsetof(loom_rail_stats_t, bytes_received)},
    {"messages_sent", "Messages loom sent", offsetof(loom_rail_stats_t, messages_sent)},
    {"messages_zcopy", "Of the messages sent, those sent from where their data lay "
     "(zero-copy, btl_loom_zcopy_threshold)", offsetof(loom_rail_stats_t, messages_zcopy)},
    {"messages_received", "Messages loom received",
     offsetof(loom_rail_stats_t, messages_received)},
    {"puts", "RDMA writes completed", offsetof(loom_rail_stats_t, puts)},
    {"gets", "RDMA reads completed (hardware or by push request)",
     offsetof(loom_rail_stats_t, gets)},
    {"pushes_served", "Push requests served for other processes",
     offsetof(loom_rail_stats_t, pushes_served)},
    {"refused", "Malformed or stale messages and keys refused",
     offsetof(loom_rail_stats_t, refused)},
    {"chunks", "Chunks of striped puts and gets that landed",
     offsetof(loom_rail_stats_t, chunks)},
    {"failovers", "Striped chunks re-driven here after the rail they were on failed",
     offsetof(loom_rail_stats_t, failovers)},
    {"resent", "Messages sent again here after the rail they went on failed",
     offsetof(loom_rail_stats_t, resent)},
    {"duplicates", "Messages that arrived here a second time (sent again after a rail "
     "failure, having arrived already) and were dropped",
     offsetof(loom_rail_stats_t, duplicates)},
    {"rejoins", "Times this rail came back into use for a peer after it had failed",
     offsetof(loom_rail_stats_t, rejoins)},
    {"failures", "Times this rail was taken out of use for a peer (an error of the "
     "transport, or its chunks or messages stopped arriving while other rails delivered)",
     offsetof(loom_rail_stats_t, failures)},
    {"bad_tags", "Messages with a tag past Open MPI's table of active-message tags, "
     "dropped", offsetof(loom_rail_stats_t, bad_tags)},
    {"closings", "Endpoints to a process that said goodbye (or that this one left) "
     "closed on an error: the process went, no rail failed",
     offsetof(loom_rail_stats_t, closings)},
    {"over_limit", "Messages, requests and answers dropped because a peer reached a bound "
     "on what it can make this process hold (messages ahead of order, messages of "
     "unconnected processes, queued answers, early connect messages)",
     offsetof(loom_rail_stats_t, over_limit)},
    {"writes_checked", "Segments of remote writes checked here by loom and placed (rails "
     "without memory protection: puts, served pushes, eager ring slots and ring "
     "acknowledgements)", offsetof(loom_rail_stats_t, writes_checked)},
    {"writes_streamed", "Of the checked write segments placed here, those copied into place "
     "with streaming stores, past the cache (btl_loom_tcp_stream_copy, "
     "btl_loom_tcp_stream_reuse)", offsetof(loom_rail_stats_t, writes_streamed)},
    {"writes_refused", "Segments of remote writes refused here by loom's check (rails "
     "without memory protection: region gone, stale epoch, out of range, no remote write "
     "access, or a failed connection's late write): their bytes were not placed",
     offsetof(loom_rail_stats_t, writes_refused)},
    {"atomics", "Atomic operations of peers run here by this process's CPU (MPI one-sided "
     "atomics and osc rdma's locks, through the BTL's atomics)",
     offsetof(loom_rail_stats_t, atomics)},
    {"connect_retries", "CONNECT messages sent again, on a fresh wireup endpoint, to a "
     "process that had not connected back on this rail (rails that connect endpoint to "
     "endpoint, such as rc_verbs)", offsetof(loom_rail_stats_t, connect_retries)},
    {"wireup_failures", "Wireup endpoints (which carry CONNECT messages on rails that "
     "connect endpoint to endpoint) found failed by a CONNECT and made afresh; the rail "
     "itself goes on", offsetof(loom_rail_stats_t, wireup_failures)},
    {"rejoin_tries", "Attempts to bring this rail back into use for a peer after it "
     "failed: probes on fresh endpoints (tcp), or fresh endpoint addresses announced "
     "(rails that connect endpoint to endpoint, such as rc_verbs)",
     offsetof(loom_rail_stats_t, rejoin_tries)},
};

#define MCA_BTL_LOOM_NPVARS (sizeof(mca_btl_loom_pvars) / sizeof(mca_btl_loom_pvars[0]))

/* ctx of a pvar: which counter, on which rail (-1: sum of all rails), or
 * which level of the rail. */
typedef struct mca_btl_loom_pvar_ctx {
    loom_engine_t *engine;
    size_t         offset;
    int            rail;
    unsigned long (*level)(loom_engine_t *engine, int rail);
} mca_btl_loom_pvar_ctx_t;

static mca_btl_loom_pvar_ctx_t
    mca_btl_loom_pvar_ctxs[(LOOM_MAX_RAILS + 1) * MCA_BTL_LOOM_NPVARS + 3 * LOOM_MAX_RAILS];

static unsigned long mca_btl_loom_counter(loom_engine_t *engine, int rail, size_t offset)
{
    return *(unsigned long *)((char *)loom_engine_rail_stats(engine, rail) + offset);
}

static int mca_btl_loom_pvar_read(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    const mca_btl_loom_pvar_ctx_t *ctx = pvar->ctx;
    unsigned long sum = 0;
    int i;

    (void)obj;
    MCA_BTL_LOOM_LOCK(); /* another thread may finalize loom */
    if (NULL == ctx->engine) {
        /* loom was finalized: counters are gone */
    } else if (ctx->rail >= 0) {
        sum = mca_btl_loom_counter(ctx->engine, ctx->rail, ctx->offset);
    } else {
        for (i = 0; i < loom_engine_rail_count(ctx->engine); ++i) {
            sum += mca_btl_loom_counter(ctx->engine, i, ctx->offset);
        }
    }
    MCA_BTL_LOOM_UNLOCK();
    *(unsigned long *)value = sum;
    return OPAL_SUCCESS;
}

static void mca_btl_loom_pvar_add(loom_engine_t *engine, size_t which, int rail, int slot)
{
    mca_btl_loom_pvar_ctx_t *ctx = &mca_btl_loom_pvar_ctxs[slot];
    const mca_btl_loom_pvar_t *desc = &mca_btl_loom_pvars[which];
    char name[64], description[256];

    ctx->engine = engine;
    ctx->offset = desc->offset;
    ctx->rail   = rail;
    if (rail < 0) {
        snprintf(name, sizeof(name), "%s", desc->name);
        snprintf(description, sizeof(description), "%s, all rails", desc->description);
    } else {
        const loom_rail_info_t *info = loom_engine_rail_info(engine, rail);
        snprintf(name, sizeof(name), "rail%d_%s", rail, desc->name);
        snprintf(description, sizeof(description), "%s, rail %d (%s:%s)",
                 desc->description, rail, info->tl_name, info->dev_name);
    }
    loom_pvar_register(&mca_btl_loom_component.super.btl_version, name, description, MCA_BASE_PVAR_CLASS_COUNTER,
                       mca_btl_loom_pvar_read, ctx);
}

static unsigned long mca_btl_loom_rate(loom_engine_t *engine, int rail)
{
    return (unsigned long)loom_engine_rail_rate(engine, rail);
}

static unsigned long mca_btl_loom_failed_peers(loom_engine_t *engine, int rail)
{
    return loom_engine_rail_failed_peers(engine, rail);
}

static unsigned long mca_btl_loom_rejoining_peers(loom_engine_t *engine, int rail)
{
    return loom_engine_rail_rejoining_peers(engine, rail);
}

static int mca_btl_loom_level_read(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    const mca_btl_loom_pvar_ctx_t *ctx = pvar->ctx;

    (void)obj;
    MCA_BTL_LOOM_LOCK(); /* levels walk the peers another thread may connect */
    *(unsigned long *)value = (NULL == ctx->engine) ? 0 : ctx->level(ctx->engine, ctx->rail);
    MCA_BTL_LOOM_UNLOCK();
    return OPAL_SUCCESS;
}

/* A per-rail level (a state, not a counter). */
static void mca_btl_loom_level_add(loom_engine_t *engine, int rail, int slot, const char *what,
                                   const char *description_fmt,
                                   unsigned long (*level)(loom_engine_t *engine, int rail))
{
    mca_btl_loom_pvar_ctx_t *ctx = &mca_btl_loom_pvar_ctxs[slot];
    const loom_rail_info_t *info = loom_engine_rail_info(engine, rail);
    char name[64], description[256];

    ctx->engine = engine;
    ctx->rail   = rail;
    ctx->level  = level;
    snprintf(name, sizeof(name), "rail%d_%s", rail, what);
    snprintf(description, sizeof(description), description_fmt, rail, info->tl_name,
             info->dev_name);
    loom_pvar_register(&mca_btl_loom_component.super.btl_version, name, description, MCA_BASE_PVAR_CLASS_LEVEL,
                       mca_btl_loom_level_read, ctx);
}

/* Registered at init, once the rails are known. */
static int mca_btl_loom_stat_read(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    const mca_btl_loom_stat_ctx_t *ctx = pvar->ctx;

    (void)obj;
    MCA_BTL_LOOM_LOCK(); /* another thread may finalize loom */
    *(unsigned long *)value = (NULL == ctx->engine) ? 0 :
        *(const unsigned long *)((const char *)ctx->stats(ctx->engine) + ctx->offset);
    MCA_BTL_LOOM_UNLOCK();
    return OPAL_SUCCESS;
}

void mca_btl_loom_stat_pvar_add(mca_btl_loom_stat_ctx_t *ctx, loom_engine_t *engine,
                                mca_btl_loom_stats_fn_t stats, size_t offset, const char *name,
                                const char *description, int var_class)
{
    ctx->engine = engine;
    ctx->stats  = stats;
    ctx->offset = offset;
    loom_pvar_register(&mca_btl_loom_component.super.btl_version, name, description, var_class,
                       mca_btl_loom_stat_read, ctx);
}

void mca_btl_loom_stat_table_add(const mca_btl_loom_stat_table_t *table, loom_engine_t *engine)
{
    const mca_btl_loom_stat_desc_t *d;
    size_t i;

    for (i = 0; i < table->count; ++i) {
        d = &table->descs[i];
        mca_btl_loom_stat_pvar_add(&table->ctxs[i], engine, table->stats, d->offset, d->name,
                                   d->description, d->var_class);
    }
}

void mca_btl_loom_stat_table_release(const mca_btl_loom_stat_table_t *table)
{
    size_t i;

    for (i = 0; i < table->count; ++i) {
        table->ctxs[i].engine = NULL;
    }
}

int mca_btl_loom_pvars_register(loom_engine_t *engine)
{
    int rail, slot = 0;
    size_t i;

    for (i = 0; i < MCA_BTL_LOOM_NPVARS; ++i) {
        mca_btl_loom_pvar_add(engine, i, -1, slot++);
        for (rail = 0; rail < loom_engine_rail_count(engine); ++rail) {
            mca_btl_loom_pvar_add(engine, i, rail, slot++);
        }
    }
    for (rail = 0; rail < loom_engine_rail_count(engine); ++rail) {
        mca_btl_loom_level_add(engine, rail, slot++, "rate", "Rate in bytes/s that striping "
                               "weighs rail %d (%s:%s) with: measured from its chunks, UCT's "
                               "estimate before the first", mca_btl_loom_rate);
        mca_btl_loom_level_add(engine, rail, slot++, "failed_peers", "Peers that rail %d "
                               "(%s:%s) is out of use for: it failed, or its chunks stopped "
                               "landing (0: up to every peer)", mca_btl_loom_failed_peers);
        mca_btl_loom_level_add(engine, rail, slot++, "rejoining_peers", "Peers for which "
                               "rail %d (%s:%s), out of use, is being connected again",
                               mca_btl_loom_rejoining_peers);
    }
    return OPAL_SUCCESS;
}

/* The engine is going away: pvars read 0 from now on. */
void mca_btl_loom_pvars_release(void)
{
    size_t i;

    for (i = 0; i < sizeof(mca_btl_loom_pvar_ctxs) / sizeof(mca_btl_loom_pvar_ctxs[0]); ++i) {
        mca_btl_loom_pvar_ctxs[i].engine = NULL;
    }
}
