/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Opening a UCT interface for a rail (its own or a companion wireup one)
 * with the engine's AM handlers and endpoint error handler in place.
 */
#include "link/loom_link.h"

#include <string.h>
#include <stdarg.h>
#include <stdio.h>

/* Set one key of a transport's configuration, or say which one failed. */
static int loom_rail_config_set(loom_rail_t *rail, uct_iface_config_t *config,
                                const char *key, const char *fmt, unsigned long value)
{
    char text[32];
    ucs_status_t status;

    snprintf(text, sizeof(text), fmt, value);
    status = uct_config_modify(config, key, text);
    if (UCS_OK != status) {
        loom_log(rail->engine, LOOM_LOG_ERROR, "rail %s:%s: cannot set %s to %s: %s",
                 rail->info.tl_name, rail->info.dev_name, key, text,
                 ucs_status_string(status));
        return LOOM_ERR_INVALID;
    }
    return LOOM_OK;
}

/* Fixed socket buffers: the kernel caps what is asked at its bound, then
 * doubles it, silently, so the process says it once per bound. */
static int loom_rail_tcp_sockbuf(loom_rail_t *rail, uct_iface_config_t *config, size_t bytes)
{
    static const struct {
        bool        receive;
        const char *what;
        const char *sysctl;
    } bounds[] = {{false, "send", "net.core.wmem_max"}, {true, "receive", "net.core.rmem_max"}};
    static bool warned;
    unsigned long bound;
    size_t i;
    int rc;

    rc = loom_rail_config_set(rail, config, "SNDBUF", "%lu", bytes);
    if (LOOM_OK == rc) {
        rc = loom_rail_config_set(rail, config, "RCVBUF", "%lu", bytes);
    }
    for (i = 0; LOOM_OK == rc && !warned && i < sizeof(bounds) / sizeof(bounds[0]); ++i) {
        bound = loom_tcp_buffer_bound(bounds[i].receive);
        if (0 != bound && bound < bytes) {
            loom_log(rail->engine, LOOM_LOG_WARN, "tcp rails: %s buffers of %zu bytes asked, "
                     "but %s caps the request at %lu (the sockets get %lu)", bounds[i].what,
                     bytes, bounds[i].sysctl, bound, 2 * bound);
        }
    }
    warned = true;
    return rc;
}

/*
 * TCP carries an active message in one segment: a larger segment lets eager
 * messages grow past UCX's 8 KiB default, saving a rendezvous round trip.
 * Socket buffers are the kernel's to size unless configured: autotuning
 * follows each connection's traffic, which on shared cores can leave one
 * slower after a burst of another kind (docs/perf/2026-12-08-sockbuf.md).
 * (Keepalive is set on the sockets themselves: tcp_liveness.c.)
 */
static int loom_rail_tune_tcp(loom_rail_t *rail, uct_iface_config_t *config)
{
    size_t seg = rail->engine->config.tcp_seg_size;
    int rc = LOOM_OK;

    if (0 != rail->engine->config.tcp_sockbuf) {
        rc = loom_rail_tcp_sockbuf(rail, config, rail->engine->config.tcp_sockbuf);
    }

    if (LOOM_OK == rc && 0 != seg) {
        rc = loom_rail_config_set(rail, config, "TX_SEG_SIZE", "%lu", seg);
        /* receive segments must hold what the peer sends */
        if (LOOM_OK == rc) {
            rc = loom_rail_config_set(rail, config, "RX_SEG_SIZE", "%lu",
                                      seg < 65536 ? 65536 : seg);
        }
    }
    return rc;
}

/* Transport settings loom needs; keys a transport does not have are skipped. */
static int loom_rail_tune(loom_rail_t *rail, const char *tl_name, uct_iface_config_t *config)
{
    if (0 == strcmp(tl_name, "tcp")) {
        return loom_rail_tune_tcp(rail, config);
    }
    if (0 == strncmp(tl_name, "ud", 2)) {
        /* UD's check of the destination GID drops soft-RoCE (rxe) packets. */
        (void)uct_config_modify(config, "ETH_DGID_CHECK", "n");
    }
    return LOOM_OK;
}

int loom_rail_set_handlers(loom_rail_t *rail, uct_iface_h iface)
{
    ucs_status_t status;
    size_t i;

    for (i = 0; i < rail->engine->am_handler_count; ++i) {
        status = uct_iface_set_am_handler(iface, rail->engine->am_handlers[i].id,
                                          rail->engine->am_handlers[i].cb, rail, 0);
        if (UCS_OK != status) {
            loom_log(rail->engine, LOOM_LOG_ERROR, "rail %s:%s: cannot set AM handler "
                     "%u: %s", rail->info.tl_name, rail->info.dev_name,
                     rail->engine->am_handlers[i].id, ucs_status_string(status));
            return LOOM_ERR_IO;
        }
    }
    return LOOM_OK;
}

int loom_rail_iface_open(loom_rail_t *rail, const char *tl_name, const char *dev_name,
                         uct_iface_h *iface_p, uct_iface_attr_t *attr)
{
    uct_iface_params_t params;
    uct_iface_config_t *iface_config = NULL;
    ucs_status_t status;
    int rc;

    status = uct_md_iface_config_read(rail->md, tl_name, NULL, NULL, &iface_config);
    if (UCS_OK != status) {
        goto err;
    }
    rc = loom_rail_tune(rail, tl_name, iface_config);
    if (LOOM_OK != rc) {
        uct_config_release(iface_config);
        return rc;
    }
    memset(&params, 0, sizeof(params));
    params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE |
                        UCT_IFACE_PARAM_FIELD_STATS_ROOT | UCT_IFACE_PARAM_FIELD_RX_HEADROOM |
                        UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
                        UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
                        UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = tl_name;
    params.mode.device.dev_name = dev_name;
    params.stats_root           = NULL;
    params.rx_headroom          = 0;
    params.err_handler          = rail->engine->ep_error;
    params.err_handler_arg      = rail;
    params.err_handler_flags    = 0;
    status = uct_iface_open(rail->md, rail->engine->worker, &params, iface_config, iface_p);
    uct_config_release(iface_config);
    if (UCS_OK != status) {
        goto err;
    }
    status = uct_iface_query(*iface_p, attr);
    if (UCS_OK != status) {
        uct_iface_close(*iface_p);
        *iface_p = NULL;
        goto err;
    }
    return LOOM_OK;

err:
    loom_log(rail->engine, LOOM_LOG_ERROR, "cannot open interface %s:%s (md %s): %s",
             tl_name, dev_name, rail->md_attr.component_name, ucs_status_string(status));
    return loom_status_to_rc(status);
}
