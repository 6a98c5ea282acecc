/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Address blobs and engine configuration, in one process with two engines
 * on tcp:lo.  Malformed blobs (truncated, extended, wrong magic or version,
 * total_length mismatch, rail_count 0 or > LOOM_MAX_RAILS, name 0, names not
 * NUL terminated, address lengths past the end) are refused with an error,
 * leave no peer behind and do not crash; blobs that parse but name no usable
 * rail are refused as unreachable.  Bad configurations (rail lists with
 * empty entries among them) are refused by loom_engine_create, with an
 * error that says what is wrong.  Then a valid blob connects, and AM, put and get work
 * between the two engines.
 *
 * No variant changes the address bytes themselves: a garbled tcp device
 * address could name a host that is not this one.
 */
#include "unit_harness.h"
#include "engine/loom_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_A 0x11u
#define NAME_B 0x22u

static loom_peer_t *const UNTOUCHED = (loom_peer_t *)(uintptr_t)0x5a5a5a5a;

static void expect_refused(unit_ctx_t *a, const void *blob, size_t length, int want,
                           const char *what)
{
    loom_peer_t *peer = UNTOUCHED;
    int rc = loom_peer_connect(a->engine, blob, length, &peer);

    CHECK_MSG(rc == want, "%s: loom_peer_connect returned %d (%s), expected %d (%s)",
              what, rc, loom_strerror(rc), want, loom_strerror(want));
    CHECK_MSG(UNTOUCHED == peer, "%s: the peer pointer was written", what);
    CHECK_MSG(0 == loom_hash_count(&a->engine->peers), "%s: a peer was left in the table", what);
    CHECK_UEQ(loom_engine_outstanding(a->engine), 0);
}

static void set32(uint8_t *p, uint32_t v)
{
    v = loom_le32(v);
    memcpy(p, &v, sizeof(v));
}

static void set16(uint8_t *p, uint16_t v)
{
    v = loom_le16(v);
    memcpy(p, &v, sizeof(v));
}

