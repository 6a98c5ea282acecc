/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Two-process harness for the loom transport unit tests (see unit_harness.h).
 */
#include "unit_harness.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Whole-process safety net: no test process lives longer than this. */
#define UNIT_ALARM_S 110

static unit_ctx_t *unit_self;       /* this process's context, for failures */
static const char *unit_test_name = "unit";

double unit_timeout(void)
{
    static double timeout = 0;

    if (0 == timeout) {
        const char *env = getenv("UNIT_TIMEOUT");
        timeout = (NULL != env && atof(env) > 0) ? atof(env) : 20.0;
    }
    return timeout;
}

double unit_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void unit_set_test_name(const char *test)
{
    unit_test_name = test;
}

static const char *unit_role(void)
{
    return (NULL != unit_self) ? unit_self->role : "main";
}

void unit_note(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "[%s %s] ", unit_test_name, unit_role());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void unit_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "FAIL [%s %s] %s:%d: ", unit_test_name, unit_role(), file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    fflush(stdout);
    if (NULL != unit_self && unit_self->is_parent && unit_self->child > 0) {
        kill(unit_self->child, SIGKILL);
        waitpid(unit_self->child, NULL, 0);
    }
    /* _exit: no leak report for the state a failed test leaves behind. */
    _exit(1);
}

void unit_check_mem(const char *file, int line, const void *actual, const void *expected,
                    size_t length, const char *what)
{
    const uint8_t *a = actual, *e = expected;
    size_t i;

    if (0 == length || 0 == memcmp(a, e, length)) {
        return;
    }
    for (i = 0; i < length && a[i] == e[i]; ++i) {
    }
    unit_fail(file, line, "%s: %zu bytes differ from offset %zu on (byte %#x, expected "
              "%#x)", what, length, i, a[i], e[i]);
}

/* ---- data ------------------------------------------------------------------ */

void unit_fill(void *buf, size_t length, uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    uint8_t *p = buf;
    size_t done = 0;

    while (done < length) {
        uint64_t z;
        size_t n = (length - done < 8) ? length - done : 8;

        /* splitmix64 */
        x += 0x9e3779b97f4a7c15ull;
        z = x;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        memcpy(p + done, &z, n);
        done += n;
    }
}

void *unit_alloc(size_t length)
{
    void *p = NULL;

    if (0 != posix_memalign(&p, 4096, length ? length : 1)) {
        unit_fail(__FILE__, __LINE__, "cannot allocate %zu bytes", length);
    }
    memset(p, 0, length);
    return p;
}

static void unit_op_cb(loom_op_t *op, int status)
{
    unit_op_t *uop = (unit_op_t *)((char *)op - offsetof(unit_op_t, op));

    ++uop->calls;
    uop->status = status;
}

void unit_op_init(unit_op_t *uop)
{
    memset(uop, 0, sizeof(*uop));
    uop->op.cb   = unit_op_cb;
    uop->op.user = uop;
    uop->status  = 1000; /* no loom code */
}

void unit_hold_progress(unit_ctx_t *ctx)
{
    uint64_t go;

    unit_send_u64(ctx, 2);
    unit_recv_noprogress(ctx, &go, sizeof(go));
    CHECK_UEQ(go, 1);
}

void unit_wait_other_holds(unit_ctx_t *ctx)
{
    CHECK_UEQ(unit_recv_u64(ctx), 2);
}

/* ---- engine callbacks ------------------------------------------------------- */

static void unit_recv_cb(void *arg, uint8_t tag, const void *data, size_t length)
{
    unit_ctx_t *ctx = arg;
    unit_msg_t *msg;

    if (ctx->msg_count == ctx->msg_cap) {
        size_t cap = ctx->msg_cap ? ctx->msg_cap * 2 : 64;
        unit_msg_t *grown = realloc(ctx->msgs, cap * sizeof(*grown));

        if (NULL == grown) {
            unit_fail(__FILE__, __LINE__, "out of memory recording a message");
        }
        ctx->msgs    = grown;
        ctx->msg_cap = cap;
    }
    msg = &ctx->msgs[ctx->msg_count];
    msg->tag    = tag;
    msg->length = length;
    msg->data   = malloc(length ? length : 1);
    if (NULL == msg->data) {
        unit_fail(__FILE__, __LINE__, "out of memory recording a message");
    }
    if (length > 0) {
        memcpy(msg->data, data, length);
    }
    ++ctx->msg_count;
}

