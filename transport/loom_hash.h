/*
 * A small open-addressing map from uint64_t keys to pointers, used for the
 * peer table (by process name), the region table (by region id) and the
 * table of outstanding push requests (by request id).  Key 0 is reserved.
 */
#ifndef LOOM_HASH_H
#define LOOM_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct loom_hash_entry {
    uint64_t key;   /* 0: empty; LOOM_HASH_TOMBSTONE: deleted */
    void    *value;
} loom_hash_entry_t;

typedef struct loom_hash {
    loom_hash_entry_t *entries;
    size_t             capacity; /* power of two */
    size_t             used;     /* live entries plus tombstones */
    size_t             count;    /* live entries */
} loom_hash_t;

#define LOOM_HASH_TOMBSTONE UINT64_MAX

void  loom_hash_init(loom_hash_t *hash);
void  loom_hash_fini(loom_hash_t *hash);
/* Returns 0, or -1 when out of memory.  Replaces an existing value. */
int   loom_hash_put(loom_hash_t *hash, uint64_t key, void *value);
void *loom_hash_get(const loom_hash_t *hash, uint64_t key);
/* Returns the removed value, or NULL. */
void *loom_hash_remove(loom_hash_t *hash, uint64_t key);
/* Iterate: pass *pos = 0 first; returns NULL at the end. */
void *loom_hash_next(const loom_hash_t *hash, size_t *pos);

#endif
