/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * coll loom's measured selection (coll_loom_select 1): the first calls of a
 * size class on a communicator alternate between coll loom and the next
 * component, and the faster takes the class from then on.  For MPI_Bcast,
 * MPI_Reduce, MPI_Allreduce and MPI_Allgather, each on two size classes, a
 * duplicate and a communicator freed and made again, every call's bytes are
 * checked, and coll loom's pvars must show: exactly one decision per class
 * and communicator, an even number of measured calls (a warm-up pair and
 * at most coll_loom_select_pairs more), coll loom carrying the pairs' first calls and,
 * after the decision, every call or none, and every rank counting alike (a
 * rank on another path would hang the job or break the bytes).  With
 * LOOM_EXPECT_CHOICE=loom or =next every class must go that way (run with
 * coll_loom_select_margin 100000 or -99, which decide it whatever the
 * times).  Run with coll loom's thresholds low enough to take every size
 * used here.
 */
#include "loom_test_util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* calls per class: room for the warm-up pair, every pair and two more */
#define CALLS (2 * (pairs + 1) + 2)

enum { OP_BCAST, OP_REDUCE, OP_ALLREDUCE, OP_ALLGATHER, OPS };

static const char *const op_names[OPS] = {"MPI_Bcast", "MPI_Reduce", "MPI_Allreduce",
                                          "MPI_Allgather"};
static const char *const carried_pvars[OPS] = {"coll_loom_bcasts", "coll_loom_reduces",
                                               "coll_loom_allreduces", "coll_loom_allgathers"};

typedef struct {
    unsigned long long trials, chose_loom, chose_next, carried, fallbacks;
} counts_t;

static int pairs = 3; /* coll_loom_select_pairs */
static int rank, size;
static const char *expect_choice; /* "loom", "next" or NULL: either */
static int *send_ints, *recv_ints;
static unsigned char *bytes_buf;

static void counts_read(counts_t *c, int op)
{
    c->trials     = loom_pvar_counter("coll_loom_trials");
    c->chose_loom = loom_pvar_counter("coll_loom_chose_loom");
    c->chose_next = loom_pvar_counter("coll_loom_chose_next");
    c->carried    = loom_pvar_counter(carried_pvars[op]);
    c->fallbacks  = loom_pvar_counter("coll_loom_fallbacks");
}

/* Contribution of rank r to element j of call k: small, so sums stay exact. */
static int contribution(int r, size_t j, int k)
{
    return (r + 1) * (int)(j % 977) + k;
}

static void check_ints(const int *got, size_t n, int k, const char *what)
{
    size_t j;

    for (j = 0; j < n; ++j) {
        int expected = (size * (size + 1) / 2) * (int)(j % 977) + size * k;

        if (got[j] != expected) {
            loom_fail("%s: element %zu of %zu is %d, expected %d", what, j, n, got[j], expected);
        }
    }
}

/* Call k of op on comm with bytes per rank, every byte checked. */
static void one_call(MPI_Comm comm, int op, size_t bytes, int k, const char *what)
{
    int crank, csize, root, r;
    size_t n = bytes / sizeof(int), j;
    char label[160];

    MPI_Comm_rank(comm, &crank);
    MPI_Comm_size(comm, &csize);
    root = k % csize;
    snprintf(label, sizeof(label), "%s %s of %zu bytes, call %d", what, op_names[op], bytes, k);
    switch (op) {
    case OP_BCAST:
        if (crank == root) {
            loom_fill_pattern(bytes_buf, bytes, 100u + (unsigned)k, root);
        } else {
            memset(bytes_buf, 0, bytes);
        }
        LOOM_CHECK_MPI(MPI_Bcast(bytes_buf, (int)bytes, MPI_BYTE, root, comm));
        if (loom_verify_pattern(bytes_buf, bytes, 100u + (unsigned)k, root, label) >= 0) {
            loom_fail("%s: wrong bytes", label);
        }
        break;
    case OP_REDUCE:
    case OP_ALLREDUCE:
        for (j = 0; j < n; ++j) {
            send_ints[j] = contribution(crank, j, k);
        }
        memset(recv_ints, 0, n * sizeof(int));
        if (OP_REDUCE == op) {
            LOOM_CHECK_MPI(MPI_Reduce(send_ints, recv_ints, (int)n, MPI_INT, MPI_SUM, root, comm));
        } else {
            LOOM_CHECK_MPI(MPI_Allreduce(send_ints, recv_ints, (int)n, MPI_INT, MPI_SUM, comm));
        }
        if (OP_ALLREDUCE == op || crank == root) {
            check_ints(recv_ints, n, k, label);
        }
        break;
    default:
        loom_fill_pattern(bytes_buf, bytes, 300u + (unsigned)k, crank);
        LOOM_CHECK_MPI(MPI_Allgather(bytes_buf, (int)bytes, MPI_BYTE, bytes_buf + bytes,
                                     (int)bytes, MPI_BYTE, comm));
        for (r = 0; r < csize; ++r) {
            if (loom_verify_pattern(bytes_buf + bytes + (size_t)r * bytes, bytes,
                                    300u + (unsigned)k, r, label) >= 0) {
                loom_fail("%s: wrong block of rank %d", label, r);
            }
        }
        break;
    }
}

