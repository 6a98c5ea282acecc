/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Private structures of the loom transport engine.
 */
#ifndef LOOM_INTERNAL_H
#define LOOM_INTERNAL_H

#include "loom/transport.h"
#include "loom/wire.h"
#include "loom_hash.h"
#include "eager.h"

#include <ucs/async/async_fwd.h>
#include <ucs/memory/rcache.h>

#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

/* UCX's list and container macros compute member offsets through a null
 * pointer, which UBSan (clang) reports at every list walk of ours; the
 * standard offsetof gives the same value without it. */
#undef ucs_offsetof
#define ucs_offsetof(_type, _member) offsetof(_type, _member)

/* What striping learns about a rail: its rate, measured over windows of
 * time in which it had chunks in flight (loom_now_ns times). */
typedef struct loom_rail_flow {
    double     rate;          /* bytes/s, 0 until the first window closed */
    unsigned   inflight;      /* chunks on this rail, to every peer */
    size_t     bytes_out;     /* bytes of striped puts in flight, to every peer */
    size_t     bytes_in;      /* bytes of striped gets in flight, from every peer */
    uint64_t   window_start;  /* 0: no window open (rail idle) */
    size_t     window_bytes;  /* landed since window_start */
} loom_rail_flow_t;

typedef struct loom_rail {
    int                index;
    struct loom_engine *engine;
    uct_component_h    component;
    uct_md_h           md;
    uct_iface_h        iface;
    uct_md_attr_t      md_attr;
    uct_iface_attr_t   attr;
    bool               needs_reg;     /* memory must be registered on this MD */
    bool               checked;       /* no memory protection in the NIC (no rkey):
                                         loom checks every write (checked_put.c) */
    bool               checked_zcopy; /* checked writes by zero-copy AM */
    size_t             checked_seg;   /* data bytes per checked write message */
    size_t             am_zcopy_iov;  /* messages of up to this many pieces may leave
                                         from the sender's memory by zero-copy AM,
                                         with no memory handle (0: none) */
    bool               iface_reachable; /* peers can connect to our interface */
    uct_iface_h        boot_iface;    /* carries CONNECT messages: iface or wireup_iface */
    size_t             boot_iface_addr_len;
    uct_iface_h        wireup_iface;  /* companion interface of a connect-to-ep rail */
    bool               wireup_polled; /* it has no event descriptor: a sleeper looks at it
                                         when it wakes (event_wait.c) */
    char               wireup_tl[LOOM_NAME_MAX];
    uint8_t           *dev_addr;
    uint8_t           *iface_addr;
    loom_rail_info_t   info;
    loom_rail_stats_t  stats;
    loom_rail_flow_t   flow;
} loom_rail_t;

/* A FIFO of operations (loom_op_t.queue_link): waiting to be issued, or done. */
typedef ucs_list_link_t loom_opq_t;

/* An upper-layer message kept until the peer acknowledged it. */
typedef struct loom_msg_entry {
    ucs_list_link_t link;  /* in loom_msg_state_t.log */
    uint64_t sent;     /* loom_now_ns() when it last left */
    uint32_t seq;
    int      rail;     /* the rail it last left on */
    uint8_t  tag;
    size_t   length;
    uint8_t  data[];
} loom_msg_entry_t;

/* A message that came by AM before messages it must follow: by ring, or
 * by AM on a rail that failed and is sent again (msg_deliver.c). */
typedef struct loom_msg_held {
    ucs_list_link_t link;  /* in loom_msg_state_t.held, by sequence number,
                              or in .waiting */
    uint32_t seq;
    uint8_t  tag;
    int      rail;         /* it came on */
    size_t   length;
    uint8_t  data[];
} loom_msg_held_t;

/* Sequence numbers, acknowledgements and re-sending of the upper-layer
 * messages of both directions to one peer (reliable.c). */
typedef struct loom_msg_state {
    uint32_t          tx_conn;     /* our connection to the peer: random, not 0 */
    uint32_t          tx_seq;      /* sequence number of our next message */
    ucs_list_link_t   log;         /* sent, not acknowledged, in order */
    unsigned          log_count;
    size_t            log_bytes;   /* of their data */
    bool              past_window; /* a send-immediate may go past the window
                                      (loom_am_send_past_window) */
    bool              resending;   /* a rail failed: send the log again first */
    bool              window_stalled; /* a wait for the window ran out: no
                                         other until it opened (progress.c) */
    uint32_t          resend_seq;  /* next to send again */
    uint32_t          rx_conn;     /* the peer's connection to us, 0: none seen */
    uint32_t          rx_seq;      /* sequence number expected next */
    bool              rx_kept;     /* the peer keeps its messages until acked */
    uint32_t          acked;       /* rx_seq when we last acknowledged */
    bool              ack_queued;  /* a MSG_ACK waits to leave */
    bool              asked;       /* we asked for an ack on another rail ... */
    uint64_t          asked_time;  /* ... at this time ... */
    uint32_t          asked_seq;   /* ... for the message of this number ... */
    int               asked_rail;  /* ... that had left on this rail */
    uint64_t          last_reply;  /* when an answer to an ask of ours last came */
    bool              ask_again;   /* the answer lacked it once: ask again ... */
    uint64_t          ask_after;   /* ... from this time, before failing the rail */
    bool              ack_owed;    /* on engine->acks_owed (msg_ack.c) */
    uint32_t          owed_mark;   /* rx_seq at the last idle-ack sweep */
    ucs_list_link_t   owed_link;
    uint8_t           reply_flags; /* answers owed (LOOM_WIRE_FLAG_*_REPLY): one
                                      MSG_ACK carries them all, stamped as it leaves */
    bool              conn_asking; /* a CONN_ASK waits to leave */
    uint32_t          new_conn;    /* another connection the peer's name showed, ... */
    ucs_list_link_t   new_msgs;    /* ... its messages kept until the peer says it
                                      is its own (loom_msg_conn_check) */
    unsigned          new_count;
    ucs_list_link_t   held;        /* came ahead of order, kept (loom_msg_held_t) */
    unsigned          held_count;
    ucs_list_link_t   waiting;     /* delivered in quiet progress, for the upper
                                      layer's thread (loom_msg_held_t, in order) */
    unsigned          waiting_count;
    unsigned          engine_waiting; /* of them, engine messages (held atomics) */
} loom_msg_state_t;

/* What a rail has to send from progress to come back (rejoin.c). */
enum { LOOM_PROBE_NONE, LOOM_PROBE_TRY, LOOM_PROBE_ANSWER, LOOM_PROBE_CONFIRM,
       LOOM_PROBE_CONFIRMED };

