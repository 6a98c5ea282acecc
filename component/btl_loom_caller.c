/*
 * Which MPI call a progress call came from, as far as the blocking wait
 * and the engine's yield need to know: a call that polls (MPI_Test and its
 * kin, MPI_Iprobe) must return at once, for the application works between
 * two of them; only a call that waits may sleep or yield its core.  Open
 * MPI tells progress callbacks neither, and the gaps between calls cannot:
 * a loop of MPI_Test and a little work (HPCC's MPIRandomAccess) calls
 * progress as often as MPI_Wait does.  So the stack says it, looked at
 * only when a rank is about to sleep or yield.
 */
#include "btl_loom.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stdint.h>

/* MPI's polling calls: their PMPI names, which the MPI names alias and the
 * Fortran bindings call. */
static const char *const mca_btl_loom_polling_calls[] = {
    "PMPI_Test", "PMPI_Testany", "PMPI_Testall", "PMPI_Testsome", "PMPI_Iprobe",
    "PMPI_Improbe", "PMPI_Request_get_status", "PMPI_Win_test",
};

#define MCA_BTL_LOOM_POLLING_MAX \
    (sizeof(mca_btl_loom_polling_calls) / sizeof(mca_btl_loom_polling_calls[0]))
/* Frames from here up to the application: this file, the component's
 * progress, opal_progress, the request's test, the MPI call, with room to
 * spare for a profiling layer. */
#define MCA_BTL_LOOM_CALLER_FRAMES 16

typedef struct mca_btl_loom_code_range {
    uintptr_t start;
    uintptr_t end;
} mca_btl_loom_code_range_t;

static mca_btl_loom_code_range_t mca_btl_loom_polling[MCA_BTL_LOOM_POLLING_MAX];
static size_t                    mca_btl_loom_polling_count;

/* A cache keeps a thread's last look from one place that asks: a wait or
 * a polling loop calls progress through the same frames each time, so the
 * same stack pointer here is, but for frames that happen to add up alike,
 * the same call.  A backtrace takes microseconds (many more in an emulated
 * guest, where every wait longer than yield_after asks); looked at afresh
 * every so many uses all the same. */
#define MCA_BTL_LOOM_CALLER_REUSE 32

/* The code of each polling call in this process (none where no MPI
 * library is loaded, as in OSHMEM alone: every caller may sleep then). */
void mca_btl_loom_caller_init(void)
{
    void *frames[2];
    size_t i;

    mca_btl_loom_polling_count = 0; /* found afresh if asked again */
    /* the first backtrace loads the unwinder: here, not in a progress call */
    (void)backtrace(frames, 2);
    for (i = 0; i < MCA_BTL_LOOM_POLLING_MAX; ++i) {
        void *fn = dlsym(RTLD_DEFAULT, mca_btl_loom_polling_calls[i]);
        const ElfW(Sym) *sym = NULL;
        Dl_info info;

        if (NULL == fn || 0 == dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) ||
            NULL == sym || 0 == sym->st_size) {
            continue;
        }
        mca_btl_loom_polling[mca_btl_loom_polling_count].start = (uintptr_t)fn;
        mca_btl_loom_polling[mca_btl_loom_polling_count].end   = (uintptr_t)fn + sym->st_size;
        ++mca_btl_loom_polling_count;
    }
}

static bool mca_btl_loom_stack_polls(void)
{
    void *frames[MCA_BTL_LOOM_CALLER_FRAMES];
    int depth, f;
    size_t i;

    depth = backtrace(frames, MCA_BTL_LOOM_CALLER_FRAMES);
    for (f = 1; f < depth; ++f) {
        /* a return address: one past the call, inside the calling function */
        uintptr_t pc = (uintptr_t)frames[f] - 1;

        for (i = 0; i < mca_btl_loom_polling_count; ++i) {
            if (pc >= mca_btl_loom_polling[i].start && pc < mca_btl_loom_polling[i].end) {
                return true;
            }
        }
    }
    return false;
}

/* True when the calling thread is inside one of MPI's polling calls;
 * cache: the asking place's own, per thread. */
bool mca_btl_loom_caller_polls(mca_btl_loom_caller_cache_t *cache)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);

    if (0 == mca_btl_loom_polling_count) {
        return false;
    }
    if (sp != cache->sp || ++cache->uses >= MCA_BTL_LOOM_CALLER_REUSE) {
        cache->sp    = sp;
        cache->polls = mca_btl_loom_stack_polls();
        cache->uses  = 0;
    }
    return cache->polls;
}

/* The engine's loom_may_idle_cb_t: a yield only outside the polling calls. */
bool mca_btl_loom_caller_may_idle(void *ctx)
{
    static __thread mca_btl_loom_caller_cache_t cache;

    (void)ctx;
    return !mca_btl_loom_caller_polls(&cache);
}
