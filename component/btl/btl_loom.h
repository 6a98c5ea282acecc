/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * loom BTL: Open MPI glue around the loom transport engine.
 */
#ifndef MCA_BTL_LOOM_H
#define MCA_BTL_LOOM_H

#include "opal_config.h"

#include "opal/class/opal_free_list.h"
#include "opal/datatype/opal_convertor.h"
#include "opal/mca/btl/btl.h"
#include "opal/mca/btl/base/base.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"
#include "btl_loom_compat.h"

#include "loom/transport.h"
#include "common/btl_loom_coll_api.h"
#include "common/loom_help.h"

BEGIN_C_DECLS

/* Per-rail counters exported as MPI_T performance variables. */
#define MCA_BTL_LOOM_PVAR_RAILS LOOM_MAX_RAILS

typedef struct mca_btl_loom_component_t {
    mca_btl_base_component_3_0_0_t super;

    /* MCA parameters */
    char *rails;              /* btl_loom_rails */
    int   max_rails;          /* btl_loom_max_rails */
    int   verbose;            /* btl_loom_verbose */
    bool  force_connect_to_ep;/* btl_loom_connect_to_ep */
    bool  rails_repeat;       /* btl_loom_rails_repeat */
    int   tcp_seg_size;       /* btl_loom_tcp_seg_size */
    int   tcp_sockbuf;        /* btl_loom_tcp_sockbuf */
    int   tcp_keepalive;      /* btl_loom_tcp_keepalive, s */
    int   yield_after;        /* btl_loom_yield_after, us */
    bool  progress_thread;    /* btl_loom_progress_thread */
    int   block_when_idle;    /* btl_loom_block_when_idle: -1 auto, 0, 1 */
    int   block_after;        /* btl_loom_block_after, us */
    bool  locking;            /* the lock is taken even without MPI threads:
                                 loom's progress thread runs (set once, at init) */
    bool  tcp_trust_network;  /* btl_loom_tcp_trust_network */
    int   tcp_stream_copy;    /* btl_loom_tcp_stream_copy, bytes (0: never) */
    int   tcp_stream_reuse;   /* btl_loom_tcp_stream_reuse, bytes (0: stream always) */
    int   zcopy_threshold;    /* btl_loom_zcopy_threshold */
    int   atomics;            /* btl_loom_atomics: -1 auto, 0 off, 1 on */
    int   stripe_threshold;   /* btl_loom_stripe_threshold */
    int   stripe_chunk;       /* btl_loom_stripe_chunk */
    int   stripe_depth;       /* btl_loom_stripe_depth */
    int   stripe_queue;       /* btl_loom_stripe_queue: us */
    int   rail_timeout;       /* btl_loom_rail_timeout, ms */
    int   am_rail;            /* btl_loom_am_rail */
    char *am_policy;          /* btl_loom_am_policy: "fixed" or "round_robin" */
    int   msg_window;         /* btl_loom_msg_window */
    int   rail_rejoin;        /* btl_loom_rail_rejoin, ms */
    int   free_list_num;
    int   free_list_max;
    int   free_list_inc;
    char *eager_rdma;         /* btl_loom_eager_*: see btl_loom_eager.c */
    char *eager_slot_sizes;
    char *eager_slot_counts;
    char *eager_thresholds;
    int   eager_msgs_before_ring;
    int   eager_start_slots;
    int   eager_idle_shrink;  /* ms */
    int   eager_wait_shrink;  /* ms */
    size_t eager_budget;
    int   eager_ack_timeout;  /* ms */
    bool  eager_cycle;
    int   rcache_size;        /* btl_loom_rcache_*: see btl_loom_rcache.c; MiB */
    int   rcache_regions;
    int   rcache_idle;        /* ms */
    int   push_counters;      /* btl_loom_push_*: see btl_loom_push.c */
    int   push_waiting;

    int   output;             /* opal_output stream */
    struct mca_btl_loom_module_t *module;
    /* With MPI_THREAD_MULTIPLE every entry point into the engine holds it.
     * Recursive: ob1's callbacks from our progress call back into us. */
    opal_recursive_mutex_t lock;
    opal_mutex_t endpoints_lock; /* the module's endpoint list; taken after
                                    lock, never before it */
} mca_btl_loom_component_t;

MCA_BTL_LOOM_DECLSPEC extern mca_btl_loom_component_t mca_btl_loom_component;

typedef struct mca_btl_loom_module_t {
    mca_btl_base_module_t super;
    const mca_btl_loom_coll_api_t *coll_api; /* for coll loom: second, as in
                                                mca_btl_loom_coll_view_t */
    loom_engine_t        *engine;
    opal_free_list_t      frags;      /* send fragments of up to
                                         MCA_BTL_LOOM_FRAG_SMALL bytes */
    opal_free_list_t      frags_large; /* of max_send_size: packed data */
    size_t                key_size;   /* bytes of a registration handle's key */
    mca_btl_base_module_error_cb_fn_t error_cb;
    struct mca_btl_base_endpoint_t *endpoints;
} mca_btl_loom_module_t;

