/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Eager ring memory shared by both directions: which rails can carry a
 * ring, slot sizes by phase, registered memory within the budget, and the
 * credits each direction returns to the other.
 */
#include "memory/loom_memory.h"

#include <stdlib.h>

/* On a rail without memory protection every ring slot and ring
 * acknowledgement is a checked write of one segment (checked_put.c). */
static bool loom_eager_checked_fits(loom_engine_t *engine, const loom_rail_t *r)
{
    unsigned p;

    if (engine->eager.box_size > r->checked_seg) {
        return false;
    }
    for (p = 0; p < engine->config.eager_phase_count; ++p) {
        if (engine->config.eager_phases[p].slot_size > r->checked_seg) {
            loom_log(engine, LOOM_LOG_INFO, "rail %s:%s: no eager rings: "
                     "phase %u's slots of %u bytes exceed its checked write of %zu bytes",
                     r->info.tl_name, r->info.dev_name, p + 1,
                     engine->config.eager_phases[p].slot_size, r->checked_seg);
            return false;
        }
    }
    return true;
}

/* Can the rail carry a ring?  It needs zero-copy puts from memory loom can
 * register (or memory that needs none), and the mode must allow it. */
bool loom_eager_rail_capable(loom_engine_t *engine, const loom_rail_t *r)
{
    if (LOOM_EAGER_OFF == engine->config.eager_mode || 0 == engine->config.eager_phase_count ||
        !(r->attr.cap.flags & UCT_IFACE_FLAG_PUT_ZCOPY) ||
        (r->needs_reg && !(r->md_attr.cap.flags & UCT_MD_FLAG_REG))) {
        return false;
    }
    if (r->checked && !loom_eager_checked_fits(engine, r)) {
        return false;
    }
    /* by default only where the NIC places the write (over tcp it is a
     * message that lands when the target progresses) */
    return LOOM_EAGER_ON == engine->config.eager_mode || loom_rail_places_writes(r);
}

bool loom_eager_rail_ok(const loom_engine_t *engine, int rail)
{
    return engine->eager.rail_ok[rail];
}

/* The smallest phase whose ring takes a message of length bytes; 0 if none does. */
unsigned loom_eager_phase_for(const loom_engine_t *engine, size_t length)
{
    unsigned p;

    for (p = 0; p < engine->config.eager_phase_count; ++p) {
        if (length <= engine->config.eager_phases[p].threshold) {
            return p + 1;
        }
    }
    return 0;
}

int loom_eager_mem_alloc(loom_engine_t *engine, loom_eager_mem_t *mem, uint32_t slot_size,
                         uint32_t slot_count, unsigned access)
{
    size_t bytes = (size_t)slot_size * slot_count;
    int rc;

    if (0 != posix_memalign((void **)&mem->buf, 64, bytes)) {
        mem->buf = NULL;
        return LOOM_ERR_NOMEM;
    }
    memset(mem->buf, 0, bytes);
    rc = loom_mem_register_access(engine, mem->buf, bytes, access, &mem->region);
    if (LOOM_OK != rc) {
        free(mem->buf);
        mem->buf = NULL;
        return rc;
    }
    mem->slot_size  = slot_size;
    mem->slot_count = slot_count;
    engine->eager.stats.registered_bytes += bytes;
    if (engine->eager.stats.registered_bytes > engine->eager.stats.registered_max) {
        engine->eager.stats.registered_max = engine->eager.stats.registered_bytes;
    }
    return LOOM_OK;
}

void loom_eager_mem_free(loom_engine_t *engine, loom_eager_mem_t *mem)
{
    if (NULL == mem->buf) {
        return;
    }
    engine->eager.stats.registered_bytes -= (size_t)mem->slot_size * mem->slot_count;
    loom_region_free(mem->region);
    free(mem->buf);
    memset(mem, 0, sizeof(*mem));
}

static size_t loom_eager_mem_bytes(const loom_eager_mem_t *mem)
{
    return (size_t)mem->slot_size * mem->slot_count;
}

size_t loom_eager_peer_bytes(const loom_peer_t *peer)
{
    return loom_eager_mem_bytes(&peer->eager.tx.mem) + loom_eager_mem_bytes(&peer->eager.rx.mem);
}

void loom_eager_count_peer(loom_peer_t *peer)
{
    loom_eager_stats_t *stats = &peer->engine->eager.stats;
    size_t bytes = loom_eager_peer_bytes(peer);

    if (bytes > stats->peer_bytes_max) {
        stats->peer_bytes_max = bytes;
    }
}

/* Put the peer on the list progress polls. */
void loom_eager_activate(loom_peer_t *peer)
{
    if (!peer->eager.active) {
        peer->eager.active = true;
        ucs_list_add_tail(&peer->engine->eager.active, &peer->eager.link);
    }
}

/* May a ring of peer (direction tx) grow from remove to add bytes?  If the
 * budget says no, the policy is asked to make the least recently used other
 * ring smaller (on the eager policy's next pass), so that a later try may
 * succeed. */
bool loom_eager_budget_room(loom_peer_t *peer, bool tx, size_t add, size_t remove)
{
    loom_engine_t *engine = peer->engine;
    size_t budget = engine->config.eager_budget;

    if (0 == budget || add <= remove ||
        engine->eager.stats.registered_bytes - remove + add <= budget) {
        return true;
    }
    engine->eager.evict_wanted = true;
    engine->eager.evict_except = peer->name;
    engine->eager.evict_except_tx = tx;
    loom_eager_activate(peer); /* so that progress runs the policy */
    return false;
}

uint16_t loom_eager_rx_credits_take(loom_peer_t *peer)
{
    loom_eager_rx_t *rx = &peer->eager.rx;
    uint32_t count = rx->credits_owed;

    if (0 == count || 0 == rx->phase) {
        return 0;
    }
    if (count > LOOM_WIRE_SLOTS_MAX) {
        count = LOOM_WIRE_SLOTS_MAX;
    }
    rx->credits_owed -= count;
    return LOOM_WIRE_CREDITS(rx->gen, count);
}

/* Credits taken for a message that then did not leave: they go with a later one. */
void loom_eager_rx_credits_untake(loom_peer_t *peer, uint16_t wire_credits)
{
    peer->eager.rx.credits_owed += LOOM_WIRE_CREDITS_COUNT(loom_from_le16(wire_credits));
}

/* Credits for our ring came back (on a message of the peer). */
void loom_eager_tx_credits(loom_peer_t *peer, uint16_t credits)
{
    loom_eager_tx_t *tx = &peer->eager.tx;
    uint32_t count = LOOM_WIRE_CREDITS_COUNT(credits);

    if (0 == count || 0 == tx->phase || LOOM_WIRE_CREDITS_GEN(credits) != (tx->gen & 0xfu)) {
        return; /* none, or for a ring that was replaced */
    }
    tx->credits += count;
    if (tx->credits > tx->mem.slot_count) {
        ++peer->engine->eager.stats.refused;
        loom_log(peer->engine, LOOM_LOG_WARN, "eager ring to peer %#llx: %u credits "
                 "returned for a ring of %u slots; ignored", (unsigned long long)peer->name,
                 tx->credits, tx->mem.slot_count);
        tx->credits = tx->mem.slot_count;
    }
}
