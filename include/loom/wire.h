/*
 * loom wire formats: every byte that crosses the network between two loom
 * engines is described here.
 *
 * Rules: every field is fixed-width and little-endian; every message starts
 * with loom_wire_hdr_t; receivers check the version, the type and every length
 * before they look at anything else.  Bump LOOM_WIRE_VERSION on any change.
 */
#ifndef LOOM_WIRE_H
#define LOOM_WIRE_H

#include <endian.h>
#include <stdint.h>

#define LOOM_WIRE_VERSION 1

/* UCT active message ids used by loom (one id per message type). */
enum loom_wire_type {
    LOOM_WIRE_SEND      = 16, /* upper-layer payload (BTL send) */
    LOOM_WIRE_PUSH_REQ  = 17, /* "put this memory of yours into that memory" */
    LOOM_WIRE_PUSH_DONE = 18, /* completion notice of a push request */
    LOOM_WIRE_CONNECT   = 19, /* endpoint address for connect-to-ep rails */
};

/* Common header of every message: 8 bytes. */
typedef struct loom_wire_hdr {
    uint8_t  version;  /* LOOM_WIRE_VERSION */
    uint8_t  type;     /* enum loom_wire_type, equal to the AM id */
    uint8_t  tag;      /* LOOM_WIRE_SEND: the upper layer's tag; else 0 */
    uint8_t  flags;    /* reserved, 0 */
    uint32_t length;   /* bytes following this header */
} loom_wire_hdr_t;

/*
 * A remote key: names one registered region of its owner on every rail.
 * A key is only meaningful on the rail (NIC) that issued it, so the key of
 * each rail is carried separately; region_id + epoch let the owner refuse
 * keys of regions that are gone or of an earlier incarnation of itself.
 * Followed by rail_count slots of rkey_stride bytes: each slot holds a
 * uint16_t length then that many bytes of UCT packed rkey.
 */
typedef struct loom_wire_key {
    uint64_t region_id;   /* unique for the owner's lifetime, never 0 */
    uint64_t base;        /* first byte of the region in the owner's space */
    uint64_t length;      /* bytes in the region */
    uint32_t epoch;       /* owner's incarnation; a restart changes it */
    uint16_t rail_count;  /* slots that follow */
    uint16_t rkey_stride; /* bytes per slot, including its length field */
} loom_wire_key_t;

#define LOOM_WIRE_KEY_SLOT_HDR ((uint32_t)sizeof(uint16_t))

/*
 * Push request: ask the owner of src memory to put it into dst memory of
 * dest_proc and to notify notify_proc when the data has landed.  A get is a
 * push whose destination and notified process are the requester itself; a
 * third party transfer names another process.  Followed by the destination
 * key (loom_wire_key_t plus its slots).
 */
typedef struct loom_wire_push_req {
    loom_wire_hdr_t hdr;
    uint64_t request_id;  /* requester's cookie, echoed in PUSH_DONE */
    uint64_t requester;   /* process name of the sender of this request */
    uint64_t dest_proc;   /* process that receives the data */
    uint64_t notify_proc; /* process that receives PUSH_DONE */
    uint64_t src_addr;    /* in the owner's memory */
    uint64_t dst_addr;    /* in dest_proc's memory */
    uint64_t length;
    uint64_t src_region_id;
    uint32_t src_epoch;
    uint32_t reserved;
} loom_wire_push_req_t;

/* Status codes carried on the wire (PUSH_DONE). */
enum loom_wire_status {
    LOOM_WIRE_OK           = 0,
    LOOM_WIRE_UNKNOWN_KEY  = 1, /* region id not registered (any more) */
    LOOM_WIRE_STALE_KEY    = 2, /* epoch of an earlier incarnation */
    LOOM_WIRE_OUT_OF_RANGE = 3, /* address range outside the region */
    LOOM_WIRE_BAD_REQUEST  = 4, /* malformed, or names an unknown process */
    LOOM_WIRE_IO_ERROR     = 5, /* the transfer itself failed */
};

typedef struct loom_wire_push_done {
    loom_wire_hdr_t hdr;
    uint64_t sender;      /* process name of the owner that served the push */
    uint64_t request_id;
    uint64_t length;      /* bytes placed */
    uint32_t status;      /* enum loom_wire_status */
    uint32_t reserved;
} loom_wire_push_done_t;

/*
 * Endpoint address of a connect-to-ep rail, sent over a rail that connects
 * to interfaces.  Followed by dev_addr_len bytes of device address and
 * ep_addr_len bytes of endpoint address.
 */
typedef struct loom_wire_connect {
    loom_wire_hdr_t hdr;
    uint64_t sender;       /* process name */
    uint32_t sender_epoch;
    uint16_t rail_index;   /* which rail of the sender this endpoint is on */
    uint8_t  connected;    /* 1: the sender's endpoint is connected to ours */
    uint8_t  reserved;
    uint16_t dev_addr_len;
    uint16_t ep_addr_len;
    uint32_t reserved2;
} loom_wire_connect_t;

/*
 * Address blob published through the runtime (modex): one per process.
 * Followed by rail_count loom_wire_rail_addr_t, each followed by its device
 * and interface addresses.
 */
typedef struct loom_wire_addr {
    uint32_t magic;        /* LOOM_WIRE_ADDR_MAGIC */
    uint8_t  version;      /* LOOM_WIRE_VERSION */
    uint8_t  rail_count;
    uint16_t reserved;
    uint64_t name;         /* process name */
    uint32_t epoch;
    uint32_t total_length; /* bytes of the whole blob */
} loom_wire_addr_t;

#define LOOM_WIRE_ADDR_MAGIC 0x6d6f6f6cu /* "loom" */
#define LOOM_WIRE_NAME_MAX   32

typedef struct loom_wire_rail_addr {
    char     tl_name[LOOM_WIRE_NAME_MAX];  /* NUL padded */
    char     dev_name[LOOM_WIRE_NAME_MAX]; /* NUL padded */
    uint32_t flags;        /* LOOM_WIRE_RAIL_* */
    uint16_t dev_addr_len;
    uint16_t iface_addr_len;
} loom_wire_rail_addr_t;

/* rail flags: the rail is used endpoint to endpoint; an interface address
 * follows (both may be set: the interface then carries CONNECT messages) */
#define LOOM_WIRE_RAIL_CONNECT_TO_IFACE 0x1u
#define LOOM_WIRE_RAIL_CONNECT_TO_EP    0x2u

/* Little-endian conversion, a no-op on the x86/arm hosts loom runs on. */
#define loom_le16(_v) htole16(_v)
#define loom_le32(_v) htole32(_v)
#define loom_le64(_v) htole64(_v)
#define loom_from_le16(_v) le16toh(_v)
#define loom_from_le32(_v) le32toh(_v)
#define loom_from_le64(_v) le64toh(_v)

#endif /* LOOM_WIRE_H */
