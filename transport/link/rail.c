/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * One rail: a UCT interface on one memory domain, transport and device.
 */
#include "link/loom_link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes loom puts in front of every AM payload. */
#define LOOM_AM_OVERHEAD sizeof(loom_wire_send_t)


static int loom_rail_check_caps(loom_rail_t *rail)
{
    uint64_t flags = rail->attr.cap.flags;
    const char *missing = NULL;

    if (!(flags & UCT_IFACE_FLAG_AM_BCOPY)) {
        missing = "active messages (am_bcopy)";
    } else if (!(flags & (UCT_IFACE_FLAG_PUT_ZCOPY))) {
        missing = "RDMA write (put_zcopy)";
    } else if (!(flags & (UCT_IFACE_FLAG_CONNECT_TO_IFACE | UCT_IFACE_FLAG_CONNECT_TO_EP))) {
        missing = "point-to-point connections";
    } else if (rail->attr.cap.am.max_bcopy <= LOOM_AM_OVERHEAD + 64) {
        missing = "active messages of useful size";
    }
    if (NULL != missing) {
        loom_log(rail->engine, LOOM_LOG_ERROR, "rail %s:%s cannot be used: the transport "
                 "lacks %s", rail->info.tl_name, rail->info.dev_name, missing);
        return LOOM_ERR_INVALID;
    }
    return LOOM_OK;
}

static void loom_rail_fill_info(loom_rail_t *rail)
{
    loom_rail_info_t *info = &rail->info;
    uint64_t flags = rail->attr.cap.flags;

    rail->iface_reachable = !!(flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE);
    info->connect_to_ep = !(flags & UCT_IFACE_FLAG_CONNECT_TO_IFACE) ||
                          rail->engine->config.force_connect_to_ep;
    info->has_put       = !!(flags & UCT_IFACE_FLAG_PUT_ZCOPY);
    info->has_get       = !!(flags & UCT_IFACE_FLAG_GET_ZCOPY);
    info->am_max        = rail->attr.cap.am.max_bcopy - LOOM_AM_OVERHEAD;
    info->get_min       = rail->attr.cap.get.min_zcopy;
    info->put_max       = rail->attr.cap.put.max_zcopy;
    if (info->has_get && rail->attr.cap.get.max_zcopy < info->put_max) {
        info->put_max = rail->attr.cap.get.max_zcopy;
    }
    info->latency_us    = rail->attr.latency.c * 1e6;
    info->bandwidth_mbs = (rail->attr.bandwidth.dedicated +
                           rail->attr.bandwidth.shared) / 1e6;
    snprintf(info->component, sizeof(info->component), "%s",
             rail->md_attr.component_name);
}


