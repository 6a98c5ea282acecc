/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * loom BTL send path: fragments, send, send-immediate and receive.
 */
#include "btl_loom.h"

#include <alloca.h>
#include <string.h>

static void mca_btl_loom_frag_construct(mca_btl_loom_frag_t *frag)
{
    frag->data                 = (uint8_t *)(frag + 1);
    frag->base.des_segments    = frag->segments;
    frag->base.des_segment_count = 1;
    frag->segments[0].seg_addr.pval = frag->data;
    frag->segments[0].seg_len  = 0;
}

OBJ_CLASS_INSTANCE(mca_btl_loom_frag_t, opal_free_list_item_t,
                   mca_btl_loom_frag_construct, NULL);

/* Most bytes of non-contiguous data sendi packs on the stack. */
#define MCA_BTL_LOOM_SENDI_PACK_MAX 4096

/* How long a send-immediate held back by the message window (several
 * rails) waits for the peer's acknowledgement before it says busy: longer
 * than a round trip on a loaded machine, and paid once per window filled
 * (loom_peer_window_wait says why it waits at all). */
#define MCA_BTL_LOOM_WINDOW_WAIT_NS 10000000ull

/* Large fragments come a few at a time: each holds max_send_size bytes. */
#define MCA_BTL_LOOM_FRAG_LARGE_INC 4

static int mca_btl_loom_frag_list_init(opal_free_list_t *list, size_t data_size, int num,
                                       int inc)
{
    OBJ_CONSTRUCT(list, opal_free_list_t);
    return opal_free_list_init(list, sizeof(mca_btl_loom_frag_t) + data_size,
                               opal_cache_line_size, OBJ_CLASS(mca_btl_loom_frag_t), 0,
                               opal_cache_line_size, num, mca_btl_loom_component.free_list_max,
                               inc, NULL, 0, NULL, NULL, NULL);
}

int mca_btl_loom_frags_init(mca_btl_loom_module_t *module)
{
    size_t max_send = module->super.btl_max_send_size;
    int rc;

    rc = mca_btl_loom_frag_list_init(&module->frags, (max_send < MCA_BTL_LOOM_FRAG_SMALL)
                                                         ? max_send : MCA_BTL_LOOM_FRAG_SMALL,
                                     mca_btl_loom_component.free_list_num,
                                     mca_btl_loom_component.free_list_inc);
    if (OPAL_SUCCESS != rc) {
        OBJ_DESTRUCT(&module->frags);
        return rc;
    }
    rc = mca_btl_loom_frag_list_init(&module->frags_large, max_send, 0,
                                     MCA_BTL_LOOM_FRAG_LARGE_INC);
    if (OPAL_SUCCESS != rc) {
        mca_btl_loom_frags_fini(module);
    }
    return rc;
}

void mca_btl_loom_frags_fini(mca_btl_loom_module_t *module)
{
    OBJ_DESTRUCT(&module->frags_large);
    OBJ_DESTRUCT(&module->frags);
}

mca_btl_base_descriptor_t *mca_btl_loom_alloc(struct mca_btl_base_module_t *btl,
                                              struct mca_btl_base_endpoint_t *endpoint,
                                              uint8_t order, size_t size, uint32_t flags)
{
    mca_btl_loom_module_t *module = (mca_btl_loom_module_t *)btl;
    opal_free_list_t *list = (size <= MCA_BTL_LOOM_FRAG_SMALL) ? &module->frags
                                                               : &module->frags_large;
    mca_btl_loom_frag_t *frag;

    (void)order;
    if (size > btl->btl_max_send_size) {
        return NULL;
    }
    frag = (mca_btl_loom_frag_t *)opal_free_list_get(list);
    if (NULL == frag) {
        return NULL;
    }
    frag->list                 = list;
    frag->module               = module;
    frag->endpoint             = endpoint;
    frag->segments[0].seg_addr.pval = frag->data;
    frag->segments[0].seg_len  = size;
    frag->base.des_segment_count = 1;
    frag->base.des_flags       = flags;
    frag->base.des_cbfunc      = NULL;
    frag->base.des_cbdata      = NULL;
    frag->base.order           = MCA_BTL_NO_ORDER;
    return &frag->base;
}

