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

static bool fuzz_connected(const fuzz_world_t *w)
{
    return w->peer->rails[0].usable && !w->peer->rails[0].failed &&
           w->back->rails[0].usable && !w->back->rails[0].failed &&
           !w->peer->lost && !w->back->lost;
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

static bool fuzz_region(loom_engine_t *engine, uint8_t **mem_p, loom_region_t **region_p)
{
    if (0 != posix_memalign((void **)mem_p, 4096, FUZZ_REGION_BYTES)) {
        return false;
    }
    memset(*mem_p, 0, FUZZ_REGION_BYTES);
    return LOOM_OK == loom_mem_register(engine, *mem_p, FUZZ_REGION_BYTES, region_p);
}

bool fuzz_world_open(fuzz_world_t *w)
{
    unsigned long resets = w->resets;
    int rc;

    memset(w, 0, sizeof(*w));
    w->resets = resets;
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
    if (!fuzz_region(w->self, &w->self_mem, &w->self_region) ||
        !fuzz_region(w->other, &w->other_mem, &w->other_region)) {
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

void fuzz_world_close(fuzz_world_t *w)
{
    if (NULL != w->self_region) {
        loom_mem_deregister(w->self_region);
    }
    if (NULL != w->other_region) {
        loom_mem_deregister(w->other_region);
    }
    if (NULL != w->self) {
        loom_engine_destroy(w->self);
    }
    if (NULL != w->other) {
        loom_engine_destroy(w->other);
    }
    free(w->self_mem);
    free(w->other_mem);
    w->self = w->other = NULL;
    w->self_mem = w->other_mem = NULL;
    w->self_region = w->other_region = NULL;
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
    if (loom_peer_lookup(w->self, FUZZ_PEER_NAME) == w->peer && fuzz_connected(w)) {
        return;
    }
    ++w->resets;
    fuzz_world_close(w);
    if (!fuzz_world_open(w)) {
        fprintf(stderr, "fuzz: cannot set the engines up again\n");
        abort();
    }
}
