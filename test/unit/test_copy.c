/*
 * Placing arrived data (copy.c): with streaming stores and without, every
 * source and destination alignment within a cache line and lengths around
 * the store widths and the large sizes checked writes use, the copy equals
 * the source byte for byte and touches nothing before or after it.
 */
#include "loom_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD  64
#define POISON 0xa5

static int failures;

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
    if (0 != failures) {
        printf("FAIL test_copy: %d of %d copies wrong\n", failures, checks);
        return 1;
    }
#if defined(__x86_64__)
    streamed = __builtin_cpu_supports("avx");
#endif
    printf("PASS test_copy: %d copies, %s\n", checks,
           streamed ? "with and without streaming stores"
                    : "ordinary copies only (this CPU has no AVX: nothing streams)");
    return 0;
}