/* State of one rail towards one peer. */
typedef struct loom_peer_rail {
    uct_ep_h ep;
    uct_ep_h boot_ep;         /* connect-to-ep rail that can also connect to the
                                 peer's interface: carries the CONNECT messages */
    bool     usable;          /* connected both ways, not failed */
    bool     failed;
    bool     local_connected; /* connect-to-ep: our ep is connected */
    bool     told_connected;  /* connect-to-ep: peer knows we are connected */
    loom_opq_t rail_queue;    /* RDMA and control ops waiting for this rail
                                 only: a busy rail holds up no other */
    uint32_t rail_epoch;      /* connections of this rail to the peer so far */
    uint64_t next_probe;      /* failed: when to try the rail again */
    uct_ep_h probe_ep;        /* failed: fresh endpoint a probe went on */
    int      probe_state;     /* LOOM_PROBE_*: what waits to leave */
    uint32_t probe_epoch;     /* the rail epoch being set up */
    bool     fresh_ep;        /* failed: ep is a fresh one of probe_epoch */
    uint64_t probe_since;     /* when probe_state left NONE */
    bool     rejoin_counted;  /* failed and counted in engine->failed_rails */
    bool     down_told;       /* failed because the peer said it failed it */
    bool     to_close;        /* failed: its endpoint is closed from progress */
    ucs_status_t fail_status; /* failed: why, for its handling from progress */
    ucs_list_link_t wire_ops; /* RDMA ops waiting for a completion on ep */
    uint64_t last_landed;     /* when a chunk last landed (or the watch began) */
    uint64_t landed_mark;     /* peer->chunks_landed when last_landed was set */
    uint64_t others_since;    /* when another rail to the peer first delivered
                                 after last_landed; 0: none has */
    uint64_t watch_asked;     /* when the rail watch asked the peer whether it
                                 progresses, this rail silent; 0: not asked */
    unsigned inflight_chunks;
    uint8_t *rejoin_addr;     /* connect-to-ep, failed: the device and endpoint
                                 address the peer announced (rejoin_ep.c) */
    size_t   rejoin_addr_len;
    bool     boot_renew;      /* connect-to-ep, failed: our answer was never
                                 confirmed: the next goes on a fresh wireup ep */
    uint64_t connect_sent;    /* connect-to-ep: when our last CONNECT went */
    unsigned connect_tries;   /* CONNECTs sent again (connect_retry.c) */
} loom_peer_rail_t;

struct loom_peer {
    loom_engine_t   *engine;
    uint64_t         name;
    uint32_t         epoch;       /* the peer's incarnation when connected */
    int              refcount;
    int              am_rail;     /* fixed rail for messages to this peer */
    loom_peer_rail_t rails[LOOM_MAX_RAILS];
    loom_wire_rail_addr_t remote_rails[LOOM_MAX_RAILS];
    uint8_t         *remote_dev_addr[LOOM_MAX_RAILS]; /* connect-to-ep */
    loom_opq_t       queue;       /* messages waiting to be issued, in order */
    bool             queued;      /* on engine->busy_peers, or on the list
                                     being drained (loom_engine_drain_queues) */
    ucs_list_link_t  busy_link;
    ucs_list_link_t  retired_link; /* on engine->retired once disconnected */
    uint32_t         fail_pending; /* rails marked failed, not handled yet ... */
    ucs_list_link_t  fail_link;    /* ... while on engine->failing */
    size_t           outstanding;
    ucs_list_link_t  stripes_waiting; /* for room on a rail to this peer */
    bool             lost;        /* every rail failed; reported */
    bool             said_bye;    /* it disconnects from us (LOOM_WIRE_BYE) */
    bool             leaving;     /* we disconnect from it */
    uint64_t         chunks_landed; /* over all rails, for the rail watch */
    size_t           owed;        /* outstanding ops the upper layer waits for
                                     (not loom's own messages and serves, nor
                                     multicast destinations served for others) */
    loom_eager_peer_t eager;      /* eager rings, both directions */
    loom_msg_state_t msg;         /* message order, acks, re-sending */
    void            *addr_blob;   /* its address, for fresh endpoints */
    size_t           addr_blob_len;
    unsigned         refusals;    /* answers to refused requests waiting to leave */
    unsigned         push_reqs;   /* our push requests to it waiting for an answer */
    loom_opq_t       push_held;   /* ours held back by LOOM_PUSH_WINDOW, apart
                                     from the rail queues, so that the serves
                                     it waits for from us are not held too */
    unsigned         serves;      /* serves queued or in flight towards it */
    unsigned         atomics;     /* our atomics to it not answered yet */
    unsigned         atomic_replies; /* answers to its atomics waiting to leave */
};

/* Messages of processes not connected yet, kept until we connected. */
#define LOOM_STRANGERS_MAX 1024
/* Push requests a process keeps unanswered at one owner, and serves an
 * owner keeps queued or in flight towards one destination: requesters wait
 * below it, so only a broken or hostile one reaches the owner's bound. */
#define LOOM_PUSH_WINDOW 1024
/* Refusals of a peer's requests waiting to leave, per peer: above what a
 * requester keeps unanswered here (its push window, and its atomics), so
 * that a refusal a legitimate requester waits for is never dropped (its
 * operation would wait for ever); only one that ignores its window loses
 * answers. */
#define LOOM_REFUSALS_MAX (2 * LOOM_PUSH_WINDOW)

/* Atomics a process keeps unanswered at one peer, and answers a target
 * keeps waiting to leave towards one requester (a hostile one's beyond are
 * dropped and counted). */
#define LOOM_ATOMIC_WINDOW 1024

/* CONNECT messages that arrived before we connected to their sender. */
#define LOOM_EARLY_CONNECTS_MAX 4096
typedef struct loom_early {
    uint64_t sender;
    bool    looked_up;  /* the upper layer was asked for the sender once */
    size_t  length[LOOM_MAX_RAILS];
    uint8_t msg[LOOM_MAX_RAILS][LOOM_OP_MSG_MAX];
} loom_early_t;

/* tcp rails whose sockets get keepalive and wake a sleeping thread
 * (tcp_liveness.c) */
typedef struct loom_tcp_liveness {
    int            count;
    struct in_addr addrs[LOOM_MAX_RAILS];
    uint64_t       next_sweep;
} loom_tcp_liveness_t;

/* The kinds of operations and their stages. */
enum loom_op_kind {
    LOOM_OP_AM,        /* user AM: stage SEND */
    LOOM_OP_PUT,       /* user put: ISSUE, FLUSH, WAIT */
    LOOM_OP_GET,       /* user get on a rail with hardware get: ISSUE, FLUSH, WAIT */
    LOOM_OP_PUSH_REQ,  /* user get by push: SEND request, WAIT for PUSH_DONE */
    LOOM_OP_SERVE,     /* owner side of a push: ISSUE put, FLUSH, WAIT, SEND done */
    LOOM_OP_CTRL,      /* engine message (PUSH_DONE, CONNECT): SEND */
    LOOM_OP_STRIPE,    /* user put or get cut into chunks: WAIT for all of them */
    LOOM_OP_ATOMIC,    /* user atomic: SEND the request (an engine message), WAIT
                          for the reply */
};