int mca_btl_loom_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    (void)btl;
    opal_free_list_return(((mca_btl_loom_frag_t *)des)->list, (opal_free_list_item_t *)des);
    return OPAL_SUCCESS;
}

mca_btl_base_descriptor_t *mca_btl_loom_prepare_src(struct mca_btl_base_module_t *btl,
                                                    struct mca_btl_base_endpoint_t *endpoint,
                                                    struct opal_convertor_t *convertor,
                                                    uint8_t order, size_t reserve,
                                                    size_t *size, uint32_t flags)
{
    mca_btl_base_descriptor_t *des;
    mca_btl_loom_frag_t *frag;
    struct iovec iov;
    uint32_t iov_count = 1;
    size_t max_data;
    bool inplace;

    if (reserve > btl->btl_max_send_size) {
        return NULL;
    }
    /* Less than asked is fine: the upper layer sends the rest in more fragments. */
    max_data = *size;
    if (max_data > btl->btl_max_send_size - reserve) {
        max_data = btl->btl_max_send_size - reserve;
    }
    /* Contiguous data stays where it is, a second segment: the send copies
     * it out once (or the callback says when the rail let it go). */
    inplace = max_data > 0 && !opal_convertor_need_buffers(convertor);
    des = mca_btl_loom_alloc(btl, endpoint, order, reserve + (inplace ? 0 : max_data), flags);
    if (NULL == des) {
        return NULL;
    }
    frag = (mca_btl_loom_frag_t *)des;
    iov.iov_base = inplace ? NULL : frag->data + reserve;
    iov.iov_len  = max_data;
    if (max_data > 0 && opal_convertor_pack(convertor, &iov, &iov_count, &max_data) < 0) {
        mca_btl_loom_free(btl, des);
        return NULL;
    }
    if (inplace) {
        frag->segments[1].seg_addr.pval = iov.iov_base;
        frag->segments[1].seg_len       = max_data;
        des->des_segment_count          = 2;
    } else {
        frag->segments[0].seg_len = reserve + max_data;
    }
    *size = max_data;
    return des;
}

/* Local completion of a send: the data left our buffer. */
static void mca_btl_loom_send_complete(mca_btl_loom_frag_t *frag, int status, bool async)
{
    mca_btl_base_descriptor_t *des = &frag->base;
    int flags = des->des_flags;

    if (NULL != des->des_cbfunc && (async || (flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK))) {
        des->des_cbfunc(&frag->module->super, frag->endpoint, des, status);
    }
    if (flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
        mca_btl_loom_free(&frag->module->super, des);
    }
}

static void mca_btl_loom_send_done(loom_op_t *op, int status)
{
    mca_btl_loom_send_complete(op->user, mca_btl_loom_rc_to_opal(status), true);
}

int mca_btl_loom_send(struct mca_btl_base_module_t *btl,
                      struct mca_btl_base_endpoint_t *endpoint,
                      struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag)
{
    mca_btl_loom_frag_t *frag = (mca_btl_loom_frag_t *)descriptor;
    loom_peer_t *peer;
    int rc, i;

    (void)btl;
    frag->endpoint      = endpoint;
    for (i = 0; i < (int)descriptor->des_segment_count; ++i) {
        frag->iov[i].iov_base = frag->segments[i].seg_addr.pval;
        frag->iov[i].iov_len  = frag->segments[i].seg_len;
    }
    frag->op.cb         = mca_btl_loom_send_done;
    frag->op.user       = frag;
    MCA_BTL_LOOM_LOCK();
    peer = mca_btl_loom_endpoint_peer(endpoint);
    rc   = (NULL != peer) ? loom_am_send(peer, tag, frag->iov, (int)descriptor->des_segment_count,
                                         &frag->op)
                          : LOOM_ERR_UNREACH;
    MCA_BTL_LOOM_UNLOCK();
    if (LOOM_OK == rc) {
        /* Copied out already: complete now, telling the caller by returning 1. */
        mca_btl_loom_send_complete(frag, OPAL_SUCCESS, false);
        return 1;
    }
    return mca_btl_loom_rc_to_opal(rc);
}