int loom_rail_open(loom_engine_t *engine, loom_rail_t *rail, uct_component_h component,
                   const char *md_name, const char *tl_name, const char *dev_name)
{
    uct_md_config_t *md_config = NULL;
    ucs_status_t status;
    int rc;

    memset(rail, 0, sizeof(*rail));
    rail->index     = (int)(rail - engine->rails);
    rail->engine    = engine;
    rail->component = component;
    snprintf(rail->info.tl_name, sizeof(rail->info.tl_name), "%s", tl_name);
    snprintf(rail->info.dev_name, sizeof(rail->info.dev_name), "%s", dev_name);

    status = uct_md_config_read(component, NULL, NULL, &md_config);
    if (UCS_OK != status) {
        goto err;
    }
    status = uct_md_open(component, md_name, md_config, &rail->md);
    uct_config_release(md_config);
    if (UCS_OK != status) {
        goto err;
    }
    status = uct_md_query(rail->md, &rail->md_attr);
    if (UCS_OK != status) {
        goto err;
    }
    /* Registration is needed where the MD has it and remote keys mean something. */
    rail->needs_reg = (rail->md_attr.cap.flags & UCT_MD_FLAG_REG) &&
                      rail->md_attr.rkey_packed_size > 0;

    rc = loom_rail_iface_open(rail, tl_name, dev_name, &rail->iface, &rail->attr);
    if (LOOM_OK != rc) {
        return rc;
    }
    loom_rail_fill_info(rail);
    loom_checked_rail_init(rail);
    /* messages from the sender's memory where that needs no registration */
    rail->am_zcopy_iov = 0;
    if ((rail->attr.cap.flags & UCT_IFACE_FLAG_AM_ZCOPY) &&
        !(rail->md_attr.cap.flags & UCT_MD_FLAG_NEED_MEMH) &&
        rail->attr.cap.am.max_hdr >= sizeof(loom_wire_send_t)) {
        rail->am_zcopy_iov = (rail->attr.cap.am.max_iov < LOOM_AM_ZCOPY_IOV) ?
                             rail->attr.cap.am.max_iov : LOOM_AM_ZCOPY_IOV;
    }
    rc = loom_rail_check_caps(rail);
    if (LOOM_OK != rc) {
        return rc;
    }
    rc = loom_rail_set_handlers(rail, rail->iface);
    if (LOOM_OK != rc) {
        return rc;
    }
    rail->dev_addr   = calloc(1, rail->attr.device_addr_len + 1);
    rail->iface_addr = calloc(1, rail->attr.iface_addr_len + 1);
    if (NULL == rail->dev_addr || NULL == rail->iface_addr) {
        return LOOM_ERR_NOMEM;
    }
    status = uct_iface_get_device_address(rail->iface, (uct_device_addr_t *)rail->dev_addr);
    if (UCS_OK == status && rail->iface_reachable) {
        status = uct_iface_get_address(rail->iface, (uct_iface_addr_t *)rail->iface_addr);
        rail->boot_iface          = rail->iface;
        rail->boot_iface_addr_len = rail->attr.iface_addr_len;
    }
    if (UCS_OK != status) {
        goto err;
    }
    if (!rail->iface_reachable) {
        /* endpoint addresses then travel over a companion interface, if any */
        loom_rail_wireup_open(rail);
    }
    uct_iface_progress_enable(rail->iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    loom_log(engine, LOOM_LOG_INFO, "rail %d: %s:%s (md %s), AM up to %zu B, put up to "
             "%zu B, %s, %s%s%s", rail->index, tl_name, dev_name, md_name,
             rail->info.am_max, rail->info.put_max,
             rail->info.has_get ? "hardware get" : "get by push",
             rail->info.connect_to_ep ? "connect to ep" : "connect to iface",
             NULL != rail->wireup_iface ? ", wireup over " : "",
             NULL != rail->wireup_iface ? rail->wireup_tl : "");
    return LOOM_OK;

err:
    loom_log(engine, LOOM_LOG_ERROR, "cannot open rail %s:%s (md %s): %s", tl_name,
             dev_name, md_name, ucs_status_string(status));
    return loom_status_to_rc(status);
}

void loom_rail_close(loom_rail_t *rail)
{
    loom_rail_wireup_close(rail);
    if (NULL != rail->iface) {
        uct_iface_progress_disable(rail->iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
        uct_iface_close(rail->iface);
        rail->iface = NULL;
    }
    if (NULL != rail->md) {
        uct_md_close(rail->md);
        rail->md = NULL;
    }
    free(rail->dev_addr);
    free(rail->iface_addr);
    rail->dev_addr   = NULL;
    rail->iface_addr = NULL;
}

void loom_checked_rail_init(loom_rail_t *rail)
{
    const uct_iface_attr_t *attr = &rail->attr;

    /* no rkey, no protection: the NIC would write to any address */
    rail->checked = !rail->engine->config.trust_network &&
                    (0 == rail->md_attr.rkey_packed_size ||
                     !(rail->md_attr.cap.flags & UCT_MD_FLAG_NEED_RKEY));
    rail->checked_zcopy = (attr->cap.flags & UCT_IFACE_FLAG_AM_ZCOPY) &&
                          attr->cap.am.max_hdr >= sizeof(loom_wire_put_t) &&
                          attr->cap.am.max_iov >= 1 &&
                          attr->cap.am.max_zcopy > sizeof(loom_wire_put_t);
    if (rail->checked_zcopy) {
        /* tcp counts the header in max_zcopy */
        rail->checked_seg = attr->cap.am.max_zcopy - sizeof(loom_wire_put_t);
    } else if (attr->cap.am.max_bcopy > sizeof(loom_wire_put_t)) {
        rail->checked_seg = attr->cap.am.max_bcopy - sizeof(loom_wire_put_t);
    } else {
        rail->checked_seg = 0; /* loom_rail_check_caps refuses such a rail anyway */
    }
}
