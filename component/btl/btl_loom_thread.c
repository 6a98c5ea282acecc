/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * loom's own waiting: a progress thread (btl_loom_progress_thread) that
 * sleeps on the rails' event descriptors and moves what loom does by itself
 * while the application computes, and the blocking wait of a rank with
 * nothing to do (btl_loom_block_when_idle).  Upper-layer callbacks stay on
 * the MPI threads: the thread runs the engine's quiet progress.
 */
#include "btl_loom.h"

#include "opal/mca/base/mca_base_pvar.h"
#include "opal/runtime/opal_progress.h"

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <time.h>

/* The thread runs the engine's timers (rail watch, acknowledgements) at
 * least this often, and a blocked rank looks at Open MPI's other
 * components (and its own timers) this often. */
#define MCA_BTL_LOOM_THREAD_TICK_MS 10
#define MCA_BTL_LOOM_BLOCK_MS       1
/* Progress calls further apart than this, with as much CPU time of the
 * thread between them, are not one wait: the rank computes between them (a
 * loop of MPI_Test and work), and a sleep there would stall its work.  A
 * waiting rank's calls come a pass apart; when it yields its core to a rank
 * that computes, the gap is long but its own CPU time is not. */
#define MCA_BTL_LOOM_SPIN_GAP_NS    20000
/* The thread's CPU time is a system call: read at most this often in a
 * run of close calls, which bounds what a long gap's CPU time is
 * underestimated by. */
#define MCA_BTL_LOOM_CPU_SAMPLE_NS  10000

static pthread_t mca_btl_loom_thread;
static bool      mca_btl_loom_thread_started;
static bool      mca_btl_loom_thread_stop;
/* Each thread's own wait (MPI_THREAD_MULTIPLE: threads wait apart). */
static __thread uint64_t mca_btl_loom_spin_start_ns; /* as far as loom can tell */
static __thread uint64_t mca_btl_loom_last_call_ns;
/* The thread's CPU time at sample_ns, an empty call of this run; 0 when
 * the run has none yet (its last call found work). */
static __thread uint64_t mca_btl_loom_sample_ns;
static __thread uint64_t mca_btl_loom_sample_cpu_ns;
static __thread mca_btl_loom_caller_cache_t mca_btl_loom_block_caller;

/* What btl_loom_block_when_idle did (pvars idle_blocks, idle_block_wakes). */
typedef struct mca_btl_loom_block_stats {
    unsigned long blocks;
    unsigned long wakes;
} mca_btl_loom_block_stats_t;

static mca_btl_loom_block_stats_t mca_btl_loom_block_stats;

