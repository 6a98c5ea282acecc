/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * When a waiting rank starts to yield its core: once progress has found
 * nothing for yield_after_us, the engine asks the upper layer whether it
 * may (config.may_idle_cb) and then yields on each empty call.  It counts
 * idle time on clock passes only, and a clock pass used to be one pass in
 * 64: where a pass costs a few system calls (tcp rails in a virtual
 * machine, 10 us and more) the first ask came more than a millisecond into
 * the wait, and 4 ranks on 2 cores spun that long before letting the rank
 * they waited for run (a 64 KiB coll loom broadcast took 2 ms, 0.45 ms
 * once clock passes were paced by time).
 *
 * One engine on tcp:lo, idle, progressed by a loop that sleeps SLOW_PASS_US
 * between calls: the first ask must come after yield_after_us of idle time
 * and within a few passes of it (the old pacing needed 128 passes).  Then
 * the same with calls back to back: asked after yield_after_us, and not
 * long after.
 */
#include "unit_harness.h"

#include <stdio.h>
#include <time.h>

#define YIELD_AFTER_US 200
#define SLOW_PASS_US   40
/* the idle time, a clock pass to notice it, one pass of slack */
#define SLOW_PASSES_MAX (YIELD_AFTER_US / SLOW_PASS_US + 3 + 8)

static unsigned idle_asks;

static bool count_ask(void *ctx)
{
    (void)ctx;
    ++idle_asks;
    return true;
}

static void configure(loom_engine_config_t *config, bool is_parent)
{
    (void)is_parent;
    config->yield_after_us = YIELD_AFTER_US;
    config->may_idle_cb    = count_ask;
}

/* A new engine, progressed until it asks (or for ever: the deadline fails
 * it); the passes it took, and the time before the ask in *waited. */
static unsigned passes_until_asked(unit_ctx_t *ctx, long pause_us, double *waited)
{
    unit_options_t options = {.configure = configure};
    struct timespec pause = {0, pause_us * 1000L};
    double start, deadline;
    unsigned passes = 0;

    /* a new engine: once it yields it goes on yielding until it finds work */
    unit_local_open(ctx, "engine", UNIT_PARENT_NAME, &options);
    idle_asks = 0;
    start     = unit_now();
    deadline  = start + UNIT_TIMEOUT;
    while (0 == idle_asks) {
        (void)loom_engine_progress(ctx->engine);
        ++passes;
        if (pause_us > 0) {
            (void)nanosleep(&pause, NULL);
        }
        CHECK_MSG(unit_now() < deadline, "an idle engine never asked to yield (%u passes)",
                  passes);
    }
    *waited = unit_now() - start;
    unit_local_close(ctx);
    return passes;
}

int main(void)
{
    unsigned passes;
    double waited;
    unit_ctx_t ctx;

    unit_set_test_name("idle");

    passes = passes_until_asked(&ctx, SLOW_PASS_US, &waited);
    CHECK_MSG(waited * 1e6 >= YIELD_AFTER_US, "asked to yield after %.0f us of idle progress, "
              "before yield_after_us (%d)", waited * 1e6, YIELD_AFTER_US);
    CHECK_MSG(passes <= SLOW_PASSES_MAX, "with passes %d us apart, asked to yield only at "
              "pass %u (%.0f us): at most %d passes after yield_after_us %d", SLOW_PASS_US,
              passes, waited * 1e6, SLOW_PASSES_MAX, YIELD_AFTER_US);
    unit_note("passes %d us apart: asked to yield at pass %u, after %.0f us", SLOW_PASS_US,
              passes, waited * 1e6);

    passes = passes_until_asked(&ctx, 0, &waited);
    CHECK_MSG(waited * 1e6 >= YIELD_AFTER_US, "asked to yield after %.0f us of idle progress, "
              "before yield_after_us (%d)", waited * 1e6, YIELD_AFTER_US);
    unit_note("passes back to back: asked to yield at pass %u, after %.0f us", passes,
              waited * 1e6);

    printf("PASS: idle\n");
    return 0;
}