int mca_btl_loom_sendi(struct mca_btl_base_module_t *btl,
                       struct mca_btl_base_endpoint_t *endpoint,
                       struct opal_convertor_t *convertor, void *header, size_t header_size,
                       size_t payload_size, uint8_t order, uint32_t flags,
                       mca_btl_base_tag_t tag, mca_btl_base_descriptor_t **descriptor)
{
    struct iovec iov[2], pack_iov;
    uint32_t iov_count = 1;
    size_t max_data = payload_size, position = 0;
    loom_peer_t *peer;
    int rc;

    if (NULL != descriptor) {
        *descriptor = NULL;
    }
    if (header_size + payload_size > btl->btl_eager_limit) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    if (payload_size > MCA_BTL_LOOM_SENDI_PACK_MAX && opal_convertor_need_buffers(convertor)) {
        /* Too large to pack on the stack: ob1 packs into the fragment handed
         * back (no fragment: it queues the send and tries again). */
        if (NULL != descriptor) {
            *descriptor = mca_btl_loom_alloc(btl, endpoint, order, header_size + payload_size,
                                             flags);
        }
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    iov[0].iov_base = header;
    iov[0].iov_len  = header_size;
    iov[1].iov_len  = 0;
    if (payload_size > 0) {
        /* Contiguous data is sent from the user's buffer, other data packed. */
        pack_iov.iov_base = opal_convertor_need_buffers(convertor) ? alloca(payload_size)
                                                                   : NULL;
        pack_iov.iov_len  = payload_size;
        position = convertor->bConverted;
        if (opal_convertor_pack(convertor, &pack_iov, &iov_count, &max_data) < 0) {
            return OPAL_ERROR;
        }
        iov[1] = pack_iov;
        iov[1].iov_len = max_data;
    }
    MCA_BTL_LOOM_LOCK();
    peer = mca_btl_loom_endpoint_peer(endpoint);
    /* a small message only the window holds back goes past it */
    rc   = (NULL != peer) ? loom_am_send_past_window(peer, tag, iov, payload_size > 0 ? 2 : 1)
                          : LOOM_ERR_UNREACH;
    if (LOOM_ERR_AGAIN == rc &&
        LOOM_OK == loom_peer_window_wait(peer, MCA_BTL_LOOM_WINDOW_WAIT_NS)) {
        rc = loom_am_send(peer, tag, iov, payload_size > 0 ? 2 : 1, NULL);
    }
    MCA_BTL_LOOM_UNLOCK();
    if (LOOM_OK != rc && payload_size > 0) {
        /* Nothing went: give the convertor back its position for the retry. */
        opal_convertor_set_position(convertor, &position);
    }
    return (LOOM_ERR_AGAIN == rc) ? OPAL_ERR_RESOURCE_BUSY : mca_btl_loom_rc_to_opal(rc);
}

void mca_btl_loom_recv(void *ctx, uint8_t tag, const void *data, size_t length)
{
    mca_btl_loom_module_t *module = mca_btl_loom_component.module;
    const mca_btl_active_message_callback_t *reg;

    (void)ctx;
    /* the engine drops tags past the table (config.tag_count) */
    reg = &mca_btl_base_active_message_trigger[tag];
    if (NULL == module || NULL == reg->cbfunc) {
        opal_output(0, "btl loom: dropped a message with tag %u that no upper layer "
                    "registered", tag);
        return;
    }
    mca_btl_loom_deliver(&module->super, reg, tag, data, length);
}
