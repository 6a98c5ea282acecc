/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The kernel's bounds on what a socket asks for as its buffers: a request
 * above them is cut to them without a word (then doubled), so whoever
 * fixes the size (btl_loom_tcp_sockbuf) says what it got.
 */
#include "base/loom_base.h"

#include <stdio.h>

unsigned long loom_tcp_buffer_bound(bool receive)
{
    const char *path = receive ? "/proc/sys/net/core/rmem_max" : "/proc/sys/net/core/wmem_max";
    unsigned long bound = 0;
    FILE *file = fopen(path, "r");

    if (NULL != file) {
        if (1 != fscanf(file, "%lu", &bound)) {
            bound = 0;
        }
        fclose(file);
    }
    return bound;
}