enum loom_op_stage {
    LOOM_STAGE_ISSUE,
    LOOM_STAGE_FLUSH,
    LOOM_STAGE_WAIT,
    LOOM_STAGE_SEND,
    LOOM_STAGE_CHUNKS, /* serve: striped, its chunks on the rails (push_serve.c) */
    LOOM_STAGE_DONE,
};

/* region_cache.c: one ucs_rcache per access set, created on first use */
typedef struct loom_rcache_ctx {
    loom_engine_t *engine;
    unsigned       access;         /* LOOM_ACCESS_* of every entry in it */
    ucs_rcache_t  *rcache;
    bool           failed;         /* could not be created: registered uncached */
} loom_rcache_ctx_t;

/* A cached registration: the rails' handles and packed keys of a range. */
typedef struct loom_rcache_entry {
    ucs_rcache_region_t super;     /* first: ucs_rcache allocates and owns it */
    ucs_list_link_t     link;      /* in loom_rcaches_t.entries */
    loom_rcache_ctx_t  *ctx;
    uint64_t            last_used; /* loom_now_ns() when its last user let go */
    volatile bool       unmapped;  /* its memory was unmapped under it */
    uct_mem_h           memh[LOOM_MAX_RAILS];
    uint16_t            rkey_len[LOOM_MAX_RAILS];
    uint8_t             rkeys[];   /* rail_count * rkey_stride bytes */
} loom_rcache_entry_t;

typedef struct loom_rcaches {
    bool                initialized;
    bool                enabled;        /* memory events from UCM: caching on */
    loom_rcache_ctx_t   ctx[LOOM_ACCESS_ALL + 1];
    ucs_list_link_t     entries;   /* every entry of every access set */
    pthread_spinlock_t  lock;      /* entries: the unmap handler walks them from
                                      whichever thread unmaps memory */
    uint64_t            next_reclaim;
    loom_rcache_stats_t stats;
} loom_rcaches_t;

struct loom_region {
    loom_engine_t *engine;
    uint64_t       id;
    void          *base;
    size_t         length;
    unsigned       access;         /* LOOM_ACCESS_* the upper layer asked for */
    uct_mem_h      memh[LOOM_MAX_RAILS];
    uint16_t       rkey_len[LOOM_MAX_RAILS];
    uint8_t       *rkeys;          /* rail_count * rkey_stride bytes */
    unsigned       serves;         /* serves reading it that have not ended */
    loom_rcache_entry_t *cached;   /* its rails' handles and keys, when they
                                      come from the registration cache */
};

/* Counters that conditional pushes wait on, and the pushes waiting
 * (push_cond.c); notices for the upper layer wait for full progress. */
typedef struct loom_counter {
    uint64_t        value;
    int             failed;      /* the first failure a notice told of it, or LOOM_OK */
    ucs_list_link_t waiting;     /* loom_push_waiting_t, in arrival order */
} loom_counter_t;

typedef struct loom_push_waiting {
    ucs_list_link_t link;
    uint64_t        counter;
    uint64_t        threshold;
    int             rail;        /* it came by; -1: this process asked */
    uint64_t        asker;       /* the process it is for: cancelled when that goes */
    uint64_t        dest;        /* the process it pushes to: likewise */
    size_t          length;
    uint8_t         msg[];       /* the request as it came */
} loom_push_waiting_t;

/* A notice kept: one of ours to ourselves, taken from progress (a serve's
 * end would otherwise fire the pushes waiting on it from inside its own
 * completion), or one for the upper layer, waiting for full progress. */
typedef struct loom_notice_held {
    ucs_list_link_t         link;
    uint64_t                owner;  /* who sent it */
    loom_wire_push_notice_t notice;
} loom_notice_held_t;

typedef struct loom_push_engine {
    loom_hash_t       counters;  /* id -> loom_counter_t */
    ucs_list_link_t   own;       /* loom_notice_held_t: our notices to ourselves */
    ucs_list_link_t   notices;   /* loom_notice_held_t, for push_notice_cb */
    unsigned          held;      /* notices held in both lists */
    ucs_list_link_t   landed;    /* pushes that landed whole (push_landed.c) ... */
    loom_hash_t       landed_ids; /* ... by their owner, requester and request */
    ucs_list_link_t   landed_to_count; /* of those, the ones still to count, in order */
    unsigned          landed_pending; /* of those, still to add to their counter */
    uint64_t          issued;    /* counter ids handed out by loom_counters_open */
    loom_push_stats_t stats;
} loom_push_engine_t;

/* A serve's notices, kept in its op's msg (a serve sends no message of
 * its own): told when it ends. */
typedef struct loom_serve_notices {
    uint64_t              requester;
    uint32_t              count;
    uint32_t              reserved;
    loom_wire_notice_to_t to[LOOM_WIRE_NOTICES_MAX];
} loom_serve_notices_t;

/* Work a layer does from progress; returns how much it found.  A timer
 * (loom_progress_register_timer) runs on clock passes only, against the
 * clock read just before it: loom_engine_clock() is its "now". */
typedef int (*loom_poller_fn_t)(loom_engine_t *engine);
#define LOOM_POLLERS_MAX 16
#define LOOM_TIMERS_MAX  8

/* How often the rails' links (sysfs) are read while chunks are in flight. */
#define LOOM_LINK_CHECK_NS (100ull * 1000000ull)

/* where recent checked writes that may stream started (copy.c): a table of
 * sets of two */
#define LOOM_COPY_SET_BITS 7
typedef struct loom_copy_seen {
    uintptr_t base;   /* a write's first byte, 0: free */
    uint64_t  copied; /* history's count when the write started */
    uint64_t  write;  /* which write (checked_put.c: its sender's ids of it) */
    bool      soon;   /* it came soon after the write before it there */
} loom_copy_seen_t;

typedef struct loom_copy_history {
    uint64_t         copied; /* bytes placed so far by writes that may stream */
    loom_copy_seen_t seen[1 << LOOM_COPY_SET_BITS][2];
} loom_copy_history_t;

