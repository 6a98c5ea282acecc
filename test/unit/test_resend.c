/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Messages that survive a rail failure, and a rail that comes back, between
 * two processes on two tcp rails: loopback (rail 0, which carries the
 * messages) and one end of a veth pair (rail 1).  Two devices need a
 * network namespace of the test's own, so the test runs itself again in
 * one it makes (as root; it skips, saying why, otherwise).  Nothing leaves
 * that namespace.
 *
 * - resend: the child holds its progress while the parent sends; the
 *   parent takes rail 0 out of use towards the child: every message not
 *   acknowledged goes again on rail 1, and the child, which may get the
 *   ones already on rail 0 as well, delivers each exactly once, in order,
 *   byte for byte; then everything is acknowledged;
 * - rejoin: rail 0 is probed on fresh endpoints, comes back on both sides,
 *   and carries messages again;
 * - idle: a message alone (far below the quarter window that makes the
 *   child acknowledge) is acknowledged once nothing more comes;
 * - window: with the child holding, the parent can send only msg_window
 *   messages not acknowledged; the rest go once the child acknowledges;
 *   loom_peer_window_wait takes that acknowledgement in (quiet progress)
 *   and says when the next message would leave;
 * - window wait: with the child holding, the wait runs out, and the next
 *   one does not wait until the window opened again;
 * - past the window: with the child holding and the window full, a small
 *   message sent by loom_am_send_past_window leaves at once, up to
 *   LOOM_AM_PAST_WINDOW_MAX past the window, then the caller hears busy; the
 *   child gets every one, in order, byte for byte, once it progresses.
 */
#include "unit_harness.h"
#include "engine/loom_engine.h" /* the log and rail state the checks look at */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TAG          9
#define WINDOW       16
#define FIRST_BATCH  12
#define SECOND_BATCH 20
#define THIRD_BATCH  100
#define THIRD_FIRST  (2 + FIRST_BATCH + SECOND_BATCH + 1)
#define FOURTH_FIRST (THIRD_FIRST + THIRD_BATCH)
#define FOURTH_BATCH (WINDOW + 4)
#define FIFTH_FIRST  (FOURTH_FIRST + FOURTH_BATCH)
#define FIFTH_BATCH  (WINDOW + LOOM_AM_PAST_WINDOW_MAX)
/* What the wait that runs out is given: the held child never answers. */
#define WAIT_OUT_NS  20000000ull
#define MSG_MAX      3000

static void resend_configure(loom_engine_config_t *config, bool is_parent)
{
    (void)is_parent;
    config->rails          = "tcp:lo,tcp:loomr0";
    config->max_rails      = 2;
    config->am_rail        = 0;
    config->msg_window     = WINDOW;
    config->rail_rejoin_ms = 100;
}

/* Message number n: its length and bytes follow from n alone (those past
 * the window are small: the held child's socket takes them all). */
static size_t msg_length(unsigned n)
{
    return (n >= FIFTH_FIRST) ? (n * 37u) % 64 + 1 : (n * 997u) % MSG_MAX + 1;
}

static void send_batch(unit_ctx_t *ctx, unsigned first, unsigned count)
{
    uint8_t buf[MSG_MAX];
    unsigned n;

    for (n = first; n < first + count; ++n) {
        unit_fill(buf, msg_length(n), 0xabc0000ull + n);
        CHECK_RC(unit_am_send(ctx, ctx->peer, TAG, buf, msg_length(n)), LOOM_OK);
    }
}

/* Messages first .. first + count - 1 arrived, each once, in order. */
static void check_batch(unit_ctx_t *ctx, unsigned first, unsigned count)
{
    uint8_t expect[MSG_MAX];
    char what[64];
    unsigned n;

    UNIT_WAIT(ctx, ctx->msg_count >= first + count);
    unit_progress_for(ctx, 0.2); /* anything delivered twice would come now */
    CHECK_UEQ(ctx->msg_count, first + count);
    for (n = first; n < first + count; ++n) {
        unit_fill(expect, msg_length(n), 0xabc0000ull + n);
        snprintf(what, sizeof(what), "message %u", n);
        CHECK_UEQ(ctx->msgs[n].length, msg_length(n));
        CHECK_EQ(ctx->msgs[n].tag, TAG);
        CHECK_MEM(ctx->msgs[n].data, expect, msg_length(n), what);
    }
}

/* Messages first.. sent until one is refused (the window full; past: by
 * loom_am_send_past_window, until those past the window are at their
 * bound); how many went. */