extern mca_btl_loom_module_t mca_btl_loom_module_template;
extern const mca_btl_loom_coll_api_t mca_btl_loom_coll_api;
/* help-mpi-btl-loom.txt: the user-facing errors (common/loom_help.h) */
extern loom_help_t mca_btl_loom_help;
/* This process's name in the engine (from its Open MPI name). */
uint64_t mca_btl_loom_my_name(void);

struct mca_btl_base_endpoint_t {
    opal_proc_t *proc;
    loom_peer_t *peer;      /* NULL until connected (mca_btl_loom_endpoint_peer) */
    void        *addr_blob; /* the peer's modex entry, until connected */
    size_t       addr_blob_len;
    mca_btl_loom_module_t *module;
    bool         self;      /* this process: RDMA and atomics on its own memory
                               (osc rdma reaches itself through its BTL) */
    /* all endpoints of the module, freed at finalize if not deleted before */
    struct mca_btl_base_endpoint_t *next;
    struct mca_btl_base_endpoint_t *prev;
};
typedef struct mca_btl_base_endpoint_t mca_btl_base_endpoint_t;

/* A send fragment: descriptor, its segments and room for the payload.  The
 * second segment, when there is one, is the sender's own contiguous data,
 * sent from where it lies (mca_btl_loom_prepare_src). */
typedef struct mca_btl_loom_frag_t {
    mca_btl_base_descriptor_t base;
    mca_btl_base_segment_t    segments[2];
    struct mca_btl_base_endpoint_t *endpoint;
    mca_btl_loom_module_t    *module;
    loom_op_t                 op;
    struct iovec              iov[2];
    uint8_t                   tag;
    opal_free_list_t         *list;   /* where it goes back */
    uint8_t                  *data;   /* the list's data size follows the struct */
} mca_btl_loom_frag_t;

/* Data bytes of a small send fragment: ob1's control messages and small
 * packed sends.  Larger ones (non-contiguous data packed for an eager or
 * pipelined send) come from a list of max_send_size, grown a few at a time,
 * so that a large send size does not make every fragment large. */
#define MCA_BTL_LOOM_FRAG_SMALL (8192 + 64)
OBJ_CLASS_DECLARATION(mca_btl_loom_frag_t);

/* Registration handle: the packed loom key, preceded by our region. */
typedef struct mca_btl_loom_reg_t {
    loom_region_t *region;
    uint8_t key[];
} mca_btl_loom_reg_t;

struct mca_btl_base_registration_handle_t {
    uint8_t key[1]; /* loom_key_size() bytes */
};

/* What the upper layer asked for: a put, a get or an atomic. */
typedef struct mca_btl_loom_request_t {
    enum { MCA_BTL_LOOM_PUT, MCA_BTL_LOOM_GET, MCA_BTL_LOOM_ATOMIC } kind;
    void     *local_address; /* an atomic's result, or NULL */
    uint64_t  remote_address;
    mca_btl_base_registration_handle_t *local_handle;
    mca_btl_base_registration_handle_t *remote_handle;
    size_t    size;          /* an atomic's: 4 or 8 */
    int       atomic_op;     /* LOOM_ATOMIC_* */
    uint64_t  operand;
    uint64_t  compare;
} mca_btl_loom_request_t;

/* An RDMA operation in flight. */
typedef struct mca_btl_loom_rdma_t {
    opal_free_list_item_t super;
    loom_op_t             op;
    mca_btl_loom_module_t *module;
    struct mca_btl_base_endpoint_t *endpoint;
    void                 *local_address;
    mca_btl_base_registration_handle_t *local_handle;
    mca_btl_base_rdma_completion_fn_t cbfunc;
    void                 *cbcontext;
    void                 *cbdata;
} mca_btl_loom_rdma_t;

/* Open MPI's lock macros take locks only with MPI threads; loom's progress
 * thread needs them taken in every program that runs it. */
#define MCA_BTL_LOOM_LOCKING() (mca_btl_loom_component.locking || opal_using_threads())
#define MCA_BTL_LOOM_MUTEX_LOCK(_m) \
    do { if (MCA_BTL_LOOM_LOCKING()) { opal_mutex_lock(_m); } } while (0)
#define MCA_BTL_LOOM_MUTEX_UNLOCK(_m) \
    do { if (MCA_BTL_LOOM_LOCKING()) { opal_mutex_unlock(_m); } } while (0)
