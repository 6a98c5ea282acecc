/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The wireup interface of a rail that only connects endpoint to endpoint
 * (rc_verbs, rc_mlx5): a companion interface on the same memory domain and
 * device that peers can reach from the modex address alone (ud_verbs,
 * ud_mlx5).  It carries the CONNECT messages that exchange the rail's
 * endpoint addresses, so such a rail needs no other rail to start.
 */
#include "link/loom_link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Can this interface carry CONNECT messages to the rail's peers? */
static bool loom_wireup_usable(const loom_rail_t *rail, const uct_iface_attr_t *attr)
{
    uint64_t need = UCT_IFACE_FLAG_CONNECT_TO_IFACE | UCT_IFACE_FLAG_AM_BCOPY;

    return (attr->cap.flags & need) == need &&
           attr->cap.am.max_bcopy >= LOOM_OP_MSG_MAX &&
           /* peers address it with the rail's device address */
           attr->device_addr_len == rail->attr.device_addr_len;
}

static int loom_wireup_try(loom_rail_t *rail, const char *tl_name)
{
    uct_iface_attr_t attr;
    uct_iface_h iface = NULL;
    uint8_t *dev_addr = NULL, *iface_addr = NULL;
    int rc;

    rc = loom_rail_iface_open(rail, tl_name, rail->info.dev_name, &iface, &attr);
    if (LOOM_OK != rc) {
        return rc;
    }
    rc = LOOM_ERR_INVALID;
    if (!loom_wireup_usable(rail, &attr)) {
        goto out;
    }
    dev_addr   = calloc(1, attr.device_addr_len + 1);
    iface_addr = calloc(1, attr.iface_addr_len + 1);
    if (NULL == dev_addr || NULL == iface_addr) {
        rc = LOOM_ERR_NOMEM;
        goto out;
    }
    if (UCS_OK != uct_iface_get_device_address(iface, (uct_device_addr_t *)dev_addr) ||
        UCS_OK != uct_iface_get_address(iface, (uct_iface_addr_t *)iface_addr) ||
        0 != memcmp(dev_addr, rail->dev_addr, attr.device_addr_len)) {
        goto out;
    }
    rc = loom_rail_set_handlers(rail, iface);
    if (LOOM_OK != rc) {
        goto out;
    }
    free(rail->iface_addr);
    rail->iface_addr          = iface_addr;
    iface_addr                = NULL;
    rail->wireup_iface        = iface;
    rail->boot_iface          = iface;
    rail->boot_iface_addr_len = attr.iface_addr_len;
    rail->iface_reachable     = true;
    iface                     = NULL;
    snprintf(rail->wireup_tl, sizeof(rail->wireup_tl), "%s", tl_name);
    uct_iface_progress_enable(rail->wireup_iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    rc = LOOM_OK;

out:
    if (NULL != iface) {
        uct_iface_close(iface);
    }
    free(dev_addr);
    free(iface_addr);
    return rc;
}

void loom_rail_wireup_open(loom_rail_t *rail)
{
    uct_tl_resource_desc_t *tls;
    unsigned count, i;

    if (UCS_OK != uct_md_query_tl_resources(rail->md, &tls, &count)) {
        return;
    }
    for (i = 0; i < count && NULL == rail->wireup_iface; ++i) {
        if (0 == strcmp(tls[i].dev_name, rail->info.dev_name) &&
            0 != strcmp(tls[i].tl_name, rail->info.tl_name)) {
            (void)loom_wireup_try(rail, tls[i].tl_name);
        }
    }
    uct_release_tl_resource_list(tls);
    if (NULL == rail->wireup_iface) {
        loom_log(rail->engine, LOOM_LOG_INFO, "rail %s:%s has no wireup interface: its "
                 "endpoint addresses need another rail that connects to interfaces",
                 rail->info.tl_name, rail->info.dev_name);
    }
}

void loom_rail_wireup_close(loom_rail_t *rail)
{
    if (NULL != rail->wireup_iface) {
        uct_iface_progress_disable(rail->wireup_iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
        uct_iface_close(rail->wireup_iface);
        rail->wireup_iface = NULL;
    }
    rail->boot_iface = NULL;
}
