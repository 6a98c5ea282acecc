/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Shared helpers for the loom BTL MPI test programs and benchmarks.
 */

#include "loom_test_util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *loom_test_name = "loom-test";
static int loom_test_rank = -1;

void loom_mpi_error(const char *file, int line, const char *call, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (MPI_SUCCESS != MPI_Error_string(rc, msg, &len)) {
        snprintf(msg, sizeof(msg), "unknown error %d", rc);
    }
    fprintf(stderr, "FAIL: %s rank %d: %s:%d: %s returned %d (%s)\n",
            loom_test_name, loom_test_rank, file, line, call, rc, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

void loom_fail(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "FAIL: %s rank %d: ", loom_test_name, loom_test_rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

void loom_test_init(int *argc, char ***argv, const char *name,
                    int min_ranks, int *rank, int *size)
{
    loom_test_init_thread(argc, argv, name, min_ranks, MPI_THREAD_SINGLE, rank, size);
}

void loom_test_osc_default(void)
{
#if OMPI_MAJOR_VERSION < 5
    /* Open MPI 4.1.4 picks osc rdma, which fails window creation on BTLs
     * without atomics (loom offers them there only with btl_loom_atomics
     * 1), and Debian's openmpi-mca-params.conf leaves osc pt2pt out; pt2pt
     * runs over ob1 and so over loom.  A value given by the user wins.
     * Open MPI 5.0 has no osc pt2pt, and loom offers its atomics there:
     * its default osc rdma runs over loom. */
    setenv("OMPI_MCA_osc", "pt2pt", 0);
#endif
}

/* LOOM_TEST_LAST_RANK_ENV="NAME=value": set in the last rank of the job
 * only, before MPI_Init (ranks given different parameters). */
static void loom_test_last_rank_env(void)
{
    const char *setting = getenv("LOOM_TEST_LAST_RANK_ENV");
    const char *rank = getenv("OMPI_COMM_WORLD_RANK"), *size = getenv("OMPI_COMM_WORLD_SIZE");
    char *copy;

    if (NULL == setting || NULL == rank || NULL == size || atoi(rank) + 1 != atoi(size)) {
        return;
    }
    copy = strdup(setting); /* putenv keeps it */
    if (NULL == copy || NULL == strchr(copy, '=') || 0 != putenv(copy)) {
        fprintf(stderr, "%s: LOOM_TEST_LAST_RANK_ENV=%s could not be set\n", loom_test_name,
                setting);
        exit(1);
    }
}

void loom_test_init_thread_level(int *argc, char ***argv, const char *name, int min_ranks,
                                 int wanted, int *provided, int *rank, int *size)
{
    loom_test_name = name;
    loom_test_last_rank_env();
    LOOM_CHECK_MPI(MPI_Init_thread(argc, argv, wanted, provided));
    LOOM_CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    LOOM_CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, rank));
    LOOM_CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, size));
    loom_test_rank = *rank;

    if (*size < min_ranks) {
        char reason[128];

        snprintf(reason, sizeof(reason), "%s needs at least %d ranks, got %d",
                 name, min_ranks, *size);
        loom_test_skip(reason);
    }
}

void loom_test_init_thread(int *argc, char ***argv, const char *name,
                           int min_ranks, int required, int *rank, int *size)
{
    int provided;

    loom_test_init_thread_level(argc, argv, name, min_ranks, required, &provided, rank, size);
    if (provided < required) {
        char reason[128];

        snprintf(reason, sizeof(reason), "%s needs thread level %d, the library provides %d",
                 name, required, provided);
        loom_test_skip(reason);
    }
}

void loom_test_skip(const char *reason)
{
    if (0 == loom_test_rank) {
        printf("SKIP: %s\n", reason);
        fflush(stdout);
    }
    loom_pvar_finalize();
    MPI_Finalize();
    exit(LOOM_TEST_SKIP);
}

/* barrier, "PASS <name>[ <extra>]" from rank 0, finalize, exit 0 */
static void test_pass(const char *extra) LOOM_NORETURN;

static void test_pass(const char *extra)
{
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (0 == loom_test_rank) {
        printf("PASS %s%s%s\n", loom_test_name, NULL != extra ? " " : "",
               NULL != extra ? extra : "");
        fflush(stdout);
    }
    loom_pvar_finalize();
    MPI_Finalize();
    exit(0);
}

void loom_test_pass(void)
{
    test_pass(NULL);
}