static void unit_log_cb(void *arg, int level, const char *text)
{
    static const char *names[] = {"error", "warn", "info", "debug"};
    unit_ctx_t *ctx = arg;
    size_t used = strlen(ctx->log_text), add = strlen(text) + 1;

    if (level >= 0 && level <= LOOM_LOG_DEBUG) {
        ++ctx->log_count[level];
    }
    /* keep the latest messages: drop the oldest half when full */
    if (used + add + 1 > sizeof(ctx->log_text)) {
        size_t keep = used / 2;
        memmove(ctx->log_text, ctx->log_text + used - keep, keep + 1);
        used = keep;
    }
    if (add + 1 <= sizeof(ctx->log_text) - used) {
        memcpy(ctx->log_text + used, text, add - 1);
        ctx->log_text[used + add - 1] = '\n';
        ctx->log_text[used + add]     = '\0';
    }
    if (!ctx->log_quiet || getenv("UNIT_VERBOSE")) {
        fprintf(stderr, "[%s %s] loom %s: %s\n", unit_test_name, ctx->role,
                (level >= 0 && level <= LOOM_LOG_DEBUG) ? names[level] : "?", text);
    }
}

bool unit_log_contains(const unit_ctx_t *ctx, const char *text)
{
    return NULL != strstr(ctx->log_text, text);
}

void unit_msgs_clear(unit_ctx_t *ctx)
{
    size_t i;

    for (i = 0; i < ctx->msg_count; ++i) {
        free(ctx->msgs[i].data);
    }
    ctx->msg_count = 0;
}

/* options.parent_waits: the engine asks who sent it a message or CONNECT. */
static loom_peer_t *unit_peer_find(void *cb_ctx, loom_engine_t *engine, uint64_t name)
{
    unit_ctx_t *ctx = cb_ctx;

    if (NULL == ctx->peer && NULL != ctx->peer_blob && UNIT_CHILD_NAME == name) {
        ctx->connect_rc = loom_peer_connect(engine, ctx->peer_blob, ctx->peer_blob_len,
                                            &ctx->peer);
    }
    return ctx->peer;
}

static int unit_engine_create(unit_ctx_t *ctx, uint64_t name, const unit_options_t *options)
{
    loom_engine_config_t config;

    memset(&config, 0, sizeof(config));
    config.rails               = UNIT_RAILS; /* loopback only, never "auto" */
    config.max_rails           = 1;
    config.name                = name;
    config.force_connect_to_ep = (NULL != options) && options->force_connect_to_ep;
    config.recv_cb             = unit_recv_cb;
    config.log_cb              = unit_log_cb;
    config.cb_ctx              = ctx;
    if (NULL != options && options->parent_waits && ctx->is_parent) {
        config.peer_find_cb = unit_peer_find;
    }
    config.verbose             = getenv("UNIT_VERBOSE") ? LOOM_LOG_DEBUG : LOOM_LOG_WARN;
    if (NULL != options && NULL != options->configure) {
        options->configure(&config, ctx->is_parent);
    }
    ctx->name = name;
    return loom_engine_create(&config, &ctx->engine);
}

static void unit_engine_close(unit_ctx_t *ctx)
{
    if (NULL != ctx->engine) {
        loom_engine_destroy(ctx->engine);
        ctx->engine = NULL;
    }
    unit_msgs_clear(ctx);
    free(ctx->msgs);
    ctx->msgs    = NULL;
    ctx->msg_cap = 0;
    free(ctx->peer_blob);
    ctx->peer_blob = NULL;
}

/* ---- progress ---------------------------------------------------------------- */

