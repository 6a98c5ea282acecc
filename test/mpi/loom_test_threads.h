/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Collectives from several threads at once (MPI_THREAD_MULTIPLE), each on a
 * communicator of its own.
 */
#ifndef LOOM_TEST_THREADS_H
#define LOOM_TEST_THREADS_H

#include <mpi.h>

typedef struct {
    MPI_Comm comm; /* a duplicate of MPI_COMM_WORLD, this thread's alone */
    int      id;   /* 0 to n - 1 */
} loom_thread_arg_t;

#define LOOM_THREADS_MAX 32

/* Runs body(arg) in n threads (at most LOOM_THREADS_MAX) at once and waits
 * for them; collective over MPI_COMM_WORLD (the duplicates are made and
 * freed here). */
void loom_run_threads(int n, void *(*body)(void *arg));

#endif
