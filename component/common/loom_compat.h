/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * What differs between the Open MPI series both loom components build
 * against (4.1 and 5.0) and both need; each component keeps its own
 * differences in its own file (btl/btl_loom_compat.h,
 * coll/coll_loom_compat.h).
 */
#ifndef LOOM_COMPAT_H
#define LOOM_COMPAT_H

#include "opal_config.h"
#include "opal/constants.h"
#include "opal/runtime/opal.h"
#include "opal/util/output.h"

#include <stdio.h>
#include <string.h>

#if OPAL_MAJOR_VERSION >= 5
/* the launcher aggregates help messages (PRRTE's, through PMIx) */
#define LOOM_HELP_AGGREGATE_VAR "opal_base_help_aggregate"
#else
#define LOOM_HELP_AGGREGATE_VAR "orte_base_help_aggregate"
#endif

/* The Open MPI a component was built against is the one it runs in (same
 * major.minor: each series has its own interfaces): OPAL_SUCCESS, or
 * OPAL_ERR_NOT_SUPPORTED with a message naming both. */
static inline int loom_check_series(const char *component, const char *interface)
{
    char built[32];

    snprintf(built, sizeof(built), "%d.%d.", OPAL_MAJOR_VERSION, OPAL_MINOR_VERSION);
    if (0 != strncmp(opal_version_string, built, strlen(built))) {
        opal_output(0, "%s: built for Open MPI %s (%s) but loaded into Open MPI %s; rebuild "
                    "loom against this Open MPI. loom disabled.", component, OPAL_VERSION,
                    interface, opal_version_string);
        return OPAL_ERR_NOT_SUPPORTED;
    }
    return OPAL_SUCCESS;
}

#endif
