/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Unit test harness for the loom transport engine.
 *
 * unit_main() forks: the parent and the child each create an engine on the
 * single rail "tcp:lo" (unit tests stay on loopback; only a test that runs
 * in a network namespace of its own adds a rail there, test_resend),
 * swap their address blobs over a socketpair, connect to each other and run
 * their test body.  The socketpair then carries control values (addresses,
 * packed keys, "done" notes) and barriers; every wait progresses the engine,
 * because a TCP put or push only lands while its target progresses, and every
 * wait gives up after UNIT_TIMEOUT seconds instead of hanging.
 *
 * The CHECK macros print file:line and end the process with status 1; the
 * parent then kills the child, and a child's failure makes the parent fail.
 * Exit status 77 with "SKIP: reason" means the tcp:lo transport is missing.
 */
#ifndef LOOM_UNIT_HARNESS_H
#define LOOM_UNIT_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "loom/transport.h"

#define UNIT_RAILS        "tcp:lo"
#define UNIT_PARENT_NAME  0x1001u
#define UNIT_CHILD_NAME   0x2002u
#define UNIT_EXIT_SKIP    77

/* Seconds any single wait may take (override with UNIT_TIMEOUT=...). */
double unit_timeout(void);
#define UNIT_TIMEOUT unit_timeout()

/* One message delivered to recv_cb, copied. */
typedef struct unit_msg {
    uint8_t  tag;
    size_t   length;
    uint8_t *data;
} unit_msg_t;

typedef struct unit_ctx unit_ctx_t;

struct unit_ctx {
    const char    *role;        /* "parent", "child", or a test's own label */
    bool           is_parent;
    int            sock;        /* control socket to the other process, or -1 */
    pid_t          child;       /* parent: the child's pid */
    uint64_t       name;
    loom_engine_t *engine;
    loom_peer_t   *peer;        /* NULL if the connect failed (see connect_rc) */
    int            connect_rc;
    unit_ctx_t    *also;        /* another engine of this process to progress */
    uint8_t       *peer_blob;   /* options.parent_waits: the child's address */
    size_t         peer_blob_len;
    /* messages received, in arrival order */
    unit_msg_t    *msgs;
    size_t         msg_count;
    size_t         msg_cap;
    /* engine log */
    size_t         log_count[LOOM_LOG_DEBUG + 1];
    char           log_text[8192]; /* the latest messages, newline separated */
    bool           log_quiet;   /* do not echo the engine's log to stderr */
    unsigned       barrier_seq;
};

typedef struct unit_options {
    bool force_connect_to_ep;  /* config.force_connect_to_ep */
    bool allow_connect_failure; /* run the bodies even if loom_peer_connect fails */
    bool parent_waits;         /* the parent does not connect at set-up: it connects
                                  when the engine asks who the child is (peer_find_cb) */
    /* change the engine configuration of both sides (is_parent tells which) */
    void (*configure)(loom_engine_config_t *config, bool is_parent);
    /* on both sides, once the engine is created, before the peers connect */
    void (*created)(unit_ctx_t *ctx);
} unit_options_t;

typedef void (*unit_body_t)(unit_ctx_t *ctx);

/* Fork, set up both sides, run the bodies, tear down; returns the exit code. */
int  unit_main(const char *test, const unit_options_t *options,
               unit_body_t parent_body, unit_body_t child_body);

/* Single-process helpers: create an engine on tcp:lo recording into ctx.
 * Exits with status 77 ("SKIP") when tcp:lo does not exist. */
void unit_local_open(unit_ctx_t *ctx, const char *role, uint64_t name,
                     const unit_options_t *options);
void unit_local_close(unit_ctx_t *ctx);

/* The test's name in failure messages (unit_main sets it). */
void unit_set_test_name(const char *test);

/* --- failure ------------------------------------------------------------ */
void unit_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
void unit_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define CHECK(_cond) do { \
        if (!(_cond)) { \
            unit_fail(__FILE__, __LINE__, "check failed: %s", #_cond); \
        } \
    } while (0)

#define CHECK_MSG(_cond, ...) do { \
        if (!(_cond)) { \
            unit_fail(__FILE__, __LINE__, __VA_ARGS__); \
        } \
    } while (0)

/* Integers compared as long long / unsigned long long, values printed. */
#define CHECK_EQ(_a, _b) do { \
        long long _va = (long long)(_a), _vb = (long long)(_b); \
        if (_va != _vb) { \
            unit_fail(__FILE__, __LINE__, "check failed: %s == %s (%lld != %lld)", \
                      #_a, #_b, _va, _vb); \
        } \
    } while (0)

#define CHECK_UEQ(_a, _b) do { \
        unsigned long long _va = (unsigned long long)(_a), \
                           _vb = (unsigned long long)(_b); \
        if (_va != _vb) { \
            unit_fail(__FILE__, __LINE__, "check failed: %s == %s (%llu != %llu)", \
                      #_a, #_b, _va, _vb); \
        } \
    } while (0)

