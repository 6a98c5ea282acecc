/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * loom transport engine: the public interface of transport/.
 *
 * Pure C on UCT: no Open MPI types appear here, so the engine can be tested
 * without MPI.  One engine per process drives up to LOOM_MAX_RAILS rails; a
 * rail is one UCT interface.  Nothing here blocks: operations either finish
 * at once, or are queued and finish from loom_engine_progress().
 */
#ifndef LOOM_TRANSPORT_H
#define LOOM_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <ucs/datastruct/list.h>
#include <uct/api/uct.h>

#define LOOM_MAX_RAILS 8
#define LOOM_OP_MSG_MAX 512
#define LOOM_NAME_MAX   32  /* transport, device and component names */

/* Return codes (negative are errors). */
enum {
    LOOM_OK            = 0,
    LOOM_INPROGRESS    = 1,  /* queued: the op's callback will run */
    LOOM_ERR_AGAIN     = -1, /* no resources now and nothing was queued */
    LOOM_ERR_INVALID   = -2, /* bad argument or bad configuration */
    LOOM_ERR_NOMEM     = -3,
    LOOM_ERR_UNREACH   = -4, /* no usable rail to that peer */
    LOOM_ERR_IO        = -5, /* UCT reported an error */
    LOOM_ERR_STALE_KEY = -6, /* remote key refused */
    LOOM_ERR_RANGE     = -7, /* remote address outside the region */
    LOOM_ERR_NOT_FOUND = -8,
    LOOM_ERR_CANCELLED = -9, /* a conditional push whose counter was released */
    LOOM_ERR_LIMIT     = -10, /* refused at a configured bound (counters, waiting pushes) */
};

const char *loom_strerror(int rc);

typedef struct loom_engine loom_engine_t;
typedef struct loom_peer   loom_peer_t;
typedef struct loom_region loom_region_t;
typedef struct loom_op     loom_op_t;

/* Counters of one rail, plain 64-bit integers so MPI_T can read them. */
typedef struct loom_rail_stats {
    unsigned long bytes_sent;     /* AM payload and RDMA bytes this side moved out */
    unsigned long bytes_received; /* AM payload and get bytes landed here */
    unsigned long messages_sent;
    unsigned long messages_zcopy; /* of those, sent from the sender's memory */
    unsigned long messages_received;
    unsigned long puts;
    unsigned long gets;
    unsigned long pushes_served;
    unsigned long refused;        /* malformed or stale messages/keys refused */
    unsigned long chunks;         /* striped chunks that landed */
    unsigned long failovers;      /* chunks re-driven here after their rail failed */
    unsigned long resent;         /* messages sent again here after their rail failed */
    unsigned long duplicates;     /* messages that arrived here a second time, dropped */
    unsigned long rejoins;        /* times this rail came back into use for a peer */
    unsigned long failures;       /* times this rail was taken out of use for a peer */
    unsigned long bad_tags;       /* messages with a tag the upper layer does not take,
                                     dropped */
    unsigned long closings;       /* endpoints to a peer that said goodbye or that we
                                     disconnect, closed on an error: no failure */
    unsigned long over_limit;     /* messages, requests and answers dropped at a bound
                                     on what a peer can make this process hold */
    unsigned long writes_checked; /* checked write segments placed here */
    unsigned long writes_streamed; /* ... of them, placed with streaming stores */
    unsigned long writes_refused; /* checked write segments refused here (also in
                                     refused): bytes that were not placed */
    unsigned long atomics;        /* atomics of peers run here (answered on this rail's
                                     message stream) */
    unsigned long connect_retries; /* CONNECTs sent again to a peer that had not
                                      connected back (connect-to-ep rails) */
    unsigned long wireup_failures; /* wireup endpoints found failed by a CONNECT
                                      and made afresh */
    unsigned long rejoin_tries;   /* attempts to bring this failed rail back for a
                                     peer: probes, or fresh endpoint addresses announced */
} loom_rail_stats_t;

/* One phase of the eager RDMA ring (phase 0 has no ring). */
#define LOOM_EAGER_MAX_PHASES 4
typedef struct loom_eager_phase {
    uint32_t slot_size;   /* bytes per slot, loom's 20-23 bytes of header and flags included */
    uint32_t slot_count;
    uint32_t threshold;   /* largest payload sent in this phase */
} loom_eager_phase_t;

/* Where the eager ring is used. */
enum { LOOM_EAGER_OFF = 0, LOOM_EAGER_ON = 1, LOOM_EAGER_RDMA_ONLY = 2 };