static void blob_tests(unit_ctx_t *a, const uint8_t *good, size_t len)
{
    size_t hdr = sizeof(loom_wire_addr_t), rail_at = hdr;
    size_t dev_len_at = rail_at + offsetof(loom_wire_rail_addr_t, dev_addr_len);
    size_t if_len_at  = rail_at + offsetof(loom_wire_rail_addr_t, iface_addr_len);
    uint8_t *b = unit_alloc(len + 64);
    uint16_t dev_len;
    size_t cut;

    CHECK(len > hdr + sizeof(loom_wire_rail_addr_t));
    a->log_quiet = true;

    expect_refused(a, NULL, len, LOOM_ERR_INVALID, "NULL blob");
    /* every truncation, including the empty blob */
    for (cut = 0; cut < len; ++cut) {
        memcpy(b, good, cut);
        expect_refused(a, b, cut, LOOM_ERR_INVALID, "truncated blob");
    }
    /* the same, with total_length saying the truncated length */
    for (cut = hdr; cut < len; ++cut) {
        memcpy(b, good, cut);
        set32(b + offsetof(loom_wire_addr_t, total_length), (uint32_t)cut);
        expect_refused(a, b, cut, LOOM_ERR_INVALID, "truncated blob, length adjusted");
    }
    memcpy(b, good, len);
    b[len] = 0;
    expect_refused(a, b, len + 1, LOOM_ERR_INVALID, "one byte appended");
    set32(b + offsetof(loom_wire_addr_t, total_length), (uint32_t)len + 1);
    expect_refused(a, b, len + 1, LOOM_ERR_INVALID, "one byte appended, length adjusted");

#define MUTATE(_what, _want, _stmt) do { \
        memcpy(b, good, len); \
        _stmt; \
        expect_refused(a, b, len, (_want), (_what)); \
    } while (0)

    MUTATE("wrong magic", LOOM_ERR_INVALID,
           set32(b + offsetof(loom_wire_addr_t, magic), LOOM_WIRE_ADDR_MAGIC ^ 1));
    MUTATE("magic 0", LOOM_ERR_INVALID, set32(b, 0));
    MUTATE("version 0", LOOM_ERR_INVALID, b[offsetof(loom_wire_addr_t, version)] = 0);
    MUTATE("version + 1", LOOM_ERR_INVALID,
           b[offsetof(loom_wire_addr_t, version)] = LOOM_WIRE_VERSION + 1);
    MUTATE("total_length + 1", LOOM_ERR_INVALID,
           set32(b + offsetof(loom_wire_addr_t, total_length), (uint32_t)len + 1));
    MUTATE("total_length - 1", LOOM_ERR_INVALID,
           set32(b + offsetof(loom_wire_addr_t, total_length), (uint32_t)len - 1));
    MUTATE("total_length 0", LOOM_ERR_INVALID,
           set32(b + offsetof(loom_wire_addr_t, total_length), 0));
    MUTATE("total_length huge", LOOM_ERR_INVALID,
           set32(b + offsetof(loom_wire_addr_t, total_length), 0xffffffffu));
    MUTATE("rail_count 0", LOOM_ERR_INVALID, b[offsetof(loom_wire_addr_t, rail_count)] = 0);
    MUTATE("rail_count 2 (one in the blob)", LOOM_ERR_INVALID,
           b[offsetof(loom_wire_addr_t, rail_count)] = 2);
    MUTATE("rail_count LOOM_MAX_RAILS + 1", LOOM_ERR_INVALID,
           b[offsetof(loom_wire_addr_t, rail_count)] = LOOM_MAX_RAILS + 1);
    MUTATE("rail_count 255", LOOM_ERR_INVALID,
           b[offsetof(loom_wire_addr_t, rail_count)] = 255);
    MUTATE("process name 0", LOOM_ERR_INVALID,
           memset(b + offsetof(loom_wire_addr_t, name), 0, 8));
    MUTATE("tl_name not NUL terminated", LOOM_ERR_INVALID,
           memset(b + rail_at + offsetof(loom_wire_rail_addr_t, tl_name), 'A',
                  LOOM_WIRE_NAME_MAX));
    MUTATE("dev_name not NUL terminated", LOOM_ERR_INVALID,
           memset(b + rail_at + offsetof(loom_wire_rail_addr_t, dev_name), 'B',
                  LOOM_WIRE_NAME_MAX));
    MUTATE("dev_addr_len past the end", LOOM_ERR_INVALID, set16(b + dev_len_at, 0xffff));
    MUTATE("iface_addr_len past the end", LOOM_ERR_INVALID, set16(b + if_len_at, 0xffff));
    memcpy(&dev_len, good + dev_len_at, sizeof(dev_len));
    dev_len = loom_from_le16(dev_len);
    MUTATE("dev_addr_len one short (bytes left over)", LOOM_ERR_INVALID,
           set16(b + dev_len_at, (uint16_t)(dev_len - 1)));
    MUTATE("dev_addr_len one over", LOOM_ERR_INVALID,
           set16(b + dev_len_at, (uint16_t)(dev_len + 1)));

    {
        /* LOOM_MAX_RAILS + 1 complete rail records: refused for the count alone */
        size_t rail_len = len - hdr, big = hdr + (LOOM_MAX_RAILS + 1) * rail_len, k;
        uint8_t *many = unit_alloc(big);

        memcpy(many, good, len);
        for (k = 1; k <= LOOM_MAX_RAILS; ++k) {
            memcpy(many + hdr + k * rail_len, good + hdr, rail_len);
        }
        many[offsetof(loom_wire_addr_t, rail_count)] = LOOM_MAX_RAILS + 1;
        set32(many + offsetof(loom_wire_addr_t, total_length), (uint32_t)big);
        expect_refused(a, many, big, LOOM_ERR_INVALID,
                       "LOOM_MAX_RAILS + 1 rails, all present");
        free(many);
    }

    /* Well formed, but no rail of ours matches: unreachable, no endpoint made. */
    MUTATE("a transport we do not run", LOOM_ERR_UNREACH,
           memcpy(b + rail_at + offsetof(loom_wire_rail_addr_t, tl_name), "xyz", 4));
    MUTATE("the rail connects to endpoints, ours to interfaces", LOOM_ERR_UNREACH,
           set32(b + rail_at + offsetof(loom_wire_rail_addr_t, flags),
                 LOOM_WIRE_RAIL_CONNECT_TO_EP));
#undef MUTATE
    CHECK(unit_log_contains(a, "refused a malformed address blob"));
    CHECK(unit_log_contains(a, "unreachable on every rail"));
    a->log_quiet = false;
    free(b);
}

/* The latest error a refused engine logged. */
static char config_log[512];

static void config_log_cb(void *arg, int level, const char *msg)
{
    (void)arg;
    if (LOOM_LOG_ERROR == level) {
        snprintf(config_log, sizeof(config_log), "%s", msg);
    }
}