/* A loom return code, printed with loom_strerror(). */
#define CHECK_RC(_expr, _expected) do { \
        int _rc = (_expr), _want = (_expected); \
        if (_rc != _want) { \
            unit_fail(__FILE__, __LINE__, "%s returned %d (%s), expected %d (%s)", \
                      #_expr, _rc, loom_strerror(_rc), _want, loom_strerror(_want)); \
        } \
    } while (0)

/* Bytes equal; a mismatch names the first differing offset. */
#define CHECK_MEM(_actual, _expected, _length, _what) \
    unit_check_mem(__FILE__, __LINE__, (_actual), (_expected), (_length), (_what))
void unit_check_mem(const char *file, int line, const void *actual, const void *expected,
                    size_t length, const char *what);

/* --- progress ------------------------------------------------------------- */
double unit_now(void);
/* Progress the engine (and ctx->also); fails if the other process is gone. */
void unit_progress(unit_ctx_t *ctx);

/* Progress until _expr holds; fail after UNIT_TIMEOUT seconds. */
#define UNIT_WAIT(_ctx, _expr) do { \
        double _deadline = unit_now() + UNIT_TIMEOUT; \
        while (!(_expr)) { \
            unit_progress(_ctx); \
            if (unit_now() > _deadline) { \
                unit_fail(__FILE__, __LINE__, "timed out after %g s waiting for %s", \
                          UNIT_TIMEOUT, #_expr); \
            } \
        } \
    } while (0)

/* loom_am_send without an op, retried with progress while it says AGAIN;
 * returns the final code. */
int unit_am_send(unit_ctx_t *ctx, loom_peer_t *peer, uint8_t tag, const void *data,
                 size_t length);

/* Progress for a while (to let anything unexpected happen). */
void unit_progress_for(unit_ctx_t *ctx, double seconds);

/* --- control channel ------------------------------------------------------ */
/* Send/receive one value of exactly length bytes (a length mismatch fails:
 * the two processes are out of step).  Both progress the engine while they
 * wait; unit_recv_noprogress() waits without progressing it. */
void unit_send(unit_ctx_t *ctx, const void *buf, size_t length);
void unit_recv(unit_ctx_t *ctx, void *buf, size_t length);
void unit_recv_noprogress(unit_ctx_t *ctx, void *buf, size_t length);
void     unit_send_u64(unit_ctx_t *ctx, uint64_t value);
uint64_t unit_recv_u64(unit_ctx_t *ctx);
/* Both processes reach the barrier (progressing meanwhile). */
void unit_barrier(unit_ctx_t *ctx);
/* Both sides idle at once (the teardown's first step); a side whose engine
 * is gone (NULL) takes part with nothing outstanding. */
void unit_side_idle(unit_ctx_t *ctx);
/* This process stops progressing until the other says go (unit_send_u64(ctx,
 * 1)): what the other sends meanwhile stays unread (a TCP put lands only
 * while its target progresses).  The other waits for it to hold with
 * unit_wait_other_holds(). */
void unit_hold_progress(unit_ctx_t *ctx);
void unit_wait_other_holds(unit_ctx_t *ctx);

/* A remote region as the other process described it. */
typedef struct unit_remote {
    uint64_t base;
    uint64_t length;
    size_t   key_size;
    uint8_t  key[LOOM_OP_MSG_MAX];
} unit_remote_t;
/* Send region's address, length and packed key (loom_key_pack/loom_key_size). */
void unit_send_region(unit_ctx_t *ctx, const loom_region_t *region, const void *base,
                      size_t length);
void unit_recv_region(unit_ctx_t *ctx, unit_remote_t *remote);

/* --- data ----------------------------------------------------------------- */
/* Deterministic bytes from a seed: both processes can build the same data. */
void unit_fill(void *buf, size_t length, uint64_t seed);
/* Page-aligned zeroed memory; fails the test if none. */
void *unit_alloc(size_t length);

/* --- messages ------------------------------------------------------------- */
void unit_msgs_clear(unit_ctx_t *ctx);
/* The engine log so far contains this text. */
bool unit_log_contains(const unit_ctx_t *ctx, const char *text);

/* An op that counts its completions. */
typedef struct unit_op {
    loom_op_t op;
    int       calls;
    int       status;
} unit_op_t;
void unit_op_init(unit_op_t *uop);

/* 0, then 2^k - 1, 2^k, 2^k + 1 up to 16 MiB + 1, ascending, no repeats;
 * sizes needs room for 76 entries.  Returns the count. */
size_t unit_size_ladder(size_t *sizes);
/* off, moved back so that [off, off + length) stays inside region_len. */
uint64_t unit_clip_offset(uint64_t off, uint64_t length, uint64_t region_len);

/* Wait until every op completed, then check each did exactly once, with LOOM_OK. */
void unit_ops_wait_all(unit_ctx_t *ctx, unit_op_t *uops, size_t count);

#endif