/* Counters of the eager rings of one engine (both directions). */
typedef struct loom_eager_stats {
    unsigned long registered_bytes; /* rings and send slots registered now */
    unsigned long registered_max;   /* high water of registered_bytes */
    unsigned long peer_bytes_max;   /* high water of one peer's rings and slots */
    unsigned long rings[LOOM_EAGER_MAX_PHASES + 1]; /* receive rings now, by phase */
    unsigned long enlargements;     /* rings this side asked to grow, acknowledged */
    unsigned long shrinks;          /* rings this side asked to shrink, acknowledged */
    unsigned long slot_growths;     /* of those enlargements: more slots, same phase */
    unsigned long refused;          /* malformed, stale or refused ring messages */
    unsigned long ack_timeouts;     /* ring requests a peer did not answer in time */
    unsigned long ring_sent;        /* messages written into a peer's ring */
    unsigned long ring_received;    /* messages taken from our rings */
    unsigned long ring_polled;      /* sleeps not taken: a peer may write into a ring
                                       here by RDMA, which wakes no sleeper */
    unsigned long wait_shrinks;     /* rings a waiting rank asked their writer to drop,
                                       so that it could sleep (LOOM_ARM_WAIT) */
} loom_eager_stats_t;

typedef struct loom_rail_info {
    char          tl_name[LOOM_NAME_MAX];
    char          dev_name[LOOM_NAME_MAX];
    char          component[LOOM_NAME_MAX];
    bool          connect_to_ep;   /* needs endpoint address exchange */
    bool          has_put;
    bool          has_get;         /* hardware get; else emulated by push */
    size_t        get_min;         /* shorter gets go by push (rc_verbs: 65 B) */
    size_t        am_max;          /* largest AM payload (after loom header) */
    size_t        put_max;
    double        latency_us;      /* UCT's own estimate */
    double        bandwidth_mbs;   /* UCT's own estimate, MB/s */
} loom_rail_info_t;

/* Called for every upper-layer message that arrives. */
typedef void (*loom_recv_cb_t)(void *ctx, uint8_t tag, const void *data,
                               size_t length);
/* Called when a queued or RDMA operation completes (status LOOM_OK or error). */
typedef void (*loom_op_cb_t)(loom_op_t *op, int status);
/* Called with a human-readable message when something goes wrong. */
typedef void (*loom_log_cb_t)(void *ctx, int level, const char *msg);
/* Called once when every rail to a peer failed while work to it was pending:
 * nothing can reach it any more.  msg names the peer and its rails. */
typedef void (*loom_peer_lost_cb_t)(void *ctx, loom_peer_t *peer, const char *msg);
/* A process of a push's notices learns that the push ended (from
 * loom_engine_progress, never from quiet progress). */
typedef struct loom_push_notice loom_push_notice_t;
typedef void (*loom_push_notice_cb_t)(void *ctx, const loom_push_notice_t *notice);
/* A message came from a process not connected yet: connect to it now if
 * its address can be found (loom_peer_connect), so that its messages are
 * delivered in order and acknowledged; NULL if it cannot. */
typedef loom_peer_t *(*loom_peer_find_cb_t)(void *ctx, loom_engine_t *engine, uint64_t name);
/* Progress found nothing for yield_after_us: may it yield the CPU now?
 * False where the caller only polls and works in between (MPI_Test), so
 * that a yield would stall its work; asked again after another
 * yield_after_us.  NULL: always. */
typedef bool (*loom_may_idle_cb_t)(void *ctx);

enum { LOOM_LOG_ERROR = 0, LOOM_LOG_WARN = 1, LOOM_LOG_INFO = 2,
       LOOM_LOG_DEBUG = 3 };

