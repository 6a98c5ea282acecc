/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * What every coll loom call does the same way (coll_loom_call.h): its
 * segments, registering its buffers, the root's pushes and their end, the
 * root's word, and the wait of a contributing rank for it.
 */
#include "coll_loom_call.h"
#include "coll_loom_select.h"

#include "ompi/mca/pml/pml.h"
#include "ompi/request/request.h"
#include "opal/runtime/opal_progress.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/sys/atomic.h"
#include "opal/util/output.h"

#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

void mca_coll_loom_call_init(mca_coll_loom_call_t *call, mca_coll_loom_module_t *module,
                             struct ompi_communicator_t *comm, int tag, int root, void *base,
                             size_t bytes, size_t segment, size_t unit, unsigned max_segments)
{
    size_t segment_min = (bytes + max_segments - 1) / max_segments;

    memset(call, 0, sizeof(*call));
    call->module = module;
    call->comm   = comm;
    call->tag    = tag;
    call->root   = root;
    call->rank   = ompi_comm_rank(comm);
    call->size   = ompi_comm_size(comm);
    call->base   = base;
    call->bytes  = bytes;
    if (segment < segment_min) {
        segment = segment_min;
    }
    /* whole elements per segment: a reduction reduces segment by segment */
    segment = (segment + unit - 1) / unit * unit;
    call->segment  = segment;
    call->segments = (unsigned)((bytes + segment - 1) / segment);
}

size_t mca_coll_loom_segment_length(const mca_coll_loom_call_t *call, unsigned s)
{
    size_t offset = (size_t)s * call->segment;

    return (call->bytes - offset < call->segment) ? call->bytes - offset : call->segment;
}

void mca_coll_loom_register(mca_coll_loom_call_t *call, void *addr, size_t bytes, bool usable,
                            unsigned access, loom_region_t **region_p,
                            mca_coll_loom_dest_t *dest)
{
    size_t key_size = 0;

    memset(dest, 0, sizeof(*dest));
    dest->addr = (uint64_t)(uintptr_t)addr;
    *region_p  = NULL;
    if (!usable || LOOM_OK != call->module->api->mem_register(addr, bytes, access, region_p,
                                                              dest->key, &key_size)) {
        *region_p = NULL;
        return;
    }
    dest->key_size = (uint32_t)key_size;
    dest->usable   = 1;
}

void mca_coll_loom_op_end(loom_op_t *op, int status)
{
    mca_coll_loom_call_t *call = op->user;

    /* Callbacks run in whichever thread progresses loom; the caller polls
     * without its lock.  The failure goes first, the count last: once the
     * caller sees every operation ended it may return, and nothing may
     * write into its call after that. */
    if (LOOM_OK != status && LOOM_OK == call->failure) {
        call->failure = status;
    }
    opal_atomic_wmb();
    ++call->ended;
}

size_t mca_coll_loom_ended(const mca_coll_loom_call_t *call)
{
    size_t ended = *(volatile const size_t *)&call->ended;

    opal_atomic_rmb(); /* what the callbacks wrote before */
    return ended;
}

void mca_coll_loom_issue(mca_coll_loom_call_t *call, loom_op_t *op, loom_op_cb_t cb,
                         const loom_push_args_t *args)
{
    int rc;

    op->cb   = cb;
    op->user = call;
    ++call->issued;
    rc = call->module->api->push(op, args);
    if (LOOM_INPROGRESS != rc) {
        cb(op, rc); /* refused at once: it ended, and says why */
    }
}

void mca_coll_loom_push_own(mca_coll_loom_call_t *call, const mca_coll_loom_dest_t *from, int to,
                            const mca_coll_loom_dest_t *dest, size_t offset, size_t length)
{
    loom_push_args_t args;

    memset(&args, 0, sizeof(args));
    args.owner        = call->module->names[call->rank];
    args.src_addr     = from->addr + offset;
    args.src_key      = from->key;
    args.src_key_size = from->key_size;
    args.dest         = call->module->names[to];
    args.dst_addr     = dest->addr + offset;
    args.dst_key      = dest->key;
    args.dst_key_size = dest->key_size;
    args.length       = length;
    mca_coll_loom_issue(call, &call->ops[call->edges++], mca_coll_loom_op_end, &args);
}

