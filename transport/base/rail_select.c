/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Choosing rails: either the user's explicit list "tl:dev[,tl:dev...]" or
 * "auto", which takes RDMA transports first, then TCP devices, never loopback
 * or shared memory, and prefers devices close to this process (hwloc).
 */
#include "base/loom_base.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct loom_resource {
    uct_component_h component;
    char md_name[UCT_MD_NAME_MAX];
    char tl_name[UCT_TL_NAME_MAX];
    char dev_name[UCT_DEVICE_NAME_MAX];
    uct_device_type_t dev_type;
    int  rank;      /* auto: lower is better */
} loom_resource_t;

typedef struct loom_resources {
    loom_resource_t *items;
    int count;
} loom_resources_t;

static int loom_resources_add_md(loom_engine_t *engine, loom_resources_t *res,
                                 uct_component_h component, const char *md_name)
{
    uct_tl_resource_desc_t *tls;
    uct_md_config_t *md_config;
    unsigned tl_count, i;
    ucs_status_t status;
    uct_md_h md;

    status = uct_md_config_read(component, NULL, NULL, &md_config);
    if (UCS_OK != status) {
        return LOOM_OK; /* an MD we cannot open is simply not a candidate */
    }
    status = uct_md_open(component, md_name, md_config, &md);
    uct_config_release(md_config);
    if (UCS_OK != status) {
        loom_log(engine, LOOM_LOG_DEBUG, "skipping memory domain %s: %s", md_name,
                 ucs_status_string(status));
        return LOOM_OK;
    }
    status = uct_md_query_tl_resources(md, &tls, &tl_count);
    if (UCS_OK == status) {
        loom_resource_t *grown = realloc(res->items, (res->count + tl_count + 1) *
                                                     sizeof(*grown));
        if (NULL == grown) {
            uct_release_tl_resource_list(tls);
            uct_md_close(md);
            return LOOM_ERR_NOMEM;
        }
        res->items = grown;
        for (i = 0; i < tl_count; ++i) {
            loom_resource_t *item = &res->items[res->count++];
            item->component = component;
            item->dev_type  = tls[i].dev_type;
            item->rank      = 0;
            snprintf(item->md_name, sizeof(item->md_name), "%s", md_name);
            snprintf(item->tl_name, sizeof(item->tl_name), "%s", tls[i].tl_name);
            snprintf(item->dev_name, sizeof(item->dev_name), "%s", tls[i].dev_name);
        }
        uct_release_tl_resource_list(tls);
    }
    uct_md_close(md);
    return LOOM_OK;
}

static int loom_resources_query(loom_engine_t *engine, loom_resources_t *res)
{
    uct_component_h *components;
    unsigned count, i, j;
    ucs_status_t status;
    int rc = LOOM_OK;

    res->items = NULL;
    res->count = 0;
    status = uct_query_components(&components, &count);
    if (UCS_OK != status) {
        loom_log(engine, LOOM_LOG_ERROR, "cannot list UCT components: %s",
                 ucs_status_string(status));
        return LOOM_ERR_IO;
    }
    for (i = 0; i < count && LOOM_OK == rc; ++i) {
        uct_component_attr_t attr;

        memset(&attr, 0, sizeof(attr));
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                          UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        if (UCS_OK != uct_component_query(components[i], &attr)) {
            continue;
        }
        attr.md_resources = calloc(attr.md_resource_count + 1, sizeof(*attr.md_resources));
        if (NULL == attr.md_resources) {
            rc = LOOM_ERR_NOMEM;
            break;
        }
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        if (UCS_OK == uct_component_query(components[i], &attr)) {
            for (j = 0; j < attr.md_resource_count && LOOM_OK == rc; ++j) {
                rc = loom_resources_add_md(engine, res, components[i],
                                           attr.md_resources[j].md_name);
            }
        }
        free(attr.md_resources);
    }
    uct_release_component_list(components);
    return rc;
}

static void loom_resources_list(const loom_resources_t *res, char *buf, size_t size)
{
    size_t used = 0;
    int i;

    buf[0] = '\0';
    for (i = 0; i < res->count && used < size; ++i) {
        used += snprintf(buf + used, size - used, "%s%s:%s", i ? ", " : "",
                         res->items[i].tl_name, res->items[i].dev_name);
    }
}