/* 0 when taken (or no locking is needed) */
#define MCA_BTL_LOOM_MUTEX_TRYLOCK(_m) (MCA_BTL_LOOM_LOCKING() ? opal_mutex_trylock(_m) : 0)
#define MCA_BTL_LOOM_LOCK()    MCA_BTL_LOOM_MUTEX_LOCK(&mca_btl_loom_component.lock)
#define MCA_BTL_LOOM_UNLOCK()  MCA_BTL_LOOM_MUTEX_UNLOCK(&mca_btl_loom_component.lock)
#define MCA_BTL_LOOM_TRYLOCK() MCA_BTL_LOOM_MUTEX_TRYLOCK(&mca_btl_loom_component.lock)

/* component */
int  mca_btl_loom_params_register(void);
void mca_btl_loom_param_register(const char *name, const char *desc, mca_base_var_type_t type,
                                 int level, void *storage);
int  mca_btl_loom_pvars_register(loom_engine_t *engine);
int  mca_btl_loom_check_range(const char *name, int value, int min, int max);
/* The numeric parameters' values as given in the environment are numbers. */
int  mca_btl_loom_check_raw_numbers(void);
/* A pvar reading one unsigned long at offset in a stats struct the engine
 * returns; engine is set to NULL when loom finalizes. */
typedef const void *(*mca_btl_loom_stats_fn_t)(const loom_engine_t *engine);
typedef struct mca_btl_loom_stat_ctx {
    loom_engine_t          *engine;
    mca_btl_loom_stats_fn_t stats;
    size_t                  offset;
} mca_btl_loom_stat_ctx_t;
void mca_btl_loom_stat_pvar_add(mca_btl_loom_stat_ctx_t *ctx, loom_engine_t *engine,
                                mca_btl_loom_stats_fn_t stats, size_t offset, const char *name,
                                const char *description, int var_class);
/* A table of such pvars (one ctx per entry), registered at init and
 * released (reading 0) at finalize. */
typedef struct mca_btl_loom_stat_desc {
    const char *name;
    const char *description;
    size_t      offset;
    int         var_class;
} mca_btl_loom_stat_desc_t;
typedef struct mca_btl_loom_stat_table {
    const mca_btl_loom_stat_desc_t *descs;
    size_t                          count;
    mca_btl_loom_stat_ctx_t        *ctxs;  /* count of them */
    mca_btl_loom_stats_fn_t         stats;
} mca_btl_loom_stat_table_t;
void mca_btl_loom_stat_table_add(const mca_btl_loom_stat_table_t *table, loom_engine_t *engine);
void mca_btl_loom_stat_table_release(const mca_btl_loom_stat_table_t *table);
#define MCA_BTL_LOOM_STAT_TABLE(_descs, _ctxs, _stats) \
    {(_descs), sizeof(_descs) / sizeof((_descs)[0]), (_ctxs), (_stats)}
extern const mca_btl_loom_stat_table_t mca_btl_loom_rcache_table;
extern const mca_btl_loom_stat_table_t mca_btl_loom_push_table;
extern const mca_btl_loom_stat_table_t mca_btl_loom_block_table;

int  mca_btl_loom_push_params_register(void);
int  mca_btl_loom_push_config(loom_engine_config_t *config);

int  mca_btl_loom_rcache_params_register(void);
int  mca_btl_loom_rcache_config(loom_engine_config_t *config);

int  mca_btl_loom_eager_params_register(void);
int  mca_btl_loom_eager_config(loom_engine_config_t *config);
int  mca_btl_loom_eager_pvars_register(loom_engine_t *engine);
void mca_btl_loom_eager_pvars_release(void);
void mca_btl_loom_pvars_release(void);
int  mca_btl_loom_check_runtime_version(void);

/* module */
int mca_btl_loom_module_init(mca_btl_loom_module_t *module, loom_engine_t *engine);
int mca_btl_loom_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                           struct opal_proc_t **procs,
                           struct mca_btl_base_endpoint_t **peers,
                           opal_bitmap_t *reachable);
int mca_btl_loom_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                           struct opal_proc_t **procs,
                           struct mca_btl_base_endpoint_t **peers);
int mca_btl_loom_finalize(struct mca_btl_base_module_t *btl);
int mca_btl_loom_flush(struct mca_btl_base_module_t *btl,
                       struct mca_btl_base_endpoint_t *endpoint);
int mca_btl_loom_register_error(struct mca_btl_base_module_t *btl,
                                mca_btl_base_module_error_cb_fn_t cbfunc);

/* send path */
void mca_btl_loom_recv(void *ctx, uint8_t tag, const void *data, size_t length);
/* The module's two lists of send fragments (by the module's max_send_size). */
int  mca_btl_loom_frags_init(mca_btl_loom_module_t *module);
void mca_btl_loom_frags_fini(mca_btl_loom_module_t *module);
mca_btl_base_descriptor_t *mca_btl_loom_alloc(struct mca_btl_base_module_t *btl,
                                              struct mca_btl_base_endpoint_t *endpoint,
                                              uint8_t order, size_t size, uint32_t flags);
