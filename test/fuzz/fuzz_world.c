/*
 * Set-up of the wire fuzzer's two engines (see fuzz_world.h).
 */
#include "fuzz_world.h"
#include "fuzz_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A set-up step that has not finished in this long will not. */
#define FUZZ_SETUP_NS 5000000000ull

static void fuzz_recv_cb(void *ctx, uint8_t tag, const void *data, size_t length)
{
    fuzz_world_t *w = ctx;
    const uint8_t *p = data;
    size_t i;

    /* read every byte: a payload pointing outside its message shows under ASan */
    for (i = 0; i < length; ++i) {
        w->checksum = w->checksum * 31 + p[i];
    }
    w->checksum += tag;
    ++w->delivered; /* of either engine: the fake peer gets none but may */
}

static void fuzz_log_cb(void *ctx, int level, const char *text)
{
    /* refusals are what most inputs cause: only shown when asked for */
    if (NULL != getenv("FUZZ_VERBOSE")) {
        fprintf(stderr, "fuzz: loom %d: %s\n", level, text);
    }
}

/* A message from a process not connected: it stays unknown (strangers are
 * kept and looked at again from progress, which this exercises). */
static loom_peer_t *fuzz_find_cb(void *ctx, loom_engine_t *engine, uint64_t name)
{
    return NULL;
}

static int fuzz_engine_create(uint64_t name, fuzz_world_t *w, loom_engine_t **engine_p)
{
    static const loom_eager_phase_t phases[] = {{256, 8, 200}, {1024, 8, 960}};
    loom_engine_config_t config;

    memset(&config, 0, sizeof(config));
    config.rails                = "tcp:lo"; /* loopback only */
    config.max_rails            = 1;
    config.name                 = name;
    config.am_rail              = -1;
    config.eager_mode           = LOOM_EAGER_ON;
    config.eager_phase_count    = 2;
    memcpy(config.eager_phases, phases, sizeof(phases));
    config.eager_ack_timeout_ms = 1000;
    config.recv_cb              = fuzz_recv_cb;
    config.log_cb               = fuzz_log_cb;
    config.peer_find_cb         = fuzz_find_cb;
    config.cb_ctx               = w;
    config.verbose              = LOOM_LOG_DEBUG; /* every log line formatted */
    return loom_engine_create(&config, engine_p);
}

static bool fuzz_connect(loom_engine_t *engine, loom_engine_t *to, loom_peer_t **peer_p)
{
    void *blob;
    size_t length;

    return LOOM_OK == loom_engine_address(to, &blob, &length) &&
           LOOM_OK == loom_peer_connect(engine, blob, length, peer_p);
}

/* Both ways up; a peer that said goodbye is leaving, not connected. */
static bool fuzz_connected(const fuzz_world_t *w)
{
    return w->peer->rails[0].usable && !w->peer->rails[0].failed &&
           w->back->rails[0].usable && !w->back->rails[0].failed &&
           !w->peer->lost && !w->back->lost && !w->peer->said_bye;
}

/* Progress both until cond(w) holds; false after FUZZ_SETUP_NS. */
static bool fuzz_wait(fuzz_world_t *w, bool (*cond)(const fuzz_world_t *w))
{
    uint64_t end = loom_now_ns() + FUZZ_SETUP_NS;

    while (!cond(w)) {
        if (loom_now_ns() > end) {
            return false;
        }
        fuzz_world_progress(w, 1);
    }
    return true;
}

/* self has a receive ring for the fake peer (the one the peer asked for, or
 * one an input asked for in its name: the slot target only needs one) */
static bool fuzz_ring_ready(const fuzz_world_t *w)
{
    return 0 != w->peer->eager.rx.phase && !w->back->eager.tx.pending;
}

static bool fuzz_request_settled(const fuzz_world_t *w)
{
    return !w->back->eager.tx.pending;
}