static void config_tests(unit_ctx_t *ctx)
{
    static char too_long[2048];
    static const struct {
        const char *rails;
        uint64_t    name;
        int         want;
        const char *log;  /* in the error logged, NULL: none */
        int         am_rail;
    } bad[] = {
        {NULL, 5, LOOM_ERR_INVALID, NULL, 0},
        {"tcp:lo", 0, LOOM_ERR_INVALID, NULL, 0},          /* name 0 */
        {"", 5, LOOM_ERR_INVALID, "btl_loom_rails is empty", 0},
        {"tcp", 5, LOOM_ERR_INVALID, "not of the form transport:device", 0},
        {":lo", 5, LOOM_ERR_INVALID, "not of the form transport:device", 0},
        {"tcp:", 5, LOOM_ERR_INVALID, "not of the form transport:device", 0},
        {"tcp:lo,tcp:lo", 5, LOOM_ERR_INVALID, "named twice", 0},
        {"nosuchtl:lo", 5, LOOM_ERR_NOT_FOUND, "no UCT transport 'nosuchtl'", 0},
        {"tcp:nosuchdev", 5, LOOM_ERR_NOT_FOUND, "no UCT transport 'tcp' on device", 0},
        {"tcp:lo,nosuchtl:lo", 5, LOOM_ERR_NOT_FOUND, "no UCT transport 'nosuchtl'", 0},
        /* stray commas: no rails at all, or fewer than meant */
        {",", 5, LOOM_ERR_INVALID, "btl_loom_rails=\",\": entry 1 is empty", 0},
        {",,", 5, LOOM_ERR_INVALID, "entry 1 is empty", 0},
        {"tcp:lo,,", 5, LOOM_ERR_INVALID, "btl_loom_rails=\"tcp:lo,,\": entry 2 is empty", 0},
        {"tcp:lo,", 5, LOOM_ERR_INVALID, "entry 2 is empty", 0},
        {",tcp:lo", 5, LOOM_ERR_INVALID, "entry 1 is empty", 0},
        {too_long, 5, LOOM_ERR_INVALID, "btl_loom_rails: 2047 characters, at most 1023", 0},
        {"tcp:lo", 5, LOOM_ERR_INVALID, "btl_loom_am_rail=1 names no rail", 1},
    };
    loom_engine_config_t config;
    loom_engine_t *engine;
    size_t i;

    memset(too_long, 'x', sizeof(too_long) - 1);
    engine = (loom_engine_t *)UNTOUCHED;
    CHECK_RC(loom_engine_create(NULL, &engine), LOOM_ERR_INVALID);
    (void)ctx;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        const char *rails = (NULL == bad[i].rails) ? "(null)" : bad[i].rails;
        int rc;

        memset(&config, 0, sizeof(config));
        config.rails   = bad[i].rails;
        config.name    = bad[i].name;
        config.am_rail = bad[i].am_rail;
        config.log_cb  = config_log_cb;
        config_log[0]  = '\0';
        engine = (loom_engine_t *)UNTOUCHED;
        rc = loom_engine_create(&config, &engine);
        CHECK_MSG(rc == bad[i].want, "rails \"%.40s\" name %llu: loom_engine_create "
                  "returned %d (%s), expected %d (%s)", rails,
                  (unsigned long long)bad[i].name, rc, loom_strerror(rc), bad[i].want,
                  loom_strerror(bad[i].want));
        CHECK(engine == (loom_engine_t *)UNTOUCHED);
        CHECK_MSG(NULL == bad[i].log || NULL != strstr(config_log, bad[i].log),
                  "rails \"%.40s\": logged \"%s\", expected \"%s\" in it", rails,
                  config_log, bad[i].log);
    }
}

static void info_tests(unit_ctx_t *a, unit_ctx_t *b)
{
    const loom_rail_info_t *info = loom_engine_rail_info(a->engine, 0);

    CHECK_EQ(loom_engine_rail_count(a->engine), 1);
    CHECK(NULL != info);
    CHECK(0 == strcmp(info->tl_name, "tcp"));
    CHECK(0 == strcmp(info->dev_name, "lo"));
    CHECK(info->has_put);
    CHECK(!info->has_get); /* tcp: gets by push */
    CHECK(!info->connect_to_ep);
    CHECK(info->am_max == loom_engine_am_max(a->engine));
    CHECK(NULL == loom_engine_rail_info(a->engine, 1));
    CHECK(NULL == loom_engine_rail_info(a->engine, -1));
    CHECK(NULL == loom_engine_rail_stats(a->engine, 1));
    CHECK(NULL == loom_engine_rail_stats(a->engine, -1));
    CHECK(0 != loom_engine_epoch(a->engine));
    CHECK(loom_engine_epoch(a->engine) != loom_engine_epoch(b->engine));
    CHECK_UEQ(loom_key_size(a->engine), loom_key_size(b->engine));
}

