/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Which MPI call a progress call came from, as far as the blocking wait
 * and the engine's yield need to know: a call that polls (MPI_Test and its
 * kin, MPI_Iprobe) must return at once, for the application works between
 * two of them; only a call that waits may sleep or yield its core.  Open
 * MPI tells progress callbacks neither, and the gaps between calls cannot:
 * a loop of MPI_Test and a little work (HPCC's MPIRandomAccess) calls
 * progress as often as MPI_Wait does.  So the stack says it, looked at
 * only when a rank is about to sleep or yield.
 *
 * One-sided synchronization waits as well, but what ends it is often no
 * rail's doing: osc pt2pt hands what it received to its own progress
 * callback, which runs after ours in the next progress call, and a chain
 * of such steps (the lock, the unlock and the accumulates of a rank's own
 * window go through btl self) passes with loom finding nothing.  A sleep
 * of ours would hold up each step; a yield does not.
 */
#include "btl_loom.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stdint.h>

typedef struct mca_btl_loom_call_name {
    const char                *name; /* PMPI: the MPI names and Fortran bindings call it */
    mca_btl_loom_caller_kind_t kind;
} mca_btl_loom_call_name_t;

static const mca_btl_loom_call_name_t mca_btl_loom_calls[] = {
    {"PMPI_Test", MCA_BTL_LOOM_CALLER_POLLS},
    {"PMPI_Testany", MCA_BTL_LOOM_CALLER_POLLS},
    {"PMPI_Testall", MCA_BTL_LOOM_CALLER_POLLS},
    {"PMPI_Testsome", MCA_BTL_LOOM_CALLER_POLLS},
    {"PMPI_Iprobe", MCA_BTL_LOOM_CALLER_POLLS},
    {"PMPI_Improbe", MCA_BTL_LOOM_CALLER_POLLS},
    {"PMPI_Request_get_status", MCA_BTL_LOOM_CALLER_POLLS},
    {"PMPI_Win_test", MCA_BTL_LOOM_CALLER_POLLS},
    {"PMPI_Win_fence", MCA_BTL_LOOM_CALLER_SYNCS},
    {"PMPI_Win_start", MCA_BTL_LOOM_CALLER_SYNCS},
    {"PMPI_Win_complete", MCA_BTL_LOOM_CALLER_SYNCS},
    {"PMPI_Win_wait", MCA_BTL_LOOM_CALLER_SYNCS},
    {"PMPI_Win_lock", MCA_BTL_LOOM_CALLER_SYNCS},
    {"PMPI_Win_unlock", MCA_BTL_LOOM_CALLER_SYNCS},
    {"PMPI_Win_lock_all", MCA_BTL_LOOM_CALLER_SYNCS},
    {"PMPI_Win_unlock_all", MCA_BTL_LOOM_CALLER_SYNCS},
    {"PMPI_Win_flush", MCA_BTL_LOOM_CALLER_SYNCS},
    {"PMPI_Win_flush_all", MCA_BTL_LOOM_CALLER_SYNCS},
    {"PMPI_Win_flush_local", MCA_BTL_LOOM_CALLER_SYNCS},
    {"PMPI_Win_flush_local_all", MCA_BTL_LOOM_CALLER_SYNCS},
    {"PMPI_Win_free", MCA_BTL_LOOM_CALLER_SYNCS},
};

#define MCA_BTL_LOOM_CALLS_MAX (sizeof(mca_btl_loom_calls) / sizeof(mca_btl_loom_calls[0]))
/* Frames from here up to the application: this file, the component's
 * progress, opal_progress, the request's test, the MPI call, with room to
 * spare for a profiling layer. */
#define MCA_BTL_LOOM_CALLER_FRAMES 16

typedef struct mca_btl_loom_code_range {
    uintptr_t                  start;
    uintptr_t                  end;
    mca_btl_loom_caller_kind_t kind;
} mca_btl_loom_code_range_t;

static mca_btl_loom_code_range_t mca_btl_loom_call_code[MCA_BTL_LOOM_CALLS_MAX];
static size_t                    mca_btl_loom_call_code_count;

/* A cache keeps a thread's last look from one place that asks: a wait or
 * a polling loop calls progress through the same frames each time, so the
 * same stack pointer here is, but for frames that happen to add up alike,
 * the same call.  A backtrace takes microseconds (many more in an emulated
 * guest, where every wait longer than yield_after asks); looked at afresh
 * every so many uses all the same. */
#define MCA_BTL_LOOM_CALLER_REUSE 32

/* The code of each of those calls in this process (none where no MPI
 * library is loaded, as in OSHMEM alone: every caller waits then). */
void mca_btl_loom_caller_init(void)
{
    void *frames[2];
    size_t i;

    mca_btl_loom_call_code_count = 0; /* found afresh if asked again */
    /* the first backtrace loads the unwinder: here, not in a progress call */
    (void)backtrace(frames, 2);
    for (i = 0; i < MCA_BTL_LOOM_CALLS_MAX; ++i) {
        void *fn = dlsym(RTLD_DEFAULT, mca_btl_loom_calls[i].name);
        mca_btl_loom_code_range_t *code = &mca_btl_loom_call_code[mca_btl_loom_call_code_count];
        const ElfW(Sym) *sym = NULL;
        Dl_info info;

        if (NULL == fn || 0 == dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) ||
            NULL == sym || 0 == sym->st_size) {
            continue;
        }
        code->start = (uintptr_t)fn;
        code->end   = (uintptr_t)fn + sym->st_size;
        code->kind  = mca_btl_loom_calls[i].kind;
        ++mca_btl_loom_call_code_count;
    }
}

/* The strictest kind of any call on the stack (a polling call inside a
 * synchronization, as a profiling layer may make, still polls). */
static mca_btl_loom_caller_kind_t mca_btl_loom_stack_kind(void)
{
    mca_btl_loom_caller_kind_t kind = MCA_BTL_LOOM_CALLER_WAITS;
    void *frames[MCA_BTL_LOOM_CALLER_FRAMES];
    int depth, f;
    size_t i;

    depth = backtrace(frames, MCA_BTL_LOOM_CALLER_FRAMES);
    for (f = 1; f < depth && MCA_BTL_LOOM_CALLER_POLLS != kind; ++f) {
        /* a return address: one past the call, inside the calling function */
        uintptr_t pc = (uintptr_t)frames[f] - 1;

        for (i = 0; i < mca_btl_loom_call_code_count; ++i) {
            const mca_btl_loom_code_range_t *code = &mca_btl_loom_call_code[i];

            if (pc >= code->start && pc < code->end && code->kind > kind) {
                kind = code->kind;
            }
        }
    }
    return kind;
}

/* The kind of MPI call the calling thread is in; cache: the asking place's
 * own, per thread. */
mca_btl_loom_caller_kind_t mca_btl_loom_caller_kind(mca_btl_loom_caller_cache_t *cache)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);

    if (0 == mca_btl_loom_call_code_count) {
        return MCA_BTL_LOOM_CALLER_WAITS;
    }
    if (sp != cache->sp || ++cache->uses >= MCA_BTL_LOOM_CALLER_REUSE) {
        cache->sp   = sp;
        cache->kind = mca_btl_loom_stack_kind();
        cache->uses = 0;
    }
    return cache->kind;
}

/* The engine's loom_may_idle_cb_t: a yield only outside the polling calls. */
bool mca_btl_loom_caller_may_idle(void *ctx)
{
    static __thread mca_btl_loom_caller_cache_t cache;

    (void)ctx;
    return MCA_BTL_LOOM_CALLER_POLLS != mca_btl_loom_caller_kind(&cache);
}
