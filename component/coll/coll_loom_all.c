/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The steps of the calls where every rank talks to every other
 * (MPI_Allreduce, MPI_Allgather; coll_loom_call.h): each rank's message to
 * every other (its buffers: its word that it is in the call, so that no one
 * touches them before), and at the end each rank's word (done or failed).
 */
#include "coll_loom_call.h"

#include "ompi/mca/pml/pml.h"
#include "ompi/request/request.h"

#include <stdlib.h>
#include <string.h>

int mca_coll_loom_exchange(mca_coll_loom_call_t *call, void *msgs, size_t msg_size,
                           ompi_request_t **reqs)
{
    uint8_t *mine = (uint8_t *)msgs + (size_t)call->rank * msg_size;
    int rank, n = 0, rc = OMPI_SUCCESS, wrc;

    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        if (rank == call->rank) {
            continue;
        }
        rc = MCA_PML_CALL(irecv((uint8_t *)msgs + (size_t)rank * msg_size, msg_size, MPI_BYTE,
                                rank, call->tag, call->comm, &reqs[n++]));
        if (OMPI_SUCCESS == rc) {
            rc = MCA_PML_CALL(isend(mine, msg_size, MPI_BYTE, rank, call->tag,
                                    MCA_PML_BASE_SEND_STANDARD, call->comm, &reqs[n++]));
        }
    }
    wrc = ompi_request_wait_all((size_t)n, reqs, MPI_STATUSES_IGNORE);
    return (OMPI_SUCCESS != rc) ? rc : wrc;
}

int mca_coll_loom_exchange_bare(mca_coll_loom_call_t *call, size_t msg_size)
{
    uint8_t msg[2 * sizeof(mca_coll_loom_dest_t)];
    int rank, rc = OMPI_SUCCESS;

    /* a zeroed message says "not usable" in every dest it holds; it is
     * small, so the sends complete without the receivers */
    memset(msg, 0, sizeof(msg));
    if (msg_size > sizeof(msg)) {
        return OMPI_ERR_BAD_PARAM;
    }
    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        if (rank != call->rank) {
            rc = MCA_PML_CALL(send(msg, msg_size, MPI_BYTE, rank, call->tag,
                                   MCA_PML_BASE_SEND_STANDARD, call->comm));
        }
    }
    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        if (rank != call->rank) {
            rc = MCA_PML_CALL(recv(msg, msg_size, MPI_BYTE, rank, call->tag, call->comm,
                                   MPI_STATUS_IGNORE));
        }
    }
    return (OMPI_SUCCESS != rc) ? rc : MCA_COLL_LOOM_FALL_BACK;
}

int mca_coll_loom_words(mca_coll_loom_call_t *call, int32_t *words, ompi_request_t **reqs)
{
    int32_t mine = (LOOM_OK == call->failure) ? MCA_COLL_LOOM_DONE : MCA_COLL_LOOM_FAILED;
    int rank, n = 0, rc = OMPI_SUCCESS, wrc;
    bool failed = (MCA_COLL_LOOM_DONE != mine);

    for (rank = 0; rank < call->size; ++rank) {
        words[rank] = MCA_COLL_LOOM_DONE; /* this rank's own, and any not received */
    }
    for (rank = 0; rank < call->size && OMPI_SUCCESS == rc; ++rank) {
        if (rank == call->rank) {
            continue;
        }
        rc = MCA_PML_CALL(irecv(&words[rank], sizeof(words[rank]), MPI_BYTE, rank, call->tag,
                                call->comm, &reqs[n++]));
        if (OMPI_SUCCESS == rc) {
            rc = MCA_PML_CALL(isend(&mine, sizeof(mine), MPI_BYTE, rank, call->tag,
                                    MCA_PML_BASE_SEND_STANDARD, call->comm, &reqs[n++]));
        }
    }
    wrc = ompi_request_wait_all((size_t)n, reqs, MPI_STATUSES_IGNORE);
    for (rank = 0; rank < call->size; ++rank) {
        failed |= (MCA_COLL_LOOM_DONE != words[rank]);
    }
    rc = (OMPI_SUCCESS != rc) ? rc : wrc;
    return (OMPI_SUCCESS != rc) ? rc : failed ? OMPI_ERROR : OMPI_SUCCESS;
}