/* Two engines of this process talk to each other. */
static void pair_tests(unit_ctx_t *a, unit_ctx_t *b, const void *blob_a, size_t len_a,
                       const void *blob_b, size_t len_b)
{
    enum { LEN = 300000 };
    uint8_t *mem_a = unit_alloc(LEN), *mem_b = unit_alloc(LEN), *expect = unit_alloc(LEN);
    uint8_t key_b[LOOM_OP_MSG_MAX];
    loom_peer_t *ab, *ab2, *ba;
    loom_region_t *reg_a, *reg_b;
    struct iovec iov = {(void *)"hello b", 7};
    size_t key_size = loom_key_size(b->engine);
    unit_op_t uop;

    CHECK_RC(loom_peer_connect(a->engine, blob_b, len_b, &ab), LOOM_OK);
    CHECK_RC(loom_peer_connect(b->engine, blob_a, len_a, &ba), LOOM_OK);
    CHECK_UEQ(loom_peer_name(ab), NAME_B);
    CHECK_UEQ(loom_peer_name(ba), NAME_A);
    /* The same process again: the same peer. */
    CHECK_RC(loom_peer_connect(a->engine, blob_b, len_b, &ab2), LOOM_OK);
    CHECK(ab2 == ab);
    loom_peer_disconnect(ab2); /* one reference left */

    a->also = b;
    /* (the endpoint may still be connecting: LOOM_ERR_AGAIN until it is) */
    CHECK_RC(unit_am_send(a, ab, 9, iov.iov_base, iov.iov_len), LOOM_OK);
    UNIT_WAIT(a, b->msg_count >= 1);
    CHECK_EQ(b->msgs[0].tag, 9);
    CHECK_UEQ(b->msgs[0].length, 7);
    CHECK_MEM(b->msgs[0].data, "hello b", 7, "AM between two engines");
    CHECK_UEQ(a->msg_count, 0);

    CHECK_RC(loom_mem_register(a->engine, mem_a, LEN, &reg_a), LOOM_OK);
    CHECK_RC(loom_mem_register(b->engine, mem_b, LEN, &reg_b), LOOM_OK);
    CHECK_RC(loom_key_pack(reg_b, key_b, key_size), LOOM_OK);
    CHECK_RC(loom_key_pack(reg_b, key_b, key_size - 1), LOOM_ERR_INVALID);

    /* put a -> b */
    unit_fill(mem_a, LEN, 1);
    unit_op_init(&uop);
    CHECK_RC(loom_put(ab, &uop.op, mem_a, reg_a, (uintptr_t)mem_b + 10, key_b, key_size,
                      LEN - 20), LOOM_INPROGRESS);
    UNIT_WAIT(a, uop.calls > 0);
    CHECK_RC(uop.status, LOOM_OK);
    CHECK_MEM(mem_b + 10, mem_a, LEN - 20, "put between two engines");
    CHECK_MEM(mem_b, (uint8_t[10]){0}, 10, "bytes before the put");

    /* get b -> a */
    unit_fill(mem_b, LEN, 2);
    memcpy(expect, mem_b, LEN);
    memset(mem_a, 0, LEN);
    unit_op_init(&uop);
    CHECK_RC(loom_get(ab, &uop.op, mem_a, reg_a, (uintptr_t)mem_b, key_b, key_size, LEN),
             LOOM_INPROGRESS);
    UNIT_WAIT(a, uop.calls > 0);
    CHECK_RC(uop.status, LOOM_OK);
    CHECK_MEM(mem_a, expect, LEN, "get between two engines");
    UNIT_WAIT(a, 0 == loom_engine_outstanding(a->engine) &&
                 0 == loom_engine_outstanding(b->engine));

    loom_mem_deregister(reg_a);
    loom_mem_deregister(reg_b);
    loom_peer_disconnect(ab);
    loom_peer_disconnect(ba);
    CHECK_UEQ(loom_hash_count(&a->engine->peers), 0);
    a->also = NULL;
    free(mem_a);
    free(mem_b);
    free(expect);
}

int main(void)
{
    unit_ctx_t a, b;
    void *blob_a, *blob_b;
    size_t len_a, len_b;
    uint8_t *copy_a, *copy_b;

    unit_local_open(&a, "engine-a", NAME_A, NULL);
    unit_local_open(&b, "engine-b", NAME_B, NULL);
    CHECK_RC(loom_engine_address(a.engine, &blob_a, &len_a), LOOM_OK);
    CHECK_RC(loom_engine_address(b.engine, &blob_b, &len_b), LOOM_OK);
    /* Work on copies, as a runtime's modex would hand them over. */
    copy_a = unit_alloc(len_a);
    copy_b = unit_alloc(len_b);
    memcpy(copy_a, blob_a, len_a);
    memcpy(copy_b, blob_b, len_b);

    config_tests(&a);
    info_tests(&a, &b);
    blob_tests(&a, copy_b, len_b);
    pair_tests(&a, &b, copy_a, len_a, copy_b, len_b);
    /* And once more after all that: the refusals left nothing broken. */
    blob_tests(&a, copy_b, len_b);

    unit_local_close(&b);
    unit_local_close(&a);
    free(copy_a);
    free(copy_b);
    printf("PASS: address\n");
    return 0;
}