static int send_until_refused(unit_ctx_t *ctx, unsigned first, unsigned count, bool past)
{
    uint8_t buf[MSG_MAX];
    struct iovec iov;
    unsigned n;
    int rc;

    for (n = first; n < first + count; ++n) {
        unit_fill(buf, msg_length(n), 0xabc0000ull + n);
        iov.iov_base = buf;
        iov.iov_len  = msg_length(n);
        rc = past ? loom_am_send_past_window(ctx->peer, TAG, &iov, 1)
                  : loom_am_send(ctx->peer, TAG, &iov, 1, NULL);
        memset(buf, 0x5a, iov.iov_len); /* what went was a copy, not the buffer */
        if (LOOM_ERR_AGAIN == rc) {
            break;
        }
        CHECK_RC(rc, LOOM_OK);
    }
    return (int)(n - first);
}

static void parent_body(unit_ctx_t *ctx)
{
    loom_peer_t *peer = ctx->peer;
    loom_rail_stats_t *rail0 = loom_engine_rail_stats(ctx->engine, 0);
    loom_rail_stats_t *rail1 = loom_engine_rail_stats(ctx->engine, 1);
    unsigned long sent0, logged;

    CHECK_EQ(loom_engine_rail_count(ctx->engine), 2);
    /* messages 0 and 1 connect rails 1 and 0 (a tcp endpoint connects only
     * while its peer progresses) */
    peer->am_rail = 1;
    send_batch(ctx, 0, 1);
    peer->am_rail = 0;
    send_batch(ctx, 1, 1);
    unit_barrier(ctx);
    /* resend: what the held child did not acknowledge goes again on rail 1,
     * at once; the child gets the first copies from rail 0 as well */
    unit_wait_other_holds(ctx);
    send_batch(ctx, 2, FIRST_BATCH);
    logged = peer->msg.log_count;
    CHECK(logged >= FIRST_BATCH && logged <= FIRST_BATCH + 2);
    loom_peer_fail_rail(peer, 0, UCS_ERR_CONNECTION_RESET);
    CHECK_EQ(peer->am_rail, 1);
    UNIT_WAIT(ctx, !peer->msg.resending);
    CHECK_UEQ(rail1->resent, logged);
    unit_send_u64(ctx, 1); /* go */
    UNIT_WAIT(ctx, 0 == peer->msg.log_count); /* all acknowledged */
    unit_barrier(ctx);

    /* rejoin: rail 0 comes back on fresh endpoints and carries messages */
    UNIT_WAIT(ctx, !peer->rails[0].failed && peer->rails[0].usable);
    CHECK_UEQ(rail0->rejoins, 1);
    CHECK_EQ(peer->am_rail, 0);
    CHECK(peer->rails[0].rail_epoch > 0);
    unit_barrier(ctx); /* the child has it back too */
    sent0 = rail0->messages_sent;
    send_batch(ctx, 2 + FIRST_BATCH, SECOND_BATCH);
    CHECK_UEQ(rail0->messages_sent - sent0, SECOND_BATCH);
    /* the tail of the batch is acknowledged once the stream goes idle */
    UNIT_WAIT(ctx, 0 == peer->msg.log_count);
    unit_barrier(ctx);

    /* idle: one message alone is acknowledged too */
    send_batch(ctx, 2 + FIRST_BATCH + SECOND_BATCH, 1);
    CHECK_UEQ(peer->msg.log_count, 1);
    UNIT_WAIT(ctx, 0 == peer->msg.log_count);
    unit_barrier(ctx);

    /* window: no more than WINDOW messages wait for an acknowledgement */
    unit_wait_other_holds(ctx);
    CHECK_EQ(send_until_refused(ctx, THIRD_FIRST, THIRD_BATCH, false), WINDOW);
    unit_send_u64(ctx, 1); /* go: the child acknowledges, the rest can go */
    CHECK_RC(loom_peer_window_wait(peer, (uint64_t)(UNIT_TIMEOUT * 1e9)), LOOM_OK);
    CHECK(peer->msg.log_count < WINDOW);
    send_batch(ctx, THIRD_FIRST + WINDOW, THIRD_BATCH - WINDOW);
    unit_barrier(ctx);

    /* window wait: nobody acknowledges, the wait runs out, the next does
     * not wait until the window opened */
    unit_wait_other_holds(ctx);
    CHECK_EQ(send_until_refused(ctx, FOURTH_FIRST, FOURTH_BATCH, false), WINDOW);
    CHECK_RC(loom_peer_window_wait(peer, WAIT_OUT_NS), LOOM_ERR_AGAIN);
    CHECK(peer->msg.window_stalled);
    CHECK_RC(loom_peer_window_wait(peer, (uint64_t)(UNIT_TIMEOUT * 1e9)), LOOM_ERR_AGAIN);
    unit_send_u64(ctx, 1); /* go */
    UNIT_WAIT(ctx, !peer->msg.window_stalled);
    send_batch(ctx, FOURTH_FIRST + WINDOW, FOURTH_BATCH - WINDOW);
    unit_barrier(ctx);

    /* past the window: the window full, small messages leave anyway, up to
     * the bound */
    unit_wait_other_holds(ctx);
    CHECK_EQ(send_until_refused(ctx, FIFTH_FIRST, FIFTH_BATCH, false), WINDOW);
    CHECK_EQ(send_until_refused(ctx, FIFTH_FIRST + WINDOW, FIFTH_BATCH - WINDOW, true),
             LOOM_AM_PAST_WINDOW_MAX);
    CHECK_UEQ(peer->msg.log_count, WINDOW + LOOM_AM_PAST_WINDOW_MAX);
    unit_send_u64(ctx, 1); /* go */
    UNIT_WAIT(ctx, 0 == peer->msg.log_count);
    unit_barrier(ctx);
}

