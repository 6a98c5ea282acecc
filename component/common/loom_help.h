/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * User-facing errors of both components: a topic of the component's help
 * file (help-mpi-btl-loom.txt, help-mpi-coll-loom.txt) shown with Open
 * MPI's opal_show_help, which mpirun prints once for all the ranks that
 * send it.  The help files are installed beside the component's .so (in
 * Open MPI's component directory, and in the build's stage/ for the tests),
 * a directory opal_show_help does not search by itself: loom_help_init adds
 * it.
 *
 * mpirun can lose such a message.  Open MPI 4.1.4 as Debian 12 builds it
 * (external PMIx 4.2, pmix ext3x) relays each rank's opal_show_help to
 * mpirun as a PMIx log message, and mpirun often unpacks a damaged copy
 * and drops it, printing only "ORTE_ERROR_LOG: Out of resource in file
 * ../../../orte/util/show_help.c at line 507" (or "Data unpack would read
 * past end of buffer ... line 513"): orte_show_help_recv finds the
 * message damaged after its file name.  Open MPI's own messages (btl tcp's)
 * are lost the same way.  On this 2-core machine, loaded, 12 of 20 jobs of
 * 2 ranks lost coll loom's message, 1 of 20 of 4 ranks, 0 to 4 of 20 of 1
 * rank, and 5 of 20 of 1 rank whose message is followed by Open MPI's own
 * (btl loom refusing to open); orte_base_help_aggregate=0 does not change
 * the relay (9 of 20 seen).  The damage comes with other messages relayed
 * at the same time and with the process exiting soon after: mpirun appears
 * to read the relayed bytes after the PMIx request that carried them has
 * been completed and its memory reused.
 * So with orte_base_help_aggregate=0 (the user asks for every rank's
 * messages, not one for all) loom prints the same help text from each
 * process itself, through its stderr, which mpirun forwards without loss;
 * the tests run so, and docs/user/selecting-and-tuning.md (Error messages)
 * tells users to.
 */
#ifndef LOOM_HELP_H
#define LOOM_HELP_H

#include "opal/util/output.h"
#include "opal/util/show_help.h"

#include <stdbool.h>
#include <stdlib.h>

typedef struct loom_help {
    const char *file;     /* e.g. "help-mpi-btl-loom.txt" */
    bool        searched; /* loom_help_init ran */
    bool        found;    /* opal_show_help can read the file */
    bool        relay;    /* LOOM_HELP_AGGREGATE_VAR: the launcher prints one for all */
} loom_help_t;

/* Finds help->file beside the shared object that holds anchor (any symbol
 * of the component), or in Open MPI's own help directory, and lets
 * opal_show_help search there.  Once per process; later calls do nothing. */
void loom_help_init(loom_help_t *help, const void *anchor);

/* Shows topic of help->file with the arguments after fallback: relayed to
 * mpirun (one message for all ranks), or printed by this process where
 * orte_base_help_aggregate=0 (above).  If the file could not be found,
 * prints fallback instead (a printf format taking the same arguments in the
 * same order, the message in one line), so that the facts reach the user
 * either way.  A macro, not a function: Open MPI's runtime relays
 * opal_show_help's messages to mpirun but not opal_show_vhelp's (each
 * process prints those), and a va_list cannot be handed on to
 * opal_show_help. */
#define LOOM_HELP_SHOW(help, topic, fallback, ...)                                  \
    do {                                                                            \
        if (!(help)->found) {                                                       \
            opal_output(0, fallback, ##__VA_ARGS__);                                \
        } else if ((help)->relay) {                                                 \
            (void)opal_show_help((help)->file, (topic), true, ##__VA_ARGS__);       \
        } else {                                                                    \
            char *loom_help_text_ = opal_show_help_string((help)->file, (topic), true, \
                                                          ##__VA_ARGS__);           \
            if (NULL != loom_help_text_) {                                          \
                opal_output(0, "%s", loom_help_text_);                              \
                free(loom_help_text_);                                              \
            }                                                                       \
        }                                                                           \
    } while (0)

#endif /* LOOM_HELP_H */
