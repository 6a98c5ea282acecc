/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Layer 0, base: what every layer uses: logging, error codes and ids, the
 * wire format and its checks, id tables, the address blob, the choice of
 * rails, tcp liveness, copying into place, the clock.
 * What this layer offers to the layers above (transport/layers.map).
 */
#ifndef LOOM_BASE_H
#define LOOM_BASE_H

#include "loom_internal.h"

/* log.c */
uint32_t loom_random_id(void);
void loom_log(loom_engine_t *engine, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int  loom_status_to_rc(ucs_status_t status);

/* A UCT iov of one contiguous piece. */
static inline void loom_uct_iov_set(uct_iov_t *uiov, void *buffer, size_t length, uct_mem_h memh)
{
    uiov->buffer = buffer;
    uiov->length = length;
    uiov->memh   = memh;
    uiov->stride = 0;
    uiov->count  = 1;
}

/* A completion UCT calls func on once the one operation it waits for is
 * done (status: how it ended). */
static inline void loom_uct_comp_arm(uct_completion_t *comp, uct_completion_callback_t func)
{
    comp->func   = func;
    comp->count  = 1;
    comp->status = UCS_OK;
}

/* wire.c; the helpers of every message inline (a call each would cost
 * more than their work) */
/* Copy the pieces of iov one after the other to dest; returns the end. */
static inline uint8_t *loom_iov_pack(uint8_t *dest, const struct iovec *iov, int iovcnt)
{
    int i;

    for (i = 0; i < iovcnt; ++i) {
        memcpy(dest, iov[i].iov_base, iov[i].iov_len);
        dest += iov[i].iov_len;
    }
    return dest;
}

static inline size_t loom_iov_length(const struct iovec *iov, int iovcnt)
{
    size_t length = 0;
    int i;

    for (i = 0; i < iovcnt; ++i) {
        length += iov[i].iov_len;
    }
    return length;
}

static inline void loom_wire_hdr_fill(loom_wire_hdr_t *hdr, uint8_t type, uint8_t tag,
                                      size_t total)
{
    hdr->version = LOOM_WIRE_VERSION;
    hdr->type    = type;
    hdr->tag     = tag;
    hdr->flags   = 0;
    hdr->length  = loom_le32((uint32_t)(total - sizeof(*hdr)));
}
bool loom_wire_hdr_check(loom_rail_t *rail, const void *data, size_t length,
                         uint8_t type, size_t min_length);
int  loom_wire_to_rc(uint32_t status);
uint32_t loom_rc_to_wire(int rc);
const char *loom_wire_status_str(uint32_t status);

/* address.c */
int  loom_address_pack(loom_engine_t *engine);
int  loom_address_parse(const void *blob, size_t length, loom_wire_addr_t *addr_p,
                        const loom_wire_rail_addr_t **rails_p,
                        const uint8_t **dev_addrs_p, const uint8_t **iface_addrs_p);

/* rail_select.c */
typedef struct loom_rail_choice {
    uct_component_h component;
    char md_name[UCT_MD_NAME_MAX];
    char tl_name[UCT_TL_NAME_MAX];
    char dev_name[UCT_DEVICE_NAME_MAX];
} loom_rail_choice_t;
int  loom_rails_select(loom_engine_t *engine, const char *spec, int max_rails,
                       loom_rail_choice_t *choices, int *count_p);

/* tcp_bounds.c: net.core.rmem_max (receive) or wmem_max, 0 where it cannot
 * be read (a network namespace may not show it) */
unsigned long loom_tcp_buffer_bound(bool receive);

/* tcp_liveness.c */
void loom_tcp_liveness_init(loom_engine_t *engine);
int  loom_tcp_liveness_sweep(loom_engine_t *engine);

/* copy.c: length bytes to dest; with streaming stores when stream (a write
 * larger than the cache) and the CPU has them: whether it streamed */
bool loom_copy_placed(void *dest, const void *src, size_t length, bool stream);
/* whether write (an identity of it), a write to base of which this is the
 * segment of length bytes at offset, started at most reuse_max bytes of
 * such writes after the write before it to base, and so probably finds it
 * still in the cache; records it */
bool loom_copy_reused_soon(loom_copy_history_t *history, uintptr_t base, uint64_t write,
                           uint64_t offset, size_t length, size_t reuse_max);
/* whether that segment of a write of total bytes is to be placed with
 * streaming stores (config.stream_copy_min and stream_copy_reuse), through
 * engine->copies */
bool loom_copy_stream_wanted(loom_engine_t *engine, uintptr_t base, uint64_t write,
                             uint64_t offset, size_t length, size_t total);

/* the clock */
static inline uint64_t loom_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Whether a poller whose work is periodic reads the clock on this pass of
 * progress (decided as the pass starts): every clock_every passes (paced by
 * progress.c to about LOOM_CLOCK_PASS_NS apart), or every pass while someone sleeps on the
 * engine (passes are rare then).  A clock read costs about as much as the
 * rest of an empty pass, and reading it on every pass of a ping-pong was 8%
 * of a rank's samples (docs/perf/2026-11-29.md); one pass in 64 where a
 * pass is a few system calls (tcp rails in a virtual machine, 10 us) read
 * it every 640 us, and a waiting rank began to yield its core a millisecond
 * late. */
static inline bool loom_clock_pass(const loom_engine_t *engine)
{
    return engine->clock_due;
}

/* The time of the latest clock pass, free to read: behind the clock by the
 * passes since (a clock read is a system call where the clock source is not
 * the TSC: 0.9 us in the emulated rxe guest, on every pass of a ping-pong
 * and every message).  For timekeeping of its own that a layer does on its
 * latency path (the eager rings): never compare it with loom_now_ns()
 * times, which may be ahead of it. */
static inline uint64_t loom_engine_clock(const loom_engine_t *engine)
{
    return engine->clock_ns;
}

/* How long since a loom_now_ns() stamp, at a timer's now: none when the
 * stamp is later (stamped after the clock pass read the clock, or by
 * another thread), never a negative time wrapped round to a huge one. */
static inline uint64_t loom_elapsed_ns(uint64_t now, uint64_t since)
{
    return (now > since) ? now - since : 0;
}

/* Read the clock into the engine's: for a time that a timeout is counted
 * from, which a stale clock (no progress for a while) would cut short. */
static inline uint64_t loom_engine_clock_read(loom_engine_t *engine)
{
    engine->clock_ns = loom_now_ns();
    return engine->clock_ns;
}

#endif