static void child_body(unit_ctx_t *ctx)
{
    loom_peer_t *peer = ctx->peer;

    check_batch(ctx, 0, 2);
    unit_barrier(ctx);
    unit_hold_progress(ctx);
    check_batch(ctx, 2, FIRST_BATCH);
    CHECK_MSG(loom_engine_rail_stats(ctx->engine, 0)->duplicates +
              loom_engine_rail_stats(ctx->engine, 1)->duplicates >= FIRST_BATCH,
              "the copies that came twice were not all counted as duplicates");
    unit_barrier(ctx);

    UNIT_WAIT(ctx, !peer->rails[0].failed && peer->rails[0].usable);
    CHECK_UEQ(loom_engine_rail_stats(ctx->engine, 0)->rejoins, 1);
    unit_barrier(ctx);
    check_batch(ctx, 2 + FIRST_BATCH, SECOND_BATCH);
    unit_barrier(ctx);
    check_batch(ctx, 2 + FIRST_BATCH + SECOND_BATCH, 1);
    unit_barrier(ctx);

    unit_hold_progress(ctx);
    check_batch(ctx, THIRD_FIRST, THIRD_BATCH);
    unit_barrier(ctx);
    unit_hold_progress(ctx);
    check_batch(ctx, FOURTH_FIRST, FOURTH_BATCH);
    unit_barrier(ctx);
    unit_hold_progress(ctx);
    check_batch(ctx, FIFTH_FIRST, FIFTH_BATCH);
    unit_barrier(ctx);
}

/* Make the namespace with its second device, run this program in it, and
 * remove it; the test's exit status, or 77 where it cannot be made. */
static int run_in_namespace(void)
{
    char self[512], ns[64], cmd[2048];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    int rc;

    if (0 != geteuid()) {
        printf("SKIP: test_resend needs root: it makes a network namespace with a second "
               "device for a second rail\n");
        return UNIT_EXIT_SKIP;
    }
    if (len <= 0) {
        printf("SKIP: test_resend cannot find its own program\n");
        return UNIT_EXIT_SKIP;
    }
    self[len] = '\0';
    snprintf(ns, sizeof(ns), "loomunit%d", (int)getpid());
    snprintf(cmd, sizeof(cmd), "ip netns add %1$s && ip -n %1$s link set lo up && "
             "ip -n %1$s link add loomr0 type veth peer name loomr1 && "
             "ip -n %1$s addr add 10.78.0.1/24 dev loomr0 && "
             "ip -n %1$s link set loomr0 up && ip -n %1$s link set loomr1 up", ns);
    if (0 != system(cmd)) {
        printf("SKIP: test_resend cannot make a network namespace with a veth pair\n");
        snprintf(cmd, sizeof(cmd), "ip netns del %s 2>/dev/null", ns);
        (void)system(cmd);
        return UNIT_EXIT_SKIP;
    }
    snprintf(cmd, sizeof(cmd), "ip netns exec %s env LOOM_RESEND_IN_NETNS=1 '%s'", ns, self);
    rc = system(cmd);
    snprintf(cmd, sizeof(cmd), "ip netns del %s", ns);
    (void)system(cmd);
    return (WIFEXITED(rc)) ? WEXITSTATUS(rc) : 1;
}

int main(void)
{
    unit_options_t options = {.configure = resend_configure};

    if (NULL == getenv("LOOM_RESEND_IN_NETNS")) {
        return run_in_namespace();
    }
    return unit_main("test_resend", &options, parent_body, child_body);
}
