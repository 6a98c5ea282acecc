/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * A group of test processes connected all to all (see unit_group.h).
 */
#include "unit_group.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define UNIT_GROUP_ALARM_S 170
#define UNIT_GROUP_BASE_NAME 0x3000u

static unit_group_t unit_group;

uint64_t unit_group_name(int rank)
{
    return UNIT_GROUP_BASE_NAME + (uint64_t)rank;
}

unit_group_t *unit_group_of(void *cb_ctx)
{
    return (unit_group_t *)cb_ctx; /* ctx is its first member */
}

/* Rank 0 takes the others down with it. */
static void unit_group_alarm(int sig)
{
    static const char msg[] = "FAIL: the test process ran out of time (alarm)\n";
    int i;

    (void)sig;
    if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
        /* nothing more to do */
    }
    for (i = 1; i < unit_group.size; ++i) {
        if (unit_group.pids[i] > 0) {
            kill(unit_group.pids[i], SIGKILL);
        }
    }
    _exit(1);
}

static void unit_group_send(unit_group_t *group, int sock, const void *buf, size_t length)
{
    group->ctx.sock = sock;
    unit_send(&group->ctx, buf, length);
}

static void unit_group_recv(unit_group_t *group, int sock, void *buf, size_t length)
{
    group->ctx.sock = sock;
    unit_recv(&group->ctx, buf, length);
}

void unit_group_bcast(unit_group_t *group, int root, void *buf, size_t length)
{
    int r;

    if (0 == group->rank) {
        if (0 != root) {
            unit_group_recv(group, group->socks[root], buf, length);
        }
        for (r = 1; r < group->size; ++r) {
            if (r != root && !group->gone[r]) {
                unit_group_send(group, group->socks[r], buf, length);
            }
        }
    } else if (group->rank == root) {
        unit_group_send(group, group->socks[0], buf, length);
    } else {
        unit_group_recv(group, group->socks[0], buf, length);
    }
}

void unit_group_barrier(unit_group_t *group)
{
    uint64_t token = 0xba771e3000000000ull | ++group->ctx.barrier_seq, got;
    int r;

    if (0 == group->rank) {
        for (r = 1; r < group->size; ++r) {
            if (group->gone[r]) {
                continue;
            }
            unit_group_recv(group, group->socks[r], &got, sizeof(got));
            CHECK_UEQ(got, token);
        }
    } else {
        unit_group_send(group, group->socks[0], &token, sizeof(token));
    }
    unit_group_bcast(group, 0, &token, sizeof(token));
}

void unit_group_leave(unit_group_t *group)
{
    uint64_t token;

    CHECK(0 != group->rank);
    /* a plain read: the engine must not run (a dying process places nothing) */
    if (read(group->socks[0], &token, sizeof(token)) < 0) {
        unit_fail(__FILE__, __LINE__, "read: %s", strerror(errno));
    }
    _exit(UNIT_GROUP_EXIT_LEFT);
}

void unit_group_let_go(unit_group_t *group, int rank)
{
    uint64_t token = 0x90e;

    CHECK(0 == group->rank && rank > 0 && rank < group->size);
    if (write(group->socks[rank], &token, sizeof(token)) != (ssize_t)sizeof(token)) {
        unit_fail(__FILE__, __LINE__, "write: %s", strerror(errno));
    }
    group->gone[rank] = true;
    if (group->ctx.sock == group->socks[rank]) {
        group->ctx.sock = -1; /* its socket closes with it: no failure of ours */
    }
}

void unit_group_bcast_region(unit_group_t *group, int rank, const loom_region_t *region,
                             const void *base, size_t length, unit_remote_t *remote)
{
    memset(remote, 0, sizeof(*remote));
    if (group->rank == rank) {
        remote->base     = (uint64_t)(uintptr_t)base;
        remote->length   = length;
        remote->key_size = loom_key_size(group->ctx.engine);
        CHECK(remote->key_size > 0 && remote->key_size <= sizeof(remote->key));
        CHECK_RC(loom_key_pack(region, remote->key, remote->key_size), LOOM_OK);
    }
    unit_group_bcast(group, rank, remote, sizeof(*remote));
    CHECK_UEQ(remote->key_size, loom_key_size(group->ctx.engine));
}

