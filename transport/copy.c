/*
 * Copying data that arrived into the memory it was written to (checked
 * writes, checked_put.c).  A large write may be copied with streaming
 * (non-temporal) stores (config.stream_copy_min): where its destination is
 * not in the cache, ordinary stores first read every line of it from memory
 * only to overwrite it, and push out of the cache what the process works on;
 * where it is (a buffer used again at once), streaming sends it out to
 * memory, and the next read of it misses the cache.
 * Whether a destination is in the cache is guessed from how much was
 * copied here since a write last started at the same place
 * (config.stream_copy_reuse): a ping-pong's buffer comes back after one
 * message, a window of many receives after all of them.
 * x86-64 with AVX (checked when called); elsewhere an ordinary copy.
 */
#include "loom_internal.h"

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

/* Fibonacci hashing of a write's first byte into the table of recent writes */
static loom_copy_seen_t *loom_copy_slot(loom_copy_history_t *history, uintptr_t base)
{
    uint64_t h = (uint64_t)base * UINT64_C(0x9e3779b97f4a7c15);

    return &history->seen[h >> (64 - LOOM_COPY_SEEN_BITS)];
}

bool loom_copy_reused_soon(loom_copy_history_t *history, uintptr_t base, uint64_t offset,
                           size_t length, size_t reuse_max)
{
    loom_copy_seen_t *seen = loom_copy_slot(history, base);
    bool soon;

    if (0 == offset) {
        /* a write starts: decided for all of it, as its segments' places
         * depend on its length (a buffer takes messages of several sizes) */
        seen->soon   = (seen->base == base) && (history->copied - seen->copied <= reuse_max);
        seen->base   = base;
        seen->copied = history->copied;
        soon = seen->soon;
    } else {
        soon = (seen->base == base) && seen->soon; /* else its start came later or went */
    }
    history->copied += length;
    return soon;
}

bool loom_copy_stream_wanted(loom_engine_t *engine, uintptr_t base, uint64_t offset,
                             size_t length, size_t total)
{
    const loom_engine_config_t *config = &engine->config;
    bool recent;

    /* the size of the whole write tells how much of it the cache can hold */
    if (0 == config->stream_copy_min || total < config->stream_copy_min) {
        return false;
    }
    recent = loom_copy_reused_soon(&engine->copies, base, offset, length,
                                   config->stream_copy_reuse);
    return !recent || 0 == config->stream_copy_reuse;
}

void loom_copy_placed(void *dest, const void *src, size_t length, bool stream)
{
#if defined(__x86_64__)
    if (stream && length >= 128 && __builtin_cpu_supports("avx")) {
        loom_copy_stream(dest, src, length);
        return;
    }
#endif
    (void)stream;
    memcpy(dest, src, length);
}