int mca_btl_loom_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
mca_btl_base_descriptor_t *mca_btl_loom_prepare_src(struct mca_btl_base_module_t *btl,
                                                    struct mca_btl_base_endpoint_t *endpoint,
                                                    struct opal_convertor_t *convertor,
                                                    uint8_t order, size_t reserve,
                                                    size_t *size, uint32_t flags);
int mca_btl_loom_send(struct mca_btl_base_module_t *btl,
                      struct mca_btl_base_endpoint_t *endpoint,
                      struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag);
int mca_btl_loom_sendi(struct mca_btl_base_module_t *btl,
                       struct mca_btl_base_endpoint_t *endpoint,
                       struct opal_convertor_t *convertor, void *header, size_t header_size,
                       size_t payload_size, uint8_t order, uint32_t flags,
                       mca_btl_base_tag_t tag, mca_btl_base_descriptor_t **descriptor);

/* RDMA */
struct mca_btl_base_registration_handle_t *
mca_btl_loom_register_mem(struct mca_btl_base_module_t *btl,
                          struct mca_btl_base_endpoint_t *endpoint, void *base, size_t size,
                          uint32_t flags);
int mca_btl_loom_deregister_mem(struct mca_btl_base_module_t *btl,
                                struct mca_btl_base_registration_handle_t *handle);
int mca_btl_loom_put(struct mca_btl_base_module_t *btl,
                     struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                     uint64_t remote_address,
                     struct mca_btl_base_registration_handle_t *local_handle,
                     struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                     int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
                     void *cbcontext, void *cbdata);
int mca_btl_loom_get(struct mca_btl_base_module_t *btl,
                     struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                     uint64_t remote_address,
                     struct mca_btl_base_registration_handle_t *local_handle,
                     struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                     int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
                     void *cbcontext, void *cbdata);
/* Starts the request; cbfunc runs once when it completed (at once on the
 * process's own memory). */
/* btl_loom_thread.c: loom's progress thread and the blocking wait. */
int  mca_btl_loom_thread_start(loom_engine_t *engine);
void mca_btl_loom_thread_stop_join(void);
bool mca_btl_loom_block_armed(loom_engine_t *engine, int count);
void mca_btl_loom_block(const loom_engine_t *engine);
/* btl_loom_caller.c: which kind of MPI call progress was called by. */
typedef enum mca_btl_loom_caller_kind {
    MCA_BTL_LOOM_CALLER_WAITS = 0, /* may sleep and yield */
    MCA_BTL_LOOM_CALLER_SYNCS,     /* one-sided synchronization: may yield, not sleep */
    MCA_BTL_LOOM_CALLER_POLLS,     /* MPI_Test and its kin: neither */
} mca_btl_loom_caller_kind_t;
typedef struct mca_btl_loom_caller_cache {
    uintptr_t                  sp;   /* the stack at the last look */
    mca_btl_loom_caller_kind_t kind; /* what it said */
    unsigned                   uses; /* since */
} mca_btl_loom_caller_cache_t;
void mca_btl_loom_caller_init(void);
mca_btl_loom_caller_kind_t mca_btl_loom_caller_kind(mca_btl_loom_caller_cache_t *cache);
bool mca_btl_loom_caller_may_idle(void *ctx);

int mca_btl_loom_issue(mca_btl_loom_module_t *module, struct mca_btl_base_endpoint_t *endpoint,
                       const mca_btl_loom_request_t *req,
                       mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                       void *cbdata);

/* atomics */
int mca_btl_loom_aop(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     uint64_t remote_address,
                     struct mca_btl_base_registration_handle_t *remote_handle,
                     mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                     mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);
int mca_btl_loom_afop(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      void *local_address, uint64_t remote_address,
                      struct mca_btl_base_registration_handle_t *local_handle,
                      struct mca_btl_base_registration_handle_t *remote_handle,
                      mca_btl_base_atomic_op_t op, uint64_t operand, int flags, int order,
                      mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata);
int mca_btl_loom_acswap(struct mca_btl_base_module_t *btl,
                        struct mca_btl_base_endpoint_t *endpoint, void *local_address,
                        uint64_t remote_address,
                        struct mca_btl_base_registration_handle_t *local_handle,
                        struct mca_btl_base_registration_handle_t *remote_handle,
                        uint64_t compare, uint64_t value, int flags, int order,
                        mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                        void *cbdata);

/* endpoints (btl_loom_endpoint.c) */
loom_peer_t *mca_btl_loom_endpoint_peer(struct mca_btl_base_endpoint_t *endpoint);
int mca_btl_loom_rc_to_opal(int rc);

END_C_DECLS

#endif
