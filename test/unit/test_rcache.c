/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The registration cache (issue 12): the child owns memory the parent
 * reads by get; the child registers it through loom_mem_register_cached.
 *
 * - a second registration of the same buffer is a hit, with a region (and
 *   key) of its own: the key of the first use is refused once it ended;
 * - the buffer unmapped and a new one mapped at the same address: a miss
 *   and an invalidation, never the old registration, and the parent reads
 *   the new contents byte for byte;
 * - a revoked registration (loom_mem_revoke: its use failed) leaves the
 *   cache, and the next registration of the buffer is a miss;
 * - the bound on registrations evicts the least recently used;
 * - registrations unused for rcache_idle_ms are dropped by progress.
 */
#include "unit_harness.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BUF_LEN   ((size_t)1 << 20)
#define MAX_REGS  2
#define IDLE_MS   100

static const loom_rcache_stats_t *stats(unit_ctx_t *ctx)
{
    return loom_engine_rcache_stats(ctx->engine);
}

static void configure(loom_engine_config_t *config, bool is_parent)
{
    (void)is_parent;
    config->rcache_max_bytes   = (size_t)64 << 20;
    config->rcache_max_regions = MAX_REGS;
    config->rcache_idle_ms     = IDLE_MS;
}

static void *map_at(void *hint, size_t length, int prot)
{
    void *mem = mmap(hint, length, prot, MAP_PRIVATE | MAP_ANONYMOUS | (hint ? MAP_FIXED : 0),
                     -1, 0);

    CHECK_MSG(MAP_FAILED != mem, "mmap of %zu bytes failed", length);
    return mem;
}

/* Child: register buf (cached), hand its key to the parent, wait for the
 * parent's read, deregister; returns the region id it had. */
static uint64_t serve_once(unit_ctx_t *ctx, void *buf)
{
    loom_region_t *region;
    uint64_t id;

    CHECK_RC(loom_mem_register_cached(ctx->engine, buf, BUF_LEN, LOOM_ACCESS_REMOTE_READ,
                                      &region), LOOM_OK);
    id = loom_region_id(region);
    unit_send_region(ctx, region, buf, BUF_LEN);
    unit_barrier(ctx); /* the parent read it */
    loom_mem_deregister(region);
    return id;
}

/* Parent: read the child's region into local, expecting rc. */
static void read_remote(unit_ctx_t *ctx, const unit_remote_t *remote, uint8_t *local,
                        loom_region_t *local_region, int expected)
{
    unit_op_t uop;

    unit_op_init(&uop);
    CHECK_RC(loom_get(ctx->peer, &uop.op, local, local_region, remote->base, remote->key,
                      remote->key_size, BUF_LEN), LOOM_INPROGRESS);
    UNIT_WAIT(ctx, uop.calls > 0);
    CHECK_RC(uop.status, expected);
}

static void parent_body(unit_ctx_t *ctx)
{
    uint8_t *local = unit_alloc(BUF_LEN), *expect = unit_alloc(BUF_LEN);
    loom_region_t *local_region;
    unit_remote_t first, again;

    CHECK_RC(loom_mem_register(ctx->engine, local, BUF_LEN, &local_region), LOOM_OK);
    unit_fill(expect, BUF_LEN, 1);

    unit_recv_region(ctx, &first); /* first use */
    read_remote(ctx, &first, local, local_region, LOOM_OK);
    CHECK_MEM(local, expect, BUF_LEN, "the first use");
    unit_barrier(ctx);

    unit_recv_region(ctx, &again); /* second use, a cache hit */
    memset(local, 0, BUF_LEN);
    read_remote(ctx, &first, local, local_region, LOOM_ERR_STALE_KEY); /* UNKNOWN_KEY */
    read_remote(ctx, &again, local, local_region, LOOM_OK);
    CHECK_MEM(local, expect, BUF_LEN, "the second use");
    unit_barrier(ctx);

    unit_recv_region(ctx, &again); /* new memory at the same address */
    CHECK_UEQ(again.base, first.base);
    unit_fill(expect, BUF_LEN, 2);
    read_remote(ctx, &again, local, local_region, LOOM_OK);
    CHECK_MEM(local, expect, BUF_LEN, "memory mapped again at the same address");
    unit_barrier(ctx);

    unit_barrier(ctx); /* the child's own checks */
    loom_mem_deregister(local_region);
    free(local);
    free(expect);
}