typedef struct loom_engine_config {
    const char   *rails;        /* "auto" or "tl:dev[,tl:dev...]" */
    int           max_rails;    /* cap for "auto" */
    uint64_t      name;         /* this process's unique name */
    bool          force_connect_to_ep; /* test the ep-exchange path on tcp */
    size_t        tcp_seg_size; /* tcp rails: largest message segment, 0 = UCX's */
    size_t        tcp_sockbuf;  /* tcp rails: each socket's send and receive buffer,
                                   fixed; 0 = the kernel's autotuning */
    unsigned      tcp_keepalive_s; /* tcp rails: an idle connection whose peer host
                                      does not answer for about this long fails
                                      (kernel keepalive); 0 = UCX's settings */
    unsigned      yield_after_us;   /* progress that found nothing for this long
                                       yields the CPU on each further empty call,
                                       for the kernel's network processing that
                                       may wait for this core (0: never) */
    size_t        stripe_threshold; /* puts/gets from this size are striped, 0 = never */
    size_t        stripe_chunk;     /* bytes per striped chunk */
    unsigned      stripe_depth;     /* chunks in flight per rail and peer */
    unsigned      stripe_queue_us;  /* ... fewer on a slow rail: at most this long
                                       at the rail's measured rate (one chunk at
                                       least); 0 = stripe_depth on every rail */
    unsigned      rail_timeout_ms;  /* a rail with chunks in flight and none landing
                                       for this long, while other rails to the same
                                       peer deliver, is failed; 0 = never */
    int           am_rail;          /* rail for messages to every peer, -1 = spread
                                       peers over rails */
    bool          am_round_robin;   /* each message on the next rail instead */
    unsigned      msg_window;       /* with several rails: messages kept per peer
                                       until acknowledged, to send again if their
                                       rail fails; 0 = none kept */
    unsigned      rail_rejoin_ms;   /* try a failed rail again this often, 0 = never */
    /* eager RDMA rings, per peer and direction, grown on demand */
    int           eager_mode;       /* LOOM_EAGER_*: where rings are used */
    unsigned      eager_phase_count; /* phases with a ring, 0..LOOM_EAGER_MAX_PHASES */
    loom_eager_phase_t eager_phases[LOOM_EAGER_MAX_PHASES]; /* phase 1 first */
    unsigned      eager_msgs_before_ring; /* messages to a peer before its first ring */
    unsigned      eager_start_slots; /* a ring starts with this many of its phase's slots
                                        and doubles them while the sender finds it
                                        full; 0 = all of them at once */
    unsigned      eager_idle_ms;    /* shrink a ring unused this long, 0 = never */
    unsigned      eager_wait_shrink_ms; /* a wait that found nothing this long beside
                                           rings written by RDMA asks their writers to
                                           drop them (LOOM_ARM_WAIT), 0 = never */
    size_t        eager_budget;     /* bytes of rings per process, 0 = no limit */
    unsigned      eager_ack_timeout_ms; /* give up on a ring request after this */
    bool          eager_cycle;      /* testing: change phase after every message */
    bool          rails_repeat;     /* testing: a device may carry several rails
                                       (two tcp rails on lo) */
    bool          threads;          /* several threads call the engine, one at a
                                       time (the caller serializes them) */
    bool          trust_network; /* rails without memory protection (tcp) take raw
                                    puts, unchecked by the target */
    size_t        stream_copy_min; /* checked writes of at least this many bytes
                                      are placed with streaming stores (0: never) */
    size_t        stream_copy_reuse; /* ... unless a write started at the same
                                        address at most this many bytes of such
                                        writes before (still in the cache);
                                        0: always stream */
    size_t        am_zcopy_min;  /* messages sent with an op, of at least this many
                                    bytes, leave from the sender's memory on rails
                                    that need no registration for it (tcp); 0 never */
    /* registration cache (loom_mem_register_cached): 0 bytes = off */
    size_t        rcache_max_bytes;   /* registered bytes kept at most */
    unsigned long rcache_max_regions; /* registrations kept at most */
    unsigned      rcache_idle_ms;     /* drop a registration unused this long, 0 = never */
    unsigned      tag_count;        /* recv_cb gets tags below this only; a message
                                       with another is dropped and counted (bad_tags);
                                       0 = every tag */
    loom_recv_cb_t recv_cb;
    loom_log_cb_t  log_cb;
    loom_peer_lost_cb_t peer_lost_cb;
    loom_peer_find_cb_t peer_find_cb;
    loom_push_notice_cb_t push_notice_cb;
    loom_may_idle_cb_t may_idle_cb;
    unsigned      push_counters_max; /* counters a process keeps, 0: 4096 */
    unsigned      push_waiting_max;  /* pushes waiting on counters here, 0: 4096 */
    void          *cb_ctx;
    int           verbose;      /* highest loom_log level passed to log_cb */
} loom_engine_config_t;

/*
 * An operation's storage belongs to the caller and must stay valid until its
 * callback ran.  Fill cb/user; the rest is the engine's.
 */
