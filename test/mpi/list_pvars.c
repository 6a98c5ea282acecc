/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Lists loom's MPI_T performance variables (btl_loom_*, coll_loom_*), one
 * per line as name|class|description, for contrib/param-reference.sh: btl
 * loom registers most of them once its rails are open, which ompi_info
 * never does, and coll loom keeps them only while it is selected for a
 * communicator.  Run it as two processes with btl loom; rank 0 prints.
 */
#include <mpi.h>

#include <stdio.h>
#include <string.h>

static const char *class_name(int var_class)
{
    switch (var_class) {
    case MPI_T_PVAR_CLASS_STATE:         return "state";
    case MPI_T_PVAR_CLASS_LEVEL:         return "level";
    case MPI_T_PVAR_CLASS_SIZE:          return "size";
    case MPI_T_PVAR_CLASS_PERCENTAGE:    return "percentage";
    case MPI_T_PVAR_CLASS_HIGHWATERMARK: return "highwatermark";
    case MPI_T_PVAR_CLASS_LOWWATERMARK:  return "lowwatermark";
    case MPI_T_PVAR_CLASS_COUNTER:       return "counter";
    case MPI_T_PVAR_CLASS_AGGREGATE:     return "aggregate";
    case MPI_T_PVAR_CLASS_TIMER:         return "timer";
    default:                             return "generic";
    }
}

int main(int argc, char **argv)
{
    int provided, num = 0, rank, i;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (MPI_SUCCESS != MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) ||
        MPI_SUCCESS != MPI_T_pvar_get_num(&num)) {
        fprintf(stderr, "list_pvars: MPI_T is not available\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (i = 0; 0 == rank && i < num; i++) {
        char name[256], desc[2048];
        int name_len = sizeof(name), desc_len = sizeof(desc), verbosity, var_class, bind;
        int readonly, continuous, atomic;
        MPI_Datatype type;
        MPI_T_enum enumtype;

        if (MPI_SUCCESS != MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class,
                                               &type, &enumtype, desc, &desc_len, &bind,
                                               &readonly, &continuous, &atomic) ||
            (0 != strncmp(name, "btl_loom_", 9) && 0 != strncmp(name, "coll_loom_", 10))) {
            continue;
        }
        printf("%s|%s|%s\n", name, class_name(var_class), desc);
    }
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