static void unit_check_other_alive(unit_ctx_t *ctx)
{
    struct pollfd pfd = {ctx->sock, 0, 0};

    if (ctx->sock >= 0 && poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLERR))) {
        /* Data may still be buffered; only a closed, drained socket is fatal. */
        char c;
        if (recv(ctx->sock, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0) {
            unit_fail(__FILE__, __LINE__, "the other process exited (see its output)");
        }
    }
}

void unit_progress(unit_ctx_t *ctx)
{
    static unsigned calls;

    loom_engine_progress(ctx->engine);
    if (NULL != ctx->also && NULL != ctx->also->engine) {
        loom_engine_progress(ctx->also->engine);
    }
    if (0 == (++calls & 0xfff)) {
        unit_check_other_alive(ctx);
    }
}

int unit_am_send(unit_ctx_t *ctx, loom_peer_t *peer, uint8_t tag, const void *data,
                 size_t length)
{
    struct iovec iov = {(void *)data, length};
    double deadline = unit_now() + UNIT_TIMEOUT;
    int rc;

    while (LOOM_ERR_AGAIN == (rc = loom_am_send(peer, tag, &iov, 1, NULL))) {
        unit_progress(ctx);
        if (unit_now() > deadline) {
            unit_fail(__FILE__, __LINE__, "loom_am_send of %zu bytes kept returning "
                      "LOOM_ERR_AGAIN for %g s", length, UNIT_TIMEOUT);
        }
    }
    return rc;
}

void unit_progress_for(unit_ctx_t *ctx, double seconds)
{
    double end = unit_now() + seconds;

    while (unit_now() < end) {
        unit_progress(ctx);
    }
}

/* ---- control channel ---------------------------------------------------------- */

static void unit_write_all(unit_ctx_t *ctx, const void *buf, size_t length)
{
    const uint8_t *p = buf;
    double deadline = unit_now() + UNIT_TIMEOUT;

    while (length > 0) {
        ssize_t n = send(ctx->sock, p, length, MSG_DONTWAIT | MSG_NOSIGNAL);

        if (n > 0) {
            p += n;
            length -= (size_t)n;
            continue;
        }
        if (n < 0 && EAGAIN != errno && EWOULDBLOCK != errno && EINTR != errno) {
            unit_fail(__FILE__, __LINE__, "control socket write failed: %s "
                      "(the other process exited?)", strerror(errno));
        }
        if (NULL != ctx->engine) {
            unit_progress(ctx);
        }
        if (unit_now() > deadline) {
            unit_fail(__FILE__, __LINE__, "timed out writing to the control socket");
        }
    }
}

static void unit_read_all(unit_ctx_t *ctx, void *buf, size_t length, bool progress)
{
    uint8_t *p = buf;
    double deadline = unit_now() + UNIT_TIMEOUT;

    while (length > 0) {
        struct pollfd pfd = {ctx->sock, POLLIN, 0};
        int ready = poll(&pfd, 1, (progress && NULL != ctx->engine) ? 0 : 100);

        if (ready > 0) {
            ssize_t n = recv(ctx->sock, p, length, MSG_DONTWAIT);
            if (n > 0) {
                p += n;
                length -= (size_t)n;
                continue;
            }
            if (0 == n) {
                unit_fail(__FILE__, __LINE__, "the other process closed the control "
                          "socket (it failed or exited; see its output)");
            }
            if (EAGAIN != errno && EWOULDBLOCK != errno && EINTR != errno) {
                unit_fail(__FILE__, __LINE__, "control socket read failed: %s",
                          strerror(errno));
            }
        }
        if (progress && NULL != ctx->engine) {
            unit_progress(ctx);
        }
        if (unit_now() > deadline) {
            unit_fail(__FILE__, __LINE__, "timed out after %g s waiting for the other "
                      "process", UNIT_TIMEOUT);
        }
    }
}

void unit_send(unit_ctx_t *ctx, const void *buf, size_t length)
{
    uint32_t len = (uint32_t)length;

    unit_write_all(ctx, &len, sizeof(len));
    unit_write_all(ctx, buf, length);
}

