/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Wire helpers every layer shares: headers, checks, payload packing and
 * status codes as they travel.
 */
#include "base/loom_base.h"

#include <string.h>

/* Validate the common header of a received message; count refusals. */
bool loom_wire_hdr_check(loom_rail_t *rail, const void *data, size_t length, uint8_t type,
                         size_t min_length)
{
    loom_wire_hdr_t hdr;
    const char *why = NULL;

    hdr.type = type;
    if (length < sizeof(hdr) || length < min_length) {
        why = "too short";
    } else {
        memcpy(&hdr, data, sizeof(hdr));
        if (hdr.version != LOOM_WIRE_VERSION) {
            why = "wrong wire version";
        } else if (hdr.type != type) {
            why = "type does not match its AM id";
        } else if (loom_from_le32(hdr.length) != length - sizeof(hdr)) {
            why = "length field does not match the message";
        }
    }
    if (NULL != why) {
        ++rail->stats.refused;
        loom_log(rail->engine, LOOM_LOG_WARN, "rail %s:%s: refused a message on AM id %u "
                 "(type field %u, %zu bytes): %s", rail->info.tl_name, rail->info.dev_name,
                 type, hdr.type, length, why);
        return false;
    }
    return true;
}

int loom_wire_to_rc(uint32_t status)
{
    switch (status) {
    case LOOM_WIRE_OK:           return LOOM_OK;
    case LOOM_WIRE_UNKNOWN_KEY:
    case LOOM_WIRE_STALE_KEY:    return LOOM_ERR_STALE_KEY;
    case LOOM_WIRE_OUT_OF_RANGE: return LOOM_ERR_RANGE;
    case LOOM_WIRE_BAD_REQUEST:  return LOOM_ERR_INVALID;
    case LOOM_WIRE_CANCELLED:    return LOOM_ERR_CANCELLED;
    case LOOM_WIRE_LIMIT:        return LOOM_ERR_LIMIT;
    default:                     return LOOM_ERR_IO;
    }
}

/* What a refusal said, for the log: both kinds of key map to one error,
 * whose text cannot tell a region never (or no longer) registered from a
 * key of an earlier incarnation. */
const char *loom_wire_status_str(uint32_t status)
{
    switch (status) {
    case LOOM_WIRE_UNKNOWN_KEY: return "remote key refused (unknown: its region is not registered)";
    case LOOM_WIRE_STALE_KEY:   return "remote key refused (stale: not of the owner's epoch)";
    default:                    return loom_strerror(loom_wire_to_rc(status));
    }
}

uint32_t loom_rc_to_wire(int rc)
{
    switch (rc) {
    case LOOM_OK:            return LOOM_WIRE_OK;
    case LOOM_ERR_NOT_FOUND: return LOOM_WIRE_UNKNOWN_KEY;
    case LOOM_ERR_STALE_KEY: return LOOM_WIRE_STALE_KEY;
    case LOOM_ERR_RANGE:     return LOOM_WIRE_OUT_OF_RANGE;
    case LOOM_ERR_INVALID:   return LOOM_WIRE_BAD_REQUEST;
    case LOOM_ERR_CANCELLED: return LOOM_WIRE_CANCELLED;
    case LOOM_ERR_LIMIT:
    case LOOM_ERR_NOMEM:     return LOOM_WIRE_LIMIT; /* the owner's resources, not the rail */
    default:                 return LOOM_WIRE_IO_ERROR;
    }
}
