/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The process's own memory reached through its own keys (transport.h,
 * loom_local_*): what a peer's put, get or atomic would be checked against
 * at the target, then done by this CPU at once.
 */
#include "rdma/loom_rdma.h"

#include <string.h>

/* The key's region, if [addr, addr+length) lies in it and it gives access. */
static int loom_local_check(loom_engine_t *engine, const void *remote_key,
                            size_t remote_key_size, uint64_t addr, uint64_t length,
                            unsigned access)
{
    const loom_wire_key_t *key;
    loom_wire_key_t fields;
    loom_region_t *region = NULL;
    int rc;

    rc = loom_key_parse(engine, remote_key, remote_key_size, &key);
    if (LOOM_OK != rc) {
        return rc;
    }
    fields = loom_key_fields(key);
    rc = loom_region_check(engine, loom_from_le64(fields.region_id), fields.epoch, addr,
                           length, &region);
    if (LOOM_OK == rc && !(region->access & access)) {
        rc = LOOM_ERR_STALE_KEY; /* the key does not give this access */
    }
    if (LOOM_OK != rc) {
        loom_log(engine, LOOM_LOG_ERROR, "own-process access of %llu bytes at %#llx "
                 "refused: %s", (unsigned long long)length, (unsigned long long)addr,
                 loom_strerror(rc));
    }
    return rc;
}

int loom_local_put(loom_engine_t *engine, const void *local, uint64_t remote_addr,
                   const void *remote_key, size_t remote_key_size, size_t length)
{
    int rc = loom_local_check(engine, remote_key, remote_key_size, remote_addr, length,
                              LOOM_ACCESS_REMOTE_WRITE);

    if (LOOM_OK == rc && length > 0) {
        memmove((void *)(uintptr_t)remote_addr, local, length);
    }
    return rc;
}

int loom_local_get(loom_engine_t *engine, void *local, uint64_t remote_addr,
                   const void *remote_key, size_t remote_key_size, size_t length)
{
    int rc = loom_local_check(engine, remote_key, remote_key_size, remote_addr, length,
                              LOOM_ACCESS_REMOTE_READ);

    if (LOOM_OK == rc && length > 0) {
        memmove(local, (const void *)(uintptr_t)remote_addr, length);
    }
    return rc;
}

int loom_local_atomic(loom_engine_t *engine, int atomic_op, unsigned size,
                      uint64_t remote_addr, const void *remote_key, size_t remote_key_size,
                      uint64_t operand, uint64_t compare, void *result)
{
    int rc = loom_atomic_check(engine, atomic_op, size, remote_addr);

    if (LOOM_OK == rc) {
        rc = loom_local_check(engine, remote_key, remote_key_size, remote_addr, size,
                              LOOM_ACCESS_REMOTE_ATOMIC);
    }
    if (LOOM_OK != rc) {
        return rc;
    }
    ++engine->rails[0].stats.atomics; /* run here, like a peer's */
    loom_atomic_result(result, size,
                       loom_atomic_run(remote_addr, size, atomic_op, operand, compare));
    return LOOM_OK;
}