static void unit_recv_common(unit_ctx_t *ctx, void *buf, size_t length, bool progress)
{
    uint32_t len;

    unit_read_all(ctx, &len, sizeof(len), progress);
    if (len != length) {
        unit_fail(__FILE__, __LINE__, "control channel out of step: got a value of %u "
                  "bytes, expected %zu", len, length);
    }
    unit_read_all(ctx, buf, length, progress);
}

void unit_recv(unit_ctx_t *ctx, void *buf, size_t length)
{
    unit_recv_common(ctx, buf, length, true);
}

void unit_recv_noprogress(unit_ctx_t *ctx, void *buf, size_t length)
{
    unit_recv_common(ctx, buf, length, false);
}

void unit_send_u64(unit_ctx_t *ctx, uint64_t value)
{
    unit_send(ctx, &value, sizeof(value));
}

uint64_t unit_recv_u64(unit_ctx_t *ctx)
{
    uint64_t value;

    unit_recv(ctx, &value, sizeof(value));
    return value;
}

void unit_barrier(unit_ctx_t *ctx)
{
    uint64_t token = 0xba771e2000000000ull | ++ctx->barrier_seq, got;

    unit_send_u64(ctx, token);
    got = unit_recv_u64(ctx);
    if (got != token) {
        unit_fail(__FILE__, __LINE__, "barrier out of step: got %#llx, expected %#llx",
                  (unsigned long long)got, (unsigned long long)token);
    }
}

void unit_send_region(unit_ctx_t *ctx, const loom_region_t *region, const void *base,
                      size_t length)
{
    size_t key_size = loom_key_size(ctx->engine);
    uint8_t key[LOOM_OP_MSG_MAX];

    CHECK(key_size > 0 && key_size <= sizeof(key));
    CHECK_RC(loom_key_pack(region, key, key_size), LOOM_OK);
    unit_send_u64(ctx, (uint64_t)(uintptr_t)base);
    unit_send_u64(ctx, length);
    unit_send_u64(ctx, key_size);
    unit_send(ctx, key, key_size);
}

void unit_recv_region(unit_ctx_t *ctx, unit_remote_t *remote)
{
    memset(remote, 0, sizeof(*remote));
    remote->base     = unit_recv_u64(ctx);
    remote->length   = unit_recv_u64(ctx);
    remote->key_size = unit_recv_u64(ctx);
    CHECK(remote->key_size > 0 && remote->key_size <= sizeof(remote->key));
    /* Same rail configuration on both sides: the same key size. */
    CHECK_UEQ(remote->key_size, loom_key_size(ctx->engine));
    unit_recv(ctx, remote->key, remote->key_size);
}

/* ---- set-up ---------------------------------------------------------------------- */

static void unit_skip_or_fail(int rc)
{
    if (LOOM_ERR_NOT_FOUND == rc) {
        printf("SKIP: the UCT transport %s is not available\n", UNIT_RAILS);
        fflush(stdout);
        _exit(UNIT_EXIT_SKIP);
    }
    unit_fail(__FILE__, __LINE__, "loom_engine_create(rails=%s) failed: %d (%s)",
              UNIT_RAILS, rc, loom_strerror(rc));
}

void unit_local_open(unit_ctx_t *ctx, const char *role, uint64_t name,
                     const unit_options_t *options)
{
    int rc;

    memset(ctx, 0, sizeof(*ctx));
    ctx->role = role;
    ctx->sock = -1;
    if (NULL == unit_self) {
        unit_self = ctx;
    }
    rc = unit_engine_create(ctx, name, options);
    if (LOOM_OK != rc) {
        unit_skip_or_fail(rc);
    }
}

void unit_local_close(unit_ctx_t *ctx)
{
    unit_engine_close(ctx);
    if (unit_self == ctx) {
        unit_self = NULL;
    }
}

/* Is tcp:lo there?  Asked in a throw-away process so that neither test
 * process has touched UCT before it forks. */
