/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Layer 3, memory: memory registered on every rail, the registration cache,
 * regions and keys, the eager rings' memory, budget, credits and
 * acknowledgement boxes.
 * What this layer offers to the layers above (transport/layers.map).
 */
#ifndef LOOM_MEMORY_H
#define LOOM_MEMORY_H

#include "link/loom_link.h"

/* mem_reg.c */
int  loom_mem_reg_rails(loom_engine_t *engine, void *addr, size_t length, unsigned access,
                        bool quiet, uct_mem_h *memh, uint16_t *rkey_len, uint8_t *rkeys);
void loom_mem_dereg_rails(loom_engine_t *engine, uct_mem_h *memh);

/* region_cache.c */
int  loom_rcache_init(loom_engine_t *engine);
loom_rcache_entry_t *loom_rcache_get(loom_engine_t *engine, void *addr, size_t length,
                                     unsigned access);
void loom_rcache_put(loom_engine_t *engine, loom_rcache_entry_t *entry);
/* As loom_rcache_put, and the entry leaves the cache: deregistered from the
 * rails once its last user put it. */
void loom_rcache_drop(loom_engine_t *engine, loom_rcache_entry_t *entry);
int  loom_rcache_reclaim(loom_engine_t *engine);
void loom_rcache_fini(loom_engine_t *engine);

/* region.c */
int  loom_key_parse(const loom_engine_t *engine, const void *buf, size_t size,
                    const loom_wire_key_t **key_p);
/* The same for a key a message carries as its last part: size must be the
 * key's own, not a byte more (a request padded behind it is refused). */
int  loom_key_parse_whole(const loom_engine_t *engine, const void *buf, size_t size,
                          const loom_wire_key_t **key_p);
int  loom_key_rkey(const loom_engine_t *engine, const loom_wire_key_t *key, int rail,
                   uct_rkey_bundle_t *bundle);
/* The fixed part of a key, copied out: keys sit at any alignment inside the
 * messages that carry them, so their fields are never read in place. */
static inline loom_wire_key_t loom_key_fields(const void *key)
{
    loom_wire_key_t fields;

    memcpy(&fields, key, sizeof(fields));
    return fields;
}
int  loom_region_check(loom_engine_t *engine, uint64_t region_id, uint32_t epoch,
                       uint64_t addr, uint64_t length, loom_region_t **region_p);
bool loom_key_covers(const loom_wire_key_t *key, uint64_t addr, uint64_t length);
void loom_region_unpublish(loom_region_t *region);
void loom_region_free(loom_region_t *region);

/* eager_ring.c: ring memory, budget and credits of both directions */
void   loom_eager_activate(struct loom_peer *peer);
bool   loom_eager_rail_capable(struct loom_engine *engine, const struct loom_rail *r);
bool   loom_eager_rail_ok(const struct loom_engine *engine, int rail);
unsigned loom_eager_phase_for(const struct loom_engine *engine, size_t length);
int    loom_eager_mem_alloc(struct loom_engine *engine, loom_eager_mem_t *mem,
                            uint32_t slot_size, uint32_t slot_count,
                            unsigned access);
void   loom_eager_mem_free(struct loom_engine *engine, loom_eager_mem_t *mem);
void   loom_eager_count_peer(struct loom_peer *peer);
bool   loom_eager_budget_room(struct loom_peer *peer, bool tx, size_t add, size_t remove);
uint16_t loom_eager_rx_credits_take(struct loom_peer *peer);
void   loom_eager_rx_credits_untake(struct loom_peer *peer, uint16_t wire_credits);
void   loom_eager_tx_credits(struct loom_peer *peer, uint16_t credits);
static inline uint32_t loom_eager_flag(uint32_t seq)
{
    return seq % 0xfffffffeu + 1u; /* never 0: a zeroed slot holds no flag */
}

/* eager_box.c: the registered control area */
loom_eager_box_t *loom_eager_box_get(struct loom_engine *engine);
void   loom_eager_box_put(struct loom_engine *engine, loom_eager_box_t *box);
uct_mem_h loom_eager_box_memh(const loom_eager_box_t *box, int rail);
int    loom_eager_box_key(const loom_eager_box_t *box, void *buf, size_t size);
void   loom_eager_boxes_free(struct loom_engine *engine);

#endif
