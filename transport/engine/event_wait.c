/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Sleeping until a rail has work (transport.h, loom_engine_arm and
 * loom_engine_sleep): one epoll descriptor over the event descriptors of
 * every interface the rails listen on, armed through UCT so that it wakes
 * for what arrives or completes after the arming; for tcp rails over their
 * sockets' input instead (tcp_liveness.c).
 */
#include "engine/loom_engine.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define LOOM_WAKE_EVENTS (UCT_EVENT_SEND_COMP | UCT_EVENT_RECV)

/* Adds iface's descriptor to the engine's set; false if it has none. */
static bool loom_wake_add(loom_engine_t *engine, uct_iface_h iface)
{
    struct epoll_event ev = {.events = EPOLLIN};
    uct_iface_attr_t attr;
    int fd;

    if (UCS_OK != uct_iface_query(iface, &attr) ||
        !(attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_FD) ||
        UCS_OK != uct_iface_event_fd_get(iface, &fd)) {
        return false;
    }
    ev.data.fd = fd;
    return 0 == epoll_ctl(engine->wake_fd, EPOLL_CTL_ADD, fd, &ev) || EEXIST == errno;
}

void loom_engine_wake_init(loom_engine_t *engine)
{
    int i;

    engine->wake_fd = epoll_create1(EPOLL_CLOEXEC);
    for (i = 0; i < engine->rail_count && engine->wake_fd >= 0; ++i) {
        loom_rail_t *rail = &engine->rails[i];

        if (0 == strcmp(rail->info.tl_name, "tcp")) {
            continue; /* its sockets are added as they are found (tcp_liveness.c) */
        }
        if (!loom_wake_add(engine, rail->iface)) {
            loom_log(engine, LOOM_LOG_INFO, "rail %s:%s cannot wake a sleeping thread: "
                     "it is polled", rail->info.tl_name, rail->info.dev_name);
            close(engine->wake_fd);
            engine->wake_fd = -1;
        } else if (NULL != rail->wireup_iface && !loom_wake_add(engine, rail->wireup_iface)) {
            /* ud_verbs wakes only by a callback from UCX's async thread; it
             * carries CONNECT messages alone, which can wait for a sleep's
             * end (at most its timeout) */
            rail->wireup_polled = true;
            loom_log(engine, LOOM_LOG_DEBUG, "rail %s:%s: its wireup interface %s has no "
                     "event descriptor: a sleeper looks at it when it wakes",
                     rail->info.tl_name, rail->info.dev_name, rail->wireup_tl);
        }
    }
}

void loom_engine_wake_fini(loom_engine_t *engine)
{
    if (engine->wake_fd >= 0) {
        close(engine->wake_fd);
        engine->wake_fd = -1;
    }
}

static int loom_wake_arm(uct_iface_h iface)
{
    ucs_status_t status = uct_iface_event_arm(iface, LOOM_WAKE_EVENTS);

    return (UCS_OK == status) ? LOOM_OK
         : (UCS_ERR_BUSY == status) ? LOOM_ERR_AGAIN : LOOM_ERR_IO;
}

int loom_engine_arm(loom_engine_t *engine, unsigned flags)
{
    int rc = LOOM_OK, i;

    if (engine->wake_fd < 0) {
        return LOOM_ERR_NOT_FOUND; /* no descriptor to sleep on */
    }
    engine->sleepers = true; /* new tcp sockets are looked for more often */
    for (i = 0; i < engine->rail_count && LOOM_OK == rc; ++i) {
        rc = loom_wake_arm(engine->rails[i].iface);
        if (LOOM_OK == rc && NULL != engine->rails[i].wireup_iface &&
            !engine->rails[i].wireup_polled) {
            rc = loom_wake_arm(engine->rails[i].wireup_iface);
        }
    }
    for (i = 0; i < engine->rail_count && LOOM_OK == rc; ++i) {
        /* sends UCT took but has not put on the wire (a socket that was
         * full): no event says when they can go */
        if (UCS_INPROGRESS == uct_iface_flush(engine->rails[i].iface, UCT_FLUSH_FLAG_LOCAL,
                                              NULL)) {
            return LOOM_INPROGRESS;
        }
    }
    if (LOOM_OK == rc && !ucs_list_is_empty(&engine->busy_peers)) {
        return LOOM_INPROGRESS; /* ops wait for a busy rail: sleep only briefly */
    }
    if (LOOM_OK == rc && loom_eager_writes_unannounced(engine)) {
        /* a message written into a ring wakes nobody: rings are polled
         * until their writers drop them (asked by a wait here) or they
         * shrink when idle (btl_loom_eager_idle_shrink) */
        ++engine->eager.stats.ring_polled;
        if (flags & LOOM_ARM_WAIT) {
            loom_eager_rx_quiet(engine);
        }
        return LOOM_ERR_NOT_FOUND;
    }
    return rc;
}

bool loom_engine_sleep(const loom_engine_t *engine, int timeout_ms)
{
    struct epoll_event events[LOOM_MAX_RAILS * 2];
    struct timespec ts = {0, (long)timeout_ms * 1000000L};

    if (engine->wake_fd < 0) {
        (void)nanosleep(&ts, NULL);
        return false;
    }
    return epoll_wait(engine->wake_fd, events, LOOM_MAX_RAILS * 2, timeout_ms) > 0;
}