struct loom_engine {
    loom_engine_config_t config;
    char                 rails_spec[1024];
    ucs_async_context_t *async;
    uct_worker_h         worker;
    int                  rail_count;
    loom_rail_t          rails[LOOM_MAX_RAILS];
    uint32_t             epoch;
    uint64_t             next_region_id;
    uint64_t             next_request_id;
    size_t               rkey_stride;  /* bytes per rail slot in a key */
    loom_hash_t          peers;        /* name -> loom_peer_t */
    loom_hash_t          regions;      /* region id -> loom_region_t */
    loom_hash_t          requests;     /* request id -> loom_op_t */
    loom_hash_t          early_connects; /* name -> CONNECT messages from peers
                                            not connected yet (loom_early_t) */
    unsigned             early_unasked; /* of them, senders the upper layer was
                                           not asked about yet */
    ucs_list_link_t      busy_peers;   /* peers with a non-empty queue */
    ucs_list_link_t      retired;      /* disconnected with operations pending */
    ucs_list_link_t      failing;      /* peers with rails failed, to handle */
    loom_opq_t           done;         /* ops whose callback is due */
    size_t               outstanding;
    void                *addr_blob;
    size_t               addr_blob_len;
    bool                 in_progress;
    bool                 quiet;        /* progress without the upper layer's callbacks */
    size_t               quiet_kept;   /* bytes quiet progress keeps for full progress */
    int                  wake_fd;      /* epoll over the rails' event descriptors, or -1 */
    bool                 sleepers;     /* someone sleeps on it (loom_engine_arm was called) */
    uint64_t             next_watch;   /* when the rails' liveness is checked next */
    uint64_t             next_link_check; /* when the rails' links are read next */
    unsigned             passes;       /* progress calls, for loom_clock_pass */
    uint64_t             clock_ns;     /* loom_now_ns() of the latest clock pass */
    uint64_t             idle_since;   /* 0, or when progress first saw nothing to do */
    bool                 yielding;     /* idle past config.yield_after_us */
    size_t               chunks_inflight; /* striped chunks on their way, to anyone */
    ucs_list_link_t      owned_ops;    /* ops allocated by the engine, live */
    ucs_list_link_t      stripes;      /* striped transfers in progress */
    unsigned             failed_rails; /* (peer, rail) pairs out of use */
    size_t               msgs_logged;  /* messages kept for re-sending, all peers */
    uint64_t             next_msg_watch;
    ucs_list_link_t      acks_owed;    /* peers owed an acknowledgement */
    uint64_t             next_idle_acks;
    ucs_list_link_t      strangers;    /* messages of processes not connected yet
                                          (loom_msg_copy_t, reliable.c) */
    unsigned             strangers_count;
    bool                 strangers_running;
    unsigned             probes_pending; /* rail probes or answers waiting to leave */
    unsigned             closes_pending; /* failed endpoints to close (rejoin.c) */
    uint64_t             next_rejoin;  /* when failed rails are looked at next */
    uint64_t             next_connect_retry; /* when unconnected rails are looked at */
    loom_eager_engine_t  eager;
    loom_push_engine_t   push;
    loom_rcaches_t       rcaches;
    loom_tcp_liveness_t  tcp_live;
    loom_copy_history_t  copies;       /* where checked writes were placed lately */
    const struct loom_am_handler *am_handlers; /* the receiver of each AM id */
    size_t               am_handler_count;
    uct_error_handler_t  ep_error;     /* errors of the rails' endpoints */
    loom_poller_fn_t     pollers[LOOM_POLLERS_MAX]; /* run from progress, in order */
    int                  poller_count;
    loom_poller_fn_t     timers[LOOM_TIMERS_MAX]; /* ... then these, on clock passes */
    int                  timer_count;
    const loom_chan_t   *chans[LOOM_CHANS_MAX]; /* a message tries them in order */
    int                  chan_count;
    /* engine messages (LOOM_WIRE_TAG_ENGINE) delivered in order from a peer */
    void               (*engine_recv)(loom_peer_t *peer, int rail, const void *data,
                                      size_t length);
};

/* log.c */
uint32_t loom_random_id(void);
void loom_log(loom_engine_t *engine, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int  loom_status_to_rc(ucs_status_t status);

/* A UCT iov of one contiguous piece. */
static inline void loom_uct_iov_set(uct_iov_t *uiov, void *buffer, size_t length, uct_mem_h memh)
{
    uiov->buffer = buffer;
    uiov->length = length;
    uiov->memh   = memh;
    uiov->stride = 0;
    uiov->count  = 1;
}

/* A completion UCT calls func on once the one operation it waits for is
 * done (status: how it ended). */
static inline void loom_uct_comp_arm(uct_completion_t *comp, uct_completion_callback_t func)
{
    comp->func   = func;
    comp->count  = 1;
    comp->status = UCS_OK;
}

/* wire.c; the helpers of every message inline (a call each would cost
 * more than their work) */
/* Copy the pieces of iov one after the other to dest; returns the end. */
static inline uint8_t *loom_iov_pack(uint8_t *dest, const struct iovec *iov, int iovcnt)
{
    int i;

    for (i = 0; i < iovcnt; ++i) {
        memcpy(dest, iov[i].iov_base, iov[i].iov_len);
        dest += iov[i].iov_len;
    }
    return dest;
}

static inline size_t loom_iov_length(const struct iovec *iov, int iovcnt)
{
    size_t length = 0;
    int i;

    for (i = 0; i < iovcnt; ++i) {
        length += iov[i].iov_len;
    }
    return length;
}

static inline void loom_wire_hdr_fill(loom_wire_hdr_t *hdr, uint8_t type, uint8_t tag,
                                      size_t total)
{
    hdr->version = LOOM_WIRE_VERSION;
    hdr->type    = type;
    hdr->tag     = tag;
    hdr->flags   = 0;
    hdr->length  = loom_le32((uint32_t)(total - sizeof(*hdr)));
}
bool loom_wire_hdr_check(loom_rail_t *rail, const void *data, size_t length,
                         uint8_t type, size_t min_length);
int  loom_wire_to_rc(uint32_t status);
uint32_t loom_rc_to_wire(int rc);

/* address.c */
int  loom_address_pack(loom_engine_t *engine);
int  loom_address_parse(const void *blob, size_t length, loom_wire_addr_t *addr_p,
                        const loom_wire_rail_addr_t **rails_p,
                        const uint8_t **dev_addrs_p, const uint8_t **iface_addrs_p);

/* rail_select.c */
typedef struct loom_rail_choice {
    uct_component_h component;
    char md_name[UCT_MD_NAME_MAX];
    char tl_name[UCT_TL_NAME_MAX];
    char dev_name[UCT_DEVICE_NAME_MAX];
} loom_rail_choice_t;
int  loom_rails_select(loom_engine_t *engine, const char *spec, int max_rails,
                       loom_rail_choice_t *choices, int *count_p);

/* tcp_liveness.c */
void loom_tcp_liveness_init(loom_engine_t *engine);
int  loom_tcp_liveness_sweep(loom_engine_t *engine);

/* op.c */
void loom_op_start(loom_peer_t *peer, loom_op_t *op, int kind, int stage);
void loom_op_finish(loom_op_t *op, int status);
/* The op is loom's own, started as one the upper layer waits for (a
 * multicast destination served for its requester): its peer owes nothing. */
void loom_op_disown(loom_op_t *op);
int  loom_op_submit(loom_peer_t *peer, loom_op_t *op, int (*advance)(loom_op_t *),
                    void (*fail)(loom_op_t *, int));
void loom_op_queue(loom_peer_t *peer, loom_op_t *op);
void loom_op_queue_front(loom_peer_t *peer, loom_op_t *op);
void loom_push_hold(loom_peer_t *peer, loom_op_t *op);
void loom_push_release_held(loom_peer_t *peer);
void loom_peer_mark_busy(loom_peer_t *peer);
bool loom_op_queue_empty(const loom_peer_t *peer, const loom_op_t *op);
loom_op_t *loom_opq_pop(loom_opq_t *q);
void loom_opq_push_front(loom_opq_t *q, loom_op_t *op);
void loom_opq_take(loom_opq_t *q, bool (*match)(const loom_op_t *op, const void *arg),
                   const void *arg, loom_opq_t *out);
loom_op_t *loom_op_alloc_ctrl(loom_engine_t *engine);
loom_op_t *loom_op_alloc_owned(loom_engine_t *engine);
void loom_op_free_owned(loom_engine_t *engine, loom_op_t *op);
void loom_wire_track(loom_op_t *op);
void loom_wire_untrack(loom_op_t *op);
void loom_serve_bind(loom_op_t *op, loom_region_t *region);
void loom_serve_unbind(loom_op_t *op);
void loom_checked_put_forget(loom_op_t *op);

/* msg_log.c */
/* The oldest message not acknowledged, or NULL. */
static inline loom_msg_entry_t *loom_msg_log_first(loom_peer_t *peer)
{
    return ucs_list_is_empty(&peer->msg.log) ? NULL :
           ucs_list_head(&peer->msg.log, loom_msg_entry_t, link);
}
/* Copies are kept only where another rail could carry them again. */
static inline bool loom_msg_logging(const loom_peer_t *peer)
{
    return peer->engine->config.msg_window > 0 && peer->engine->rail_count > 1;
}

/* New messages wait while the log is full (the peer acknowledges soon:
 * see loom_msg_ack_wanted) or while the log is being sent again; for a
 * send-immediate, full is further off, within bounds. */
static inline bool loom_msg_can_send(const loom_peer_t *peer)
{
    const loom_msg_state_t *msg = &peer->msg;
    unsigned window = peer->engine->config.msg_window;

    if (msg->past_window && msg->log_bytes < LOOM_AM_PAST_WINDOW_BYTES) {
        window += LOOM_AM_PAST_WINDOW_MAX;
    }
    return !msg->resending && (!loom_msg_logging(peer) || msg->log_count < window);
}

/* Half the window waits for an acknowledgement: ask for one at once. */
static inline bool loom_msg_ack_wanted(const loom_peer_t *peer)
{
    return loom_msg_logging(peer) &&
           2 * (peer->msg.log_count + 1) >= peer->engine->config.msg_window;
}

/* The sequence number of the message about to leave, and our cumulative
 * acknowledgement of the peer's messages to go with it. */
static inline void loom_msg_stamp(loom_peer_t *peer, uint32_t *seq, uint32_t *ack)
{
    *seq = loom_le32(peer->msg.tx_seq);
    *ack = loom_le32(peer->msg.rx_seq);
    peer->msg.acked = peer->msg.rx_seq;
}

void loom_msg_keep(loom_peer_t *peer, int rail, uint8_t tag, const struct iovec *iov,
                   int iovcnt, size_t length);

/* The message stamped last has left: kept until acknowledged if logging. */
static inline void loom_msg_sent(loom_peer_t *peer, int rail, uint8_t tag,
                                 const struct iovec *iov, int iovcnt, size_t length)
{
    if (loom_msg_logging(peer)) {
        loom_msg_keep(peer, rail, tag, iov, iovcnt, length);
    }
    ++peer->msg.tx_seq;
}
void loom_msg_acked(loom_peer_t *peer, uint32_t ack);
bool loom_msg_on_rail(const loom_peer_t *peer, int rail);
void loom_msg_resend_start(loom_peer_t *peer);
/* a is after b, in the wrapping sequence numbers of a direction */
static inline bool loom_seq_after(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) > 0;
}

