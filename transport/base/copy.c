/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Copying data that arrived into the memory it was written to (checked
 * writes, checked_put.c).  A large write may be copied with streaming
 * (non-temporal) stores (config.stream_copy_min): where its destination is
 * not in the cache, ordinary stores first read every line of it from memory
 * only to overwrite it, and push out of the cache what the process works on;
 * where it is (a buffer used again at once), streaming sends it out to
 * memory, and the next read of it misses the cache.
 * Whether a destination is in the cache is guessed from how many bytes of
 * the writes that may stream were placed here since a write last started
 * at the same address (config.stream_copy_reuse): a ping-pong's buffer comes
 * back after one message, a window of many receives after all of them.  The
 * application's own traffic is not seen.
 * x86-64 with AVX (checked when called); elsewhere an ordinary copy.
 */
#include "base/loom_base.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>

/* 32-byte streaming stores from the first cache line boundary (whole lines
 * leave the write-combining buffers at once), for length >= 64; the fence
 * orders them before anything that tells of the write (its notice or
 * acknowledgement) */
__attribute__((target("avx")))
static void loom_copy_stream(void *dest, const void *src, size_t length)
{
    uint8_t *d = dest;
    const uint8_t *s = src;
    size_t head = (64 - ((uintptr_t)d & 63)) & 63, i;

    memcpy(d, s, head);
    d += head;
    s += head;
    length -= head;
    for (i = 0; i + 128 <= length; i += 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(s + i + 64));
        __m256i e = _mm256_loadu_si256((const __m256i *)(s + i + 96));

        _mm256_stream_si256((__m256i *)(d + i), a);
        _mm256_stream_si256((__m256i *)(d + i + 32), b);
        _mm256_stream_si256((__m256i *)(d + i + 64), c);
        _mm256_stream_si256((__m256i *)(d + i + 96), e);
    }
    _mm_sfence();
    memcpy(d + i, s + i, length - i);
}
#endif

/* The entry of base in its set of two (Fibonacci hashing of the address),
 * or, with make, the set's older entry given to it (its record is stale) */
static loom_copy_seen_t *loom_copy_find(loom_copy_history_t *history, uintptr_t base,
                                        bool make)
{
    uint64_t h = (uint64_t)base * UINT64_C(0x9e3779b97f4a7c15);
    loom_copy_seen_t *set = history->seen[h >> (64 - LOOM_COPY_SET_BITS)], *seen;

    if (set[0].base == base || set[1].base == base) {
        return &set[(set[0].base == base) ? 0 : 1];
    }
    if (!make) {
        return NULL;
    }
    seen = &set[(set[0].copied <= set[1].copied) ? 0 : 1];
    seen->base = 0; /* not seen before */
    return seen;
}

bool loom_copy_reused_soon(loom_copy_history_t *history, uintptr_t base, uint64_t write,
                           uint64_t offset, size_t length, size_t reuse_max)
{
    loom_copy_seen_t *seen = loom_copy_find(history, base, 0 == offset);
    bool soon = (NULL != seen) && (seen->base == base) &&
                (history->copied - seen->copied <= reuse_max);

    if (0 == offset) {
        /* a write starts: decided for all of it, as its segments' places
         * depend on its length (a buffer takes messages of several sizes) */
        seen->base   = base;
        seen->copied = history->copied;
        seen->write  = write;
        seen->soon   = soon;
    } else if (NULL != seen && seen->write == write) {
        soon = seen->soon;
    } /* else its start is still to come: judged by the write before it */
    history->copied += length;
    return soon;
}

bool loom_copy_stream_wanted(loom_engine_t *engine, uintptr_t base, uint64_t write,
                             uint64_t offset, size_t length, size_t total)
{
    const loom_engine_config_t *config = &engine->config;

    /* the size of the whole write tells how much of it the cache can hold */
    if (0 == config->stream_copy_min || total < config->stream_copy_min) {
        return false;
    }
    if (0 == config->stream_copy_reuse) {
        return true;
    }
    return !loom_copy_reused_soon(&engine->copies, base, write, offset, length,
                                  config->stream_copy_reuse);
}

bool loom_copy_placed(void *dest, const void *src, size_t length, bool stream)
{
#if defined(__x86_64__)
    if (stream && length >= 128 && __builtin_cpu_supports("avx")) {
        loom_copy_stream(dest, src, length);
        return true;
    }
#endif
    (void)stream;
    memcpy(dest, src, length);
    return false;
}