bool fuzz_world_ring(fuzz_world_t *w)
{
    if (0 != w->peer->eager.rx.phase) {
        return true;
    }
    /* the fake peer asks the ordinary way, for a phase other than the one it
     * thinks it has (an input may have dropped that ring behind its back);
     * an input may also have moved self's idea of the requests served past
     * the peer's: start that anew */
    if (!fuzz_wait(w, fuzz_request_settled)) {
        return false;
    }
    w->peer->eager.rx.served_seq = 0;
    if (LOOM_OK != loom_eager_request(w->back, 1 == loom_eager_tx_phase(w->back) ? 2 : 1)) {
        return false;
    }
    return fuzz_wait(w, fuzz_ring_ready);
}

static bool fuzz_region(loom_engine_t *engine, unsigned access, uint8_t **mem_p,
                        loom_region_t **region_p)
{
    if (0 != posix_memalign((void **)mem_p, 4096, FUZZ_REGION_BYTES)) {
        return false;
    }
    memset(*mem_p, 0, FUZZ_REGION_BYTES);
    return LOOM_OK == loom_mem_register_access(engine, *mem_p, FUZZ_REGION_BYTES, access,
                                               region_p);
}

static void fuzz_op_done(loom_op_t *op, int status)
{
    bool *busy = op->user;

    /* any status is an ending (refusals are what inputs cause), but only one */
    if (!*busy) {
        fprintf(stderr, "fuzz: operation %p (kind %d) completed twice, now with %s\n",
                (void *)op, op->kind, loom_strerror(status));
        abort();
    }
    *busy = false;
}

static loom_op_t *fuzz_world_op(fuzz_world_t *w, loom_op_t *op, bool *busy, bool put)
{
    uint64_t end = loom_now_ns() + FUZZ_SETUP_NS;
    uint64_t remote = (uint64_t)(uintptr_t)w->other_mem;
    int rc;

    if (!*busy) {
        memset(op, 0, sizeof(*op));
        op->cb   = fuzz_op_done;
        op->user = busy;
        *busy    = true;
        rc = put ? loom_put(w->peer, op, w->self_mem, w->self_region, remote, w->other_key,
                            w->key_size, FUZZ_OP_BYTES)
                 : loom_get(w->peer, op, w->get_mem, w->get_region, remote, w->other_key,
                            w->key_size, FUZZ_OP_BYTES);
        if (LOOM_INPROGRESS != rc) {
            *busy = false; /* refused before it started: no callback */
            return NULL;
        }
    }
    while (*busy && LOOM_STAGE_WAIT != op->stage) {
        if (loom_now_ns() > end) {
            return NULL;
        }
        loom_engine_progress(w->self);
    }
    return *busy ? op : NULL;
}

/* Finished (stage DONE) is on the engine's done list until its callback
 * runs, and that list is empty outside progress: an operation finished
 * and not on it has lost its completion (finished twice: the second
 * append cut the list). */
static void fuzz_op_check(const fuzz_world_t *w, const loom_op_t *op, bool busy)
{
    if (busy && LOOM_STAGE_DONE == op->stage && NULL == w->self->done_head) {
        fprintf(stderr, "fuzz: operation %p (kind %d) finished with %s, and its completion "
                "is lost\n", (const void *)op, op->kind, loom_strerror(op->status));
        abort();
    }
}

void fuzz_world_check(const fuzz_world_t *w)
{
    fuzz_op_check(w, &w->put_op, w->put_busy);
    fuzz_op_check(w, &w->get_op, w->get_busy);
}

loom_op_t *fuzz_world_put(fuzz_world_t *w)
{
    return fuzz_world_op(w, &w->put_op, &w->put_busy, true);
}

loom_op_t *fuzz_world_get(fuzz_world_t *w)
{
    return fuzz_world_op(w, &w->get_op, &w->get_busy, false);
}

/* self knows the fake peer's connection (loom_msg_conn_check) */
static bool fuzz_conn_known(const fuzz_world_t *w)
{
    return 0 != w->peer->msg.rx_conn;
}

/* The fake peer's first message goes by AM, before there is a ring: a
 * message naming another connection of it is then asked about. */
static bool fuzz_first_message(fuzz_world_t *w)
{
    struct iovec iov = {"hello", 5};
    uint64_t end = loom_now_ns() + FUZZ_SETUP_NS;
    int rc;

    while (LOOM_ERR_AGAIN == (rc = loom_am_send(w->back, 1, &iov, 1, NULL)) &&
           loom_now_ns() < end) {
        fuzz_world_progress(w, 1);
    }
    return LOOM_OK == rc && fuzz_wait(w, fuzz_conn_known);
}

