/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * coll loom's measured selection rule (component/coll/coll_loom_choice.c):
 * the first pair only warms up (unless coll loom failed in it), then
 * bests twice apart decide at once, close ones are measured up to the
 * bound and decided by each side's best (a slow outlier weighs nothing),
 * coll loom only where it was faster (a tie and a failed call go to the
 * next component), the margin both ways, and a call's size class is its
 * bit length.
 */
#include "coll/coll_loom_choice.h"

#include <stdio.h>
#include <string.h>

static int failures;

/* Feeds pairs (loom, next) and checks the decision after each. */
static void run(const char *what, unsigned max_pairs, int margin, const double (*pairs)[2],
                size_t n, const int *expected)
{
    mca_coll_loom_choice_t choice;
    size_t i;
    int got;

    memset(&choice, 0, sizeof(choice));
    /* a cold first pair through coll loom, however slow, decides nothing */
    got = mca_coll_loom_choice_add(&choice, 50000, 100, max_pairs, margin);
    if (0 != got) {
        printf("FAIL: %s: the warm-up pair decided %d\n", what, got);
        ++failures;
        return;
    }
    for (i = 0; i < n; ++i) {
        got = mca_coll_loom_choice_add(&choice, pairs[i][0], pairs[i][1], max_pairs, margin);
        if (got != expected[i]) {
            printf("FAIL: %s: after pair %zu (coll loom %.0f us, next %.0f us) the decision is "
                   "%d, expected %d\n", what, i + 1, pairs[i][0], pairs[i][1], got, expected[i]);
            ++failures;
            return;
        }
    }
}

int main(void)
{
    static const double slow_loom[][2] = {{1000, 100}};
    static const double fast_loom[][2] = {{100, 1000}};
    static const double close_loom[][2] = {{100, 110}, {100, 110}, {100, 110}};
    static const double slower_loom[][2] = {{110, 100}, {110, 100}, {110, 100}};
    static const double tie[][2] = {{100, 100}, {100, 100}, {100, 100}};
    static const double failed[][2] = {{1e30, 100}};
    static const double mixed[][2] = {{150, 100}, {90, 100}, {90, 100}};
    static const double late_lopsided[][2] = {{100, 120}, {30, 100}};
    static const double next_outlier[][2] = {{100, 90}, {100, 400}, {100, 95}};
    static const double fails_later[][2] = {{100, 110}, {MCA_COLL_LOOM_CHOICE_FAILED_US, 110}};
    static const int next_now[] = {-1}, loom_now[] = {1};
    static const int measure_then_loom[] = {0, 0, 1}, measure_then_next[] = {0, 0, -1};
    static const int measure_then_loom2[] = {0, 1}, measure_then_next2[] = {0, -1};
    static const struct { uint64_t bytes; unsigned cls; } classes[] = {
        {0, 0}, {1, 1}, {2, 2}, {3, 2}, {65535, 16}, {65536, 17}, {1ull << 40, 41},
        {~0ull, 64}};
    mca_coll_loom_choice_t choice;
    size_t i;

    memset(&choice, 0, sizeof(choice));
    if (-1 != mca_coll_loom_choice_add(&choice, MCA_COLL_LOOM_CHOICE_FAILED_US, 100, 3, 1000)) {
        printf("FAIL: a failure through coll loom in the warm-up pair did not decide\n");
        ++failures;
    }
    run("coll loom 10x slower", 3, 0, slow_loom, 1, next_now);
    run("coll loom 10x faster", 3, 0, fast_loom, 1, loom_now);
    run("coll loom 10% faster", 3, 0, close_loom, 3, measure_then_loom);
    run("a tie", 3, 0, tie, 3, measure_then_next);
    run("a failed call through coll loom", 3, 0, failed, 1, next_now);
    run("first pair slower, two faster: the best counts", 3, 0, mixed, 3, measure_then_loom);
    run("a slow call of the next component's weighs nothing", 3, 0, next_outlier, 3,
        measure_then_next);
    run("coll loom failing after a good pair", 3, 0, fails_later, 2, measure_then_next2);
    run("a lopsided second pair", 3, 0, late_lopsided, 2, measure_then_loom2);
    run("one pair at most", 1, 0, close_loom, 1, loom_now);
    run("coll loom 10x slower, a margin of 1000%", 3, 1000, slow_loom, 1, loom_now);
    run("coll loom 10% faster, a margin of -20%", 3, -20, close_loom, 3, measure_then_next);
    run("coll loom 10% slower, a margin of 20%", 3, 20, slower_loom, 3, measure_then_loom);
    for (i = 0; i < sizeof(classes) / sizeof(classes[0]); ++i) {
        if (mca_coll_loom_choice_class(classes[i].bytes) != classes[i].cls) {
            printf("FAIL: %llu bytes are in class %u, expected %u\n",
                   (unsigned long long)classes[i].bytes,
                   mca_coll_loom_choice_class(classes[i].bytes), classes[i].cls);
            ++failures;
        }
    }
    if (0 != failures) {
        return 1;
    }
    printf("PASS: coll loom's selection rule (sequences after a warm-up pair, a failed "
           "warm-up, %zu size classes)\n", sizeof(classes) / sizeof(classes[0]));
    return 0;
}