static uint64_t mca_btl_loom_clock_ns(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mca_btl_loom_now_ns(void)
{
    return mca_btl_loom_clock_ns(CLOCK_MONOTONIC);
}

static void mca_btl_loom_cpu_sample(uint64_t now, uint64_t cpu)
{
    mca_btl_loom_sample_ns     = now;
    mca_btl_loom_sample_cpu_ns = cpu;
}

/* An empty call at now: was the time since the last call work?  Time off
 * the core (a yield or a sleep while other ranks of the node ran) is not,
 * so a rank that comes back into the same wait goes on waiting.  The CPU
 * time of the gap is at least what the thread used since the sample less
 * the time from the sample to the last call. */
static bool mca_btl_loom_worked_since_call(uint64_t now)
{
    uint64_t cpu, before_gap;
    bool worked;

    if (now - mca_btl_loom_last_call_ns <= MCA_BTL_LOOM_SPIN_GAP_NS) {
        if (0 == mca_btl_loom_sample_cpu_ns ||
            now - mca_btl_loom_sample_ns > MCA_BTL_LOOM_CPU_SAMPLE_NS) {
            mca_btl_loom_cpu_sample(now, mca_btl_loom_clock_ns(CLOCK_THREAD_CPUTIME_ID));
        }
        return false;
    }
    cpu        = mca_btl_loom_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    before_gap = mca_btl_loom_last_call_ns - mca_btl_loom_sample_ns;
    worked     = 0 == mca_btl_loom_sample_cpu_ns ||
                 cpu - mca_btl_loom_sample_cpu_ns > before_gap + MCA_BTL_LOOM_SPIN_GAP_NS;
    mca_btl_loom_cpu_sample(now, cpu);
    return worked;
}

static void mca_btl_loom_nap_us(long us)
{
    struct timespec ts = {0, us * 1000L};

    (void)nanosleep(&ts, NULL);
}

static void *mca_btl_loom_thread_main(void *arg)
{
    loom_engine_t *engine = arg;
    int count, rc;

    while (!__atomic_load_n(&mca_btl_loom_thread_stop, __ATOMIC_ACQUIRE)) {
        if (0 != opal_mutex_trylock(&mca_btl_loom_component.lock)) {
            mca_btl_loom_nap_us(50); /* an MPI thread is in loom and moves it */
            continue;
        }
        count = loom_engine_progress_quiet(engine);
        /* a helper's round, no wait: rings written here stay (it sleeps its tick) */
        rc    = (0 == count) ? loom_engine_arm(engine, 0) : LOOM_ERR_AGAIN;
        opal_mutex_unlock(&mca_btl_loom_component.lock);
        if (count < 0) {
            /* it keeps all it may for the application: until the
             * application takes it, the rails wait (and so do senders) */
            mca_btl_loom_nap_us(MCA_BTL_LOOM_THREAD_TICK_MS * 1000L);
        } else if (LOOM_OK == rc || LOOM_ERR_NOT_FOUND == rc) {
            (void)loom_engine_sleep(engine, MCA_BTL_LOOM_THREAD_TICK_MS);
        } else if (LOOM_INPROGRESS == rc) {
            mca_btl_loom_nap_us(20); /* sends wait for room on a rail */
        } else {
            sched_yield(); /* more to do: let an MPI thread in between */
        }
    }
    return NULL;
}

int mca_btl_loom_thread_start(loom_engine_t *engine)
{
    int rc;

    if (!mca_btl_loom_component.progress_thread) {
        return OPAL_SUCCESS;
    }
    mca_btl_loom_component.locking = true; /* before the thread exists */
    mca_btl_loom_thread_stop       = false;
    rc = pthread_create(&mca_btl_loom_thread, NULL, mca_btl_loom_thread_main, engine);
    if (0 != rc) {
        opal_output(0, "btl loom: cannot start the progress thread (btl_loom_progress_thread):"
                    " error %d", rc);
        return OPAL_ERROR;
    }
    mca_btl_loom_thread_started = true;
    return OPAL_SUCCESS;
}

/* Before the engine goes; not under the lock (the thread takes it). */
void mca_btl_loom_thread_stop_join(void)
{
    if (mca_btl_loom_thread_started) {
        __atomic_store_n(&mca_btl_loom_thread_stop, true, __ATOMIC_RELEASE);
        pthread_join(mca_btl_loom_thread, NULL);
        mca_btl_loom_thread_started = false;
    }
}

/* Under the lock, after a progress call that found count things to do:
 * true when the caller should sleep (loom_engine_sleep, after unlocking),
 * the rails armed.  Blocks only when asked or when Open MPI runs the node
 * oversubscribed, and only in a wait: after block_after us of progress
 * calls that came one right after the other and found nothing, and not
 * inside one of MPI's polling calls or one-sided synchronizations
 * (btl_loom_caller.c).  Open MPI tells no callback what the others did: a
 * rank busy with work of another component that calls progress once on its
 * way looks like a wait here, and block_after is what bounds how often
 * such a rank sleeps. */
bool mca_btl_loom_block_armed(loom_engine_t *engine, int count)
{
    int mode = mca_btl_loom_component.block_when_idle;
    uint64_t now;

    if (0 == mode || (mode < 0 && !opal_progress_yield_when_idle)) {
        return false;
    }
    now = mca_btl_loom_now_ns();
    if (count > 0) {
        mca_btl_loom_spin_start_ns = now;
        mca_btl_loom_last_call_ns  = now;
        mca_btl_loom_sample_cpu_ns = 0;
        return false;
    }
    if (mca_btl_loom_worked_since_call(now)) {
        mca_btl_loom_spin_start_ns = now;
    }
    mca_btl_loom_last_call_ns = now;
    if (now - mca_btl_loom_spin_start_ns < (uint64_t)mca_btl_loom_component.block_after * 1000) {
        return false;
    }
    if (MCA_BTL_LOOM_CALLER_WAITS != mca_btl_loom_caller_kind(&mca_btl_loom_block_caller)) {
        /* MPI_Test and the like: the application works between them; a
         * one-sided synchronization: osc's own progress moves it (looked at
         * again after another block_after) */
        mca_btl_loom_spin_start_ns = now;
        return false;
    }
    return LOOM_OK == loom_engine_arm(engine, LOOM_ARM_WAIT);
}

void mca_btl_loom_block(const loom_engine_t *engine)
{
    /* outside the lock, by one thread at a time or by several */
    __atomic_fetch_add(&mca_btl_loom_block_stats.blocks, 1, __ATOMIC_RELAXED);
    if (loom_engine_sleep(engine, MCA_BTL_LOOM_BLOCK_MS)) {
        __atomic_fetch_add(&mca_btl_loom_block_stats.wakes, 1, __ATOMIC_RELAXED);
    }
    /* the wait goes on: the next call is a pass after this one */
    mca_btl_loom_last_call_ns = mca_btl_loom_now_ns();
    mca_btl_loom_cpu_sample(mca_btl_loom_last_call_ns,
                            mca_btl_loom_clock_ns(CLOCK_THREAD_CPUTIME_ID));
}

#define MCA_BTL_LOOM_BLOCK_STAT(_f) offsetof(mca_btl_loom_block_stats_t, _f)

static const mca_btl_loom_stat_desc_t mca_btl_loom_block_pvars[] = {
    {"idle_blocks", "Times a waiting rank slept on the rails' event descriptors instead of "
     "polling (btl_loom_block_when_idle)", MCA_BTL_LOOM_BLOCK_STAT(blocks),
     MCA_BASE_PVAR_CLASS_COUNTER},
    {"idle_block_wakes", "Of those sleeps, the ones a rail ended (something arrived or "
     "completed) before their 1 ms", MCA_BTL_LOOM_BLOCK_STAT(wakes),
     MCA_BASE_PVAR_CLASS_COUNTER},
};

static mca_btl_loom_stat_ctx_t mca_btl_loom_block_ctxs[sizeof(mca_btl_loom_block_pvars) /
                                                    sizeof(mca_btl_loom_block_pvars[0])];

static const void *mca_btl_loom_block_stats_get(const loom_engine_t *engine)
{
    (void)engine; /* the component's, not the engine's */
    return &mca_btl_loom_block_stats;
}

const mca_btl_loom_stat_table_t mca_btl_loom_block_table =
    MCA_BTL_LOOM_STAT_TABLE(mca_btl_loom_block_pvars, mca_btl_loom_block_ctxs,
                            mca_btl_loom_block_stats_get);