static void unit_probe(void)
{
    int status;
    pid_t pid = fork();

    if (pid < 0) {
        unit_fail(__FILE__, __LINE__, "fork: %s", strerror(errno));
    }
    if (0 == pid) {
        unit_ctx_t ctx;

        unit_local_open(&ctx, "probe", UNIT_PARENT_NAME, NULL);
        loom_engine_destroy(ctx.engine);
        _exit(0);
    }
    if (waitpid(pid, &status, 0) != pid) {
        unit_fail(__FILE__, __LINE__, "waitpid: %s", strerror(errno));
    }
    if (WIFEXITED(status) && UNIT_EXIT_SKIP == WEXITSTATUS(status)) {
        exit(UNIT_EXIT_SKIP);
    }
    if (!WIFEXITED(status) || 0 != WEXITSTATUS(status)) {
        unit_fail(__FILE__, __LINE__, "creating an engine on %s failed (status %#x)",
                  UNIT_RAILS, status);
    }
}

static void unit_side_setup(unit_ctx_t *ctx, const unit_options_t *options)
{
    void *blob;
    size_t blob_len;
    uint64_t peer_len;
    uint8_t *peer_blob;
    int rc;

    rc = unit_engine_create(ctx, ctx->is_parent ? UNIT_PARENT_NAME : UNIT_CHILD_NAME,
                            options);
    if (LOOM_OK != rc) {
        unit_skip_or_fail(rc);
    }
    CHECK(loom_engine_rail_count(ctx->engine) >= 1); /* more where configure asks */
    if (NULL != options && NULL != options->created) {
        options->created(ctx);
    }
    CHECK_RC(loom_engine_address(ctx->engine, &blob, &blob_len), LOOM_OK);
    CHECK(NULL != blob && blob_len > 0);
    unit_send_u64(ctx, blob_len);
    unit_send(ctx, blob, blob_len);
    peer_len  = unit_recv_u64(ctx);
    CHECK(peer_len > 0 && peer_len < 65536);
    peer_blob = unit_alloc(peer_len);
    unit_recv(ctx, peer_blob, peer_len);
    if (NULL != options && options->parent_waits && ctx->is_parent) {
        ctx->peer_blob     = peer_blob; /* unit_peer_find connects with it */
        ctx->peer_blob_len = peer_len;
        unit_barrier(ctx);
        return;
    }
    ctx->connect_rc = loom_peer_connect(ctx->engine, peer_blob, peer_len, &ctx->peer);
    free(peer_blob);
    if (LOOM_OK != ctx->connect_rc) {
        ctx->peer = NULL;
        CHECK_MSG(NULL != options && options->allow_connect_failure,
                  "loom_peer_connect failed: %d (%s)", ctx->connect_rc,
                  loom_strerror(ctx->connect_rc));
    } else {
        CHECK_UEQ(loom_peer_name(ctx->peer),
                  ctx->is_parent ? UNIT_CHILD_NAME : UNIT_PARENT_NAME);
    }
    /* Both connected before any test traffic (a push needs its requester known). */
    unit_barrier(ctx);
}

/*
 * A barrier progresses, and an engine's own work may start in it (an answer
 * to the other side's late announcement of a rail coming back, on a loaded
 * machine), so each side samples its ops after the barrier and they wait
 * again until both sampled none; the samples go without progress, so
 * nothing starts between sample and check.  An op that never ends still
 * fails the wait.
 */
void unit_side_idle(unit_ctx_t *ctx)
{
    uint64_t mine, theirs;
    int rounds = 0;

    for (;;) {
        unit_barrier(ctx);
        UNIT_WAIT(ctx, NULL == ctx->engine || 0 == loom_engine_outstanding(ctx->engine));
        unit_barrier(ctx);
        mine = (NULL == ctx->engine) ? 0 : loom_engine_outstanding(ctx->engine);
        unit_send_u64(ctx, mine);
        unit_recv_noprogress(ctx, &theirs, sizeof(theirs));
        if (0 == mine && 0 == theirs) {
            return;
        }
        CHECK_MSG(++rounds < 10, "ops still started after 10 rounds of both sides idle "
                  "(%llu here, %llu there)", (unsigned long long)mine,
                  (unsigned long long)theirs);
    }
}

