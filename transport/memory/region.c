/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Registered regions and the keys that name them remotely.
 *
 * A region is registered on every rail (a key is only valid on the NIC that
 * issued it) and carries an id unique for this process's lifetime plus the
 * engine's epoch, so its owner can refuse keys of regions that are gone or
 * that an earlier incarnation handed out.
 */
#include "memory/loom_memory.h"

#include <stdlib.h>
#include <string.h>

/* A multiple of 8 bytes: upper layers lay keys out in arrays next to 8-byte
 * words they run atomics on (osc rdma's state follows its region keys). */
static size_t loom_key_bytes(size_t rail_count, size_t rkey_stride)
{
    return (sizeof(loom_wire_key_t) + rail_count * rkey_stride + 7) & ~(size_t)7;
}

size_t loom_key_size(const loom_engine_t *engine)
{
    return loom_key_bytes((size_t)engine->rail_count, engine->rkey_stride);
}

uint64_t loom_region_id(const loom_region_t *region)
{
    return region->id;
}

int loom_mem_register(loom_engine_t *engine, void *addr, size_t length,
                      loom_region_t **region_p)
{
    return loom_mem_register_access(engine, addr, length, LOOM_ACCESS_ALL, region_p);
}

static loom_region_t *loom_region_new(loom_engine_t *engine, void *addr, size_t length,
                                      unsigned access)
{
    loom_region_t *region = calloc(1, sizeof(*region));

    if (NULL != region) {
        region->engine = engine;
        region->base   = addr;
        region->length = length;
        region->access = access;
    }
    return region;
}

/* Its keys are accepted from now on: LOOM_OK, or the region is freed. */
static int loom_region_publish(loom_region_t *region, loom_region_t **region_p)
{
    loom_engine_t *engine = region->engine;

    region->id = engine->next_region_id++;
    if (0 != loom_hash_put(&engine->regions, region->id, region)) {
        region->id = 0;
        loom_region_free(region);
        return LOOM_ERR_NOMEM;
    }
    *region_p = region;
    return LOOM_OK;
}

int loom_mem_register_access(loom_engine_t *engine, void *addr, size_t length,
                             unsigned access, loom_region_t **region_p)
{
    loom_region_t *region;
    int rc;

    if (NULL == addr && length > 0) {
        return LOOM_ERR_INVALID;
    }
    region = loom_region_new(engine, addr, length, access);
    if (NULL == region) {
        return LOOM_ERR_NOMEM;
    }
    region->rkeys = calloc(engine->rail_count, engine->rkey_stride);
    if (NULL == region->rkeys) {
        free(region);
        return LOOM_ERR_NOMEM;
    }
    rc = loom_mem_reg_rails(engine, addr, length, access, false, region->memh,
                            region->rkey_len, region->rkeys);
    if (LOOM_OK != rc) {
        loom_region_free(region);
        return rc;
    }
    return loom_region_publish(region, region_p);
}

int loom_mem_register_cached(loom_engine_t *engine, void *addr, size_t length,
                             unsigned access, loom_region_t **region_p)
{
    loom_rcache_entry_t *entry;
    loom_region_t *region;

    if (NULL == addr && length > 0) {
        return LOOM_ERR_INVALID;
    }
    entry = loom_rcache_get(engine, addr, length, access);
    if (NULL == entry) {
        return loom_mem_register_access(engine, addr, length, access, region_p);
    }
    region = loom_region_new(engine, addr, length, access);
    if (NULL == region) {
        loom_rcache_put(engine, entry);
        return LOOM_ERR_NOMEM;
    }
    region->cached = entry;
    region->rkeys  = entry->rkeys;
    memcpy(region->memh, entry->memh, sizeof(region->memh));
    memcpy(region->rkey_len, entry->rkey_len, sizeof(region->rkey_len));
    return loom_region_publish(region, region_p);
}

/* Its keys are refused from now on: no new access can find it. */
void loom_region_unpublish(loom_region_t *region)
{
    if (0 != region->id) {
        loom_hash_remove(&region->engine->regions, region->id);
        region->id = 0;
    }
}

/* Unpublished, deregistered from every rail (or handed back to the cache)
 * and freed; memory a peer may read by push goes through the engine's
 * deregistration, which ends its serves. */
void loom_region_free(loom_region_t *region)
{
    loom_region_unpublish(region);
    if (NULL != region->cached && region->revoked) {
        loom_rcache_drop(region->engine, region->cached);
    } else if (NULL != region->cached) {
        loom_rcache_put(region->engine, region->cached);
    } else {
        loom_mem_dereg_rails(region->engine, region->memh);
        free(region->rkeys);
    }
    free(region);
}