struct loom_op {
    loom_op_cb_t   cb;
    void          *user;
    /* engine private below */
    ucs_list_link_t queue_link; /* in one queue at a time: its peer's or its rail's,
                                  or the engine's done list */
    loom_peer_t   *peer;
    int            kind;
    int            stage;
    int            rail;
    int            status;
    uct_completion_t comp;
    uint64_t       id;
    uint64_t       multi_peer; /* multicast push: at the requester, the owner
                                  that answers; at the owner, the requester */
    uint64_t       multi_id;   /* multicast push, at the owner: the requester's id */
    uint64_t       notify;     /* serve: name of the process to notify;
                                  push request: its destination */
    void          *local;
    uint64_t       remote;
    size_t         length;
    uct_mem_h      memh;
    uct_rkey_bundle_t rkey;
    bool           rkey_valid;
    bool           owed;       /* the upper layer waits for it (its peer's owed) */
    bool           done_sent;  /* serve: the requester already told (PUSH_DONE
                                  behind a fence, or its checked write's last
                                  segment) */
    loom_region_t *region;     /* serve: the region it reads until it ends */
    size_t         msg_len;
    uint8_t        tag;
    const struct iovec *iov;
    int            iovcnt;
    size_t         offset;     /* striped chunk: where in the whole transfer */
    uint64_t       count_requester; /* serve, or the one chunk of a serve: its
                                       checked write adds to the target's
                                       counter count_counter on landing ... */
    uint64_t       count_request;   /* ... for this request (0: it does not) */
    uint64_t       count_counter;
    uint64_t       write_id;   /* checked write: our cookie, 0 if none */
    uint64_t       remote_region; /* put, serve: the target region's id ... */
    uint32_t       remote_epoch;  /* ... and its owner's epoch (little-endian) */
    uint32_t       rail_epoch; /* checked write: the rail connection it went on */
    size_t         sent;       /* checked write: bytes sent */
    struct iovec   msg_iov;    /* an engine message: msg, msg_len */
    ucs_list_link_t wire_link; /* waiting for a UCT completion on its rail's
                                  endpoint (loom_peer_rail_t.wire_ops) ... */
    bool           on_wire;    /* ... while this is set */
    ucs_list_link_t owned_link; /* ops the engine allocated itself, freed at
                                   destroy if a dead rail never completes them */
    uint8_t        msg[LOOM_OP_MSG_MAX];
};

/* --- engine ----------------------------------------------------------- */
int  loom_engine_create(const loom_engine_config_t *config,
                        loom_engine_t **engine_p);
void loom_engine_destroy(loom_engine_t *engine);
/* Progress every rail, retry queued work and run completions. */
int  loom_engine_progress(loom_engine_t *engine);
/*
 * Progress for a helper thread while the upper layer's threads are away:
 * everything loom does by itself moves (rails, RDMA it serves or places,
 * acknowledgements, the rail watch), but nothing goes up: messages,
 * completions and peers' atomics (atomic.c says why) wait for the next
 * loom_engine_progress.  Under the same lock as every other entry point.
 * Messages it keeps for the upper layer are bounded (LOOM_QUIET_KEPT_MAX
 * bytes): at the bound it does nothing and returns LOOM_ERR_LIMIT, so that
 * senders wait as they would with no helper at all; the helper then sleeps.
 */
#define LOOM_QUIET_KEPT_MAX ((size_t)16 << 20)
int  loom_engine_progress_quiet(loom_engine_t *engine);
/* Arms the rails' event descriptors for loom_engine_sleep: LOOM_OK;
 * LOOM_INPROGRESS when armed but operations wait for a busy rail (sleep
 * briefly); LOOM_ERR_AGAIN when work is there already (progress first);
 * LOOM_ERR_NOT_FOUND when a rail cannot wake a sleeper, or when a peer
 * may write into an eager ring here by RDMA, which no event announces.
 * With LOOM_ARM_WAIT (an application's wait, not a helper thread's round)
 * such peers are asked to drop their rings, so that a later arm can sleep. */
#define LOOM_ARM_WAIT 0x1u
int  loom_engine_arm(loom_engine_t *engine, unsigned flags);
/* Sleeps until an armed rail has work or timeout_ms passed; outside the
 * lock: true when a rail woke it.  Without descriptors it only sleeps. */
