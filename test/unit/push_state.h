/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * What the push tests share (test_push.c, test_push_multi.c): four ranks
 * (A asks, B owns, C and D receive), each with a 16 MiB buffer registered
 * for all access whose key every rank holds, buffers B cannot have read
 * and C cannot have written remotely, the notices each rank got, and the
 * checks of what landed.
 */
#ifndef LOOM_TEST_PUSH_STATE_H
#define LOOM_TEST_PUSH_STATE_H

#include "unit_group.h"

#define RANK_A 0
#define RANK_B 1
#define RANK_C 2
#define RANK_D 3
#define GROUP_SIZE 4
#define BUF_LEN ((size_t)16 * 1024 * 1024 + 8192)
#define GUARD_SEED 0x6a7dull

typedef struct notices {
    loom_push_notice_t got[64];
    unsigned           count;
} notices_t;

/* The notices this rank got (push_notice_cb). */
extern notices_t notices;
void push_notice_cb(void *cb_ctx, const loom_push_notice_t *notice);

typedef struct state {
    unit_group_t  *group;
    uint8_t       *buf;      /* every rank: a source and a destination */
    uint8_t       *ref;      /* what buf holds */
    loom_region_t *region;   /* buf, all access */
    unit_remote_t  remote[GROUP_SIZE];
    uint8_t       *ro_buf;   /* B: readable by B only (no remote read) */
    loom_region_t *ro_region;
    unit_remote_t  ro_remote;
    uint8_t       *wo_buf;   /* C: not remotely writable */
    loom_region_t *wo_region;
    unit_remote_t  wo_remote;
} state_t;

/* One push as every rank sees it. */
typedef struct push_case {
    const char *what;
    int         owner;
    int         dest;
    size_t      src_off;
    size_t      dst_off;
    size_t      length;
    unsigned    notify;      /* ranks told: bit per rank */
    uint64_t    counter;     /* counter of the told ranks, 0 none */
    int         expect;      /* the requester's status */
} push_case_t;

void state_init(state_t *st, unit_group_t *group);
void state_fini(state_t *st);
/* loom_push's arguments for the case (to: room for the notices). */
void args_fill(const state_t *st, const push_case_t *pc, loom_push_args_t *args,
               loom_push_notice_to_t *to);
/* This process asks for pc's push, waiting at its owner until counter
 * reaches 1 (0: at once); the caller waits for uop. */
void push_start_waiting(state_t *st, const push_case_t *pc, uint64_t counter, unit_op_t *uop);
/* The destination holds the source's bytes in the range, and nothing else
 * changed; or (refused) nothing changed at all. */
void check_dest(state_t *st, const push_case_t *pc, bool landed, uint64_t seed);
/* The key with another region id: refused where it is checked. */
void forge_region_id(unit_remote_t *remote);
/* Two rails on lo, striped as btl loom stripes by default. */
void push_state_two_rails(loom_engine_config_t *config);

#endif
