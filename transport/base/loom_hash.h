/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Tables from uint64_t ids to objects: peers by process name, regions by
 * region id, outstanding requests and checked writes by request id.  A thin
 * wrapper over UCX's khash, so that callers keep one small interface (and
 * iterate with a position, as a removal while iterating is safe in khash).
 * Key 0 is reserved: no object has it.
 */
#ifndef LOOM_HASH_H
#define LOOM_HASH_H

#include <ucs/datastruct/khash.h>

#include <stddef.h>
#include <stdint.h>

KHASH_TYPE(loom_hash, khint64_t, void *)
typedef khash_t(loom_hash) loom_hash_t;

void  loom_hash_init(loom_hash_t *hash);
void  loom_hash_fini(loom_hash_t *hash);
/* Returns 0, or -1 when out of memory or for key 0.  Replaces an existing value. */
int   loom_hash_put(loom_hash_t *hash, uint64_t key, void *value);
void *loom_hash_get(loom_hash_t *hash, uint64_t key);
/* Returns the removed value, or NULL. */
void *loom_hash_remove(loom_hash_t *hash, uint64_t key);
/* How many objects the table holds. */
static inline size_t loom_hash_count(const loom_hash_t *hash)
{
    return kh_size(hash);
}
/* Iterate: pass *pos = 0 first; returns NULL at the end.  Removing the
 * value returned does not disturb the iteration; adding may. */
void *loom_hash_next(loom_hash_t *hash, size_t *pos);

#endif