bool loom_engine_sleep(const loom_engine_t *engine, int timeout_ms);
int  loom_engine_rail_count(const loom_engine_t *engine);
const loom_rail_info_t  *loom_engine_rail_info(const loom_engine_t *engine, int rail);
loom_rail_stats_t       *loom_engine_rail_stats(loom_engine_t *engine, int rail);
/* Bytes/s striping weighs the rail with (measured, or UCT's estimate). */
double   loom_engine_rail_rate(const loom_engine_t *engine, int rail);
/* Peers the rail is out of use for (failed, or taken out by the watch). */
unsigned loom_engine_rail_failed_peers(loom_engine_t *engine, int rail);
/* Of those, the peers for which it is being connected again. */
unsigned loom_engine_rail_rejoining_peers(loom_engine_t *engine, int rail);
uint32_t loom_engine_epoch(const loom_engine_t *engine);
/* Largest payload loom_am_send() takes, the minimum over all rails. */
size_t   loom_engine_am_max(const loom_engine_t *engine);
/* Largest put/get, the minimum over all rails. */
size_t   loom_engine_rdma_max(const loom_engine_t *engine);
/* Address blob for the runtime's modex. */
int  loom_engine_address(loom_engine_t *engine, void **blob_p, size_t *length_p);
/* Count of operations of this engine not yet completed (for flush/finalize). */
size_t loom_engine_outstanding(const loom_engine_t *engine);

const loom_eager_stats_t *loom_engine_eager_stats(const loom_engine_t *engine);

/* --- peers ------------------------------------------------------------ */
/* Connect to the process that published blob; returns the existing peer if
 * that process is already connected. */
int  loom_peer_connect(loom_engine_t *engine, const void *blob, size_t length,
                       loom_peer_t **peer_p);
void loom_peer_disconnect(loom_peer_t *peer);
uint64_t loom_peer_name(const loom_peer_t *peer);
/* Operations of this peer not yet completed. */
size_t loom_peer_outstanding(const loom_peer_t *peer);
/* Call progress until every operation to this peer completed remotely. */
int  loom_peer_flush(loom_peer_t *peer);

/* --- active messages -------------------------------------------------- */
/*
 * Send iov as one message with the upper layer's tag.  Returns LOOM_OK when
 * the data was copied out (no callback), LOOM_INPROGRESS when op was queued
 * (callback later; iov must stay valid), LOOM_ERR_AGAIN when op is NULL and
 * the message could not go now.  Messages to one peer keep their order.
 */
int loom_am_send(loom_peer_t *peer, uint8_t tag, const struct iovec *iov,
                 int iovcnt, loom_op_t *op);
/* What loom_am_send_past_window may keep past the window per peer: messages,
 * and bytes of all those kept. */
#define LOOM_AM_PAST_WINDOW_MAX   1024
#define LOOM_AM_PAST_WINDOW_BYTES (1024 * 1024)
/*
 * loom_am_send without an op for a message of at most LOOM_OP_MSG_MAX
 * bytes: where only the message window holds it back (several rails:
 * btl_loom_msg_window), what is queued to the peer and then the message
 * leave past the window, within the bounds above.  LOOM_OK: it left;
 * LOOM_ERR_AGAIN: it could not go now.
 */
int loom_am_send_past_window(loom_peer_t *peer, uint8_t tag, const struct iovec *iov,
                             int iovcnt);
/*
 * When loom_am_send said LOOM_ERR_AGAIN because the peer has not
 * acknowledged a window of messages (several rails: btl_loom_msg_window):
 * progress quietly (nothing handed up) until a message would leave, at most
 * budget_ns.  LOOM_OK: send again now; LOOM_ERR_AGAIN: not the window, the
 * budget ran out (the next call waits only after the window opened again),
 * or called from inside progress, where no acknowledgement can come in.
 */
int loom_peer_window_wait(loom_peer_t *peer, uint64_t budget_ns);

/* --- memory and keys -------------------------------------------------- */
/* What peers may do with a region (only what the upper layer asked for is
 * given to the NIC).  A get that is emulated by a push writes into its local
 * memory, which then needs LOCAL_WRITE only. */
enum {
    LOOM_ACCESS_LOCAL_WRITE  = 0x1, /* destination of our own gets */
    LOOM_ACCESS_REMOTE_WRITE = 0x2, /* peers put into it */
    LOOM_ACCESS_REMOTE_READ  = 0x4, /* peers get from it */
    LOOM_ACCESS_REMOTE_ATOMIC = 0x8, /* peers run atomics on it */
    LOOM_ACCESS_ALL          = 0xf,
};
/* Registered with LOOM_ACCESS_ALL. */
int    loom_mem_register(loom_engine_t *engine, void *addr, size_t length,
                         loom_region_t **region_p);
int    loom_mem_register_access(loom_engine_t *engine, void *addr, size_t length,
                                unsigned access, loom_region_t **region_p);