static int loom_choice_from(const loom_resource_t *item, loom_rail_choice_t *choice)
{
    choice->component = item->component;
    snprintf(choice->md_name, sizeof(choice->md_name), "%s", item->md_name);
    snprintf(choice->tl_name, sizeof(choice->tl_name), "%s", item->tl_name);
    snprintf(choice->dev_name, sizeof(choice->dev_name), "%s", item->dev_name);
    return LOOM_OK;
}

/* Explicit list: every entry must exist, no entry twice, none empty (a
 * stray comma is a typo, not a list with fewer rails). */
static int loom_rails_explicit(loom_engine_t *engine, const loom_resources_t *res,
                               const char *spec, loom_rail_choice_t *choices, int *count_p)
{
    char *copy = strdup(spec), *rest = copy, *entry;
    int count = 0, rc = LOOM_OK, i, j;

    if (NULL == copy) {
        return LOOM_ERR_NOMEM;
    }
    while (LOOM_OK == rc && NULL != (entry = strsep(&rest, ","))) {
        char *dev = strchr(entry, ':');
        char avail[1024];

        if ('\0' == entry[0]) {
            loom_log(engine, LOOM_LOG_ERROR, "btl_loom_rails=\"%s\": entry %d is empty "
                     "(a comma too many?)", spec, count + 1);
            rc = LOOM_ERR_INVALID;
            break;
        }
        if (NULL == dev || dev == entry || '\0' == dev[1]) {
            loom_log(engine, LOOM_LOG_ERROR, "btl_loom_rails: entry '%s' is not of the "
                     "form transport:device (e.g. tcp:lo or rc_verbs:mlx5_0:1)", entry);
            rc = LOOM_ERR_INVALID;
            break;
        }
        *dev++ = '\0';
        if (count == LOOM_MAX_RAILS) {
            loom_log(engine, LOOM_LOG_ERROR, "btl_loom_rails: more than %d rails",
                     LOOM_MAX_RAILS);
            rc = LOOM_ERR_INVALID;
            break;
        }
        for (i = 0; i < res->count; ++i) {
            if (!strcmp(res->items[i].tl_name, entry) &&
                !strcmp(res->items[i].dev_name, dev)) {
                break;
            }
        }
        if (i == res->count) {
            loom_resources_list(res, avail, sizeof(avail));
            loom_log(engine, LOOM_LOG_ERROR, "btl_loom_rails: no UCT transport '%s' on "
                     "device '%s' on this host (available: %s)", entry, dev, avail);
            rc = LOOM_ERR_NOT_FOUND;
            break;
        }
        for (j = 0; j < count && !engine->config.rails_repeat; ++j) {
            if (!strcmp(choices[j].tl_name, entry) && !strcmp(choices[j].dev_name, dev)) {
                loom_log(engine, LOOM_LOG_ERROR, "btl_loom_rails: rail %s:%s named twice",
                         entry, dev);
                rc = LOOM_ERR_INVALID;
            }
        }
        if (LOOM_OK == rc) {
            loom_choice_from(&res->items[i], &choices[count++]);
        }
    }
    free(copy);
    *count_p = count;
    return rc;
}

/* RDMA first (0), TCP second (1), everything else is not a rail (-1). */
static int loom_auto_class(const loom_resource_t *item)
{
    static const char *rdma[] = {"rc_mlx5", "dc_mlx5", "rc_verbs", NULL};
    int i;

    if (!strcmp(item->dev_name, "lo") || UCT_DEVICE_TYPE_SHM == item->dev_type ||
        UCT_DEVICE_TYPE_SELF == item->dev_type) {
        return -1;
    }
    for (i = 0; NULL != rdma[i]; ++i) {
        if (!strcmp(item->tl_name, rdma[i])) {
            return 0;
        }
    }
    return strcmp(item->tl_name, "tcp") ? -1 : 1;
}

