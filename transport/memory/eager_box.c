/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The eager rings' registered control area: small boxes, registered a chunk
 * at a time, that a ring request's acknowledgement is RDMA-written into, or
 * that an acknowledgement is written from.  A connection holds a box only
 * while its request is under way, so idle connections cost none.
 */
#include "memory/loom_memory.h"

#include <stdlib.h>
#include <string.h>

static int loom_eager_chunk_new(loom_engine_t *engine)
{
    loom_eager_engine_t *eager = &engine->eager;
    loom_eager_chunk_t *chunk;
    size_t bytes = eager->box_size * LOOM_EAGER_BOXES_PER_CHUNK;
    int rc, i;

    chunk = calloc(1, sizeof(*chunk));
    if (NULL == chunk) {
        return LOOM_ERR_NOMEM;
    }
    if (0 != posix_memalign((void **)&chunk->mem, 64, bytes)) {
        free(chunk);
        return LOOM_ERR_NOMEM;
    }
    memset(chunk->mem, 0, bytes);
    /* acks land in our boxes; acks we write go from them */
    rc = loom_mem_register_access(engine, chunk->mem, bytes, LOOM_ACCESS_REMOTE_WRITE,
                                  &chunk->region);
    if (LOOM_OK != rc) {
        free(chunk->mem);
        free(chunk);
        return rc;
    }
    for (i = 0; i < LOOM_EAGER_BOXES_PER_CHUNK; ++i) {
        loom_eager_box_t *box = &chunk->boxes[i];
        box->chunk      = chunk;
        box->mem        = chunk->mem + (size_t)i * eager->box_size;
        box->rkey_rail  = -1;
        box->next_free  = eager->free_boxes;
        eager->free_boxes = box;
    }
    chunk->next   = eager->chunks;
    eager->chunks = chunk;
    return LOOM_OK;
}

loom_eager_box_t *loom_eager_box_get(loom_engine_t *engine)
{
    loom_eager_engine_t *eager = &engine->eager;
    loom_eager_box_t *box;

    if (NULL == eager->free_boxes && LOOM_OK != loom_eager_chunk_new(engine)) {
        loom_log(engine, LOOM_LOG_WARN, "eager rings: cannot register a control box");
        return NULL;
    }
    box = eager->free_boxes;
    eager->free_boxes = box->next_free;
    box->next_free = NULL;
    memset(box->mem, 0, eager->box_size); /* no flags left from an earlier use */
    return box;
}

void loom_eager_box_put(loom_engine_t *engine, loom_eager_box_t *box)
{
    if (box->rkey_rail >= 0) {
        uct_rkey_release(engine->rails[box->rkey_rail].component, &box->rkey);
        box->rkey_rail = -1;
    }
    box->next_free = engine->eager.free_boxes;
    engine->eager.free_boxes = box;
}

uct_mem_h loom_eager_box_memh(const loom_eager_box_t *box, int rail)
{
    return box->chunk->region->memh[rail];
}

int loom_eager_box_key(const loom_eager_box_t *box, void *buf, size_t size)
{
    return loom_key_pack(box->chunk->region, buf, size);
}

/* At engine destroy, after every endpoint is gone. */
void loom_eager_boxes_free(loom_engine_t *engine)
{
    loom_eager_chunk_t *chunk;
    int i;

    while (NULL != (chunk = engine->eager.chunks)) {
        engine->eager.chunks = chunk->next;
        for (i = 0; i < LOOM_EAGER_BOXES_PER_CHUNK; ++i) {
            if (chunk->boxes[i].rkey_rail >= 0) {
                uct_rkey_release(engine->rails[chunk->boxes[i].rkey_rail].component,
                                 &chunk->boxes[i].rkey);
            }
        }
        loom_region_free(chunk->region);
        free(chunk->mem);
        free(chunk);
    }
    engine->eager.free_boxes = NULL;
}
