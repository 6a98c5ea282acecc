/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Threads each on a communicator of its own (loom_test_threads.h).
 */
#include "loom_test_threads.h"

#include "loom_test_util.h"

#include <pthread.h>

void loom_run_threads(int n, void *(*body)(void *arg))
{
    loom_thread_arg_t args[LOOM_THREADS_MAX];
    pthread_t tid[LOOM_THREADS_MAX];
    int t;

    if (n < 1 || n > LOOM_THREADS_MAX) {
        loom_fail("loom_run_threads: %d threads asked for, 1-%d possible", n, LOOM_THREADS_MAX);
    }
    for (t = 0; t < n; ++t) {
        args[t].id = t;
        LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &args[t].comm));
    }
    for (t = 0; t < n; ++t) {
        if (0 != pthread_create(&tid[t], NULL, body, &args[t])) {
            loom_fail("pthread_create failed");
        }
    }
    for (t = 0; t < n; ++t) {
        pthread_join(tid[t], NULL);
        LOOM_CHECK_MPI(MPI_Comm_free(&args[t].comm));
    }
}