/* rail_iface.c */
int  loom_rail_iface_open(loom_rail_t *rail, const char *tl_name, const char *dev_name,
                          uct_iface_h *iface_p, uct_iface_attr_t *attr);
int  loom_rail_set_handlers(loom_rail_t *rail, uct_iface_h iface);

/* rail_wireup.c */
void loom_rail_wireup_open(loom_rail_t *rail);
void loom_rail_wireup_close(loom_rail_t *rail);

/* rail.c */
int  loom_rail_open(loom_engine_t *engine, loom_rail_t *rail, uct_component_h component,
                    const char *md_name, const char *tl_name, const char *dev_name);
void loom_rail_close(loom_rail_t *rail);
void loom_checked_rail_init(loom_rail_t *rail);
/* Does the rail's NIC place a peer's writes into our memory by itself, with
 * nothing that wakes a sleeper (RDMA, shared memory)?  tcp carries each
 * write as a message on a socket. */
static inline bool loom_rail_places_writes(const loom_rail_t *rail)
{
    return 0 != strcmp(rail->info.tl_name, "tcp");
}
/* iovs a message sent by zero-copy AM may have (loom_am_issue_zcopy) */
#define LOOM_AM_ZCOPY_IOV 4

/* link.c */
/* The peer goes, or we leave it: errors of its endpoints are no failures. */
static inline bool loom_peer_closing(const loom_peer_t *peer)
{
    return peer->said_bye || peer->leaving;
}
loom_peer_t *loom_peer_lookup(loom_engine_t *engine, uint64_t name);
loom_peer_t *loom_peer_of_message(loom_engine_t *engine, uint64_t name);
int  loom_peer_rdma_rail(loom_peer_t *peer);
void loom_peer_choose_am_rail(loom_peer_t *peer);
void loom_peer_next_am_rail(loom_peer_t *peer);
int  loom_peer_other_rail(const loom_peer_t *peer, int rail);
bool loom_peer_reachable(const loom_peer_t *peer);
int  loom_peer_iface_ep_create(loom_peer_t *peer, int index, uct_iface_h iface,
                              uct_ep_h *ep_p);
void loom_peer_boot_ep_renew(loom_peer_t *peer, int index);
size_t loom_connect_fill(loom_peer_t *peer, int index, unsigned flags, uint8_t *msg,
                         size_t size);
void loom_rail_watch_start(loom_peer_t *peer, int rail);
void loom_rail_watch_landed(loom_peer_t *peer, int rail);
void loom_peer_fail_rail(loom_peer_t *peer, int rail, ucs_status_t status);
ucs_status_t loom_rail_error(void *arg, uct_ep_h ep, ucs_status_t status);

/* am.c */
int  loom_am_send_raw(uct_ep_h ep, uint8_t am_id, const void *msg, size_t length);
int  loom_am_issue_ep(loom_peer_t *peer, int rail, uct_ep_h ep, uint8_t am_id,
                      const loom_wire_send_t *hdr, const struct iovec *iov, int iovcnt);
/* Send one message on a rail now: LOOM_OK, LOOM_ERR_AGAIN, or an error. */
static inline int loom_am_issue(loom_peer_t *peer, int rail, uint8_t am_id,
                                const loom_wire_send_t *hdr, const struct iovec *iov,
                                int iovcnt)
{
    return loom_am_issue_ep(peer, rail, peer->rails[rail].ep, am_id, hdr, iov, iovcnt);
}
int  loom_am_issue_zcopy(loom_peer_t *peer, int rail, const loom_wire_send_t *hdr,
                         const struct iovec *iov, int iovcnt, loom_op_t *op);