void   loom_mem_deregister(loom_region_t *region);
/* As loom_mem_deregister, and its rails' registration is not kept in the
 * registration cache for the next user: a push its requester gave up on
 * (a peer it lost, which still pushes) fails at the NIC instead of landing
 * in memory reused since.  For a buffer whose use failed. */
void   loom_mem_revoke(loom_region_t *region);
/* As loom_mem_register_access, with the rails' registration taken from (or
 * left in) the registration cache when config.rcache_max_bytes is set: the
 * region is still the caller's own (own id, refused once deregistered); only
 * the NIC registration outlives it, until evicted, idle or unmapped. */
int    loom_mem_register_cached(loom_engine_t *engine, void *addr, size_t length,
                                unsigned access, loom_region_t **region_p);
typedef struct loom_rcache_stats {
    unsigned long hits;          /* registrations served from the cache */
    unsigned long misses;        /* ranges registered on the rails */
    unsigned long evictions;     /* dropped for the bounds, idle, or at the end */
    unsigned long invalidations; /* dropped because their memory was unmapped */
    unsigned long bypassed;      /* ranges the cache could not take (registered uncached) */
    unsigned long regions;       /* cached now */
    unsigned long bytes;         /* bytes cached now */
} loom_rcache_stats_t;
const loom_rcache_stats_t *loom_engine_rcache_stats(const loom_engine_t *engine);
/* Bytes of a packed key of this engine (same on every process of a job with
 * the same rail configuration). */
size_t loom_key_size(const loom_engine_t *engine);
int    loom_key_pack(const loom_region_t *region, void *buf, size_t size);
uint64_t loom_region_id(const loom_region_t *region);

/* --- RDMA ------------------------------------------------------------- */
/*
 * Write length bytes at local (inside local_region, may be NULL on rails that
 * need no registration) to remote_addr of the peer, named by the peer's
 * packed key.  The callback runs once the data is visible at the target.
 */
int loom_put(loom_peer_t *peer, loom_op_t *op, void *local,
             loom_region_t *local_region, uint64_t remote_addr,
             const void *remote_key, size_t remote_key_size, size_t length);
/*
 * Read length bytes from the peer's remote_addr into local.  Uses the rail's
 * get where it has one, else a push request: the peer puts the data back and
 * notifies us.  The callback runs once the data has landed in local.
 */
int loom_get(loom_peer_t *peer, loom_op_t *op, void *local,
             loom_region_t *local_region, uint64_t remote_addr,
             const void *remote_key, size_t remote_key_size, size_t length);

/* --- atomics ----------------------------------------------------------- */
enum loom_atomic_op {
    LOOM_ATOMIC_ADD,
    LOOM_ATOMIC_AND,
    LOOM_ATOMIC_OR,
    LOOM_ATOMIC_XOR,
    LOOM_ATOMIC_LAND,  /* logical: 1 if both are non-zero, else 0 */
    LOOM_ATOMIC_LOR,
    LOOM_ATOMIC_LXOR,
    LOOM_ATOMIC_SWAP,
    LOOM_ATOMIC_MIN,   /* signed */
    LOOM_ATOMIC_MAX,   /* signed */
    LOOM_ATOMIC_CSWAP, /* compare and swap */
    LOOM_ATOMIC_LAST
};
/*
 * Run atomic_op with operand on the size-byte (4 or 8) integer at the peer's
 * remote_addr, aligned to size, in the region of the peer's key (registered
 * with LOOM_ACCESS_REMOTE_ATOMIC).  The peer's CPU runs it, exactly once
 * even when a rail fails meanwhile, atomic with every other atomic on that
 * word.  With result non-NULL the value the word held before lands there
 * (size bytes, host order).  The callback runs once the operation took
 * effect at the target.  LOOM_ERR_AGAIN: too many atomics to this peer are
 * under way; try again after progress.
 */
int loom_atomic(loom_peer_t *peer, loom_op_t *op, int atomic_op, unsigned size,
                uint64_t remote_addr, const void *remote_key, size_t remote_key_size,
                uint64_t operand, uint64_t compare, void *result);

/*
 * The process's own memory through its own keys: an upper layer that runs
 * everything through one transport (Open MPI's osc rdma) reaches itself
 * too.  Checked as a peer's access is (region, epoch, range, access), done
 * by the CPU, complete on return; no callback.  For an atomic with result
 * non-NULL the word's earlier value lands there (size bytes, host order).
 */
int loom_local_put(loom_engine_t *engine, const void *local, uint64_t remote_addr,
                   const void *remote_key, size_t remote_key_size, size_t length);