/* The word to every rank but the root: blocking, or started (reqs). */
static int mca_coll_loom_send_word(mca_coll_loom_call_t *call, int32_t word,
                                   ompi_request_t **reqs)
{
    mca_coll_loom_word_t msg = {word};
    int rank, rc = OMPI_SUCCESS;

    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        if (rank == call->root) {
            continue;
        }
        if (NULL == reqs) {
            rc = MCA_PML_CALL(send(&msg, sizeof(msg), MPI_BYTE, rank, call->tag,
                                   MCA_PML_BASE_SEND_STANDARD, call->comm));
        } else {
            call->told = msg;
            rc = MCA_PML_CALL(isend(&call->told, sizeof(call->told), MPI_BYTE, rank, call->tag,
                                    MCA_PML_BASE_SEND_STANDARD, call->comm, &reqs[rank]));
        }
    }
    return rc;
}

int mca_coll_loom_gather(mca_coll_loom_call_t *call, void *msgs, size_t msg_size)
{
    uint8_t scratch[2 * sizeof(mca_coll_loom_dest_t)];
    int rank, rc = OMPI_SUCCESS;

    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        if (rank == call->root) {
            continue;
        }
        /* without memory for them the messages are still taken (and the
         * root says fall back): every rank waits for its word */
        rc = MCA_PML_CALL(recv((NULL == msgs) ? scratch : (uint8_t *)msgs + rank * msg_size,
                               (NULL == msgs) ? sizeof(scratch) : msg_size, MPI_BYTE, rank,
                               call->tag, call->comm, MPI_STATUS_IGNORE));
    }
    return rc;
}

int mca_coll_loom_tell(mca_coll_loom_call_t *call, int32_t word)
{
    return mca_coll_loom_send_word(call, word, NULL);
}

/* How long a wait spins before it yields: btl_loom_yield_after, the
 * engine's own idle time before a yield (0: never yield; read once: btl
 * loom registered it before any communicator had a collective). */
static int64_t mca_coll_loom_spin_ns(void)
{
    static int64_t spin_ns = -1;
    const int *value = NULL;
    int index;

    if (spin_ns < 0) {
        spin_ns = (OPAL_SUCCESS == mca_base_var_find_by_name("btl_loom_yield_after", &index) &&
                   OPAL_SUCCESS == mca_base_var_get_value(index, &value, NULL, NULL) &&
                   NULL != value && *value >= 0) ? (int64_t)*value * 1000 : 50000;
    }
    return spin_ns;
}