int loom_key_pack(const loom_region_t *region, void *buf, size_t size)
{
    const loom_engine_t *engine = region->engine;
    loom_wire_key_t key;
    uint8_t *slot;
    int i;

    if (size < loom_key_size(engine)) {
        return LOOM_ERR_INVALID;
    }
    memset(buf, 0, loom_key_size(engine));
    key.region_id   = loom_le64(region->id);
    key.base        = loom_le64((uint64_t)(uintptr_t)region->base);
    key.length      = loom_le64((uint64_t)region->length);
    key.epoch       = loom_le32(engine->epoch);
    key.rail_count  = loom_le16((uint16_t)engine->rail_count);
    key.rkey_stride = loom_le16((uint16_t)engine->rkey_stride);
    memcpy(buf, &key, sizeof(key));
    slot = (uint8_t *)buf + sizeof(key);
    for (i = 0; i < engine->rail_count; ++i, slot += engine->rkey_stride) {
        uint16_t len = loom_le16(region->rkey_len[i]);
        memcpy(slot, &len, sizeof(len));
        memcpy(slot + sizeof(len), region->rkeys + (size_t)i * engine->rkey_stride,
               region->rkey_len[i]);
    }
    return LOOM_OK;
}

/* Check a key received from a peer before anything in it is used. */
int loom_key_parse(const loom_engine_t *engine, const void *buf, size_t size,
                   const loom_wire_key_t **key_p)
{
    const uint8_t *slots = (const uint8_t *)buf + sizeof(loom_wire_key_t);
    loom_wire_key_t key;
    size_t rails, stride, i;

    if (NULL == buf || size < sizeof(key)) {
        return LOOM_ERR_INVALID;
    }
    key    = loom_key_fields(buf);
    rails  = loom_from_le16(key.rail_count);
    stride = loom_from_le16(key.rkey_stride);
    /* every process of a job has the same rails (the BTL's handles have one
     * size), so a key of another count is not one of ours: with keys padded
     * to 8 bytes, its length alone would not show it */
    if (0 == loom_from_le64(key.region_id) || rails != (size_t)engine->rail_count ||
        stride < LOOM_WIRE_KEY_SLOT_HDR || size < loom_key_bytes(rails, stride)) {
        return LOOM_ERR_INVALID;
    }
    for (i = 0; i < rails; ++i) {
        uint16_t len;
        memcpy(&len, slots + i * stride, sizeof(len));
        if (loom_from_le16(len) > stride - LOOM_WIRE_KEY_SLOT_HDR) {
            return LOOM_ERR_INVALID;
        }
    }
    *key_p = buf;
    return LOOM_OK;
}

int loom_key_parse_whole(const loom_engine_t *engine, const void *buf, size_t size,
                         const loom_wire_key_t **key_p)
{
    loom_wire_key_t fields;
    int rc = loom_key_parse(engine, buf, size, key_p);

    if (LOOM_OK != rc) {
        return rc;
    }
    fields = loom_key_fields(buf);
    return (size == loom_key_bytes(loom_from_le16(fields.rail_count),
                                   loom_from_le16(fields.rkey_stride))) ? LOOM_OK
                                                                        : LOOM_ERR_INVALID;
}

/* Unpack the part of a (parsed) key that is valid on our rail. */
int loom_key_rkey(const loom_engine_t *engine, const loom_wire_key_t *key, int rail,
                  uct_rkey_bundle_t *bundle)
{
    loom_wire_key_t fields = loom_key_fields(key);
    size_t stride = loom_from_le16(fields.rkey_stride);
    const uint8_t *slot;
    uint8_t rkey_buf[LOOM_OP_MSG_MAX];
    ucs_status_t status;
    uint16_t len;

    if (rail >= loom_from_le16(fields.rail_count)) {
        return LOOM_ERR_STALE_KEY; /* the owner has no key for this rail */
    }
    slot = (const uint8_t *)key + sizeof(fields) + (size_t)rail * stride;
    memcpy(&len, slot, sizeof(len));
    len = loom_from_le16(len);
    if (len < engine->rails[rail].md_attr.rkey_packed_size || len > sizeof(rkey_buf)) {
        return LOOM_ERR_STALE_KEY;
    }
    memcpy(rkey_buf, slot + sizeof(len), len); /* UCT may expect alignment */
    status = uct_rkey_unpack(engine->rails[rail].component, rkey_buf, bundle);
    return (UCS_OK == status) ? LOOM_OK : LOOM_ERR_STALE_KEY;
}

/* Does the key's region hold [addr, addr+length)?  Only what the key says:
 * a cheap check before a NIC is given the address; the owner checks again. */
bool loom_key_covers(const loom_wire_key_t *key, uint64_t addr, uint64_t length)
{
    loom_wire_key_t fields = loom_key_fields(key);
    uint64_t base = loom_from_le64(fields.base), size = loom_from_le64(fields.length);

    return addr >= base && length <= size && addr - base <= size - length;
}

/* Owner side: is [addr, addr+length) inside a live region of this epoch? */
int loom_region_check(loom_engine_t *engine, uint64_t region_id, uint32_t epoch,
                      uint64_t addr, uint64_t length, loom_region_t **region_p)
{
    loom_region_t *region;
    uint64_t base;

    if (epoch != engine->epoch) {
        return LOOM_ERR_STALE_KEY;
    }
    region = loom_hash_get(&engine->regions, region_id);
    if (NULL == region) {
        return LOOM_ERR_NOT_FOUND;
    }
    base = (uint64_t)(uintptr_t)region->base;
    if (addr < base || length > region->length || addr - base > region->length - length) {
        return LOOM_ERR_RANGE;
    }
    *region_p = region;
    return LOOM_OK;
}