void loom_test_pass_msg(const char *fmt, ...)
{
    char extra[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(extra, sizeof(extra), fmt, ap);
    va_end(ap);
    test_pass(extra);
}

int loom_pair_peer(int rank, int size)
{
    int peer = rank ^ 1;

    return peer < size ? peer : -1;
}

void *loom_malloc(size_t size)
{
    void *ptr = malloc(size > 0 ? size : 1);

    if (NULL == ptr) {
        loom_fail("out of memory allocating %zu bytes", size);
    }
    return ptr;
}

/* splitmix64-style mixing: every byte depends on seed, rank and offset, so
 * shifted, duplicated or foreign data is detected */
static inline unsigned char pattern_byte(uint64_t key, size_t offset)
{
    uint64_t x = key + (uint64_t) offset * UINT64_C(0x9e3779b97f4a7c15);

    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return (unsigned char) x;
}

static uint64_t pattern_key(unsigned seed, int rank)
{
    return ((uint64_t) seed << 32) ^ ((uint64_t) (unsigned) rank << 8) ^
           UINT64_C(0x6c6f6f6d);
}

unsigned char loom_pattern_byte(unsigned seed, int rank, size_t offset)
{
    return pattern_byte(pattern_key(seed, rank), offset);
}

void loom_fill_pattern(void *buf, size_t size, unsigned seed, int rank)
{
    unsigned char *p = buf;
    uint64_t key = pattern_key(seed, rank);

    for (size_t i = 0; i < size; i++) {
        p[i] = pattern_byte(key, i);
    }
}

static void report_mismatch(const char *what, size_t offset, size_t size,
                            int peer, unsigned expected, unsigned got)
{
    fprintf(stderr,
            "FAIL: %s rank %d: %s: data mismatch at offset %zu of %zu bytes "
            "(peer %d): expected 0x%02x, got 0x%02x\n",
            loom_test_name, loom_test_rank, what, offset, size, peer,
            expected, got);
    fflush(stderr);
}

long long loom_verify_pattern(const void *buf, size_t size, unsigned seed,
                              int rank, const char *what)
{
    const unsigned char *p = buf;
    uint64_t key = pattern_key(seed, rank);

    for (size_t i = 0; i < size; i++) {
        unsigned char expected = pattern_byte(key, i);

        if (p[i] != expected) {
            report_mismatch(what, i, size, rank, expected, p[i]);
            return (long long) i;
        }
    }
    return -1;
}

long long loom_verify_byte(const void *buf, size_t size, unsigned char value,
                           int peer, const char *what)
{
    const unsigned char *p = buf;

    for (size_t i = 0; i < size; i++) {
        if (p[i] != value) {
            report_mismatch(what, i, size, peer, value, p[i]);
            return (long long) i;
        }
    }
    return -1;
}

long long loom_verify_image(const void *got, const void *expected,
                            size_t size, int peer, const char *what)
{
    const unsigned char *g = got, *e = expected;

    if (0 == memcmp(got, expected, size)) {
        return -1;
    }
    for (size_t i = 0; i < size; i++) {
        if (g[i] != e[i]) {
            report_mismatch(what, i, size, peer, e[i], g[i]);
            return (long long) i;
        }
    }
    return -1;
}

void loom_check_recv(const void *buf, size_t size, unsigned seed, int peer,
                     const char *what)
{
    char label[256];

    if (loom_verify_pattern(buf, size, seed, peer, what) >= 0) {
        loom_fail("%s: received data of %zu bytes from peer %d is wrong",
                  what, size, peer);
    }
    snprintf(label, sizeof(label), "%s (guard after %zu byte message)",
             what, size);
    if (loom_verify_byte((const char *) buf + size, LOOM_GUARD_SIZE,
                         LOOM_POISON, peer, label) >= 0) {
        loom_fail("%s: receive of %zu bytes from peer %d wrote past the "
                  "message end", what, size, peer);
    }
}

void loom_check_count(const MPI_Status *status, MPI_Datatype type,
                      int expected, int peer, const char *what)
{
    int count = -1;

    LOOM_CHECK_MPI(MPI_Get_count(status, type, &count));
    if (count != expected) {
        loom_fail("%s: MPI_Get_count from peer %d is %d, expected %d",
                  what, peer, count, expected);
    }
}

/*
 * Performance variables are read through handles that stay allocated from
 * the first loom_pvar_read_sum() that meets them until loom_pvar_finalize():
 * Open MPI reports a counter read through a handle as what was counted
 * since the handle was allocated, so a fresh handle per read would always
 * read 0.
 */
#define PVAR_CACHE_MAX 64

static struct pvar_cached {
    int index;
    MPI_Datatype type;
    MPI_T_pvar_handle handle;
} pvar_cache[PVAR_CACHE_MAX];
static int pvar_cache_len = 0;
static int pvar_initialized = 0;
static MPI_T_pvar_session pvar_session;

/* the cached handle of pvar index, allocated (and started if need be) on
 * first use; NULL if it cannot be read as a single value */
static struct pvar_cached *pvar_lookup(int index, MPI_Datatype type,
                                       int continuous, int *rc)
{
    struct pvar_cached *c;
    int count = 0;

    for (int i = 0; i < pvar_cache_len; i++) {
        if (pvar_cache[i].index == index) {
            return &pvar_cache[i];
        }
    }
    if (PVAR_CACHE_MAX == pvar_cache_len) {
        *rc = MPI_T_ERR_OUT_OF_HANDLES;
        return NULL;
    }
    c = &pvar_cache[pvar_cache_len];
    *rc = MPI_T_pvar_handle_alloc(pvar_session, index, NULL, &c->handle,
                                  &count);
    if (MPI_SUCCESS != *rc) {
        return NULL;
    }
    if (1 != count) {
        MPI_T_pvar_handle_free(pvar_session, &c->handle);
        return NULL;
    }
    if (!continuous) {
        *rc = MPI_T_pvar_start(pvar_session, c->handle);
        if (MPI_SUCCESS != *rc) {
            MPI_T_pvar_handle_free(pvar_session, &c->handle);
            return NULL;
        }
    }
    c->index = index;
    c->type = type;
    pvar_cache_len++;
    return c;
}

static int pvar_read(struct pvar_cached *c, unsigned long long *sum)
{
    int rc;

    if (MPI_UNSIGNED_LONG == c->type) {
        unsigned long value = 0;

        rc = MPI_T_pvar_read(pvar_session, c->handle, &value);
        *sum += value;
    } else {
        unsigned long long value = 0;

        rc = MPI_T_pvar_read(pvar_session, c->handle, &value);
        *sum += value;
    }
    return rc;
}

int loom_pvar_read_sum(const char *name_prefix, unsigned long long *sum,
                       int *found)
{
    size_t prefix_len = strlen(name_prefix);
    int provided, num = 0, rc = MPI_SUCCESS;

    *sum = 0;
    *found = 0;
    if (!pvar_initialized) {
        rc = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
        if (MPI_SUCCESS != rc) {
            return rc;
        }
        rc = MPI_T_pvar_session_create(&pvar_session);
        if (MPI_SUCCESS != rc) {
            MPI_T_finalize();
            return rc;
        }
        pvar_initialized = 1;
    }
    rc = MPI_T_pvar_get_num(&num);

    for (int i = 0; MPI_SUCCESS == rc && i < num; i++) {
        char name[256], desc[256];
        int name_len = sizeof(name), desc_len = sizeof(desc);
        int verbosity, var_class, bind, readonly, continuous, atomic;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        struct pvar_cached *c;

        if (MPI_SUCCESS != MPI_T_pvar_get_info(i, name, &name_len, &verbosity,
                                               &var_class, &type, &enumtype,
                                               desc, &desc_len, &bind,
                                               &readonly, &continuous,
                                               &atomic)) {
            continue;   /* index of a variable that went away */
        }
        if (0 != strncmp(name, name_prefix, prefix_len) ||
            MPI_T_BIND_NO_OBJECT != bind ||
            (MPI_UNSIGNED_LONG != type && MPI_UNSIGNED_LONG_LONG != type)) {
            continue;
        }
        c = pvar_lookup(i, type, continuous, &rc);
        if (NULL != c) {
            rc = pvar_read(c, sum);
            *found += (MPI_SUCCESS == rc);
        }
    }
    return rc;
}

int loom_pvar_read_rails(const char *counter,
                         unsigned long long values[LOOM_TEST_MAX_RAILS])
{
    char name[64];
    int rails = 0;

    for (int r = 0; r < LOOM_TEST_MAX_RAILS; r++) {
        int found = 0;

        values[r] = 0;
        snprintf(name, sizeof(name), "btl_loom_rail%d_%s", r, counter);
        if (MPI_SUCCESS != loom_pvar_read_sum(name, &values[r], &found)) {
            loom_fail("reading %s through MPI_T failed", name);
        }
        if (found) {
            rails = r + 1;
        }
    }
    return rails;
}

unsigned long long loom_pvar_rails_total(const char *counter,
                                         const unsigned long long *before)
{
    unsigned long long values[LOOM_TEST_MAX_RAILS], total = 0;
    int rails = loom_pvar_read_rails(counter, values);

    for (int r = 0; r < rails; r++) {
        total += values[r] - (NULL != before ? before[r] : 0);
    }
    return total;
}

unsigned long long loom_pvar_rails_world_total(const char *counter)
{
    unsigned long long mine = loom_pvar_rails_total(counter, NULL), total;

    LOOM_CHECK_MPI(MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                                 MPI_COMM_WORLD));
    return total;
}

