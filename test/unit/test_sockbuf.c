/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * config.tcp_sockbuf (btl_loom_tcp_sockbuf) reaches the kernel: with it set,
 * every connected TCP socket of the engine's rails has exactly that send and
 * receive buffer, as the kernel gives it (capped at net.core.wmem_max and
 * rmem_max, then doubled), once messages went both ways.  SOCKBUF is below
 * the kernel's default bounds (212992), and its double matches none of the
 * kernel's own sizes (tcp_rmem and tcp_wmem, or what autotuning picks).
 * The rails' sockets are found as tcp_liveness.c finds them: connected
 * IPv4 stream sockets of the process.
 */
#include "unit_harness.h"
#include "base/loom_base.h" /* the kernel's bounds, as the rails read them */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>

#define SOCKBUF  98304
#define MSG_TAG  9
#define MSG_SIZE 4000

static void configure(loom_engine_config_t *config, bool is_parent)
{
    (void)is_parent;
    config->tcp_sockbuf = SOCKBUF;
}

/* What the kernel gives a socket that asked for SOCKBUF (unbounded where
 * its bound cannot be read). */
static int given(bool receive)
{
    unsigned long bound = loom_tcp_buffer_bound(receive);

    return 2 * ((0 != bound && bound < SOCKBUF) ? (int)bound : SOCKBUF);
}

static int socket_option(int fd, int option)
{
    socklen_t length = sizeof(int);
    int value        = -1;

    CHECK(0 == getsockopt(fd, SOL_SOCKET, option, &value, &length));
    return value;
}

/* A connected IPv4 TCP socket (not the harness's own socket pair, nor a
 * listener): one of a rail's. */
static bool rail_socket(int fd)
{
    struct sockaddr_storage peer;
    struct stat st;
    socklen_t length;
    int type;

    if (0 != fstat(fd, &st) || !S_ISSOCK(st.st_mode)) {
        return false;
    }
    length = sizeof(type);
    if (0 != getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) || SOCK_STREAM != type) {
        return false;
    }
    length = sizeof(peer);
    return 0 == getpeername(fd, (struct sockaddr *)&peer, &length) &&
           AF_INET == peer.ss_family;
}

/* Every rail socket of this process has the fixed buffers; how many there are. */
static unsigned check_sockets(const char *side)
{
    int send_given = given(false), receive_given = given(true);
    DIR *dir = opendir("/proc/self/fd");
    struct dirent *entry;
    unsigned count = 0;
    int fd, sent, received;

    CHECK(NULL != dir);
    while (NULL != (entry = readdir(dir))) {
        fd = atoi(entry->d_name);
        if ('.' == entry->d_name[0] || fd == dirfd(dir) || !rail_socket(fd)) {
            continue;
        }
        sent     = socket_option(fd, SO_SNDBUF);
        received = socket_option(fd, SO_RCVBUF);
        CHECK_MSG(send_given == sent, "%s: socket %d sends through %d bytes of buffer, not %d",
                  side, fd, sent, send_given);
        CHECK_MSG(receive_given == received, "%s: socket %d receives into %d bytes of buffer, "
                  "not %d", side, fd, received, receive_given);
        ++count;
    }
    closedir(dir);
    return count;
}

/* A message each way (the rails' connections exist then), every byte
 * checked, then the sockets. */
static void body(unit_ctx_t *ctx, const char *side, uint64_t seed, uint64_t peer_seed)
{
    uint8_t *data = unit_alloc(MSG_SIZE);
    unsigned sockets;

    unit_fill(data, MSG_SIZE, seed);
    CHECK_RC(unit_am_send(ctx, ctx->peer, MSG_TAG, data, MSG_SIZE), LOOM_OK);
    UNIT_WAIT(ctx, ctx->msg_count >= 1);
    CHECK_EQ(ctx->msgs[0].tag, MSG_TAG);
    CHECK_UEQ(ctx->msgs[0].length, MSG_SIZE);
    unit_fill(data, MSG_SIZE, peer_seed);
    CHECK_MEM(ctx->msgs[0].data, data, MSG_SIZE, "the peer's message");
    unit_barrier(ctx);
    sockets = check_sockets(side);
    CHECK_MSG(sockets >= 1, "%s: no connected TCP socket of a rail found", side);
    unit_note("%s: %u rail sockets with the buffers asked for", side, sockets);
    free(data);
}

static void parent_body(unit_ctx_t *ctx)
{
    body(ctx, "parent", 0x50c1, 0x50c2);
}

static void child_body(unit_ctx_t *ctx)
{
    body(ctx, "child", 0x50c2, 0x50c1);
}

int main(void)
{
    unit_options_t options = {.configure = configure};

    return unit_main("sockbuf", &options, parent_body, child_body);
}
