/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The loop of loom's OSU-style collective benchmarks (bench_bcast,
 * bench_allreduce, bench_allgather): for sizes from -s min (or the
 * smallest) up to -m max, doubling, the time of one call averaged over -i
 * timed calls after -w warm-up calls (defaults 100 / 10, and 20 / 3 from
 * 64 KiB up), the largest of all ranks' averages and their mean.  Calls go
 * back to back (a root may run ahead), or with -b 1 as OSU's benchmarks
 * make them: a barrier between calls, each call timed alone.  Each size
 * first makes one call whose result every rank checks.  Which collective component runs it is the command line's choice
 * (--mca coll ...).
 */
#ifndef LOOM_BENCH_COLL_H
#define LOOM_BENCH_COLL_H

#include <stddef.h>

/* One call on MPI_COMM_WORLD of size bytes; with check set, its buffers
 * are filled first and its result checked (failing the test). */
typedef void (*loom_bench_coll_fn_t)(size_t size, int check);
/* Makes the buffers for calls of up to max_size bytes. */
typedef void (*loom_bench_coll_setup_fn_t)(size_t max_size);

/* Parses the command line, prints the table (title on its first line) and
 * finalizes MPI; returns main's exit status.  max_default is -m's default. */
int loom_bench_coll_run(int argc, char **argv, const char *name, const char *title,
                        size_t first_size, size_t max_default,
                        loom_bench_coll_setup_fn_t setup, loom_bench_coll_fn_t call);

#endif