void loom_am_in_flight(loom_op_t *op);
int  loom_ctrl_send(loom_peer_t *peer, int rail, const void *msg, size_t length);
int  loom_ctrl_send_last(loom_peer_t *peer, int rail, const void *msg, size_t length);
int  loom_ctrl_send_refusal(loom_peer_t *peer, int rail, const void *msg, size_t length);
int  loom_connect_msg_send(loom_peer_t *peer, int rail, bool via_boot, const void *msg,
                           size_t length);
loom_peer_t *loom_ctrl_recv_peer(loom_rail_t *rail, const void *data, size_t length,
                                 uint8_t type, void *msg, size_t size, const char *what);

/* copy.c: length bytes to dest; with streaming stores when stream (a write
 * larger than the cache) and the CPU has them: whether it streamed */
bool loom_copy_placed(void *dest, const void *src, size_t length, bool stream);
/* whether write (an identity of it), a write to base of which this is the
 * segment of length bytes at offset, started at most reuse_max bytes of
 * such writes after the write before it to base, and so probably finds it
 * still in the cache; records it */
bool loom_copy_reused_soon(loom_copy_history_t *history, uintptr_t base, uint64_t write,
                           uint64_t offset, size_t length, size_t reuse_max);
/* whether that segment of a write of total bytes is to be placed with
 * streaming stores (config.stream_copy_min and stream_copy_reuse), through
 * engine->copies */
bool loom_copy_stream_wanted(loom_engine_t *engine, uintptr_t base, uint64_t write,
                             uint64_t offset, size_t length, size_t total);

/* checked_write.c */
ucs_status_t loom_put_segment_post(loom_peer_t *peer, int rail, const loom_wire_put_t *hdr,
                                   const void *data, uct_mem_h memh, size_t length,
                                   uct_completion_t *comp);
ucs_status_t loom_checked_write_post(loom_peer_t *peer, int rail, const void *data,
                                     uct_mem_h memh, size_t length, uint64_t region_id,
                                     uint32_t region_epoch, uint64_t addr,
                                     uct_completion_t *comp);

/* mem_reg.c */
int  loom_mem_reg_rails(loom_engine_t *engine, void *addr, size_t length, unsigned access,
                        bool quiet, uct_mem_h *memh, uint16_t *rkey_len, uint8_t *rkeys);
void loom_mem_dereg_rails(loom_engine_t *engine, uct_mem_h *memh);

/* region_cache.c */
int  loom_rcache_init(loom_engine_t *engine);
loom_rcache_entry_t *loom_rcache_get(loom_engine_t *engine, void *addr, size_t length,
                                     unsigned access);
void loom_rcache_put(loom_engine_t *engine, loom_rcache_entry_t *entry);
int  loom_rcache_reclaim(loom_engine_t *engine);
void loom_rcache_fini(loom_engine_t *engine);

/* region.c */
int  loom_key_parse(const loom_engine_t *engine, const void *buf, size_t size,
                    const loom_wire_key_t **key_p);
/* The same for a key a message carries as its last part: size must be the
 * key's own, not a byte more (a request padded behind it is refused). */
int  loom_key_parse_whole(const loom_engine_t *engine, const void *buf, size_t size,
                          const loom_wire_key_t **key_p);
int  loom_key_rkey(const loom_engine_t *engine, const loom_wire_key_t *key, int rail,
                   uct_rkey_bundle_t *bundle);
/* The fixed part of a key, copied out: keys sit at any alignment inside the
 * messages that carry them, so their fields are never read in place. */
static inline loom_wire_key_t loom_key_fields(const void *key)
{
    loom_wire_key_t fields;

    memcpy(&fields, key, sizeof(fields));
    return fields;
}
int  loom_region_check(loom_engine_t *engine, uint64_t region_id, uint32_t epoch,
                       uint64_t addr, uint64_t length, loom_region_t **region_p);
bool loom_key_covers(const loom_wire_key_t *key, uint64_t addr, uint64_t length);
void loom_region_unpublish(loom_region_t *region);
void loom_region_free(loom_region_t *region);

/* am_chan.c */
int  loom_am_chan_send(loom_peer_t *peer, loom_chan_out_t *out);

/* msg_ack.c */
void loom_msg_delivered(loom_peer_t *peer, bool ack_now);
void loom_msg_duplicate(loom_peer_t *peer, int rail);
int  loom_msg_progress_ask(loom_peer_t *peer, int rail);
void loom_msg_reply(loom_peer_t *peer, int rail, uint8_t flag);
void loom_msg_ack_soon(loom_peer_t *peer);
void loom_msg_ack_stamp(loom_peer_t *peer, void *msg);
void loom_msg_conn_ask(loom_peer_t *peer, int rail);
int  loom_msg_idle_acks(loom_engine_t *engine);
void loom_msg_owed_forget(loom_peer_t *peer);

/* reliable.c */
/* A copy of a received message (loom_wire_send_t and payload) on a list. */
typedef struct loom_msg_copy {
    ucs_list_link_t link;
    int      rail;
    size_t   length;
    uint8_t  data[];
} loom_msg_copy_t;
void loom_msg_new_conn_drop(loom_peer_t *peer);
/* Where a message of this sequence number stands: < 0 delivered already,
 * 0 next to deliver, > 0 one before it is still missing. */
static inline int loom_msg_order(const loom_peer_t *peer, uint32_t seq)
{
    if (seq == peer->msg.rx_seq) {
        return 0;
    }
    return loom_seq_after(seq, peer->msg.rx_seq) ? 1 : -1;
}
bool loom_msg_resend_progress(loom_peer_t *peer);
void loom_msg_peer_fini(loom_peer_t *peer);
bool loom_msg_conn_other(loom_peer_t *peer, int rail, const loom_wire_send_t *hdr,
                         const void *payload, size_t length);
/* Is the message of the peer's connection in use (reliable.c)? */
static inline bool loom_msg_conn_check(loom_peer_t *peer, int rail,
                                       const loom_wire_send_t *hdr, const void *payload,
                                       size_t length)
{
    return loom_from_le32(hdr->conn) == peer->msg.rx_conn ||
           loom_msg_conn_other(peer, rail, hdr, payload, length);
}
void loom_msg_refuse(loom_engine_t *engine, int rail, uint64_t sender, const char *why);
void loom_msg_over_limit(loom_engine_t *engine, int rail, uint64_t sender, const char *what);
bool loom_msg_in_window(const loom_peer_t *peer, uint32_t seq);
bool loom_msg_stranger_keep(loom_engine_t *engine, int rail, const loom_wire_send_t *hdr,
                            const void *payload, size_t length);
void loom_msg_strangers_free(loom_engine_t *engine);

/* msg_deliver.c */
void loom_msg_recv(loom_engine_t *engine, int rail, const loom_wire_send_t *hdr,
                   const void *payload, size_t length);
