/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * coll loom's module: offered to every intracommunicator under ob1, with
 * loom's name of each rank (through ob1's BML); it takes MPI_Bcast,
 * MPI_Reduce, MPI_Allreduce and MPI_Allgather, and keeps the next component's for what it
 * leaves (and its allreduce to agree with the other ranks that loom reaches
 * them all).
 */
#include "coll_loom_bcast.h"

#include "ompi/mca/bml/base/base.h"
#include "ompi/mca/pml/base/base.h"
#include "ompi/proc/proc.h"
#include "opal/util/output.h"

#include <stdlib.h>
#include <string.h>

static void mca_coll_loom_module_construct(mca_coll_loom_module_t *module)
{
    module->api               = NULL;
    module->names             = NULL;
    module->reached           = false;
    module->one_node          = false;
    module->agreed            = 0;
    module->next_bcast        = NULL;
    module->next_bcast_module = NULL;
    module->next_allreduce    = NULL;
    module->next_allreduce_module = NULL;
    module->next_reduce       = NULL;
    module->next_reduce_module = NULL;
    module->next_allgather    = NULL;
    module->next_allgather_module = NULL;
    module->staging           = NULL;
    module->staging_size      = 0;
    module->choices           = NULL;
    memset(&module->slots, 0, sizeof(module->slots));
    module->flights           = 0;
}

static void mca_coll_loom_module_destruct(mca_coll_loom_module_t *module)
{
    if (NULL != module->next_bcast_module) {
        OBJ_RELEASE(module->next_bcast_module);
    }
    if (NULL != module->next_allreduce_module) {
        OBJ_RELEASE(module->next_allreduce_module);
    }
    if (NULL != module->next_reduce_module) {
        OBJ_RELEASE(module->next_reduce_module);
    }
    if (NULL != module->next_allgather_module) {
        OBJ_RELEASE(module->next_allgather_module);
    }
    mca_coll_loom_bcast_flight_land(module, 0);
    mca_coll_loom_bcast_slots_free(module);
    free(module->staging);
    free(module->names);
    free(module->choices);
}

OBJ_CLASS_INSTANCE(mca_coll_loom_module_t, mca_coll_base_module_t,
                   mca_coll_loom_module_construct, mca_coll_loom_module_destruct);

/* btl loom among the BTLs the BML uses towards a process, or NULL. */
static mca_bml_base_btl_t *mca_coll_loom_bml_btl(mca_bml_base_btl_array_t *array)
{
    mca_bml_base_btl_t *bml_btl;
    size_t i;

    for (i = 0; i < mca_bml_base_btl_array_get_size(array); ++i) {
        bml_btl = mca_bml_base_btl_array_get_index(array, i);
        if (0 == strcmp(bml_btl->btl->btl_component->btl_version.mca_component_name, "loom")) {
            return bml_btl;
        }
    }
    return NULL;
}

/* loom's name of another process, and the BTL's offer, through its BML
 * endpoint; 0 when loom does not reach it. */
static uint64_t mca_coll_loom_proc_name(ompi_proc_t *proc, const mca_btl_loom_coll_api_t **api)
{
    mca_bml_base_endpoint_t *endpoint = mca_bml_base_get_endpoint(proc);
    mca_bml_base_btl_t *bml_btl;
    const mca_btl_loom_coll_view_t *btl;

    if (NULL == endpoint) {
        return 0;
    }
    bml_btl = mca_coll_loom_bml_btl(&endpoint->btl_eager);
    if (NULL == bml_btl) {
        return 0;
    }
    btl = (const mca_btl_loom_coll_view_t *)bml_btl->btl;
    if (NULL == btl->coll_api || MCA_BTL_LOOM_COLL_API_VERSION != btl->coll_api->version) {
        return 0;
    }
    *api = btl->coll_api;
    return btl->coll_api->name(bml_btl->btl_endpoint);
}