int loom_local_get(loom_engine_t *engine, void *local, uint64_t remote_addr,
                   const void *remote_key, size_t remote_key_size, size_t length);
int loom_local_atomic(loom_engine_t *engine, int atomic_op, unsigned size,
                      uint64_t remote_addr, const void *remote_key, size_t remote_key_size,
                      uint64_t operand, uint64_t compare, void *result);

/* --- third-party and conditional pushes ------------------------------- */
/*
 * A push moves length bytes of the owner's memory (src_addr, in the region
 * of the owner's packed key src_key) into the destination's memory
 * (dst_addr, in the region of the destination's packed key dst_key, which
 * must give remote write access).  The owner is a connected peer (a
 * third-party push: this process asks, another sends, a third receives) or
 * this process itself.  The owner checks its key, the destination checks
 * its own (its NIC, or loom on rails without memory protection).
 *
 * When the data is visible at the destination, or the push was refused,
 * op's callback runs here, and every process of notices (at most
 * LOOM_PUSH_NOTICES_MAX, connected to the owner) gets a loom_push_notice_t
 * (config.push_notice_cb, from loom_engine_progress) naming this request;
 * a notice with a counter other than 0 adds one to that counter of the
 * receiving process when the push succeeded.
 *
 * With cond_counter other than 0 the push waits at the owner until the
 * owner's counter of that id reached cond_threshold; waiting pushes fire in
 * the order they arrived.  Counters grow by notices, by loom_counter_add
 * (here) and loom_counter_add_remote (at a peer); loom_counter_release
 * drops a counter and cancels what waits on it (LOOM_ERR_CANCELLED, told to
 * the requester and its notices).  Counters and waiting pushes are bounded
 * (config.push_counters_max, push_waiting_max): beyond, a push is refused
 * with LOOM_ERR_LIMIT (a refusal: the rails are fine).
 *
 * A counter is made by the first use of its id, or beforehand by
 * loom_counters_open, whose ids (LOOM_COUNTER_ISSUED set) this process never
 * hands out twice and never makes again once released: a notice or a push
 * that comes late for one finds it gone and is dropped or cancelled, so that
 * what a failed call left on the wire cannot reach a later one.
 */
#define LOOM_COUNTER_ISSUED (1ull << 63)
#define LOOM_PUSH_NOTICES_MAX 8
typedef struct loom_push_notice_to {
    uint64_t proc;        /* process told */
    uint64_t counter;     /* its counter to add one to, 0: none */
} loom_push_notice_to_t;

typedef struct loom_push_args {
    uint64_t    owner;          /* process whose memory is pushed */
    uint64_t    src_addr;
    const void *src_key;        /* the owner's packed key (loom_key_pack) */
    size_t      src_key_size;
    uint64_t    dest;           /* process that receives the data */
    uint64_t    dst_addr;
    const void *dst_key;        /* the destination's packed key */
    size_t      dst_key_size;
    size_t      length;
    uint64_t    cond_counter;   /* 0: push at once */
    uint64_t    cond_threshold;
    const loom_push_notice_to_t *notices;
    unsigned    notice_count;
} loom_push_args_t;

/* What a process of a push's notices learns. */
struct loom_push_notice {
    uint64_t requester;   /* who asked for the push */
    uint64_t request_id;  /* its request (loom_push_request_id of its op) */
    uint64_t owner;       /* who sent the data */
    uint64_t counter;     /* the counter it added one to (on success), or 0 */
    size_t   length;      /* bytes placed */
    int      status;      /* LOOM_OK or why the push failed */
};

/* LOOM_INPROGRESS (the callback follows) or an error (no callback). */
int loom_push(loom_engine_t *engine, loom_op_t *op, const loom_push_args_t *args);
/* The id notices of op's push name (set by loom_push). */
uint64_t loom_push_request_id(const loom_op_t *op);

/*
 * A multicast push: one region of the owner's memory pushed to several
 * destinations, each with its own key, in one request to the owner (an
 * engine message: delivered once, in order, across rail failures; several
 * when the destinations' keys do not fit in one).  The owner serves each
 * destination as its own push (striped, failed over, checked like any), and
 * answers each: dests[i].op completes when destination i has the data, or
 * with why it has not; one destination refused or gone leaves the others
 * alone.  The owner may be this process (no request travels).  A
 * destination with notify set gets a notice (push_notice_cb) naming the
 * owner as its requester, adding one to its counter if that is not 0.
 * With cond_counter other than 0 each destination's push waits at the
 * owner until the owner's counter of that id reached cond_threshold.
 */