int  loom_msg_deliver_ready(loom_peer_t *peer);
void loom_msg_waiting_drop(loom_peer_t *peer);
void loom_msg_wait_for_full(loom_peer_t *peer, int rail, uint8_t tag, const void *data,
                            size_t length);
void loom_msg_held_drop(loom_peer_t *peer);
void loom_msg_conn_reply(loom_peer_t *peer, int rail, uint32_t conn);
int  loom_msg_strangers_progress(loom_engine_t *engine);

/* msg_ack_rx.c */
ucs_status_t loom_msg_ack_recv(void *arg, void *data, size_t length, unsigned flags);
int  loom_msg_watch(loom_engine_t *engine);

/* msg_send.c */
int  loom_am_send_now(loom_peer_t *peer, uint8_t tag, const struct iovec *iov, int iovcnt,
                      loom_op_t *op);
int  loom_msg_send(loom_peer_t *peer, uint8_t tag, const struct iovec *iov, int iovcnt,
                  loom_op_t *op);
ucs_status_t loom_am_recv_send(void *arg, void *data, size_t length, unsigned flags);
/* An engine message (wire.h) sent from an op the engine owns, in order with
 * the peer's messages: LOOM_INPROGRESS when it was queued, and then done
 * (NULL: free the op) runs with its end and must free the op; otherwise it
 * went, or failed, and nothing runs. */
int  loom_engine_msg_send(loom_peer_t *peer, const void *msg, size_t length,
                          loom_op_cb_t done);

/* atomic.c */
int  loom_atomic_advance(loom_op_t *op);
/* Refuses (and says why) a size other than 4 or 8, an unknown operation or
 * an address not aligned to the size. */
int  loom_atomic_check(loom_engine_t *engine, int atomic_op, unsigned size,
                       uint64_t addr);
/* Stores an atomic's result (size bytes, host order) where result points. */
void loom_atomic_result(void *result, unsigned size, uint64_t value);
/* Runs a checked atomic on the word at addr; returns its earlier value. */
uint64_t loom_atomic_run(uint64_t addr, unsigned size, int atomic_op, uint64_t operand,
                         uint64_t compare);
/* An atomic's engine message (loom_wire_atomic_t, length checked). */
void loom_atomic_recv(loom_peer_t *peer, int rail, const void *data, size_t length);

/* rdma_done.c */
void loom_rdma_account(loom_op_t *op);
void loom_serve_told(loom_op_t *op);
void loom_push_done_send(loom_engine_t *engine, uint64_t notify_name, int rail,
                         uint64_t request_id, uint64_t length, int rc, bool refusal);
/* A push's end told to its notices (from its request, or a serve's copy). */
void loom_push_notices_send(loom_engine_t *engine, const loom_serve_notices_t *notices,
                            uint64_t request_id, uint64_t length, int rc);
/* Our push request's answer (PUSH_DONE, or our own serve's end): the op it
 * names completes, if it still waits for exactly that. */
void loom_push_answered(loom_engine_t *engine, int rail, uint64_t owner, uint64_t request_id,
                        uint64_t length, int rc);
void loom_rdma_complete(loom_op_t *op, int rc);
/* What the UCT call that ends an operation (a get, a flush) returned:
 * completed now, waiting on the rail (stage WAIT, tracked), or as an error
 * code (LOOM_ERR_AGAIN when the rail is busy). */
int  loom_rdma_wait_on(loom_op_t *op, ucs_status_t status);

/* push_serve.c */
/* A push request, from a peer (by rail) or of this process (rail -1),
 * checked whole (header, notices, keys, bounds) and served now.  asker is
 * the process it is for: its requester, or the peer whose multicast
 * request this process serves as pushes of its own; memory is read for
 * anyone but this process only with remote read access. */
void loom_push_serve(loom_engine_t *engine, int rail, uint64_t asker, const void *data,
                     size_t length);
int  loom_push_serve_stripe(loom_op_t *op);
/* Refused: its notify_proc and notices are told why. */
void loom_push_refuse(loom_engine_t *engine, int rail, const void *data, size_t length,
                      int rc);
/* LOOM_OK if the request's length is what its notices and key need, and
 * the key is whole; LOOM_ERR_INVALID (logged) otherwise. */
int  loom_push_req_form(loom_engine_t *engine, const void *data, size_t length);
/* The request's notices, or NULL with an error for a malformed request. */
int  loom_push_req_notices(const void *data, size_t length, loom_serve_notices_t *notices,
                           const uint8_t **key_p, size_t *key_len_p);

/* push_cond.c */
ucs_status_t loom_push_req_recv(void *arg, void *data, size_t length, unsigned flags);
void loom_push_accept(loom_engine_t *engine, int rail, uint64_t asker, const void *data,
                      size_t length);
/* A notice (loom_wire_push_notice_t, length checked) from owner; rail -1:
 * one of ours to ourselves. */
void loom_push_notice_recv(loom_engine_t *engine, int rail, uint64_t owner,
                           const void *data);
/* A counter's engine message (loom_wire_counter_add_t, length checked). */
void loom_counter_recv(loom_peer_t *peer, int rail, const void *data, size_t length);
int  loom_push_notices_progress(loom_engine_t *engine);
void loom_push_peer_gone(loom_engine_t *engine, uint64_t name);
/* push_landed.c, pushes whose checked write with LOOM_WIRE_FLAG_COUNT
 * landed whole: whether this one did already (its write, placed again, is
 * answered but not placed); record one (once, room allowing); the next one
 * recorded and not counted yet (its counter), and whether it counted; take
 * its record when its notice comes (true: it counted, the notice must add
 * nothing); forget those of an owner gone, or all. */
typedef struct loom_landed loom_landed_t;
void loom_landed_init(loom_engine_t *engine);
bool loom_landed_again(loom_engine_t *engine, uint64_t owner, uint64_t requester,
                       uint64_t request_id);
void loom_landed_record(loom_engine_t *engine, uint64_t owner, uint64_t requester,
                        uint64_t request_id, uint64_t counter);
loom_landed_t *loom_landed_pending(loom_engine_t *engine, uint64_t *counter);
void loom_landed_counted(loom_engine_t *engine, loom_landed_t *landed, bool counted);
bool loom_landed_take(loom_engine_t *engine, uint64_t owner, uint64_t requester,
                      uint64_t request_id, uint64_t counter);
void loom_landed_peer_gone(loom_engine_t *engine, uint64_t owner);
void loom_landed_free_all(loom_engine_t *engine);
void loom_push_cond_init(loom_engine_t *engine);
void loom_push_cond_fini(loom_engine_t *engine);

/* rdma_done.c: op->comp as an RDMA op's completion, one reference held */
void loom_rdma_comp_init(loom_op_t *op);

/* checked_put.c */
int  loom_checked_put_advance(loom_op_t *op);
ucs_status_t loom_checked_put_recv(void *arg, void *data, size_t length, unsigned flags);
ucs_status_t loom_put_ack_recv(void *arg, void *data, size_t length, unsigned flags);

