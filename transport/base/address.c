/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The address blob a process publishes so that others can connect to it:
 * loom_wire_addr_t, then per rail loom_wire_rail_addr_t + device address +
 * interface address.
 */
#include "base/loom_base.h"

#include <stdlib.h>
#include <string.h>

static size_t loom_rail_iface_addr_len(const loom_rail_t *rail)
{
    /* Published whenever peers can connect to the interface: a connect-to-ep
     * rail then exchanges its endpoint addresses over such a connection. */
    return rail->iface_reachable ? rail->boot_iface_addr_len : 0;
}

int loom_address_pack(loom_engine_t *engine)
{
    size_t length = sizeof(loom_wire_addr_t);
    loom_wire_addr_t *addr;
    uint8_t *p;
    int i;

    for (i = 0; i < engine->rail_count; ++i) {
        length += sizeof(loom_wire_rail_addr_t) + engine->rails[i].attr.device_addr_len +
                  loom_rail_iface_addr_len(&engine->rails[i]);
    }
    addr = calloc(1, length);
    if (NULL == addr) {
        return LOOM_ERR_NOMEM;
    }
    addr->magic        = loom_le32(LOOM_WIRE_ADDR_MAGIC);
    addr->version      = LOOM_WIRE_VERSION;
    addr->rail_count   = (uint8_t)engine->rail_count;
    addr->name         = loom_le64(engine->config.name);
    addr->epoch        = loom_le32(engine->epoch);
    addr->total_length = loom_le32((uint32_t)length);
    p = (uint8_t *)(addr + 1);
    for (i = 0; i < engine->rail_count; ++i) {
        const loom_rail_t *rail = &engine->rails[i];
        loom_wire_rail_addr_t rail_addr;
        size_t iface_len = loom_rail_iface_addr_len(rail);

        memset(&rail_addr, 0, sizeof(rail_addr));
        strncpy(rail_addr.tl_name, rail->info.tl_name, LOOM_WIRE_NAME_MAX - 1);
        strncpy(rail_addr.dev_name, rail->info.dev_name, LOOM_WIRE_NAME_MAX - 1);
        rail_addr.flags = loom_le32((rail->info.connect_to_ep ? LOOM_WIRE_RAIL_CONNECT_TO_EP : 0) |
                                    (iface_len > 0 ? LOOM_WIRE_RAIL_CONNECT_TO_IFACE : 0));
        rail_addr.dev_addr_len   = loom_le16((uint16_t)rail->attr.device_addr_len);
        rail_addr.iface_addr_len = loom_le16((uint16_t)iface_len);
        memcpy(p, &rail_addr, sizeof(rail_addr));
        p += sizeof(rail_addr);
        memcpy(p, rail->dev_addr, rail->attr.device_addr_len);
        p += rail->attr.device_addr_len;
        memcpy(p, rail->iface_addr, iface_len);
        p += iface_len;
    }
    engine->addr_blob     = addr;
    engine->addr_blob_len = length;
    return LOOM_OK;
}

/*
 * Check a received blob completely before any of it is used; on success
 * copy its header to *addr_p and point into it for the rest (the rail
 * records, at any alignment, are copied out by the caller).
 */
int loom_address_parse(const void *blob, size_t length, loom_wire_addr_t *addr_p,
                       const loom_wire_rail_addr_t **rails_p,
                       const uint8_t **dev_addrs_p, const uint8_t **iface_addrs_p)
{
    const uint8_t *p, *end = (const uint8_t *)blob + length;
    loom_wire_addr_t addr;
    int i;

    if (NULL == blob || length < sizeof(addr)) {
        return LOOM_ERR_INVALID;
    }
    memcpy(&addr, blob, sizeof(addr)); /* the blob may sit at any alignment */
    if (loom_from_le32(addr.magic) != LOOM_WIRE_ADDR_MAGIC ||
        addr.version != LOOM_WIRE_VERSION ||
        loom_from_le32(addr.total_length) != length ||
        addr.rail_count == 0 || addr.rail_count > LOOM_MAX_RAILS ||
        0 == addr.name) {
        return LOOM_ERR_INVALID;
    }
    p = (const uint8_t *)blob + sizeof(addr);
    for (i = 0; i < addr.rail_count; ++i) {
        loom_wire_rail_addr_t rail;

        if ((size_t)(end - p) < sizeof(rail)) {
            return LOOM_ERR_INVALID;
        }
        memcpy(&rail, p, sizeof(rail));
        rails_p[i] = (const loom_wire_rail_addr_t *)p;
        p += sizeof(rail);
        if (memchr(rail.tl_name, '\0', LOOM_WIRE_NAME_MAX) == NULL ||
            memchr(rail.dev_name, '\0', LOOM_WIRE_NAME_MAX) == NULL ||
            (size_t)(end - p) < (size_t)loom_from_le16(rail.dev_addr_len) +
                                loom_from_le16(rail.iface_addr_len)) {
            return LOOM_ERR_INVALID;
        }
        dev_addrs_p[i] = p;
        p += loom_from_le16(rail.dev_addr_len);
        iface_addrs_p[i] = p;
        p += loom_from_le16(rail.iface_addr_len);
    }
    if (p != end) {
        return LOOM_ERR_INVALID;
    }
    *addr_p = addr;
    return LOOM_OK;
}
