/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * coll loom: collectives run on loom's third-party and conditional pushes
 * (its BTL's engine, reached through btl_loom_coll_api.h).  MPI_Bcast is
 * root-orchestrated: the root issues the whole schedule of a tree, its own
 * pushes and pushes that wait at inner nodes for a segment to land, and
 * nobody handshakes per hop.  MPI_Reduce and MPI_Allreduce use half-RDMA:
 * a reducer pulls the other ranks' contributions into a queue of its own
 * and reduces each segment as it lands (Reduce: the root, everything;
 * Allreduce: every rank its slice, pushed on to all at once).  MPI_Allgather
 * has every rank push its block to all others at once.  Everything
 * else is left to the components below it.
 */
#ifndef MCA_COLL_LOOM_H
#define MCA_COLL_LOOM_H

#include "ompi_config.h"

#include "ompi/communicator/communicator.h"
#include "ompi/mca/coll/coll.h"
#include "coll_loom_compat.h"
#include "coll_loom_choice.h"

#include "common/btl_loom_coll_api.h"
#include "common/loom_help.h"

typedef struct mca_coll_loom_component_t {
    mca_coll_loom_base_component_t super;
    int priority;
    int verbose;
    int output;
    /* bcast_min to select_margin decide the paths: every rank must have
     * the same, which mca_coll_loom_agreed checks (all int, in a row) */
    int bcast_min;       /* bytes: smaller broadcasts go to the next component */
    int bcast_min_procs; /* communicators smaller than this leave it to the next too */
    int bcast_one_node;  /* 0: a communicator on one node leaves broadcasts to the next */
    int bcast_segment;   /* bytes per pipelined segment */
    int bcast_fanout;    /* children per node of the broadcast tree */
    int bcast_chain_min; /* bytes: from here the tree is a chain (fanout 1) */
    int bcast_eager_max; /* bytes: broadcasts up to here land in kept slots */
    int reduce_min;      /* bytes: smaller MPI_Reduce calls go to the next component */
    int allreduce_min;   /* bytes: smaller MPI_Allreduce calls too (-1: all of them) */
    int reduce_min_procs;
    int reduce_segment;  /* bytes per segment the root reduces as it lands */
    int reduce_depth;    /* segments of each rank in flight to the root */
    int reduce_staging;  /* bytes: the root's staging queue at most */
    int allgather_min;   /* bytes of the whole result: smaller go to the next component */
    int allgather_min_procs;
    int allgather_one_node; /* 0: a communicator on one node leaves allgathers to the next */
    int allgather_segment; /* bytes per push of a rank's block */
    int allgather_window;  /* a rank's pushes in flight at once */
    int select;          /* 1: measure coll loom against the next component per size class */
    int select_pairs;    /* pairs of calls measured at most before deciding */
    int select_margin;   /* percent: coll loom takes a class up to this much slower */
} mca_coll_loom_component_t;

MCA_COLL_LOOM_DECLSPEC extern mca_coll_loom_component_t mca_coll_loom_component;

/* What coll loom did in this process (pvars coll_loom_*). */
typedef struct mca_coll_loom_stats {
    int64_t bcasts;
    int64_t bcast_slots; /* of them, landed in the ranks' kept slots */
    int64_t bcast_flights; /* of those, the root returned before its forwards ended */
    int64_t reduces;
    int64_t allreduces;
    int64_t allgathers;
    int64_t fallbacks;
    int64_t failures;
    int64_t trials;     /* calls run to measure (coll_loom_select 1) */
    int64_t chose_loom; /* size classes measured faster through coll loom */
    int64_t chose_next; /* size classes measured faster through the next component */
    int64_t slot_bytes; /* held in broadcast slots and stages, all communicators */
} mca_coll_loom_stats_t;
extern mca_coll_loom_stats_t mca_coll_loom_stats;
void mca_coll_loom_pvars_register(void);
void mca_coll_loom_count(int64_t *counter);
/* counter += delta (a level: the bytes held) */
void mca_coll_loom_count_add(int64_t *counter, int64_t delta);
/* CLOCK_MONOTONIC in ns: the waits' spin (coll_loom_call.c) and the
 * measured selection's timings (coll_loom_select.c). */
int64_t mca_coll_loom_now_ns(void);

/* A rank's buffer as the root learns it. */
typedef struct mca_coll_loom_dest {
    uint64_t addr;
    uint64_t counters;      /* a broadcast: the rank's first counter (engine-issued) */
    uint32_t segments;      /* a broadcast: the segments the rank opened counters for */
    uint32_t key_size;
    uint32_t usable;        /* 0: this rank cannot take part (fall back) */
    uint32_t reserved;
    uint8_t  key[LOOM_OP_MSG_MAX];
} mca_coll_loom_dest_t;

/* A buffer another rank told can take part: it says so, and the key fits
 * (its size is the sender's word; the key parser reads that many bytes). */
static inline bool mca_coll_loom_dest_usable(const mca_coll_loom_dest_t *dest)
{
    return 0 != dest->usable && dest->key_size <= sizeof(dest->key);
}

/* One of a rank's two landing slots for small broadcasts. */
typedef struct mca_coll_loom_slot {
    uint8_t *buf;
    size_t   buf_size;
    loom_region_t *region;     /* its registration while the root may hold its key */
    mca_coll_loom_dest_t told; /* what this rank told the root (usable 0: fall back) */
    unsigned counters;         /* opened from told.counters, not released (0: none) */
} mca_coll_loom_slot_t;

/* An inner node's last slotted broadcast, which returned once its data
 * landed: its counters, open until its forwards ended (count 0: none). */
typedef struct mca_coll_loom_forwarding {
    uint64_t first;
    unsigned count;
    unsigned segments;
    uint64_t forwards;  /* pushes from this rank the call made */
} mca_coll_loom_forwarding_t;

/* Where broadcasts of at most coll_loom_bcast_eager_max bytes land
 * (coll_loom_bcast_slot.c): each rank but the root tells it, in each such
 * call, the address, key and fresh counters of one of two slots it keeps
 * per communicator, for the next such call; the next call from the same
 * root, if it fits, is pushed there without waiting for anyone, and each
 * rank copies its data out.  size and root are the same at every rank:
 * both follow from the calls' sizes and roots, which every rank sees
 * alike. */
typedef struct mca_coll_loom_slots {
    size_t   size;          /* bytes every rank's slots hold (0: none told yet) */
    size_t   window_max;    /* the largest size the calls of the current window needed */
    unsigned window_calls;  /* calls counted in it (mca_coll_loom_slots_advance) */
    int      root;          /* the rank told */
    int      next;          /* this rank's slot told for the next call */
    mca_coll_loom_slot_t slot[2];
    mca_coll_loom_dest_t *tickets; /* the root's: every rank's (NULL: none kept) */
    struct ompi_communicator_t *owed; /* told to this rank, not yet taken (NULL: none) */
    bool     hooked;        /* MPI_Comm_free settles them (an attribute's deletion) */
    struct ompi_request_t *sending; /* this rank's slot told in the last call, being sent */
    mca_coll_loom_dest_t *sent;     /* its copy */
    mca_coll_loom_forwarding_t forwarding;
    /* the root's copies of its slotted calls' data, one per call in turn
     * (the last call's pushes may still read the other) */
    uint8_t *stage[2];
    size_t   stage_size[2];
    loom_region_t *stage_region[2];
    int      stage_next;    /* the one the next call copies into */
} mca_coll_loom_slots_t;

typedef struct mca_coll_loom_module_t {
    mca_coll_base_module_t super;
    const mca_btl_loom_coll_api_t *api;
    uint64_t *names;     /* loom's name of each rank of the communicator */
    bool      reached;   /* btl loom reaches every rank from here */
    bool      one_node;  /* every rank runs on this node (the same at every rank) */
    int       agreed;    /* every rank reached from every rank: 1 yes, -1 no,
                            0 not asked yet (the first call that could use
                            loom asks, with the next component's allreduce) */
    mca_coll_base_module_bcast_fn_t next_bcast;
    mca_coll_base_module_t *next_bcast_module;
    mca_coll_base_module_allreduce_fn_t next_allreduce;
    mca_coll_base_module_t *next_allreduce_module;
    mca_coll_base_module_reduce_fn_t next_reduce;
    mca_coll_base_module_t *next_reduce_module;
    mca_coll_base_module_allgather_fn_t next_allgather;
    mca_coll_base_module_t *next_allgather_module;
    void    *staging;    /* a reduction's root's queue, kept from call to call */
    size_t   staging_size;
    mca_coll_loom_choice_t *choices; /* per operation and size class (coll_loom_select.c) */
    mca_coll_loom_slots_t slots;     /* small broadcasts' landing slots */
    unsigned flights;    /* slotted broadcasts rooted here whose pushes are still
                            ending (at most 2; coll_loom_bcast_flight.c) */
} mca_coll_loom_module_t;
OBJ_CLASS_DECLARATION(mca_coll_loom_module_t);

/* At the component's close: the broadcasts' flights no longer progressed
 * (coll_loom_bcast_flight.c). */
void mca_coll_loom_bcast_flights_fini(void);

/* The module for comm, or NULL (and why, at verbose level) when some rank is
 * not reached through loom. */
mca_coll_base_module_t *mca_coll_loom_comm_query(struct ompi_communicator_t *comm,
                                                 int *priority);
int mca_coll_loom_bcast(void *buff, int count, struct ompi_datatype_t *datatype, int root,
                        struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_loom_reduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                         struct ompi_op_t *op, int root, struct ompi_communicator_t *comm,
                         mca_coll_base_module_t *module);
int mca_coll_loom_allreduce(const void *sbuf, void *rbuf, int count,
                            struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                            struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_loom_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                            void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                            struct ompi_communicator_t *comm, mca_coll_base_module_t *module);

#endif