#define LOOM_PUSH_DESTS_MAX 64
typedef struct loom_push_dest {
    uint64_t    proc;           /* a process connected to the owner */
    uint64_t    dst_addr;
    const void *dst_key;        /* proc's packed key, giving remote write */
    size_t      dst_key_size;
    bool        notify;         /* proc gets a notice when its data landed */
    uint64_t    counter;        /* with notify: proc's counter to add one to */
    loom_op_t  *op;             /* completes for this destination alone */
} loom_push_dest_t;

typedef struct loom_push_multi_args {
    uint64_t    owner;
    uint64_t    src_addr;
    const void *src_key;        /* the owner's packed key */
    size_t      src_key_size;
    size_t      length;
    uint64_t    cond_counter;   /* 0: push at once */
    uint64_t    cond_threshold;
    const loom_push_dest_t *dests;
    unsigned    dest_count;     /* 1 to LOOM_PUSH_DESTS_MAX */
} loom_push_multi_args_t;

/* LOOM_INPROGRESS (every destination's op gets its callback) or an error
 * (none does). */
int loom_push_multi(loom_engine_t *engine, const loom_push_multi_args_t *args);
int loom_counter_add(loom_engine_t *engine, uint64_t counter, uint64_t amount);
/* Adds at the peer, once, in order with this process's messages to it. */
int loom_counter_add_remote(loom_peer_t *peer, uint64_t counter, uint64_t amount);
/* The same at the process of that name (this one, or a connected peer:
 * LOOM_ERR_UNREACH otherwise). */
int loom_counter_add_at(loom_engine_t *engine, uint64_t proc, uint64_t counter,
                        uint64_t amount);
/* The counter's value (0 for a counter that does not exist). */
uint64_t loom_counter_value(const loom_engine_t *engine, uint64_t counter);
/* Drops the counter; returns how many waiting pushes it cancelled. */
unsigned loom_counter_release(loom_engine_t *engine, uint64_t counter);
/* Makes count counters at 0 with fresh ids, *first to *first + count - 1;
 * LOOM_ERR_LIMIT when they would pass config.push_counters_max. */
int loom_counters_open(loom_engine_t *engine, unsigned count, uint64_t *first);
/* LOOM_ERR_NOT_FOUND for a counter that does not exist; else the first
 * failure a notice naming it told of (a push that did not land), or
 * LOOM_OK. */
int loom_counter_status(const loom_engine_t *engine, uint64_t counter);

typedef struct loom_push_stats {
    unsigned long requested;   /* pushes this process asked for */
    unsigned long served;      /* pushes this process sent as the owner */
    unsigned long waited;      /* of those, pushes that waited on a counter */
    unsigned long fired;       /* waiting pushes whose counter reached the threshold */
    unsigned long cancelled;   /* waiting pushes cancelled by a release or a peer gone */
    unsigned long refused;     /* push requests refused here (checks, bounds) */
    unsigned long multi_requested; /* multicast requests this process sent */
    unsigned long multi_served; /* destinations of peers' multicast requests served here */
    unsigned long notices_sent;
    unsigned long notices_received;
    unsigned long counter_adds; /* additions to this process's counters */
    unsigned long counted_on_landing; /* of those, by a checked write as it landed */
    unsigned long waiting;     /* pushes waiting here now */
    unsigned long counters;    /* counters here now */
} loom_push_stats_t;
const loom_push_stats_t *loom_engine_push_stats(const loom_engine_t *engine);

/* --- eager rings ------------------------------------------------------- */
/* Phase of the ring our messages to the peer use, and of the ring the peer
 * writes into here (0: none). */
unsigned loom_eager_tx_phase(const loom_peer_t *peer);
unsigned loom_eager_rx_phase(const loom_peer_t *peer);
/* Ask the peer for a ring of this phase now (whatever the policy says);
 * LOOM_ERR_AGAIN while a request is under way. */
int      loom_eager_request(loom_peer_t *peer, unsigned phase);
/* Bytes of rings and send slots of this peer, both directions. */
size_t   loom_eager_peer_bytes(const loom_peer_t *peer);
/*
 * How many bytes of a message made of reserve header bytes and these data
 * elements to send now: all of them, unless the peer's ring is in use and
 * an element after the first would not fit it; then only the elements
 * before it (the upper layer sends the rest next).  An oversized first
 * element is sent whole and makes the ring grow.
 */
size_t   loom_eager_fit(loom_peer_t *peer, size_t reserve, const struct iovec *elems,
                        int count);

#endif /* LOOM_TRANSPORT_H */