/* CALLS calls of one size class, and what coll loom's pvars must say. */
static void one_class(MPI_Comm comm, int op, size_t bytes, const char *what)
{
    unsigned long long mine[5], low[5], high[5], trials, decided, carried, expected;
    counts_t before, after;
    bool mine_loom;
    int k, i;

    counts_read(&before, op);
    for (k = 0; k < CALLS; ++k) {
        one_call(comm, op, bytes, k, what);
    }
    counts_read(&after, op);
    trials  = after.trials - before.trials;
    decided = (after.chose_loom - before.chose_loom) + (after.chose_next - before.chose_next);
    carried = after.carried - before.carried;
    if (after.fallbacks != before.fallbacks) {
        loom_fail("%s %s of %zu bytes: coll loom fell back %llu times", what, op_names[op], bytes,
                  after.fallbacks - before.fallbacks);
    }
    if (1 != decided) {
        loom_fail("%s %s of %zu bytes: %llu decisions, expected 1", what, op_names[op], bytes,
                  decided);
    }
    if (trials < 4 || trials > 2 * (unsigned long long)(pairs + 1) || 0 != trials % 2) {
        loom_fail("%s %s of %zu bytes: %llu calls measured, expected pairs, a warm-up and "
                  "at most %d more", what, op_names[op], bytes, trials, pairs);
    }
    expected = trials / 2 + ((after.chose_loom > before.chose_loom) ? CALLS - trials : 0);
    if (carried != expected) {
        loom_fail("%s %s of %zu bytes: coll loom carried %llu calls, expected %llu (%llu "
                  "measured, %s chosen)", what, op_names[op], bytes, carried, expected, trials,
                  (after.chose_loom > before.chose_loom) ? "coll loom" : "the next component");
    }
    mine_loom = after.chose_loom > before.chose_loom;
    if (NULL != expect_choice && (0 == strcmp(expect_choice, "loom")) != mine_loom) {
        loom_fail("%s %s of %zu bytes: %s took the class, expected %s", what, op_names[op],
                  bytes, mine_loom ? "coll loom" : "the next component", expect_choice);
    }
    mine[0] = trials;
    mine[1] = after.chose_loom - before.chose_loom;
    mine[2] = carried;
    mine[3] = decided;
    mine[4] = after.chose_next - before.chose_next;
    LOOM_CHECK_MPI(MPI_Allreduce(mine, low, 5, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm));
    LOOM_CHECK_MPI(MPI_Allreduce(mine, high, 5, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
    for (i = 0; i < 5; ++i) {
        if (low[i] != high[i]) {
            loom_fail("%s %s of %zu bytes: the ranks counted differently (%llu to %llu)", what,
                      op_names[op], bytes, low[i], high[i]);
        }
    }
    if (0 == rank) {
        printf("%s %s of %zu bytes: %llu calls measured, %s takes the class\n", what,
               op_names[op], bytes, trials, mine[1] ? "coll loom" : "the next component");
    }
}

/* Two classes of one operation measured at once, calls alternating between
 * them: two decisions, every byte right, every rank alike. */
static void interleaved(MPI_Comm comm, int op)
{
    unsigned long long mine[2], low[2], high[2];
    counts_t before, after;
    int k;

    counts_read(&before, op);
    for (k = 0; k < 2 * CALLS; ++k) {
        one_call(comm, op, (k % 2) ? 512 * 1024 : 128 * 1024, k, "interleaved");
    }
    counts_read(&after, op);
    mine[0] = after.trials - before.trials;
    mine[1] = (after.chose_loom - before.chose_loom) + (after.chose_next - before.chose_next);
    if (2 != mine[1] || mine[0] < 8 || mine[0] > 4 * (unsigned long long)(pairs + 1)) {
        loom_fail("interleaved %s: %llu decisions and %llu calls measured, expected 2 and "
                  "8-%d", op_names[op], mine[1], mine[0], 4 * (pairs + 1));
    }
    LOOM_CHECK_MPI(MPI_Allreduce(mine, low, 2, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm));
    LOOM_CHECK_MPI(MPI_Allreduce(mine, high, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
    if (low[0] != high[0] || low[1] != high[1]) {
        loom_fail("interleaved %s: the ranks counted differently", op_names[op]);
    }
}

static void every_op(MPI_Comm comm, const char *what)
{
    static const size_t class_bytes[] = {128 * 1024, 512 * 1024};
    int op;
    size_t c;

    for (op = 0; op < OPS; ++op) {
        for (c = 0; c < sizeof(class_bytes) / sizeof(class_bytes[0]); ++c) {
            one_class(comm, op, class_bytes[c], what);
        }
    }
}

int main(int argc, char **argv)
{
    const char *select = getenv("OMPI_MCA_coll_loom_select");
    const char *pairs_env = getenv("OMPI_MCA_coll_loom_select_pairs");
    MPI_Comm dup;
    int i;

    loom_test_init(&argc, &argv, "test_coll_select", 2, &rank, &size);
    if (NULL == select || 0 != strcmp(select, "1")) {
        loom_test_skip("run with OMPI_MCA_coll_loom_select=1");
    }
    expect_choice = getenv("LOOM_EXPECT_CHOICE");
    if (NULL != pairs_env) {
        pairs = atoi(pairs_env);
    }
    send_ints = loom_malloc(512 * 1024);
    recv_ints = loom_malloc(512 * 1024);
    bytes_buf = loom_malloc(512 * 1024 * (size_t)(size + 1));
    every_op(MPI_COMM_WORLD, "world");
    LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    every_op(dup, "dup");
    MPI_Comm_free(&dup);
    for (i = 0; i < OPS; ++i) {
        LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        interleaved(dup, i);
        MPI_Comm_free(&dup);
    }
    for (i = 0; i < 2; ++i) {
        /* Open MPI gives it the freed one's context id: measured afresh */
        LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        one_class(dup, OP_BCAST, 512 * 1024, "a communicator made again");
        MPI_Comm_free(&dup);
    }
    free(send_ints);
    free(recv_ints);
    free(bytes_buf);
    loom_pvar_finalize();
    loom_test_pass();
}