static void unit_side_teardown(unit_ctx_t *ctx)
{
    unit_side_idle(ctx);
    if (NULL != ctx->peer) {
        CHECK_UEQ(loom_peer_outstanding(ctx->peer), 0);
        loom_peer_disconnect(ctx->peer);
        ctx->peer = NULL;
    }
    unit_engine_close(ctx);
}

static void unit_side_run(unit_ctx_t *ctx, const unit_options_t *options, unit_body_t body)
{
    unit_side_setup(ctx, options);
    body(ctx);
    unit_side_teardown(ctx);
}

static void unit_alarm(int sig)
{
    static const char msg[] = "FAIL: the test process ran out of time (alarm)\n";

    (void)sig;
    if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
        /* nothing more to do */
    }
    if (NULL != unit_self && unit_self->is_parent && unit_self->child > 0) {
        kill(unit_self->child, SIGKILL);
    }
    _exit(1);
}

int unit_main(const char *test, const unit_options_t *options, unit_body_t parent_body,
              unit_body_t child_body)
{
    static unit_ctx_t ctx;
    int sv[2], status;
    pid_t pid;

    unit_test_name = test;
    setvbuf(stdout, NULL, _IOLBF, 0);
    unit_probe();
    if (0 != socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
        unit_fail(__FILE__, __LINE__, "socketpair: %s", strerror(errno));
    }
    memset(&ctx, 0, sizeof(ctx));
    pid = fork();
    if (pid < 0) {
        unit_fail(__FILE__, __LINE__, "fork: %s", strerror(errno));
    }
    unit_self = &ctx;
    signal(SIGALRM, unit_alarm);
    alarm(UNIT_ALARM_S);
    if (0 == pid) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == 1) {
            _exit(1); /* the parent is already gone */
        }
        close(sv[0]);
        ctx.role = "child";
        ctx.sock = sv[1];
        unit_side_run(&ctx, options, child_body);
        close(ctx.sock);
        exit(0);
    }
    close(sv[1]);
    ctx.role      = "parent";
    ctx.is_parent = true;
    ctx.child     = pid;
    ctx.sock      = sv[0];
    unit_side_run(&ctx, options, parent_body);
    close(ctx.sock);
    if (waitpid(pid, &status, 0) != pid) {
        unit_fail(__FILE__, __LINE__, "waitpid: %s", strerror(errno));
    }
    ctx.child = 0;
    if (!WIFEXITED(status) || 0 != WEXITSTATUS(status)) {
        if (WIFSIGNALED(status)) {
            unit_fail(__FILE__, __LINE__, "the child was killed by signal %d",
                      WTERMSIG(status));
        }
        unit_fail(__FILE__, __LINE__, "the child exited with status %d",
                  WEXITSTATUS(status));
    }
    printf("PASS: %s\n", test);
    return 0;
}

size_t unit_size_ladder(size_t *sizes)
{
    size_t count = 0, k, d;

    sizes[count++] = 0;
    for (k = 0; k <= 24; ++k) {
        for (d = 0; d < 3; ++d) {
            size_t size = ((size_t)1 << k) + d - 1;
            if (size > sizes[count - 1]) {
                sizes[count++] = size;
            }
        }
    }
    return count;
}

uint64_t unit_clip_offset(uint64_t off, uint64_t length, uint64_t region_len)
{
    return (off + length > region_len) ? region_len - length : off;
}

void unit_ops_wait_all(unit_ctx_t *ctx, unit_op_t *uops, size_t count)
{
    size_t i;

    for (i = 0; i < count; ++i) {
        UNIT_WAIT(ctx, uops[i].calls > 0);
    }
    unit_progress_for(ctx, 0.05); /* a second callback would show up here */
    for (i = 0; i < count; ++i) {
        CHECK_EQ(uops[i].calls, 1);
        CHECK_RC(uops[i].status, LOOM_OK);
    }
}