void loom_pvar_finalize(void)
{
    if (!pvar_initialized) {
        return;
    }
    for (int i = 0; i < pvar_cache_len; i++) {
        MPI_T_pvar_handle_free(pvar_session, &pvar_cache[i].handle);
    }
    pvar_cache_len = 0;
    MPI_T_pvar_session_free(&pvar_session);
    MPI_T_finalize();
    pvar_initialized = 0;
}

int loom_parse_size(const char *arg, size_t *size)
{
    char *end;
    unsigned long long value = strtoull(arg, &end, 10);

    if (end == arg) {
        return -1;
    }
    if ('k' == *end || 'K' == *end) {
        value *= KIB;
        end++;
    } else if ('m' == *end || 'M' == *end) {
        value *= MIB;
        end++;
    }
    if ('\0' != *end || value > (unsigned long long) INT32_MAX) {
        return -1;
    }
    *size = (size_t) value;
    return 0;
}

static int parse_int(const char *arg, int *value)
{
    char *end;
    long v = strtol(arg, &end, 10);

    if (end == arg || '\0' != *end || v < 0 || v > INT32_MAX) {
        return -1;
    }
    *value = (int) v;
    return 0;
}

void loom_bench_parse(int argc, char **argv, const char *usage,
                      struct loom_bench_opts *opts)
{
    int ok = 1;