int64_t mca_coll_loom_now_ns(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

void mca_coll_loom_wait_step(int64_t *since)
{
    int64_t spin_ns = mca_coll_loom_spin_ns();

    /* the yield before progress: the caller checks what it waits for right
     * after progress found it (a yield after it handed the core to a rank
     * that spun until its time slice ended) */
    if (spin_ns > 0 && NULL == since) {
        sched_yield();
    } else if (spin_ns > 0) {
        int64_t now = mca_coll_loom_now_ns();

        if (0 == *since) {
            *since = now;
        } else if (now - *since >= spin_ns) {
            sched_yield();
        }
    }
    opal_progress();
}

int mca_coll_loom_drain(mca_coll_loom_call_t *call)
{
    ompi_request_t **reqs = NULL;
    bool told = false;
    int v, rc = OMPI_SUCCESS;

    while (mca_coll_loom_ended(call) < call->issued || (LOOM_OK != call->failure && !told)) {
        if (LOOM_OK != call->failure && !told && NULL != call->tell_failed) {
            call->tell_failed(call);
            told = true;
            continue;
        }
        if (LOOM_OK != call->failure && !told) {
            /* started, not waited for: the ranks' words are small (without
             * memory for the requests, each is sent as it goes) */
            reqs = calloc((size_t)call->size, sizeof(*reqs));
            rc   = mca_coll_loom_send_word(call, MCA_COLL_LOOM_FAILED, reqs);
            told = true;
            continue;
        }
        mca_coll_loom_wait_step(NULL);
    }
    if (NULL != reqs) {
        for (v = 0; v < call->size; ++v) {
            if (NULL != reqs[v]) {
                (void)ompi_request_wait(&reqs[v], MPI_STATUS_IGNORE);
            }
        }
        free(reqs);
    }
    return rc;
}

int mca_coll_loom_leaf(mca_coll_loom_call_t *call, const void *mine, size_t mine_size)
{
    mca_coll_loom_word_t msg = {MCA_COLL_LOOM_FAILED};
    int rc;

    rc = MCA_PML_CALL(send(mine, mine_size, MPI_BYTE, call->root, call->tag,
                           MCA_PML_BASE_SEND_STANDARD, call->comm));
    if (OMPI_SUCCESS == rc) {
        rc = MCA_PML_CALL(recv(&msg, sizeof(msg), MPI_BYTE, call->root, call->tag, call->comm,
                               MPI_STATUS_IGNORE));
    }
    if (OMPI_SUCCESS != rc || MCA_COLL_LOOM_FALL_BACK == msg.word) {
        return (OMPI_SUCCESS != rc) ? rc : msg.word;
    }
    if (MCA_COLL_LOOM_FAILED == msg.word) {
        /* the root's last word says that nothing of the call moves any more */
        rc = MCA_PML_CALL(recv(&msg, sizeof(msg), MPI_BYTE, call->root, call->tag, call->comm,
                               MPI_STATUS_IGNORE));
        return (OMPI_SUCCESS != rc) ? rc : OMPI_ERROR;
    }
    return (MCA_COLL_LOOM_DONE == msg.word) ? OMPI_SUCCESS : OMPI_ERROR;
}

/* The parameters that decide a call's path and shape (from bcast_min to
 * select_margin in the component), folded into one number (FNV-1a): ranks
 * given different values would wait for segments or messages that never
 * come, so they must all have the same. */
static int mca_coll_loom_params_print(void)
{
    const int *first = &mca_coll_loom_component.bcast_min;
    const int *last = &mca_coll_loom_component.select_margin;
    uint32_t hash = 2166136261u;
    const int *p;

    for (p = first; p <= last; ++p) {
        hash = (hash ^ (uint32_t)*p) * 16777619u;
    }
    return (int)(hash & 0x7fffffffu);
}

bool mca_coll_loom_agreed(mca_coll_loom_module_t *module, struct ompi_communicator_t *comm)
{
    int mine[3], all[3] = {0, 0, 0};

    if (0 == module->agreed) {
        /* measured selection's records: a rank without them would take
         * other paths than the rest, so all step aside when one has none */
        if (0 != mca_coll_loom_component.select) {
            module->choices = calloc(MCA_COLL_LOOM_OPS * MCA_COLL_LOOM_SIZE_CLASSES,
                                     sizeof(*module->choices));
        }
        mine[0] = (module->reached &&
                   (0 == mca_coll_loom_component.select || NULL != module->choices)) ? 1 : 0;
        /* the smallest and the largest print: equal when every rank has the same */
        mine[1] = mca_coll_loom_params_print();
        mine[2] = -mine[1];
        if (OMPI_SUCCESS != module->next_allreduce(mine, all, 3, MPI_INT, MPI_MIN, comm,
                                                   module->next_allreduce_module)) {
            all[0] = 0;
        }
        module->agreed = (all[0] && all[1] == -all[2]) ? 1 : -1;
        if (!all[0]) {
            opal_output_verbose(10, mca_coll_loom_component.output, "coll loom: btl loom does "
                                "not reach every rank of %s from every rank (or a rank had no "
                                "memory for measured selection): its collectives go to the "
                                "next component", comm->c_name);
        } else if (all[1] != -all[2] && 0 == ompi_comm_rank(comm)) {
            opal_output(0, "coll loom: the ranks of %s were given different coll_loom_* "
                        "parameters (see ompi_info --param coll loom --level 9 at each): "
                        "its collectives go to the next component", comm->c_name);
        }
    }
    return 1 == module->agreed;
}

int mca_coll_loom_counted(int rc, int64_t *carried)
{
    mca_coll_loom_count((MCA_COLL_LOOM_FALL_BACK == rc) ? &mca_coll_loom_stats.fallbacks
                        : (OMPI_SUCCESS == rc)          ? carried
                                                        : &mca_coll_loom_stats.failures);
    return rc;
}
