#include "loom_hash.h"

#include <stdlib.h>

static size_t loom_hash_slot(uint64_t key, size_t capacity)
{
    /* Fibonacci hashing spreads sequential ids across the table. */
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (capacity - 1);
}

void loom_hash_init(loom_hash_t *hash)
{
    hash->entries  = NULL;
    hash->capacity = 0;
    hash->used     = 0;
    hash->count    = 0;
}

void loom_hash_fini(loom_hash_t *hash)
{
    free(hash->entries);
    loom_hash_init(hash);
}

static int loom_hash_grow(loom_hash_t *hash)
{
    size_t capacity = hash->capacity ? hash->capacity * 2 : 64;
    loom_hash_entry_t *old = hash->entries;
    size_t old_capacity = hash->capacity;
    size_t i;

    /* Only tombstones: rehash at the same size. */
    if (hash->count * 4 < hash->capacity) {
        capacity = hash->capacity;
    }
    hash->entries = calloc(capacity, sizeof(*hash->entries));
    if (NULL == hash->entries) {
        hash->entries = old;
        return -1;
    }
    hash->capacity = capacity;
    hash->used     = 0;
    hash->count    = 0;
    for (i = 0; i < old_capacity; ++i) {
        if (old[i].key != 0 && old[i].key != LOOM_HASH_TOMBSTONE) {
            (void)loom_hash_put(hash, old[i].key, old[i].value);
        }
    }
    free(old);
    return 0;
}

static loom_hash_entry_t *loom_hash_find(const loom_hash_t *hash, uint64_t key)
{
    size_t i, slot;

    if (0 == hash->capacity || 0 == key || LOOM_HASH_TOMBSTONE == key) {
        return NULL;
    }
    slot = loom_hash_slot(key, hash->capacity);
    for (i = 0; i < hash->capacity; ++i) {
        loom_hash_entry_t *entry = &hash->entries[(slot + i) & (hash->capacity - 1)];
        if (entry->key == key) {
            return entry;
        }
        if (0 == entry->key) {
            return NULL;
        }
    }
    return NULL;
}

int loom_hash_put(loom_hash_t *hash, uint64_t key, void *value)
{
    loom_hash_entry_t *entry = loom_hash_find(hash, key);
    size_t slot;

    if (0 == key || LOOM_HASH_TOMBSTONE == key) {
        return -1;
    }
    if (NULL != entry) {
        entry->value = value;
        return 0;
    }
    if ((hash->used + 1) * 2 > hash->capacity && loom_hash_grow(hash) != 0) {
        return -1;
    }
    slot = loom_hash_slot(key, hash->capacity);
    for (;;) {
        entry = &hash->entries[slot];
        if (0 == entry->key || LOOM_HASH_TOMBSTONE == entry->key) {
            if (0 == entry->key) {
                ++hash->used;
            }
            entry->key   = key;
            entry->value = value;
            ++hash->count;
            return 0;
        }
        slot = (slot + 1) & (hash->capacity - 1);
    }
}

void *loom_hash_get(const loom_hash_t *hash, uint64_t key)
{
    loom_hash_entry_t *entry = loom_hash_find(hash, key);
    return (NULL != entry) ? entry->value : NULL;
}

void *loom_hash_remove(loom_hash_t *hash, uint64_t key)
{
    loom_hash_entry_t *entry = loom_hash_find(hash, key);
    void *value;

    if (NULL == entry) {
        return NULL;
    }
    value        = entry->value;
    entry->key   = LOOM_HASH_TOMBSTONE;
    entry->value = NULL;
    --hash->count;
    return value;
}

void *loom_hash_next(const loom_hash_t *hash, size_t *pos)
{
    while (*pos < hash->capacity) {
        loom_hash_entry_t *entry = &hash->entries[(*pos)++];
        if (entry->key != 0 && entry->key != LOOM_HASH_TOMBSTONE) {
            return entry->value;
        }
    }
    return NULL;
}
