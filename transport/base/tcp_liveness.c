/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Liveness of tcp rails from the kernel, not from the peer process.
 *
 * A peer that computes does not progress, so nothing loom could send it
 * gets an answer; its kernel still acknowledges TCP segments and keepalive
 * probes.  A dead host or path does neither.  UCT's tcp transport enables
 * keepalive only on the sockets it connects itself, not on those it
 * accepts (which, when both sides connect at once, carry the traffic).
 *
 * loom therefore finds the stream sockets of this process bound to the
 * address of one of its tcp rails and sets keepalive on them, again every
 * few seconds for connections made since.  An idle connection whose peer
 * host stops answering then fails after about tcp_keepalive_s, and UCT
 * reports it as an endpoint error.  Other sockets on that address (Open
 * MPI's own, on a shared device) get the same settings.
 *
 * The same sweep lets input on these sockets wake loom's progress thread
 * (loom_tcp_wake_on).
 *
 * Not TCP_USER_TIMEOUT: it also ends a connection whose receiver's window
 * stayed closed that long, which is exactly what a computing peer does.
 * Data unacknowledged on a dead path is given up by the kernel's
 * retransmission limit (net.ipv4.tcp_retries2, about 15 minutes by
 * default), or sooner by the rail watch when another rail delivers.
 */
#include "base/loom_base.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/stat.h>

/* How often sockets made since are looked for; more often when a thread
 * sleeps on them (the engine's event wait). */
#define LOOM_TCP_SWEEP_NS       2000000000ull
#define LOOM_TCP_SWEEP_WAKE_NS  100000000ull

/* The IPv4 address of a device, for a tcp rail. */
static bool loom_tcp_device_addr(const char *dev_name, struct in_addr *addr)
{
    struct ifaddrs *list, *ifa;
    bool found = false;

    if (0 != getifaddrs(&list)) {
        return false;
    }
    for (ifa = list; NULL != ifa && !found; ifa = ifa->ifa_next) {
        if (NULL != ifa->ifa_addr && AF_INET == ifa->ifa_addr->sa_family &&
            0 == strcmp(ifa->ifa_name, dev_name)) {
            *addr = ((const struct sockaddr_in *)ifa->ifa_addr)->sin_addr;
            found = true;
        }
    }
    freeifaddrs(list);
    return found;
}

void loom_tcp_liveness_init(loom_engine_t *engine)
{
    loom_tcp_liveness_t *live = &engine->tcp_live;
    int i;

    live->count = 0;
    for (i = 0; i < engine->rail_count; ++i) {
        if (0 == strcmp(engine->rails[i].info.tl_name, "tcp") &&
            loom_tcp_device_addr(engine->rails[i].info.dev_name,
                                 &live->addrs[live->count])) {
            ++live->count;
        }
    }
}

/* A connected stream socket bound to one of the rails' addresses. */
static bool loom_tcp_rail_socket(const loom_tcp_liveness_t *live, int fd)
{
    struct sockaddr_in local;
    socklen_t len = sizeof(local);
    int type = 0, listening = 1, i;
    socklen_t optlen = sizeof(int);

    if (0 != getsockname(fd, (struct sockaddr *)&local, &len) || AF_INET != local.sin_family ||
        0 != getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &optlen) || SOCK_STREAM != type ||
        0 != getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &optlen) || listening) {
        return false;
    }
    for (i = 0; i < live->count; ++i) {
        if (local.sin_addr.s_addr == live->addrs[i].s_addr) {
            return true;
        }
    }
    return false;
}

/* Probe an idle connection after a third of the limit, every sixth after
 * that, four times. */
static void loom_tcp_set_liveness(int fd, unsigned limit_s)
{
    int on = 1, idle = (int)(limit_s / 3), intvl = (int)(limit_s / 6), count = 4;

    intvl = intvl > 0 ? intvl : 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
    (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
}

/* Input on the socket wakes a thread sleeping in the engine's wait.  Not
 * UCT's event descriptor for tcp: it also reports sockets ready to write,
 * so a sleeper on it would never sleep.  Once per socket: epoll refuses a
 * second time, and forgets a socket when it is closed. */
static void loom_tcp_wake_on(loom_engine_t *engine, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN};

    if (engine->wake_fd >= 0) {
        ev.data.fd = fd;
        (void)epoll_ctl(engine->wake_fd, EPOLL_CTL_ADD, fd, &ev);
    }
}

int loom_tcp_liveness_sweep(loom_engine_t *engine)
{
    loom_tcp_liveness_t *live = &engine->tcp_live;
    struct dirent *entry;
    struct stat st;
    uint64_t now;
    DIR *dir;
    int fd;

    /* a timer: its clock costs nothing, so the time alone says when */
    if (0 == live->count || (0 == engine->config.tcp_keepalive_s && !engine->sleepers)) {
        return 0;
    }
    now = loom_engine_clock(engine);
    if (now < live->next_sweep) {
        return 0;
    }
    live->next_sweep = now + (engine->sleepers ? LOOM_TCP_SWEEP_WAKE_NS : LOOM_TCP_SWEEP_NS);
    dir = opendir("/proc/self/fd");
    if (NULL == dir) {
        return 0;
    }
    while (NULL != (entry = readdir(dir))) {
        fd = atoi(entry->d_name);
        if (fd > 2 && fd != dirfd(dir) && 0 == fstat(fd, &st) && S_ISSOCK(st.st_mode) &&
            loom_tcp_rail_socket(live, fd)) {
            if (0 != engine->config.tcp_keepalive_s) {
                loom_tcp_set_liveness(fd, engine->config.tcp_keepalive_s);
            }
            loom_tcp_wake_on(engine, fd);
        }
    }
    closedir(dir);
    return 0;
}
