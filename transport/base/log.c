/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Base of the engine: logging, error codes and ids, used by every layer.
 */
#include "base/loom_base.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

const char *loom_strerror(int rc)
{
    switch (rc) {
    case LOOM_OK:            return "success";
    case LOOM_INPROGRESS:    return "in progress";
    case LOOM_ERR_AGAIN:     return "no resources, try again";
    case LOOM_ERR_INVALID:   return "invalid argument or configuration";
    case LOOM_ERR_NOMEM:     return "out of memory";
    case LOOM_ERR_UNREACH:   return "peer unreachable on every rail";
    case LOOM_ERR_IO:        return "transport I/O error";
    case LOOM_ERR_STALE_KEY: return "remote key refused (unknown or stale)";
    case LOOM_ERR_RANGE:     return "remote address outside the registered region";
    case LOOM_ERR_NOT_FOUND: return "not found";
    case LOOM_ERR_CANCELLED: return "cancelled (its counter was released)";
    case LOOM_ERR_LIMIT:
        return "refused at a configured bound (push counters or waiting pushes)";
    default:                 return "unknown error";
    }
}

void loom_log(loom_engine_t *engine, int level, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    if (level > engine->config.verbose && level > LOOM_LOG_WARN) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (NULL != engine->config.log_cb) {
        engine->config.log_cb(engine->config.cb_ctx, level, msg);
    } else {
        fprintf(stderr, "loom: %s\n", msg);
    }
}

int loom_status_to_rc(ucs_status_t status)
{
    switch (status) {
    case UCS_OK:              return LOOM_OK;
    case UCS_INPROGRESS:      return LOOM_INPROGRESS;
    case UCS_ERR_NO_RESOURCE: return LOOM_ERR_AGAIN;
    case UCS_ERR_NO_MEMORY:   return LOOM_ERR_NOMEM;
    case UCS_ERR_UNREACHABLE: return LOOM_ERR_UNREACH;
    default:                  return LOOM_ERR_IO;
    }
}

/* A random value, never 0 (epochs, connection ids). */
uint32_t loom_random_id(void)
{
    uint32_t epoch = 0;

    /* Any value but 0; a restarted process must not reuse its old epoch. */
    while (0 == epoch) {
        if (getrandom(&epoch, sizeof(epoch), 0) != (ssize_t)sizeof(epoch)) {
            epoch = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 12) ^ (uint32_t)clock();
        }
    }
    return epoch;
}
