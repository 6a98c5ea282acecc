/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Set-up of the wire fuzzer's engines (see fuzz_world.h).
 */
#include "fuzz_world.h"
#include "fuzz_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A set-up step that has not finished in this long will not. */
#define FUZZ_SETUP_NS 5000000000ull
/* Self's progress calls for an operation to be sent: one still queued then
 * waits for the fake peer (credits, a window), whose progress comes after
 * the input; the input meets it queued. */
#define FUZZ_SEND_ROUNDS 4
/* Bound on the progress calls that let both engines settle after a pair
 * closed (each finds something to do). */
#define FUZZ_DRAIN_ROUNDS 100
/* Attempts at connecting the pair again after an input broke it. */
#define FUZZ_OPEN_ATTEMPTS 5

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
    ++w->delivered; /* of any engine: the fake peers get none but may */
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

/* The rails every engine opens: FUZZ_RAILS_LIST in the environment (the
 * rxe guest's rc_verbs, whose serves go zero-copy where tcp's are checked
 * writes), else loopback only. */
static const char *fuzz_rails(void)
{
    const char *rails = getenv("FUZZ_RAILS_LIST");

    return (NULL != rails && '\0' != rails[0]) ? rails : "tcp:lo,tcp:lo";
}

static int fuzz_engine_create(uint64_t name, fuzz_world_t *w, loom_engine_t **engine_p)
{
    static const loom_eager_phase_t phases[] = {{256, 8, 200}, {1024, 8, 960}};
    loom_engine_config_t config;

    memset(&config, 0, sizeof(config));
    config.rails                = fuzz_rails();
    config.max_rails            = FUZZ_RAILS;
    config.rails_repeat         = true;
    config.stripe_threshold     = 16384; /* pushes of the region stripe */
    config.stripe_chunk         = 4096;
    config.name                 = name;
    config.am_rail              = -1;
    /* FUZZ_CONNECT_TO_EP=1: the rails wire up as rails without
     * connect-to-interface do (endpoint addresses exchanged by CONNECT, a
     * rail that comes back joined again by rejoin_ep.c) */
    config.force_connect_to_ep  = NULL != getenv("FUZZ_CONNECT_TO_EP");
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
static bool fuzz_connected(const fuzz_fake_t *f)
{
    return f->peer->rails[0].usable && !f->peer->rails[0].failed &&
           f->back->rails[0].usable && !f->back->rails[0].failed &&
           !f->peer->lost && !f->back->lost && !f->peer->said_bye;
}

/* Progress every engine until cond(f) holds; false after FUZZ_SETUP_NS. */
static bool fuzz_wait(fuzz_fake_t *f, bool (*cond)(const fuzz_fake_t *f))
{
    uint64_t end = loom_now_ns() + FUZZ_SETUP_NS;

    while (!cond(f)) {
        if (loom_now_ns() > end) {
            return false;
        }
        fuzz_world_progress(f->world, 1);
    }
    return true;
}

/* self has a receive ring for the fake peer (the one the peer asked for, or
 * one an input asked for in its name: the slot target only needs one) */
static bool fuzz_ring_ready(const fuzz_fake_t *f)
{
    return 0 != f->peer->eager.rx.phase && !f->back->eager.tx.pending;
}

static bool fuzz_request_settled(const fuzz_fake_t *f)
{
    return !f->back->eager.tx.pending;
}

bool fuzz_world_ring(fuzz_fake_t *f)
{
    if (0 != f->peer->eager.rx.phase) {
        return true;
    }
    /* the fake peer asks the ordinary way, for a phase other than the one it
     * thinks it has (an input may have dropped that ring behind its back);
     * an input may also have moved self's idea of the requests served past
     * the peer's: start that anew */
    if (!fuzz_wait(f, fuzz_request_settled)) {
        return false;
    }
    f->peer->eager.rx.served_seq = 0;
    if (LOOM_OK != loom_eager_request(f->back, 1 == loom_eager_tx_phase(f->back) ? 2 : 1)) {
        return false;
    }
    return fuzz_wait(f, fuzz_ring_ready);
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
    fuzz_op_t *fop = op->user;

    /* any status is an ending (refusals are what inputs cause), but only one */
    if (!fop->busy) {
        fprintf(stderr, "fuzz: operation %p (kind %d) completed twice, now with %s\n",
                (void *)op, op->kind, loom_strerror(status));
        abort();
    }
    fop->busy = false;
}

static loom_op_t *fuzz_world_op(fuzz_fake_t *f, fuzz_op_t *fop, bool put)
{
    fuzz_world_t *w = f->world;
    uint64_t remote = (uint64_t)(uintptr_t)f->mem;
    uint8_t *local = w->get_mem + (size_t)f->index * FUZZ_OP_BYTES;
    loom_op_t *op = &fop->op;
    int rc, rounds;

    if (!fop->busy) {
        memset(op, 0, sizeof(*op));
        op->cb    = fuzz_op_done;
        op->user  = fop;
        fop->busy = true;
        rc = put ? loom_put(f->peer, op, w->self_mem, w->self_region, remote, f->key,
                            w->key_size, FUZZ_OP_BYTES)
                 : loom_get(f->peer, op, local, w->get_region, remote, f->key, w->key_size,
                            FUZZ_OP_BYTES);
        if (LOOM_INPROGRESS != rc) {
            fop->busy = false; /* refused before it started: no callback */
            return NULL;
        }
    }
    for (rounds = 0; fop->busy && LOOM_STAGE_WAIT != op->stage && rounds < FUZZ_SEND_ROUNDS;
         ++rounds) {
        loom_engine_progress(w->self);
    }
    return (fop->busy && LOOM_STAGE_WAIT == op->stage) ? op : NULL;
}

/* Finished (stage DONE) is on the engine's done list until its callback
 * runs, and that list is empty outside progress: an operation finished
 * and not on it has lost its completion (finished twice: the second
 * append broke the list). */
static void fuzz_op_check(const fuzz_world_t *w, const fuzz_op_t *fop)
{
    const loom_op_t *op = &fop->op;

    if (fop->busy && LOOM_STAGE_DONE == op->stage && ucs_list_is_empty(&w->self->done)) {
        fprintf(stderr, "fuzz: operation %p (kind %d) finished with %s, and its completion "
                "is lost\n", (const void *)op, op->kind, loom_strerror(op->status));
        abort();
    }
}

void fuzz_world_check(const fuzz_world_t *w)
{
    int i;

    for (i = 0; i < FUZZ_PEERS; ++i) {
        fuzz_op_check(w, &w->fakes[i].put);
        fuzz_op_check(w, &w->fakes[i].get);
    }
}

loom_op_t *fuzz_world_put(fuzz_fake_t *f)
{
    return fuzz_world_op(f, &f->put, true);
}

loom_op_t *fuzz_world_get(fuzz_fake_t *f)
{
    return fuzz_world_op(f, &f->get, false);
}

void fuzz_world_ops(fuzz_world_t *w)
{
    int i;

    for (i = 0; i < FUZZ_PEERS; ++i) {
        (void)fuzz_world_put(&w->fakes[i]);
        (void)fuzz_world_get(&w->fakes[i]);
    }
}

fuzz_fake_t *fuzz_world_fake(fuzz_world_t *w, uint64_t name)
{
    int i;

    for (i = 0; i < FUZZ_PEERS; ++i) {
        if (w->fakes[i].name == name) {
            return &w->fakes[i];
        }
    }
    return &w->fakes[(name >> 1) % FUZZ_PEERS];
}

/* ---- the fake peer holds self's put and get ------------------------------------------ */

/* Answered at once, the put and the get would end with every input and be
 * sent again for the next, four messages more per input; held, they stay
 * under way until an input answers them or the pair closes.  Only the
 * latest message of each is held: one of an operation that ended is
 * answered by nobody. */

/* The id self's message for the operation carries: a push request's
 * request id, a checked write's write id; 0 before it is sent. */
static uint64_t fuzz_op_msg_id(const fuzz_op_t *fop)
{
    return (LOOM_OP_PUSH_REQ == fop->op.kind) ? fop->op.id : fop->op.write_id;
}

static bool fuzz_hold(fuzz_op_t *fop, uint64_t msg_id, const void *data, size_t length)
{
    if (!fop->busy || 0 == msg_id || msg_id != fuzz_op_msg_id(fop) ||
        length > sizeof(fop->held)) {
        return false;
    }
    memcpy(fop->held, data, length);
    fop->held_id     = msg_id;
    fop->held_length = length;
    return true;
}

/* A fake peer's handlers of checked writes and push requests (arg: its
 * rail): those of self's own operations to it are held, the others go on. */
static ucs_status_t fuzz_peer_put_recv(void *arg, void *data, size_t length, unsigned flags)
{
    fuzz_peer_rail_t *rail = arg;
    fuzz_fake_t *f = rail->fake;
    loom_wire_put_t put;

    if (length >= sizeof(put)) {
        memcpy(&put, data, sizeof(put));
        if (fuzz_hold(&f->put, loom_from_le64(put.write_id), data, length)) {
            return UCS_OK;
        }
    }
    return loom_checked_put_recv(&f->engine->rails[rail->index], data, length, flags);
}

static ucs_status_t fuzz_peer_push_req_recv(void *arg, void *data, size_t length,
                                            unsigned flags)
{
    fuzz_peer_rail_t *rail = arg;
    fuzz_fake_t *f = rail->fake;
    loom_wire_push_req_t req;

    if (length >= sizeof(req)) {
        memcpy(&req, data, sizeof(req));
        if (fuzz_hold(&f->get, loom_from_le64(req.request_id), data, length)) {
            return UCS_OK;
        }
    }
    return loom_push_req_recv(&f->engine->rails[rail->index], data, length, flags);
}

static bool fuzz_peer_hold(fuzz_fake_t *f)
{
    loom_engine_t *engine = f->engine;
    fuzz_peer_rail_t *rail;
    int i;

    for (i = 0; i < engine->rail_count && i < FUZZ_RAILS; ++i) {
        rail        = &f->rails[i];
        rail->fake  = f;
        rail->index = i;
        if (UCS_OK != uct_iface_set_am_handler(engine->rails[i].iface, LOOM_WIRE_PUT,
                                               fuzz_peer_put_recv, rail, 0) ||
            UCS_OK != uct_iface_set_am_handler(engine->rails[i].iface, LOOM_WIRE_PUSH_REQ,
                                               fuzz_peer_push_req_recv, rail, 0)) {
            return false;
        }
    }
    return true;
}

/* The fake peer answers what it holds of an operation still under way. */
static void fuzz_release(fuzz_fake_t *f, fuzz_op_t *fop, uct_am_callback_t recv)
{
    size_t length = fop->held_length;

    fop->held_length = 0;
    if (fop->busy && 0 != length && fop->held_id == fuzz_op_msg_id(fop)) {
        (void)recv(&f->engine->rails[0], fop->held, length, 0);
    }
}

/* self knows the fake peer's connection (loom_msg_conn_check) */
static bool fuzz_conn_known(const fuzz_fake_t *f)
{
    return 0 != f->peer->msg.rx_conn;
}

/* The fake peer's first message goes by AM, before there is a ring: a
 * message naming another connection of it is then asked about. */
static bool fuzz_first_message(fuzz_fake_t *f)
{
    struct iovec iov = {"hello", 5};
    uint64_t end = loom_now_ns() + FUZZ_SETUP_NS;
    int rc;

    while (LOOM_ERR_AGAIN == (rc = loom_am_send(f->back, 1, &iov, 1, NULL)) &&
           loom_now_ns() < end) {
        fuzz_world_progress(f->world, 1);
    }
    if (LOOM_OK != rc) {
        fprintf(stderr, "fuzz: the fake peer could not send its first message: %s\n",
                loom_strerror(rc));
        return false;
    }
    return fuzz_wait(f, fuzz_conn_known);
}

/* Connected both ways, the fake peer's connection known, a ring of its in
 * self. */
static bool fuzz_pair_open(fuzz_fake_t *f)
{
    loom_engine_t *self = f->world->self;

    if (!fuzz_connect(self, f->engine, &f->peer) ||
        !fuzz_connect(f->engine, self, &f->back) || !fuzz_wait(f, fuzz_connected)) {
        fprintf(stderr, "fuzz: the two engines did not connect over %s\n", fuzz_rails());
        return false;
    }
    if (!fuzz_first_message(f)) {
        fprintf(stderr, "fuzz: the fake peer's first message did not arrive\n");
        return false;
    }
    if (!fuzz_world_ring(f)) {
        fprintf(stderr, "fuzz: no eager ring between the two engines\n");
        return false;
    }
    return true;
}

/* A progress callback on one engine's worker: the other engine progresses
 * with it, as a process of its own would. */
static unsigned fuzz_progress_other(void *arg)
{
    return (unsigned)loom_engine_progress(arg);
}

/* Both leave, self first.  A disconnect says goodbye and flushes, and over
 * tcp a flush completes only with the other side's answer: each engine
 * progresses the other meanwhile, or every goodbye would wait out the
 * disconnect's 2 s.  Self's endpoints closed, UCT keeps the fake peer's
 * receiving half of their connection: the fake peer is told it broke, as
 * its process would see it.  Both then progress until idle, so that each
 * side's UCT has read the end of every connection closed: UCT tcp pairs an
 * endpoint made later with a connection the peer made that has the same
 * sequence number, dead or not, and a dead one left the endpoint in a
 * state whose destroy aborts (tcp_cm.c:408).  The numbers go out of step
 * when self answers a forged probe with a fresh endpoint.  Self's put and
 * get have ended by then: one under way still never will. */
static void fuzz_pair_close(fuzz_fake_t *f)
{
    uct_worker_cb_id_t self_cb = UCS_CALLBACKQ_ID_NULL, other_cb = UCS_CALLBACKQ_ID_NULL;
    loom_engine_t *self = f->world->self, *other = f->engine;
    int rounds, i;

    uct_worker_progress_register_safe(self->worker, fuzz_progress_other, other, 0, &self_cb);
    uct_worker_progress_register_safe(other->worker, fuzz_progress_other, self, 0, &other_cb);
    fuzz_release(f, &f->put, loom_checked_put_recv);
    fuzz_release(f, &f->get, loom_push_req_recv);
    if (NULL != f->peer) { /* NULL: an attempt at opening failed before it */
        loom_peer_disconnect(f->peer);
    }
    for (i = 0; NULL != f->back && i < other->rail_count; ++i) {
        if (NULL != f->back->rails[i].ep) {
            (void)loom_rail_error(&other->rails[i], f->back->rails[i].ep,
                                  UCS_ERR_CONNECTION_RESET);
        }
    }
    if (NULL != f->back) {
        loom_peer_disconnect(f->back);
    }
    for (rounds = 0; rounds < FUZZ_DRAIN_ROUNDS; ++rounds) {
        if (0 == loom_engine_progress(self)) { /* the other's with it */
            break;
        }
    }
    uct_worker_progress_unregister_safe(self->worker, &self_cb);
    uct_worker_progress_unregister_safe(other->worker, &other_cb);
    f->peer = f->back = NULL;
    if (f->put.busy || f->get.busy) {
        fprintf(stderr, "fuzz: self's %s never completed, its peer %#llx disconnected\n",
                f->put.busy ? "put" : "get", (unsigned long long)f->name);
        abort();
    }
}

/* A fake peer's engine, handlers, region and key; its pair with self. */
static bool fuzz_fake_open(fuzz_world_t *w, int index)
{
    fuzz_fake_t *f = &w->fakes[index];
    int rc;

    f->world = w;
    f->index = index;
    f->name  = fuzz_peer_name((unsigned)index);
    rc = fuzz_engine_create(f->name, w, &f->engine);
    if (LOOM_OK != rc) {
        fprintf(stderr, "fuzz: cannot create an engine on %s: %s\n", fuzz_rails(),
                loom_strerror(rc));
        return false;
    }
    if (!fuzz_peer_hold(f)) {
        fprintf(stderr, "fuzz: cannot set the fake peer's handlers\n");
        return false;
    }
    if (!fuzz_region(f->engine, LOOM_ACCESS_ALL, &f->mem, &f->region)) {
        fprintf(stderr, "fuzz: cannot register memory\n");
        return false;
    }
    if (w->key_size != loom_key_size(f->engine) ||
        LOOM_OK != loom_key_pack(f->region, f->key, w->key_size)) {
        fprintf(stderr, "fuzz: cannot pack a key\n");
        return false;
    }
    return fuzz_pair_open(f);
}

bool fuzz_world_open(fuzz_world_t *w)
{
    int rc, i;

    rc = fuzz_engine_create(FUZZ_SELF_NAME, w, &w->self);
    if (LOOM_OK != rc) {
        fprintf(stderr, "fuzz: cannot create an engine on %s: %s\n", fuzz_rails(),
                loom_strerror(rc));
        return false;
    }
    if (!fuzz_region(w->self, LOOM_ACCESS_ALL, &w->self_mem, &w->self_region) ||
        !fuzz_region(w->self, LOOM_ACCESS_LOCAL_WRITE, &w->get_mem, &w->get_region)) {
        fprintf(stderr, "fuzz: cannot register memory\n");
        return false;
    }
    if (LOOM_OK != loom_counters_open(w->self, FUZZ_COUNTERS, &w->counter_first)) {
        fprintf(stderr, "fuzz: cannot open counters\n");
        return false;
    }
    w->key_size = loom_key_size(w->self);
    if (w->key_size > LOOM_OP_MSG_MAX) {
        fprintf(stderr, "fuzz: keys of %zu bytes do not fit\n", w->key_size);
        return false;
    }
    for (i = 0; i < FUZZ_PEERS; ++i) {
        if (!fuzz_fake_open(w, i)) {
            return false;
        }
    }
    w->from = &w->fakes[0];
    return true;
}

void fuzz_world_progress(fuzz_world_t *w, int rounds)
{
    int i, k;

    for (i = 0; i < rounds; ++i) {
        loom_engine_progress(w->self);
        for (k = 0; k < FUZZ_PEERS; ++k) {
            if (NULL != w->fakes[k].engine) {
                loom_engine_progress(w->fakes[k].engine);
            }
        }
    }
}

static void fuzz_fake_heal(fuzz_fake_t *f)
{
    int attempt;

    if (fuzz_connected(f)) {
        return;
    }
    ++f->world->resets;
    fuzz_pair_close(f);
    /* A new connection may fail on its own on a loaded machine (UCT's tcp
     * reported "Endpoint timeout" for one), which loom rightly takes as the
     * network's signal: connect again a few times before blaming the input. */
    for (attempt = 1; !fuzz_pair_open(f); ++attempt) {
        if (attempt == FUZZ_OPEN_ATTEMPTS) {
            fprintf(stderr, "fuzz: cannot connect the engines again (%d attempts)\n",
                    attempt);
            abort();
        }
        fprintf(stderr, "fuzz: connecting again after a failed attempt\n");
        fuzz_pair_close(f);
    }
}

void fuzz_world_heal(fuzz_world_t *w)
{
    int i;

    for (i = 0; i < FUZZ_PEERS; ++i) {
        fuzz_fake_heal(&w->fakes[i]);
    }
}
