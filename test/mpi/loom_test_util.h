/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Shared helpers for the loom BTL MPI test programs and benchmarks.
 *
 * Conventions:
 *  - a test that passes prints "PASS <name>" on rank 0 and exits 0;
 *  - a test that fails prints what failed and calls MPI_Abort (non-zero);
 *  - a test that cannot run prints "SKIP: <reason>" and exits 77
 *    (LOOM_TEST_SKIP, automake's skip code).
 */

#ifndef LOOM_TEST_UTIL_H
#define LOOM_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#define LOOM_TEST_SKIP 77

/* byte written into receive buffers before a receive; a receive must
 * never leave it anywhere it was not supposed to write */
#define LOOM_POISON 0xa5

/* bytes of poison kept after every receive buffer */
#define LOOM_GUARD_SIZE 4096

#define KIB ((size_t) 1024)
#define MIB ((size_t) 1024 * 1024)

/* abort with file:line and the MPI error string if call fails */
#define LOOM_CHECK_MPI(call)                                            \
    do {                                                                \
        int loom_check_rc_ = (call);                                    \
        if (MPI_SUCCESS != loom_check_rc_) {                            \
            loom_mpi_error(__FILE__, __LINE__, #call, loom_check_rc_);  \
        }                                                               \
    } while (0)

#if defined(__GNUC__)
#define LOOM_NORETURN __attribute__((noreturn))
#define LOOM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define LOOM_NORETURN
#define LOOM_PRINTF(f, a)
#endif

void loom_mpi_error(const char *file, int line, const char *call,
                    int rc) LOOM_NORETURN;

/* print "FAIL: <name> rank R: <message>" and MPI_Abort(MPI_COMM_WORLD, 1) */
void loom_fail(const char *fmt, ...) LOOM_PRINTF(1, 2) LOOM_NORETURN;

/* MPI_Init, MPI_ERRORS_RETURN on MPI_COMM_WORLD, rank/size; skips (exit 77,
 * collectively) when fewer than min_ranks processes are running */
void loom_test_init(int *argc, char ***argv, const char *name,
                    int min_ranks, int *rank, int *size);

/* Before MPI_Init, in a program that makes windows: osc pt2pt unless the
 * user named an osc component (see loom_test_util.c for why). */
void loom_test_osc_default(void);

/* the same with MPI_Init_thread at the wanted level, whatever the library
 * provides (*provided) */
void loom_test_init_thread_level(int *argc, char ***argv, const char *name, int min_ranks,
                                 int wanted, int *provided, int *rank, int *size);

/* the same with MPI_Init_thread; skips (collectively) when the library
 * provides less than the required thread level */
void loom_test_init_thread(int *argc, char ***argv, const char *name,
                           int min_ranks, int required, int *rank, int *size);

/* collective: rank 0 prints "SKIP: <reason>", everybody finalizes and
 * exits with LOOM_TEST_SKIP */
void loom_test_skip(const char *reason) LOOM_NORETURN;

/* collective: barrier, rank 0 prints "PASS <name>", MPI_Finalize, exit 0 */
void loom_test_pass(void) LOOM_NORETURN;

/* the same, rank 0 printing "PASS <name> <fmt...>": results on the PASS line */
void loom_test_pass_msg(const char *fmt, ...) LOOM_PRINTF(1, 2) LOOM_NORETURN;

/* peer of rank in the pairs 0<->1, 2<->3, ...; -1 for the odd one out */
int loom_pair_peer(int rank, int size);

/* malloc that fails the test instead of returning NULL */
void *loom_malloc(size_t size);

/* the deterministic pattern: byte at offset of a buffer written by rank
 * with seed */
unsigned char loom_pattern_byte(unsigned seed, int rank, size_t offset);

void loom_fill_pattern(void *buf, size_t size, unsigned seed, int rank);

/*
 * Verify that buf holds the pattern (seed, rank) over size bytes, rank
 * being the peer that wrote it.  Returns -1 if it does, else the first
 * mismatching offset after printing expected vs got byte, offset, size and
 * peer, prefixed with what.
 */
long long loom_verify_pattern(const void *buf, size_t size, unsigned seed,
                              int rank, const char *what);

/* like loom_verify_pattern, against a constant byte (e.g. LOOM_POISON) */
long long loom_verify_byte(const void *buf, size_t size, unsigned char value,
                           int peer, const char *what);

/* like loom_verify_pattern, against an expected image of the buffer */
long long loom_verify_image(const void *got, const void *expected,
                            size_t size, int peer, const char *what);

/* verify pattern over [0, size) and poison over the LOOM_GUARD_SIZE bytes
 * after it; fails the test on any mismatch */
void loom_check_recv(const void *buf, size_t size, unsigned seed, int peer,
                     const char *what);

/* fail unless MPI_Get_count(status, type) == expected */
void loom_check_count(const MPI_Status *status, MPI_Datatype type,
                      int expected, int peer, const char *what);

/*
 * Sum over all MPI_T performance variables whose name starts with
 * name_prefix (unsigned long / unsigned long long, count 1, bound to no
 * object).  *found is the number of variables summed.  Returns MPI_SUCCESS
 * or the failing MPI_T error code.
 *
 * The first call initializes MPI_T and opens a session; each variable gets
 * a handle (started if not continuous) on the first call that meets it,
 * kept until loom_pvar_finalize().  Open MPI reports a counter read through
 * a handle as what was counted since the handle was allocated, so the
 * first read of a counter gives ~0: use the difference of two calls.
 */
int loom_pvar_read_sum(const char *name_prefix, unsigned long long *sum,
                       int *found);

/* the one counter named name (as loom_pvar_read_sum reads it), failing the
 * test when it is not there */
unsigned long long loom_pvar_counter(const char *name);

/* collective: the pushes every rank asked btl loom for so far (pvar
 * btl_loom_push_requested, read as loom_pvar_read_sum does) */
unsigned long long loom_pushes_requested(void);

/* the most rails loom drives (LOOM_MAX_RAILS of the engine) */
#define LOOM_TEST_MAX_RAILS 8

/*
 * values[N] = btl_loom_rail<N>_<counter> through loom_pvar_read_sum (so a
 * counter reads as what was counted since its first read), 0 for a rail
 * without it.  Returns the number of rails (highest N found + 1; 0 when
 * loom is not loaded).  Fails the test if MPI_T fails.
 */
int loom_pvar_read_rails(const char *counter,
                         unsigned long long values[LOOM_TEST_MAX_RAILS]);

/* a rail counter summed over the rails, less before[] (NULL: nothing),
 * through loom_pvar_read_rails */
unsigned long long loom_pvar_rails_total(const char *counter,
                                         const unsigned long long *before);

/* collective: a rail counter summed over the rails and over every rank of
 * MPI_COMM_WORLD (each rank's count since its first read) */
unsigned long long loom_pvar_rails_world_total(const char *counter);

/* free the handles and session of loom_pvar_read_sum and finalize MPI_T;
 * called by loom_test_pass() and loom_test_skip() */
void loom_pvar_finalize(void);

/* parse a size with an optional K or M suffix, at most INT32_MAX (an MPI
 * count); 0 on success, -1 if arg is no such size */
int loom_parse_size(const char *arg, size_t *size);

/* benchmark options: -m max_size (K/M suffix allowed), -i iters,
 * -w warmup, -W window; iters/warmup < 0 mean "default for the size" */
struct loom_bench_opts {
    size_t max_size;
    int iters;
    int warmup;
    int window;
    size_t min_size; /* -s: the first size measured; LOOM_BENCH_NO_MIN where
                      * a benchmark takes no -s */
    int barrier;     /* -b 1: a barrier between calls, each call timed alone
                      * (OSU's way); -1 where a benchmark takes no -b */
};

#define LOOM_BENCH_NO_MIN SIZE_MAX

/* parse argv into opts (which holds the defaults on entry); on a bad or
 * unknown option rank 0 prints usage, and everybody finalizes and exits 2 */
void loom_bench_parse(int argc, char **argv, const char *usage,
                      struct loom_bench_opts *opts);

/* iterations for size: opts value if given, else small / large default
 * (large from 64 KiB up) */
int loom_bench_iters(int given, size_t size, int small, int large);

#endif /* LOOM_TEST_UTIL_H */
