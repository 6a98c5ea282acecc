/*
 * loom's own waiting: a progress thread (btl_loom_progress_thread) that
 * sleeps on the rails' event descriptors and moves what loom does by itself
 * while the application computes, and the blocking wait of a rank with
 * nothing to do (btl_loom_block_when_idle).  Upper-layer callbacks stay on
 * the MPI threads: the thread runs the engine's quiet progress.
 */
#include "btl_loom.h"

#include "opal/runtime/opal_progress.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

/* The thread runs the engine's timers (rail watch, acknowledgements) at
 * least this often, and a blocked rank looks at Open MPI's other
 * components (and its own timers) this often. */
#define MCA_BTL_LOOM_THREAD_TICK_MS 10
#define MCA_BTL_LOOM_BLOCK_MS       1

static pthread_t mca_btl_loom_thread;
static bool      mca_btl_loom_thread_started;
static bool      mca_btl_loom_thread_stop;
static uint64_t  mca_btl_loom_last_busy_ns;

static uint64_t mca_btl_loom_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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
        rc    = (0 == count) ? loom_engine_arm(engine) : LOOM_ERR_AGAIN;
        opal_mutex_unlock(&mca_btl_loom_component.lock);
        if (LOOM_OK == rc || LOOM_ERR_NOT_FOUND == rc) {
            loom_engine_sleep(engine, MCA_BTL_LOOM_THREAD_TICK_MS);
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
 * the rails armed.  Blocks only after yield_after us without work, and only
 * when asked or when Open MPI runs the node oversubscribed. */
bool mca_btl_loom_block_armed(loom_engine_t *engine, int count)
{
    int mode = mca_btl_loom_component.block_when_idle;
    uint64_t now;

    if (0 == mode || (mode < 0 && !opal_progress_yield_when_idle)) {
        return false;
    }
    now = mca_btl_loom_now_ns();
    if (count > 0 || 0 == mca_btl_loom_last_busy_ns) {
        mca_btl_loom_last_busy_ns = now;
        return false;
    }
    if (now - mca_btl_loom_last_busy_ns < (uint64_t)mca_btl_loom_component.yield_after * 1000) {
        return false;
    }
    return LOOM_OK == loom_engine_arm(engine);
}

void mca_btl_loom_block(const loom_engine_t *engine)
{
    loom_engine_sleep(engine, MCA_BTL_LOOM_BLOCK_MS);
}