/* Is the device attached below the CPUs this process is bound to? */
static bool loom_device_is_near(hwloc_topology_t topo, hwloc_const_cpuset_t bound,
                                const char *dev_name)
{
    char name[UCT_DEVICE_NAME_MAX], *colon;
    hwloc_obj_t osdev = NULL, parent;

    snprintf(name, sizeof(name), "%s", dev_name);
    colon = strchr(name, ':'); /* "mlx5_0:1": hwloc names the device "mlx5_0" */
    if (NULL != colon) {
        *colon = '\0';
    }
    while (NULL != (osdev = hwloc_get_next_osdev(topo, osdev))) {
        if (NULL != osdev->name && !strcmp(osdev->name, name)) {
            parent = hwloc_get_non_io_ancestor_obj(topo, osdev);
            return NULL != parent && hwloc_bitmap_intersects(parent->cpuset, bound);
        }
    }
    return true; /* unknown to hwloc (virtual device): no preference */
}

static void loom_rank_by_locality(loom_engine_t *engine, loom_resources_t *res)
{
    hwloc_topology_t topo;
    hwloc_bitmap_t bound;
    int i;

    if (hwloc_topology_init(&topo) != 0) {
        return;
    }
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    bound = hwloc_bitmap_alloc();
    if (NULL != bound && 0 == hwloc_topology_load(topo) &&
        0 == hwloc_get_cpubind(topo, bound, HWLOC_CPUBIND_PROCESS)) {
        for (i = 0; i < res->count; ++i) {
            if (res->items[i].rank >= 0 &&
                !loom_device_is_near(topo, bound, res->items[i].dev_name)) {
                res->items[i].rank += 1; /* far devices after near ones of a class */
                loom_log(engine, LOOM_LOG_DEBUG, "device %s is not near this process",
                         res->items[i].dev_name);
            }
        }
    }
    hwloc_bitmap_free(bound);
    hwloc_topology_destroy(topo);
}

static int loom_rails_auto(loom_engine_t *engine, loom_resources_t *res, int max_rails,
                           loom_rail_choice_t *choices, int *count_p)
{
    int count = 0, i, best;

    for (i = 0; i < res->count; ++i) {
        int cls = loom_auto_class(&res->items[i]);
        res->items[i].rank = (cls < 0) ? -1 : cls * 2;
    }
    loom_rank_by_locality(engine, res);
    if (max_rails <= 0 || max_rails > LOOM_MAX_RAILS) {
        max_rails = LOOM_MAX_RAILS;
    }
    /* Selection by rank, stable in the order UCT listed the devices. */
    while (count < max_rails) {
        best = -1;
        for (i = 0; i < res->count; ++i) {
            if (res->items[i].rank >= 0 &&
                (best < 0 || res->items[i].rank < res->items[best].rank)) {
                best = i;
            }
        }
        if (best < 0) {
            break;
        }
        loom_choice_from(&res->items[best], &choices[count++]);
        loom_log(engine, LOOM_LOG_INFO, "auto: chose rail %s:%s",
                 res->items[best].tl_name, res->items[best].dev_name);
        res->items[best].rank = -1;
    }
    if (0 == count) {
        loom_log(engine, LOOM_LOG_WARN, "btl_loom_rails=auto found no RDMA transport and "
                 "no TCP device other than loopback; name rails explicitly "
                 "(e.g. btl_loom_rails=tcp:lo)");
        return LOOM_ERR_NOT_FOUND;
    }
    *count_p = count;
    return LOOM_OK;
}

int loom_rails_select(loom_engine_t *engine, const char *spec, int max_rails,
                      loom_rail_choice_t *choices, int *count_p)
{
    loom_resources_t res;
    int rc;

    *count_p = 0;
    if (NULL == spec || '\0' == spec[0]) {
        loom_log(engine, LOOM_LOG_ERROR, "btl_loom_rails is empty: give 'auto' or a list "
                 "of transport:device");
        return LOOM_ERR_INVALID;
    }
    rc = loom_resources_query(engine, &res);
    if (LOOM_OK == rc) {
        if (!strcmp(spec, "auto")) {
            rc = loom_rails_auto(engine, &res, max_rails, choices, count_p);
        } else {
            rc = loom_rails_explicit(engine, &res, spec, choices, count_p);
        }
    }
    free(res.items);
    return rc;
}
