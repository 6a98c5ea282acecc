/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The registration cache (seed 002's lazy deregistration): a range the
 * upper layer registers again and again (ob1 registers a buffer for every
 * rendezvous) is registered on the rails once and kept after its last user,
 * within a size bound, until it goes unused for a while or its memory is
 * unmapped.  UCX's ucs_rcache does the lookup, merging, LRU bound and the
 * invalidation on unmap (UCM memory events); loom keeps one cache per
 * access set, so a range is never reachable with more than was asked for.
 *
 * Only the rails' handles are cached: every user still gets a region of
 * its own, with its own id, published while it is registered, so a key
 * handed out for an earlier use is refused once that use deregistered
 * (region.c), on rails whose NIC checks keys and on checked rails alike.
 */
#include "memory/loom_memory.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <ucm/api/ucm.h>

#define LOOM_RCACHE_RECLAIM_NS 100000000ull /* look for idle entries this often */
#define LOOM_RCACHE_RECLAIM_BATCH 32

static ucs_status_t loom_rcache_mem_reg(void *context, ucs_rcache_t *rcache, void *arg,
                                        ucs_rcache_region_t *r, uint16_t flags)
{
    loom_rcache_ctx_t *ctx = context;
    loom_engine_t *engine = ctx->engine;
    loom_rcaches_t *rc = &engine->rcaches;
    loom_rcache_entry_t *entry = ucs_derived_of(r, loom_rcache_entry_t);
    size_t length = r->super.end - r->super.start;
    int ret;

    (void)rcache;
    (void)arg;
    ret = loom_mem_reg_rails(engine, (void *)r->super.start, length, ctx->access,
                             flags & UCS_RCACHE_MEM_REG_HIDE_ERRORS, entry->memh,
                             entry->rkey_len, entry->rkeys);
    if (LOOM_OK != ret) {
        return UCS_ERR_IO_ERROR;
    }
    entry->ctx       = ctx;
    entry->unmapped  = false;
    entry->last_used = loom_now_ns();
    pthread_spin_lock(&rc->lock);
    ucs_list_add_tail(&rc->entries, &entry->link);
    pthread_spin_unlock(&rc->lock);
    ++rc->stats.misses;
    ++rc->stats.regions;
    rc->stats.bytes += length;
    return UCS_OK;
}

static void loom_rcache_mem_dereg(void *context, ucs_rcache_t *rcache, ucs_rcache_region_t *r)
{
    loom_rcache_ctx_t *ctx = context;
    loom_rcaches_t *rc = &ctx->engine->rcaches;
    loom_rcache_entry_t *entry = ucs_derived_of(r, loom_rcache_entry_t);

    (void)rcache;
    pthread_spin_lock(&rc->lock);
    ucs_list_del(&entry->link);
    pthread_spin_unlock(&rc->lock);
    loom_mem_dereg_rails(ctx->engine, entry->memh);
    if (entry->unmapped) {
        ++rc->stats.invalidations;
    } else {
        ++rc->stats.evictions;
    }
    --rc->stats.regions;
    rc->stats.bytes -= r->super.end - r->super.start;
}

static void loom_rcache_dump(void *context, ucs_rcache_t *rcache, ucs_rcache_region_t *r,
                             char *buf, size_t max)
{
    loom_rcache_ctx_t *ctx = context;

    (void)rcache;
    (void)r;
    snprintf(buf, max, "loom access %#x", ctx->access);
}

static const ucs_rcache_ops_t loom_rcache_ops = {
    .mem_reg     = loom_rcache_mem_reg,
    .mem_dereg   = loom_rcache_mem_dereg,
    .dump_region = loom_rcache_dump,
};

/*
 * Runs inside munmap (any thread, maybe inside the allocator): only marks
 * the entries the range hits, so their deregistration, which ucs_rcache
 * does at its next lookup, counts as an invalidation.
 */
static void loom_rcache_unmapped(ucm_event_type_t type, ucm_event_t *event, void *arg)
{
    loom_rcaches_t *rc = arg;
    uintptr_t start = (uintptr_t)event->vm_unmapped.address;
    uintptr_t end   = start + event->vm_unmapped.size;
    loom_rcache_entry_t *entry;

    (void)type;
    pthread_spin_lock(&rc->lock);
    ucs_list_for_each(entry, &rc->entries, link) {
        if (entry->super.super.start < end && start < entry->super.super.end) {
            entry->unmapped = true;
        }
    }
    pthread_spin_unlock(&rc->lock);
}

/* PROT_* the pages must allow: ucs_rcache checks them before registering. */
static int loom_rcache_prot(unsigned access)
{
    unsigned written = LOOM_ACCESS_LOCAL_WRITE | LOOM_ACCESS_REMOTE_WRITE |
                       LOOM_ACCESS_REMOTE_ATOMIC;

    return PROT_READ | ((access & written) ? PROT_WRITE : 0);
}

static ucs_rcache_t *loom_rcache_of(loom_engine_t *engine, unsigned access)
{
    loom_rcaches_t *rc = &engine->rcaches;
    loom_rcache_ctx_t *ctx = &rc->ctx[access];
    ucs_rcache_params_t params;
    ucs_status_t status;
    char name[32];

    if (NULL != ctx->rcache || ctx->failed) {
        return ctx->rcache;
    }
    memset(&params, 0, sizeof(params));
    params.region_struct_size = sizeof(loom_rcache_entry_t) +
                                (size_t)engine->rail_count * engine->rkey_stride;
    params.alignment          = UCS_RCACHE_MIN_ALIGNMENT;
    params.max_alignment      = (size_t)sysconf(_SC_PAGESIZE);
    params.ucm_events         = UCM_EVENT_VM_UNMAPPED;
    params.ucm_event_priority = 1000;
    params.ops                = &loom_rcache_ops;
    params.context            = ctx;
    params.flags              = 0;
    params.max_regions        = engine->config.rcache_max_regions;
    params.max_size           = engine->config.rcache_max_bytes;
    /* no cleanup from UCX's async thread: entries change only under loom's
     * own calls */
    params.max_unreleased     = SIZE_MAX;
    ctx->engine = engine;
    ctx->access = access;
    snprintf(name, sizeof(name), "loom-access-%#x", access);
    status = ucs_rcache_create(&params, name, NULL, &ctx->rcache);
    if (UCS_OK != status) {
        /* registrations of this access go uncached from now on */
        loom_log(engine, LOOM_LOG_WARN, "registration cache %s: %s; registering without it",
                 name, ucs_status_string(status));
        ctx->rcache = NULL;
        ctx->failed = true;
    }
    return ctx->rcache;
}

int loom_rcache_init(loom_engine_t *engine)
{
    loom_rcaches_t *rc = &engine->rcaches;
    ucs_status_t status;

    rc->initialized = true;
    ucs_list_head_init(&rc->entries);
    pthread_spin_init(&rc->lock, PTHREAD_PROCESS_PRIVATE);
    if (0 == engine->config.rcache_max_bytes) {
        return LOOM_OK; /* off */
    }
    status = ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 999, loom_rcache_unmapped, rc);
    if (UCS_OK != status) {
        loom_log(engine, LOOM_LOG_WARN, "registration cache off: no memory events from UCM: "
                 "%s", ucs_status_string(status));
        return LOOM_OK;
    }
    rc->enabled = true;
    return LOOM_OK;
}

