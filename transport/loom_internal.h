/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Private structures of the loom transport engine: the types every layer
 * shares, and nothing that calls.  What each layer offers the layers above
 * is declared in its folder's header (base/loom_base.h up to
 * engine/loom_engine.h, each including the one below).
 */
#ifndef LOOM_INTERNAL_H
#define LOOM_INTERNAL_H

#include "loom/transport.h"
#include "base/wire.h"
#include "base/loom_hash.h"
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
 * time that open at a chunk's completion with others still in flight
 * (stripe.c; loom_now_ns times), and the bytes it carries for every peer. */
typedef struct loom_rail_flow {
    double     rate;          /* bytes/s, 0 until the first window closed */
    unsigned   inflight;      /* chunks on this rail, to every peer */
    size_t     bytes_out;     /* bytes of striped puts in flight, to every peer */
    size_t     bytes_in;      /* bytes of striped gets in flight, from every peer */
    uint64_t   window_start;  /* 0: no window open (none since it last ran dry) */
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
    bool           revoked;        /* the cache drops them at its end (loom_mem_revoke) */
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
/* Clock passes (loom_clock_pass): one in this many passes at most, and
 * about this far apart. */
#define LOOM_CLOCK_EVERY_MAX 64
#define LOOM_CLOCK_PASS_NS   10000ull

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
    bool                 clock_due;    /* this pass is a clock pass */
    unsigned             clock_passes; /* passes at the latest clock pass */
    unsigned             clock_every;  /* passes from one clock pass to the next */
    uint64_t             clock_pass_ns; /* when the latest clock pass read the clock */
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

/* The receiver of an AM id, registered by the engine (engine.c). */
typedef struct loom_am_handler {
    uint8_t           id; /* enum loom_wire_type, the AM id */
    uct_am_callback_t cb;
} loom_am_handler_t;

#define loom_container_of(_ptr, _type, _member) \
    ((_type *)((char *)(_ptr) - offsetof(_type, _member)))

#endif