/* Every rank's address reaches every rank; each connects to all others. */
static void unit_group_connect(unit_group_t *group)
{
    uint8_t blob[4096];
    uint64_t len;
    void *own;
    size_t own_len;
    int r;

    CHECK_RC(loom_engine_address(group->ctx.engine, &own, &own_len), LOOM_OK);
    CHECK(own_len > 0 && own_len <= sizeof(blob));
    for (r = 0; r < group->size; ++r) {
        len = (r == group->rank) ? own_len : 0;
        if (r == group->rank) {
            memcpy(blob, own, own_len);
        }
        unit_group_bcast(group, r, &len, sizeof(len));
        CHECK(len > 0 && len <= sizeof(blob));
        unit_group_bcast(group, r, blob, len);
        if (r != group->rank) {
            CHECK_RC(loom_peer_connect(group->ctx.engine, blob, len, &group->peers[r]),
                     LOOM_OK);
            CHECK_UEQ(loom_peer_name(group->peers[r]), unit_group_name(r));
        }
    }
    unit_group_barrier(group); /* all connected before any traffic */
}

static void unit_group_run(unit_group_t *group, const unit_options_t *options,
                           unit_group_body_t body)
{
    static char role[16];
    int r;

    snprintf(role, sizeof(role), "rank %d", group->rank);
    unit_local_open(&group->ctx, role, unit_group_name(group->rank), options);
    group->ctx.is_parent = (0 == group->rank);
    unit_group_connect(group);
    body(group);
    unit_group_barrier(group);
    UNIT_WAIT(&group->ctx, 0 == loom_engine_outstanding(group->ctx.engine));
    unit_group_barrier(group); /* everyone idle before anyone disconnects */
    for (r = 0; r < group->size; ++r) {
        if (NULL != group->peers[r]) {
            CHECK_UEQ(loom_peer_outstanding(group->peers[r]), 0);
            loom_peer_disconnect(group->peers[r]);
            group->peers[r] = NULL;
        }
    }
    unit_group_barrier(group);
    unit_local_close(&group->ctx);
}

int unit_group_main(const char *test, int size, const unit_options_t *options,
                    unit_group_body_t body)
{
    unit_group_t *group = &unit_group;
    int sv[UNIT_GROUP_MAX][2], status, r, skipped = 0;
    pid_t pid;

    CHECK(size >= 2 && size <= UNIT_GROUP_MAX);
    unit_set_test_name(test);
    setvbuf(stdout, NULL, _IOLBF, 0);
    memset(group, 0, sizeof(*group));
    group->size = size;
    for (r = 1; r < size; ++r) {
        if (0 != socketpair(AF_UNIX, SOCK_STREAM, 0, sv[r])) {
            unit_fail(__FILE__, __LINE__, "socketpair: %s", strerror(errno));
        }
    }
    for (r = 1; r < size; ++r) {
        pid = fork();
        if (pid < 0) {
            unit_fail(__FILE__, __LINE__, "fork: %s", strerror(errno));
        }
        if (0 == pid) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() == 1) {
                _exit(1); /* rank 0 is already gone */
            }
            group->rank     = r;
            group->socks[0] = sv[r][1];
            for (int o = 1; o < size; ++o) {
                close(sv[o][0]);
                if (o != r) {
                    close(sv[o][1]);
                }
            }
            alarm(UNIT_GROUP_ALARM_S);
            unit_group_run(group, options, body);
            exit(0);
        }
        group->pids[r]  = pid;
        group->socks[r] = sv[r][0];
        close(sv[r][1]);
    }
    signal(SIGALRM, unit_group_alarm);
    alarm(UNIT_GROUP_ALARM_S);
    unit_group_run(group, options, body);
    for (r = 1; r < size; ++r) {
        close(group->socks[r]);
        if (waitpid(group->pids[r], &status, 0) != group->pids[r]) {
            unit_fail(__FILE__, __LINE__, "waitpid: %s", strerror(errno));
        }
        group->pids[r] = 0;
        if (WIFEXITED(status) && UNIT_EXIT_SKIP == WEXITSTATUS(status)) {
            skipped = 1;
        } else if (group->gone[r] && WIFEXITED(status) &&
                   UNIT_GROUP_EXIT_LEFT == WEXITSTATUS(status)) {
            continue; /* it left, as the test asked */
        } else if (!WIFEXITED(status) || 0 != WEXITSTATUS(status)) {
            unit_fail(__FILE__, __LINE__, "rank %d %s %d", r,
                      WIFSIGNALED(status) ? "was killed by signal" : "exited with status",
                      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        }
    }
    if (skipped) {
        return UNIT_EXIT_SKIP;
    }
    printf("PASS: %s (%d processes)\n", test, size);
    return 0;
}