    /* every option takes a value: walk the arguments in pairs */
    for (int i = 1; ok && i < argc; i += 2) {
        const char *arg = i + 1 < argc ? argv[i + 1] : NULL;

        if (NULL == arg || '-' != argv[i][0] || '\0' == argv[i][1] ||
            '\0' != argv[i][2]) {
            ok = 0;
            break;
        }
        switch (argv[i][1]) {
        case 'm':
            ok = 0 == loom_parse_size(arg, &opts->max_size);
            break;
        case 's':
            ok = LOOM_BENCH_NO_MIN != opts->min_size &&
                 0 == loom_parse_size(arg, &opts->min_size);
            break;
        case 'i':
            ok = 0 == parse_int(arg, &opts->iters) && opts->iters > 0;
            break;
        case 'b':
            ok = opts->barrier >= 0 && 0 == parse_int(arg, &opts->barrier) &&
                 opts->barrier >= 0 && opts->barrier <= 1;
            break;
        case 'w':
            ok = 0 == parse_int(arg, &opts->warmup);
            break;
        case 'W':
            /* only where a window applies; tags must stay < 32768 */
            ok = opts->window > 0 && 0 == parse_int(arg, &opts->window) &&
                 opts->window > 0 && opts->window < 32767;
            break;
        default:
            ok = 0;
        }
    }
    if (!ok) {
        if (loom_test_rank <= 0) {
            fprintf(stderr, "usage: %s %s\n", argv[0], usage);
        }
        MPI_Finalize();
        exit(2);
    }
}

int loom_bench_iters(int given, size_t size, int small, int large)
{
    if (given >= 0) {
        return given;
    }
    return size >= 64 * KIB ? large : small;
}

#if defined(__SANITIZE_ADDRESS__)
/*
 * Under AddressSanitizer, Open MPI's dlclose of its components at finalize
 * would leave LeakSanitizer unable to name the frames of a leak inside
 * mca_btl_loom.so.  This no-op (exported with -rdynamic) keeps every
 * component loaded until the process exits.
 */
int dlclose(void *handle);
int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
#endif

unsigned long long loom_pushes_requested(void)
{
    unsigned long long value = 0, sum = 0;
    int found = 0;

    if (MPI_SUCCESS != loom_pvar_read_sum("btl_loom_push_requested", &value, &found)) {
        loom_fail("reading btl_loom_push_requested through MPI_T failed");
    }
    LOOM_CHECK_MPI(MPI_Allreduce(&value, &sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                                 MPI_COMM_WORLD));
    return sum;
}

unsigned long long loom_pvar_counter(const char *name)
{
    unsigned long long value = 0;
    int found = 0;

    if (MPI_SUCCESS != loom_pvar_read_sum(name, &value, &found) || 1 != found) {
        loom_fail("reading %s through MPI_T failed (%d found)", name, found);
    }
    return value;
}