/* rdma.c */
ucs_status_t loom_push_done_recv(void *arg, void *data, size_t length, unsigned flags);
int  loom_rdma_advance(loom_op_t *op);
void loom_rdma_fail_wire_ops(loom_peer_t *peer, int rail);
void loom_serves_cancel(loom_region_t *region);
void loom_serves_release_sent(loom_region_t *region);
void loom_serves_detach(loom_region_t *region);
void loom_serves_peer_closed(loom_peer_t *peer);
int  loom_rdma_post(loom_peer_t *peer, loom_op_t *op, int kind, int rail, void *local,
                    loom_region_t *local_region, uint64_t remote_addr,
                    const loom_wire_key_t *key, size_t length);
/* A push request of ours, built in op->msg from args (dst_key packed),
 * registered as waiting for its answer. */
int  loom_push_req_build(loom_engine_t *engine, loom_op_t *op, const loom_push_args_t *args);

/* push.c */
void loom_push_issue_local(loom_engine_t *engine, loom_peer_t *dest, loom_op_t *op);

/* push_multi.c: engine messages of kind PUSH_MULTI (at least its header)
 * and PUSH_MULTI_DONE (its exact size) */
void loom_push_multi_recv(loom_peer_t *peer, int rail, const void *data, size_t length);
void loom_push_multi_done_recv(loom_peer_t *peer, int rail, const void *data);

/* stripe.c */
bool loom_stripe_wanted(loom_peer_t *peer, size_t length);
void loom_stripes_drop_region(loom_region_t *region);
bool loom_stripe_guarded(loom_peer_t *peer);
int  loom_stripe_start(loom_peer_t *peer, loom_op_t *op, int kind, void *local,
                       loom_region_t *local_region, uint64_t remote_addr,
                       const void *remote_key, size_t remote_key_size, size_t length,
                       bool cut);
double loom_rail_rate(const loom_rail_t *rail);
void loom_stripe_free_all(loom_engine_t *engine);

/* rail_watch.c */
int  loom_rail_watch(loom_engine_t *engine);

/* rejoin_rail.c */
bool loom_rail_link_up(const loom_rail_t *rail);
void loom_rejoin_state_set(loom_peer_t *peer, int index, int state);
bool loom_rejoin_possible(const loom_peer_t *peer, int index);
/* The peer says it lost the rail, which we still use, and offers a newer
 * connection (a CONNECT of connect-to-ep rails, a PROBE TRY of the others):
 * why we keep ours (for the log), or NULL when ours may fail so that the
 * rail comes back.  One rule for both kinds of rail. */
const char *loom_rejoin_keep_why(const loom_peer_t *peer, int index);
void loom_rejoin_close(loom_peer_t *peer, int index);
void loom_rejoin_drop_probe_ep(loom_peer_rail_t *prail);
void loom_rejoin_forget_addr(loom_peer_rail_t *prail);
void loom_rejoin_use(loom_peer_t *peer, int index);

/* rejoin_ep.c */
void loom_rejoin_ep_start(loom_peer_t *peer, int index);
void loom_rejoin_ep_step(loom_peer_t *peer, int index);
bool loom_rejoin_ep_recv(loom_peer_t *peer, int index, uint32_t rail_epoch, bool connected,
                         const uint8_t *addr, size_t addr_len);

/* rejoin.c */
int  loom_rejoin_progress(loom_engine_t *engine);
int  loom_rejoin_timer(loom_engine_t *engine);
void loom_engine_wake_init(loom_engine_t *engine);
void loom_engine_wake_fini(loom_engine_t *engine);
void loom_rejoin_rail_failed(loom_peer_t *peer, int index);
void loom_rejoin_tell_down(loom_peer_t *peer, int index);
ucs_status_t loom_probe_recv(void *arg, void *data, size_t length, unsigned flags);
void loom_rejoin_peer_fini(loom_peer_t *peer);

/* peer_failure.c */
int  loom_peer_failures_progress(loom_engine_t *engine);
void loom_peer_failures_forget(loom_peer_t *peer);
void loom_peer_fail_requests(loom_peer_t *peer, int rail);

/* progress.c */
int  loom_op_advance(loom_op_t *op);
int  loom_progress_queues(loom_engine_t *engine);
void loom_progress_register(loom_engine_t *engine, loom_poller_fn_t poller);
void loom_progress_register_timer(loom_engine_t *engine, loom_poller_fn_t timer);

/* teardown.c: loom_peer_disconnect, loom_peer_flush and loom_mem_deregister
 * (transport.h) */

/* peer.c */
ucs_status_t loom_connect_recv(void *arg, void *data, size_t length, unsigned flags);
int  loom_early_connects_progress(loom_engine_t *engine);
int  loom_connect_send(loom_peer_t *peer, int rail_index, bool again);
int  loom_connect_retry_progress(loom_engine_t *engine);
ucs_status_t loom_bye_recv(void *arg, void *data, size_t length, unsigned flags);

/* engine.c */
typedef struct loom_am_handler {
    uint8_t           id; /* enum loom_wire_type, the AM id */
    uct_am_callback_t cb;
} loom_am_handler_t;
extern const loom_am_handler_t loom_am_handlers[];
extern const size_t loom_am_handler_count;

static inline uint64_t loom_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Whether a poller whose work is periodic reads the clock on this pass of
 * progress: one pass in 64, or every pass while someone sleeps on the
 * engine (passes are rare then).  A clock read costs about as much as the
 * rest of an empty pass, and reading it on every pass of a ping-pong was 8%
 * of a rank's samples (docs/perf/2026-11-29.md). */
static inline bool loom_clock_pass(const loom_engine_t *engine)
{
    return engine->sleepers || 0 == (engine->passes & 63);
}

/* The time of the latest clock pass, free to read: behind the clock by the
 * passes since (a clock read is a system call where the clock source is not
 * the TSC: 0.9 us in the emulated rxe guest, on every pass of a ping-pong
 * and every message).  For timekeeping of its own that a layer does on its
 * latency path (the eager rings): never compare it with loom_now_ns()
 * times, which may be ahead of it. */
static inline uint64_t loom_engine_clock(const loom_engine_t *engine)
{
    return engine->clock_ns;
}

/* How long since a loom_now_ns() stamp, at a timer's now: none when the
 * stamp is later (stamped after the clock pass read the clock, or by
 * another thread), never a negative time wrapped round to a huge one. */
static inline uint64_t loom_elapsed_ns(uint64_t now, uint64_t since)
{
    return (now > since) ? now - since : 0;
}

/* Read the clock into the engine's: for a time that a timeout is counted
 * from, which a stale clock (no progress for a while) would cut short. */
static inline uint64_t loom_engine_clock_read(loom_engine_t *engine)
{
    engine->clock_ns = loom_now_ns();
    return engine->clock_ns;
}

#define loom_container_of(_ptr, _type, _member) \
    ((_type *)((char *)(_ptr) - offsetof(_type, _member)))

#endif