static int mca_coll_loom_enable(mca_coll_base_module_t *base, struct ompi_communicator_t *comm)
{
    mca_coll_loom_module_t *module = (mca_coll_loom_module_t *)base;

    /* enabled after the components below it: what it leaves goes to them,
     * and their allreduce asks whether every rank can use loom */
    module->next_bcast            = comm->c_coll->coll_bcast;
    module->next_bcast_module     = comm->c_coll->coll_bcast_module;
    module->next_allreduce        = comm->c_coll->coll_allreduce;
    module->next_allreduce_module = comm->c_coll->coll_allreduce_module;
    module->next_reduce           = comm->c_coll->coll_reduce;
    module->next_reduce_module    = comm->c_coll->coll_reduce_module;
    module->next_allgather        = comm->c_coll->coll_allgather;
    module->next_allgather_module = comm->c_coll->coll_allgather_module;
    if (NULL == module->next_bcast_module || NULL == module->next_allreduce_module ||
        NULL == module->next_reduce_module || NULL == module->next_allgather_module) {
        opal_output_verbose(10, mca_coll_loom_component.output, "coll loom: %s has no "
                            "broadcast, reduce, allreduce or allgather below coll loom",
                            comm->c_name);
        module->next_bcast_module = module->next_allreduce_module = NULL;
        module->next_reduce_module = module->next_allgather_module = NULL;
        return OMPI_ERROR;
    }
    OBJ_RETAIN(module->next_bcast_module);
    OBJ_RETAIN(module->next_allreduce_module);
    OBJ_RETAIN(module->next_reduce_module);
    OBJ_RETAIN(module->next_allgather_module);
    return OMPI_SUCCESS;
}

static bool mca_coll_loom_usable(struct ompi_communicator_t *comm, const char **why)
{
    if (OMPI_COMM_IS_INTER(comm)) {
        *why = "an intercommunicator";
    } else if (ompi_comm_size(comm) < 2) {
        *why = "a single process";
    } else if (0 != strcmp(mca_pml_base_selected_component.pmlm_version.mca_component_name,
                           "ob1")) {
        *why = "the PML is not ob1 (btl loom runs under ob1)";
    } else {
        return true;
    }
    return false;
}

mca_coll_base_module_t *mca_coll_loom_comm_query(struct ompi_communicator_t *comm,
                                                 int *priority)
{
    const mca_btl_loom_coll_api_t *api = NULL;
    mca_coll_loom_module_t *module;
    const char *why;
    int rank, size = ompi_comm_size(comm);
    uint64_t *names;
    bool reached, one_node = true;

    if (!mca_coll_loom_usable(comm, &why)) {
        opal_output_verbose(10, mca_coll_loom_component.output, "coll loom: steps aside on "
                            "%s: %s", comm->c_name, why);
        return NULL;
    }
    names = calloc((size_t)size, sizeof(*names));
    if (NULL == names) {
        return NULL;
    }
    /* each rank decides for itself here; the first broadcast that could use
     * loom asks all (mca_coll_loom_agreed), so that all take the same path */
    reached = true;
    for (rank = 0; rank < size && reached; ++rank) {
        if (rank == ompi_comm_rank(comm)) {
            continue; /* named once the BTL is known */
        }
        one_node = one_node &&
                   OPAL_PROC_ON_LOCAL_NODE(ompi_comm_peer_lookup(comm, rank)->super.proc_flags);
        names[rank] = mca_coll_loom_proc_name(ompi_comm_peer_lookup(comm, rank), &api);
        if (0 == names[rank]) {
            opal_output_verbose(10, mca_coll_loom_component.output, "coll loom: btl loom "
                                "does not reach rank %d of %s: its broadcasts go to the next "
                                "component", rank, comm->c_name);
            reached = false;
        }
    }
    if (NULL != api) {
        names[ompi_comm_rank(comm)] = api->name(NULL);
    }
    module = OBJ_NEW(mca_coll_loom_module_t);
    if (NULL == module) {
        free(names);
        return NULL;
    }
    module->reached                 = reached && NULL != api;
    module->one_node                = one_node;
    module->api                     = api;
    module->names                   = names;
    module->super.coll_module_enable = mca_coll_loom_enable;
    module->super.coll_bcast        = mca_coll_loom_bcast;
    module->super.coll_reduce       = mca_coll_loom_reduce;
    module->super.coll_allreduce    = mca_coll_loom_allreduce;
    module->super.coll_allgather    = mca_coll_loom_allgather;
    *priority = mca_coll_loom_component.priority;
    return &module->super;
}
