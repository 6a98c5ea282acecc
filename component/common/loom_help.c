/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * opal_show_help for an out-of-tree component (loom_help.h).  Each
 * component's .so has its own copy of this file and its own help file.
 */
#define _GNU_SOURCE
#include "opal_config.h"

#include "common/loom_help.h"
#include "common/loom_compat.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/installdirs/installdirs.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* dir/file can be read */
static bool loom_help_readable(const char *dir, const char *file)
{
    char path[PATH_MAX];
    int len;

    if (NULL == dir || '\0' == dir[0]) {
        return false;
    }
    len = snprintf(path, sizeof(path), "%s/%s", dir, file);
    return len > 0 && (size_t)len < sizeof(path) && 0 == access(path, R_OK);
}

void loom_help_init(loom_help_t *help, const void *anchor)
{
    const bool *aggregate = NULL;
    char dir[PATH_MAX];
    char *slash;
    Dl_info info;
    int index;

    if (help->searched) {
        return;
    }
    help->searched = true;
    /* registered by Open MPI's runtime (true unless set to 0); absent in
     * tools such as ompi_info, which print their messages themselves */
    help->relay = OPAL_SUCCESS == mca_base_var_find_by_name(LOOM_HELP_AGGREGATE_VAR, &index) &&
                  OPAL_SUCCESS == mca_base_var_get_value(index, &aggregate, NULL, NULL) &&
                  NULL != aggregate && *aggregate;
    /* the directory the component was loaded from: Open MPI's component
     * directory once installed, the build's stage/ for the tests */
    if (0 != dladdr(anchor, &info) && NULL != info.dli_fname &&
        strlen(info.dli_fname) < sizeof(dir)) {
        strcpy(dir, info.dli_fname);
        slash = strrchr(dir, '/');
        if (NULL != slash) {
            *slash = '\0';
            if (loom_help_readable(dir, help->file)) {
                help->found = OPAL_SUCCESS == opal_show_help_add_dir(dir);
                return;
            }
        }
    }
    /* a package may put it where Open MPI's own help files are */
    help->found = loom_help_readable(opal_install_dirs.opaldatadir, help->file);
}
