/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Placing arrived data (copy.c): with streaming stores and without, every
 * source and destination alignment within a cache line and lengths around
 * the store widths and the large sizes checked writes use, the copy equals
 * the source byte for byte and touches nothing before or after it.  And the
 * guess of which destinations are still in the cache (loom_copy_reused_soon):
 * a write to where one started within the reuse distance before is, one to
 * a new place or after more than that is not.
 */
#include "engine/loom_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD  64
#define POISON 0xa5

static int failures;
static int reuse_checks;

static void check_one(uint8_t *dst_buf, uint8_t *src_buf, size_t dst_off, size_t src_off,
                      size_t length, bool stream)
{
    uint8_t *dst = dst_buf + GUARD + dst_off;
    const uint8_t *src = src_buf + src_off;
    size_t i;

    memset(dst_buf, POISON, GUARD + dst_off + length + GUARD);
    loom_copy_placed(dst, src, length, stream);
    if (0 != memcmp(dst, src, length)) {
        for (i = 0; i < length && dst[i] == src[i]; ++i) {
        }
        printf("FAIL: %zu bytes, stream %d, offsets %zu/%zu: byte %zu differs\n", length,
               (int)stream, dst_off, src_off, i);
        ++failures;
        return;
    }
    for (i = 0; i < GUARD + dst_off; ++i) {
        if (POISON != dst_buf[i]) {
            printf("FAIL: %zu bytes, stream %d, offsets %zu/%zu: wrote before the start\n",
                   length, (int)stream, dst_off, src_off);
            ++failures;
            return;
        }
    }
    for (i = 0; i < GUARD; ++i) {
        if (POISON != dst[length + i]) {
            printf("FAIL: %zu bytes, stream %d, offsets %zu/%zu: wrote past the end\n",
                   length, (int)stream, dst_off, src_off);
            ++failures;
            return;
        }
    }
}

static void expect_reuse(loom_copy_history_t *history, uintptr_t base, uint64_t write,
                         uint64_t offset, size_t length, size_t reuse_max, bool expected,
                         const char *what)
{
    ++reuse_checks;
    if (loom_copy_reused_soon(history, base, write, offset, length, reuse_max) != expected) {
        printf("FAIL: %s: write %llu to %#lx (segment at %llu) taken as %s\n", what,
               (unsigned long long)write, (unsigned long)base, (unsigned long long)offset,
               expected ? "not written lately" : "written lately");
        ++failures;
    }
}

/* a ping-pong's buffer, at one size and at several; two buffers in turn,
 * whichever set they share; a window of receives larger than the distance;
 * the distance's edge; segments whose write's start has not come */