bool fuzz_world_open(fuzz_world_t *w)
{
    unsigned long resets = w->resets, delivered = w->delivered;
    int rc;

    memset(w, 0, sizeof(*w));
    w->resets    = resets;
    w->delivered = delivered;
    rc = fuzz_engine_create(FUZZ_SELF_NAME, w, &w->self);
    if (LOOM_OK == rc) {
        rc = fuzz_engine_create(FUZZ_PEER_NAME, w, &w->other);
    }
    if (LOOM_OK != rc) {
        fprintf(stderr, "fuzz: cannot create an engine on tcp:lo: %s\n", loom_strerror(rc));
        return false;
    }
    if (!fuzz_connect(w->self, w->other, &w->peer) ||
        !fuzz_connect(w->other, w->self, &w->back) || !fuzz_wait(w, fuzz_connected)) {
        fprintf(stderr, "fuzz: the two engines did not connect over tcp:lo\n");
        return false;
    }
    if (!fuzz_first_message(w)) {
        fprintf(stderr, "fuzz: the fake peer's first message did not arrive\n");
        return false;
    }
    if (!fuzz_region(w->self, LOOM_ACCESS_ALL, &w->self_mem, &w->self_region) ||
        !fuzz_region(w->self, LOOM_ACCESS_LOCAL_WRITE, &w->get_mem, &w->get_region) ||
        !fuzz_region(w->other, LOOM_ACCESS_ALL, &w->other_mem, &w->other_region)) {
        fprintf(stderr, "fuzz: cannot register memory\n");
        return false;
    }
    w->key_size = loom_key_size(w->other);
    if (w->key_size > sizeof(w->other_key) || w->key_size != loom_key_size(w->self) ||
        LOOM_OK != loom_key_pack(w->other_region, w->other_key, w->key_size)) {
        fprintf(stderr, "fuzz: cannot pack a key\n");
        return false;
    }
    if (!fuzz_world_ring(w)) {
        fprintf(stderr, "fuzz: no eager ring between the two engines\n");
        return false;
    }
    return true;
}

/* Nothing of either engine under way, or nothing more can come (a rail
 * went down). */
static bool fuzz_settled(const fuzz_world_t *w)
{
    return (0 == loom_engine_outstanding(w->self) && 0 == loom_engine_outstanding(w->other)) ||
           !w->peer->rails[0].usable || !w->back->rails[0].usable;
}

void fuzz_world_close(fuzz_world_t *w)
{
    /* a disconnect waits up to 2 s for what is under way, and the answers
     * come only with the other engine's progress: let them come first */
    if (NULL != w->peer && NULL != w->back) {
        (void)fuzz_wait(w, fuzz_settled);
    }
    /* each engine ends its operations and releases its regions */
    if (NULL != w->self) {
        loom_engine_destroy(w->self);
    }
    if (NULL != w->other) {
        loom_engine_destroy(w->other);
    }
    free(w->self_mem);
    free(w->get_mem);
    free(w->other_mem);
    w->self = w->other = NULL;
    w->peer = w->back = NULL;
    w->self_mem = w->get_mem = w->other_mem = NULL;
    w->self_region = w->get_region = w->other_region = NULL;
}

void fuzz_world_progress(fuzz_world_t *w, int rounds)
{
    int i;

    for (i = 0; i < rounds; ++i) {
        loom_engine_progress(w->self);
        loom_engine_progress(w->other);
    }
}

void fuzz_world_heal(fuzz_world_t *w)
{
    if (loom_peer_lookup(w->self, FUZZ_PEER_NAME) != w->peer || !fuzz_connected(w)) {
        ++w->resets;
        fuzz_world_close(w);
        if (!fuzz_world_open(w)) {
            fprintf(stderr, "fuzz: cannot set the engines up again\n");
            abort();
        }
    }
    /* traffic of self's own under way, as in any real engine, for the
     * input to meet */
    (void)fuzz_world_put(w);
    (void)fuzz_world_get(w);
}