/* A registration of [addr, addr+length) with exactly `access`, held for the
 * caller; NULL when the cache is off or cannot take the range (the caller
 * registers it itself). */
loom_rcache_entry_t *loom_rcache_get(loom_engine_t *engine, void *addr, size_t length,
                                     unsigned access)
{
    loom_rcaches_t *rc = &engine->rcaches;
    ucs_rcache_region_t *r;
    ucs_rcache_t *rcache;
    uint64_t misses = rc->stats.misses;
    ucs_status_t status;

    if (!rc->enabled || 0 == length || access > LOOM_ACCESS_ALL) {
        return NULL;
    }
    rcache = loom_rcache_of(engine, access);
    if (NULL == rcache) {
        return NULL;
    }
    status = ucs_rcache_get(rcache, addr, length, loom_rcache_prot(access), NULL, &r);
    if (UCS_OK != status) {
        ++rc->stats.bypassed;
        return NULL;
    }
    if (misses == rc->stats.misses) {
        ++rc->stats.hits;
    }
    return ucs_derived_of(r, loom_rcache_entry_t);
}

void loom_rcache_put(loom_engine_t *engine, loom_rcache_entry_t *entry)
{
    entry->last_used = loom_now_ns();
    ucs_rcache_region_put(entry->ctx->rcache, &entry->super);
}

static void loom_rcache_invalidated(void *arg)
{
    (void)arg; /* nobody waits: the entry goes with its last user */
}

void loom_rcache_drop(loom_engine_t *engine, loom_rcache_entry_t *entry)
{
    (void)engine;
    ucs_rcache_region_invalidate(entry->ctx->rcache, &entry->super, loom_rcache_invalidated,
                                 NULL);
    ucs_rcache_region_put(entry->ctx->rcache, &entry->super);
}

/* Entries nobody used for config.rcache_idle_ms are deregistered, so a
 * job's idle phase does not keep its memory registered for ever. */
int loom_rcache_reclaim(loom_engine_t *engine)
{
    loom_rcaches_t *rc = &engine->rcaches;
    loom_rcache_entry_t *idle[LOOM_RCACHE_RECLAIM_BATCH], *entry;
    uint64_t now, limit;
    int count = 0, i;

    if (0 == rc->stats.regions || 0 == engine->config.rcache_idle_ms) {
        return 0;
    }
    now = loom_engine_clock(engine);
    if (now < rc->next_reclaim) {
        return 0;
    }
    rc->next_reclaim = now + LOOM_RCACHE_RECLAIM_NS;
    limit = (uint64_t)engine->config.rcache_idle_ms * 1000000ull;
    pthread_spin_lock(&rc->lock);
    ucs_list_for_each(entry, &rc->entries, link) {
        /* the cache's own reference only: no region uses it */
        if (1 == entry->super.refcount && loom_elapsed_ns(now, entry->last_used) > limit &&
            (entry->super.flags & UCS_RCACHE_REGION_FLAG_PGTABLE)) {
            ucs_rcache_region_hold(entry->ctx->rcache, &entry->super);
            idle[count++] = entry;
            if (LOOM_RCACHE_RECLAIM_BATCH == count) {
                break;
            }
        }
    }
    pthread_spin_unlock(&rc->lock);
    for (i = 0; i < count; ++i) {
        loom_rcache_drop(engine, idle[i]); /* the last reference */
    }
    return count;
}

/* After every region was freed: what is cached is deregistered. */
void loom_rcache_fini(loom_engine_t *engine)
{
    loom_rcaches_t *rc = &engine->rcaches;
    unsigned access;

    if (!rc->initialized) {
        return; /* the engine failed before it */
    }
    for (access = 0; access <= LOOM_ACCESS_ALL; ++access) {
        if (NULL != rc->ctx[access].rcache) {
            ucs_rcache_destroy(rc->ctx[access].rcache);
            rc->ctx[access].rcache = NULL;
        }
    }
    if (rc->enabled) {
        ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, loom_rcache_unmapped, rc);
        rc->enabled = false;
    }
    pthread_spin_destroy(&rc->lock);
    rc->initialized = false;
}