static void check_reuse(void)
{
    static loom_copy_history_t history;
    const size_t mib = 1u << 20, reuse = 16 * mib;
    uintptr_t buf = 0x7f0000000000ul, i, j;
    uint64_t w = 1;

    expect_reuse(&history, buf, w, 0, mib, reuse, false, "first write");
    expect_reuse(&history, buf, w, mib, mib, reuse, false, "first write, second segment");
    for (i = 0; i < 10; ++i) {
        ++w;
        expect_reuse(&history, buf, w, 0, mib, reuse, true, "ping-pong");
        expect_reuse(&history, buf, w, mib, mib, reuse, true, "ping-pong, second segment");
    }
    for (i = 1; i < 8; ++i) { /* other sizes, other segments, the same buffer */
        ++w;
        expect_reuse(&history, buf, w, 0, i * 100000, reuse, true, "ping-pong, another size");
        expect_reuse(&history, buf, w, i * 100000, i * 100000, reuse, true,
                     "ping-pong, another size's second segment");
    }
    for (i = 0; i < 400; ++i) { /* pairs of buffers: some share a set */
        for (j = 0; j < 3; ++j) {
            expect_reuse(&history, buf + (i + 1) * mib, ++w, 0, mib, reuse, j > 0,
                         "two buffers in turn, the first");
            expect_reuse(&history, buf + (1000 + 37 * i) * mib, ++w, 0, mib, reuse, j > 0,
                         "two buffers in turn, the second");
        }
    }
    memset(&history, 0, sizeof(history));
    for (i = 0; i < 2 * 64; ++i) { /* twice 64 receives of 1 MiB: 64 MiB between writes */
        uintptr_t base = buf + (i % 64) * mib;

        ++w;
        expect_reuse(&history, base, w, 0, mib / 2, reuse, false, "window");
        expect_reuse(&history, base, w, mib / 2, mib / 2, reuse, false, "window, second segment");
    }
    memset(&history, 0, sizeof(history));
    expect_reuse(&history, buf, 1, 0, mib, reuse, false, "edge, first");
    expect_reuse(&history, buf + 64 * mib, 2, 0, reuse - mib, reuse, false, "edge, between");
    expect_reuse(&history, buf, 3, 0, mib, reuse, true, "exactly the distance later");
    expect_reuse(&history, buf + 64 * mib, 4, 0, reuse - mib + 1, reuse, true,
                 "edge, between again");
    expect_reuse(&history, buf, 5, 0, mib, reuse, false, "a byte more than the distance later");
    expect_reuse(&history, buf + 128 * mib, 6, mib, mib, reuse, false,
                 "a segment of a write to a new place, ahead of its start");
    /* buf's record says soon (write 7); write 8's second segment comes
     * first, 20 MiB later: judged by the distance, not by write 7 */
    memset(&history, 0, sizeof(history));
    expect_reuse(&history, buf, 6, 0, mib, reuse, false, "another write, first");
    expect_reuse(&history, buf, 7, 0, mib, reuse, true, "another write, again");
    expect_reuse(&history, buf + 64 * mib, 100, 0, 20 * mib, reuse, false, "between");
    expect_reuse(&history, buf, 8, mib, mib, reuse, false,
                 "a segment ahead of its start, after another write's");
    expect_reuse(&history, buf, 8, 0, mib, reuse, false, "... then its start");
}

int main(void)
{
    static const size_t big[] = {65536, 262144 + 72, 524216, (3u << 20) + 5};
    size_t max = (4u << 20), length, dst_off, src_off, i;
    uint8_t *dst_buf = malloc(max + 3 * GUARD + 64), *src_buf = malloc(max + 64);
    int stream, checks = 0, streamed = 0;

    if (NULL == dst_buf || NULL == src_buf) {
        printf("FAIL: out of memory\n");
        return 1;
    }
    for (i = 0; i < max + 64; ++i) {
        src_buf[i] = (uint8_t)(i * 131 + (i >> 11));
    }
    for (stream = 0; stream <= 1; ++stream) {
        for (length = 0; length <= 300; ++length) {
            for (dst_off = 0; dst_off < 64; dst_off += (length < 140) ? 1 : 7) {
                for (src_off = 0; src_off < 64; src_off += 9) {
                    check_one(dst_buf, src_buf, dst_off, src_off, length, stream);
                    ++checks;
                }
            }
        }
        for (i = 0; i < sizeof(big) / sizeof(big[0]); ++i) {
            for (dst_off = 0; dst_off < 64; dst_off += 13) {
                check_one(dst_buf, src_buf, dst_off, (dst_off * 5) % 64, big[i], stream);
                ++checks;
            }
        }
    }
    free(dst_buf);
    free(src_buf);
    check_reuse();
    checks += reuse_checks;
    if (0 != failures) {
        printf("FAIL test_copy: %d of %d checks wrong\n", failures, checks);
        return 1;
    }
#if defined(__x86_64__)
    streamed = __builtin_cpu_supports("avx");
#endif
    printf("PASS test_copy: %d checks, %s\n", checks,
           streamed ? "with and without streaming stores"
                    : "ordinary copies only (this CPU has no AVX: nothing streams)");
    return 0;
}
