/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Registering an address range on every rail: the UCT memory handles and
 * the packed remote keys a region (region.c) or a cached registration
 * (region_cache.c) hands out.  A key is only valid on the NIC that issued
 * it, so each rail registers the range itself.
 */
#include "memory/loom_memory.h"

#include <string.h>

/* The NIC access a range needs on a rail: only what was asked for.  A get
 * the rail emulates by push is a remote put into the getter's memory. */
static unsigned loom_mem_uct_access(const loom_rail_t *rail, unsigned access)
{
    unsigned flags = UCT_MD_MEM_ACCESS_LOCAL_READ | UCT_MD_MEM_ACCESS_LOCAL_WRITE;

    if (access & LOOM_ACCESS_REMOTE_WRITE) {
        flags |= UCT_MD_MEM_ACCESS_REMOTE_PUT;
    }
    if (access & LOOM_ACCESS_REMOTE_READ) {
        flags |= UCT_MD_MEM_ACCESS_REMOTE_GET;
    }
    if (access & LOOM_ACCESS_REMOTE_ATOMIC) {
        flags |= UCT_MD_MEM_ACCESS_REMOTE_ATOMIC;
    }
    if ((access & LOOM_ACCESS_LOCAL_WRITE) && (!rail->info.has_get || rail->info.get_min > 1)) {
        flags |= UCT_MD_MEM_ACCESS_REMOTE_PUT;
    }
    return flags;
}

void loom_mem_dereg_rails(loom_engine_t *engine, uct_mem_h *memh)
{
    int i;

    for (i = 0; i < engine->rail_count; ++i) {
        if (UCT_MEM_HANDLE_NULL != memh[i]) {
            uct_md_mem_dereg(engine->rails[i].md, memh[i]);
            memh[i] = UCT_MEM_HANDLE_NULL;
        }
    }
}

/* Fills memh[] and, per rail, rkey_len[] and its slot of rkeys (rkey_stride
 * bytes each).  Rails that need no registration get a null handle and an
 * empty key.  On failure nothing stays registered; quiet leaves the log to
 * the caller (the registration cache retries with another range). */
int loom_mem_reg_rails(loom_engine_t *engine, void *addr, size_t length, unsigned access,
                       bool quiet, uct_mem_h *memh, uint16_t *rkey_len, uint8_t *rkeys)
{
    ucs_status_t status;
    int i;

    for (i = 0; i < engine->rail_count; ++i) {
        memh[i]     = UCT_MEM_HANDLE_NULL;
        rkey_len[i] = 0;
    }
    for (i = 0; i < engine->rail_count; ++i) {
        loom_rail_t *rail = &engine->rails[i];

        if (!rail->needs_reg || 0 == length) {
            continue;
        }
        status = uct_md_mem_reg(rail->md, addr, length, loom_mem_uct_access(rail, access),
                                &memh[i]);
        if (UCS_OK == status) {
            status = uct_md_mkey_pack(rail->md, memh[i], rkeys + (size_t)i * engine->rkey_stride);
        } else {
            memh[i] = UCT_MEM_HANDLE_NULL;
        }
        if (UCS_OK != status) {
            if (!quiet) {
                loom_log(engine, LOOM_LOG_ERROR, "cannot register %zu bytes at %p on rail "
                         "%s:%s: %s", length, addr, rail->info.tl_name, rail->info.dev_name,
                         ucs_status_string(status));
            }
            loom_mem_dereg_rails(engine, memh);
            return loom_status_to_rc(status);
        }
        rkey_len[i] = (uint16_t)rail->md_attr.rkey_packed_size;
    }
    return LOOM_OK;
}
