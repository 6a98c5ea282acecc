/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * A group of test processes (3 and more) for what needs a third party:
 * unit_group_main forks size processes; each creates an engine on tcp:lo
 * (unit_harness.h), all connect to all, run the same body with their own
 * rank, and tear down.  Control values go through rank 0 over socketpairs
 * (unit_group_bcast, unit_group_barrier), progressing the engine while they
 * wait.  A failure in any process fails the test; exit status 77 with a
 * SKIP line when tcp:lo is missing, as in the two-process harness.
 */
#ifndef LOOM_UNIT_GROUP_H
#define LOOM_UNIT_GROUP_H

#include "unit_harness.h"

#define UNIT_GROUP_MAX 8

typedef struct unit_group {
    unit_ctx_t   ctx;           /* first: cb_ctx of the engine's callbacks */
    int          rank;
    int          size;
    int          socks[UNIT_GROUP_MAX]; /* rank 0: one per other rank; others: [0] */
    pid_t        pids[UNIT_GROUP_MAX];  /* rank 0: the other ranks */
    loom_peer_t *peers[UNIT_GROUP_MAX]; /* NULL at the own rank */
    bool         gone[UNIT_GROUP_MAX];  /* rank 0: ranks that left (unit_group_let_go) */
} unit_group_t;

/* The exit status of a rank that left the group on purpose. */
#define UNIT_GROUP_EXIT_LEFT 42

typedef void (*unit_group_body_t)(unit_group_t *group);

/* The process name of a rank's engine. */
uint64_t unit_group_name(int rank);
/* The group of an engine callback's cb_ctx. */
unit_group_t *unit_group_of(void *cb_ctx);
int  unit_group_main(const char *test, int size, const unit_options_t *options,
                     unit_group_body_t body);
/* length bytes of root's buf reach buf at every rank. */
void unit_group_bcast(unit_group_t *group, int root, void *buf, size_t length);
void unit_group_barrier(unit_group_t *group);
/* A rank leaves for good, the way a process dies: it waits, without
 * progressing its engine, until rank 0 lets it go, then exits at once
 * (UNIT_GROUP_EXIT_LEFT).  Rank 0 then leaves it out of the group's
 * barriers and broadcasts. */
void unit_group_leave(unit_group_t *group) __attribute__((noreturn));
void unit_group_let_go(unit_group_t *group, int rank);
/* A region of rank's, as unit_remote_t, at every rank (NULL region elsewhere). */
void unit_group_bcast_region(unit_group_t *group, int rank, const loom_region_t *region,
                             const void *base, size_t length, unit_remote_t *remote);

#endif