static void child_body(unit_ctx_t *ctx)
{
    uint8_t *buf = map_at(NULL, BUF_LEN, PROT_READ | PROT_WRITE), *other[MAX_REGS + 1];
    loom_region_t *region;
    uint64_t first_id, id;
    int i;

    unit_fill(buf, BUF_LEN, 1);
    first_id = serve_once(ctx, buf);
    CHECK_UEQ(stats(ctx)->misses, 1);
    CHECK_UEQ(stats(ctx)->regions, 1); /* kept after its deregistration */

    id = serve_once(ctx, buf);
    CHECK_UEQ(stats(ctx)->hits, 1);
    CHECK_UEQ(stats(ctx)->misses, 1);
    CHECK(id != first_id);

    /* freed to the system and mapped again, with other contents */
    CHECK(0 == munmap(buf, BUF_LEN));
    CHECK(buf == map_at(buf, BUF_LEN, PROT_READ | PROT_WRITE));
    unit_fill(buf, BUF_LEN, 2);
    (void)serve_once(ctx, buf);
    CHECK_UEQ(stats(ctx)->misses, 2);
    CHECK_UEQ(stats(ctx)->invalidations, 1);
    CHECK_UEQ(stats(ctx)->hits, 1);

    /* revoked (its use failed): the rails' registration is not kept, and
     * the next registration of the buffer is one of its own (a new key on
     * the NIC), where after a deregistration it is a hit */
    CHECK_RC(loom_mem_register_cached(ctx->engine, buf, BUF_LEN, LOOM_ACCESS_REMOTE_READ,
                                      &region), LOOM_OK);
    CHECK_UEQ(stats(ctx)->hits, 2);
    loom_mem_revoke(region);
    CHECK_UEQ(stats(ctx)->regions, 0);
    CHECK_RC(loom_mem_register_cached(ctx->engine, buf, BUF_LEN, LOOM_ACCESS_REMOTE_READ,
                                      &region), LOOM_OK);
    CHECK_UEQ(stats(ctx)->misses, 3);
    CHECK_UEQ(stats(ctx)->hits, 2);
    loom_mem_deregister(region);

    /* more buffers than the bound: the oldest go */
    for (i = 0; i <= MAX_REGS; ++i) {
        other[i] = map_at(NULL, BUF_LEN, PROT_READ | PROT_WRITE);
        CHECK_RC(loom_mem_register_cached(ctx->engine, other[i], BUF_LEN,
                                          LOOM_ACCESS_REMOTE_READ, &region), LOOM_OK);
        loom_mem_deregister(region);
    }
    CHECK(stats(ctx)->regions <= MAX_REGS);
    CHECK(stats(ctx)->evictions >= 1);
    unit_note("bound %d: %lu cached, %lu evicted", MAX_REGS, stats(ctx)->regions,
              stats(ctx)->evictions);

    /* idle: progress drops them all */
    unit_progress_for(ctx, 5.0 * IDLE_MS / 1000.0);
    CHECK_UEQ(stats(ctx)->regions, 0);
    CHECK_UEQ(stats(ctx)->bytes, 0);

    CHECK_UEQ(stats(ctx)->bypassed, 0);
    unit_note("hits %lu, misses %lu, evictions %lu, invalidations %lu, bypassed %lu",
              stats(ctx)->hits, stats(ctx)->misses, stats(ctx)->evictions,
              stats(ctx)->invalidations, stats(ctx)->bypassed);
    unit_barrier(ctx);
    for (i = 0; i <= MAX_REGS; ++i) {
        munmap(other[i], BUF_LEN);
    }
    munmap(buf, BUF_LEN);
}

int main(void)
{
    unit_options_t options = {.configure = configure};

    return unit_main("rcache", &options, parent_body, child_body);
}
