/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 */
#include "loom_hash.h"

KHASH_IMPL(loom_hash, khint64_t, void *, 1, kh_int64_hash_func, kh_int64_hash_equal)

void loom_hash_init(loom_hash_t *hash)
{
    kh_init_inplace(loom_hash, hash);
}

void loom_hash_fini(loom_hash_t *hash)
{
    kh_destroy_inplace(loom_hash, hash);
}

int loom_hash_put(loom_hash_t *hash, uint64_t key, void *value)
{
    khiter_t it;
    int ret;

    if (0 == key) {
        return -1;
    }
    it = kh_put(loom_hash, hash, key, &ret);
    if (ret < 0) {
        return -1;
    }
    kh_value(hash, it) = value;
    return 0;
}

void *loom_hash_get(loom_hash_t *hash, uint64_t key)
{
    khiter_t it = kh_get(loom_hash, hash, key);

    return (it != kh_end(hash)) ? kh_value(hash, it) : NULL;
}

void *loom_hash_remove(loom_hash_t *hash, uint64_t key)
{
    khiter_t it = kh_get(loom_hash, hash, key);
    void *value;

    if (it == kh_end(hash)) {
        return NULL;
    }
    value = kh_value(hash, it);
    kh_del(loom_hash, hash, it);
    return value;
}

void *loom_hash_next(loom_hash_t *hash, size_t *pos)
{
    while (*pos < kh_end(hash)) {
        khiter_t it = (khiter_t)(*pos)++;

        if (kh_exist(hash, it)) {
            return kh_value(hash, it);
        }
    }
    return NULL;
}
