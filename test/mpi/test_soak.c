/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Soak test: for -t seconds every pair of ranks exchanges messages in both
 * directions at once, -w in flight per direction, every byte verified,
 * while a script may take rails down and up underneath.
 *
 * The messages from rank A to rank B are numbered; slot j of the -w slots
 * of that direction carries seqs j, j + w, j + 2w, ... with tag j, so the
 * ones in flight have distinct tags.  A message's size (0 B to -s bytes,
 * log-uniform: eager, single RDMA and striped transfers all come), whether
 * the sender or the receiver or both use a vector datatype for it, and the
 * key of its pattern all follow from (seed, A, B, seq): both sides know
 * them without asking.  The bytes are loom_fill_pattern(key, A), so a
 * message lost, duplicated, reordered or corrupted shows at the receive of
 * that seq as a wrong length or wrong data (reported with seq, size, first
 * bad offset, and which seq the data belongs to if it is another's); one
 * that never comes shows as a message in flight for more than -T seconds.
 *
 * At the deadline each rank stops posting, and an MPI_Allreduce (max) of
 * the seqs both ends of every slot have posted gives the slot's last
 * message; after the drain, a message still to be received is an extra.
 *
 * Usage: test_soak [-t seconds] [-s max_size] [-S seed] [-w window]
 *                  [-T stall_seconds]
 *   -t  how long messages are posted (default 60)
 *   -s  largest message, K or M suffix allowed (default 4M)
 *   -S  seed of the sizes and layouts (default from time and pid; printed)
 *   -w  messages in flight per direction and pair (default 8, at most 1024)
 *   -T  seconds a message may be in flight before the test fails (default 60)
 * Output lines (rank 0):
 *   "test_soak seed <S> ranks <n> seconds <t> max_size <bytes> window <w>",
 *   "stream started" (once its first messages are posted),
 *   "rail_bytes <rail0> <rail1> ..." (bytes each loom rail brought in
 *   during the soak, all ranks; no numbers when loom is not in use),
 *   "rail_failures <n> writes_refused <n>" (times a rail was taken out of
 *   use for a peer, and write segments loom refused, e.g. late ones of a
 *   connection out of use; all rails and ranks),
 *   "PASS test_soak messages <n> bytes <b> seconds <s>".
 */

#include "loom_test_util.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* what a vector sender leaves between its blocks: must never be received */
#define GAP_BYTE 0x3c

/* a vector block is at most this long, so that vectors have many blocks */
#define MAX_BLOCK 4096

/* a bad message's data is looked for among this many windows either side */
#define DIAG_WINDOWS 4

/* requests are in pairs per (peer, slot): receive, then send */
enum { DIR_RECV = 0, DIR_SEND = 1 };

/* a message as its side of the transfer sees it */
struct soak_msg {
    size_t size;        /* bytes of data */
    unsigned key;       /* pattern seed (loom_fill_pattern) */
    int vector;         /* this side's buffer is a vector of blocks */
    int block;          /* vector: bytes per block */
    int stride;         /* vector: bytes from one block to the next */
    int nblocks;        /* vector: blocks */
    size_t extent;      /* bytes of buffer the data spans */
};

struct soak_slot {
    long seq;               /* message in flight, -1 when none */
    long last;              /* the slot's last seq: LONG_MAX until agreed */
    struct soak_msg msg;
    unsigned char *buf;
    MPI_Datatype type;
    double posted;          /* MPI_Wtime() when posted */
};

static unsigned long long soak_seed;
static size_t soak_max_size = 4 * MIB;
static int soak_size_bits;  /* bits of soak_max_size: the log-uniform bins */
static int soak_window = 8;
static int soak_rank, soak_nprocs, soak_npeers;
static MPI_Comm soak_comm;
static struct soak_slot *soak_slots;
static MPI_Request *soak_reqs;
static unsigned long long soak_received, soak_bytes;

/* splitmix64's finalizer: every bit of the result depends on every input bit */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

/*
 * Message seq from src to dst as seen by src (recv_side 0) or dst
 * (recv_side 1).  A function of the seed and its arguments only: this is
 * how both sides agree on every message without exchanging anything.
 */
static void soak_describe(int src, int dst, long seq, int recv_side, struct soak_msg *m)
{
    uint64_t h1 = mix64(soak_seed ^ ((uint64_t) (unsigned) src << 56) ^
                        ((uint64_t) (unsigned) dst << 48) ^ (uint64_t) seq);
    uint64_t h2 = mix64(h1 + UINT64_C(0x9e3779b97f4a7c15));
    int bin = (int) (h1 % (uint64_t) (soak_size_bits + 1));
    int layout = (int) (h2 & 15);

    /* bin 0 is 0 B, bin b is [2^(b-1), 2^b), all bins alike: log-uniform */
    m->size = 0;
    if (bin > 0) {
        size_t lo = (size_t) 1 << (bin - 1);
        size_t hi = ((size_t) 1 << bin) - 1;

        hi = hi > soak_max_size ? soak_max_size : hi;
        m->size = lo + (size_t) ((h1 >> 32) % (hi - lo + 1));
    }
    m->key = (unsigned) (h2 >> 32);
    m->vector = 0;
    m->extent = m->size;

    /* 3 in 16 go through a vector: the sender's (0), receiver's (1), both (2);
     * the size rounds down to whole blocks, on both sides alike */
    if (layout > 2 || 0 == m->size) {
        return;
    }
    m->block = 1 + (int) ((h2 >> 8) % (m->size < MAX_BLOCK ? m->size : MAX_BLOCK));
    m->stride = m->block + 1 + (int) ((h2 >> 20) % (uint64_t) m->block);
    m->nblocks = (int) (m->size / (size_t) m->block);
    m->size = (size_t) m->nblocks * (size_t) m->block;
    if (2 == layout || recv_side == layout) {
        m->vector = 1;
        m->extent = (size_t) (m->nblocks - 1) * (size_t) m->stride + (size_t) m->block;
    }
}

static int slot_peer(int index)
{
    int k = index / (2 * soak_window);

    /* peers are every other rank, in order */
    return k < soak_rank ? k : k + 1;
}

/* a vector type for m, or MPI_BYTE for contiguous data */
static MPI_Datatype soak_type(const struct soak_msg *m)
{
    MPI_Datatype type = MPI_BYTE;

    if (m->vector) {
        LOOM_CHECK_MPI(MPI_Type_vector(m->nblocks, m->block, m->stride, MPI_BYTE, &type));
        LOOM_CHECK_MPI(MPI_Type_commit(&type));
    }
    return type;
}

static void soak_post(int index, long seq)
{
    struct soak_slot *s = &soak_slots[index];
    struct soak_msg *m = &s->msg;
    int peer = slot_peer(index), tag = (int) (seq % soak_window);
    int count;

    s->seq = seq;
    s->posted = MPI_Wtime();
    if (DIR_RECV == index % 2) {
        soak_describe(peer, soak_rank, seq, 1, m);
        /* poison everywhere, so that a write outside the data shows */
        s->buf = loom_malloc(m->extent + LOOM_GUARD_SIZE);
        memset(s->buf, LOOM_POISON, m->extent + LOOM_GUARD_SIZE);
    } else {
        soak_describe(soak_rank, peer, seq, 0, m);
        s->buf = loom_malloc(m->extent);
        if (m->vector) {
            unsigned char *data = loom_malloc(m->size);

            loom_fill_pattern(data, m->size, m->key, soak_rank);
            memset(s->buf, GAP_BYTE, m->extent);
            for (int b = 0; b < m->nblocks; b++) {
                memcpy(s->buf + (size_t) b * m->stride, data + (size_t) b * m->block,
                       (size_t) m->block);
            }
            free(data);
        } else {
            loom_fill_pattern(s->buf, m->size, m->key, soak_rank);
        }
    }
    s->type = soak_type(m);
    count = m->vector ? 1 : (int) m->size;
    if (DIR_RECV == index % 2) {
        LOOM_CHECK_MPI(MPI_Irecv(s->buf, count, s->type, peer, tag, soak_comm,
                                 &soak_reqs[index]));
    } else {
        LOOM_CHECK_MPI(MPI_Isend(s->buf, count, s->type, peer, tag, soak_comm,
                                 &soak_reqs[index]));
    }
}

/* the seq near seq whose message from peer starts like data (n bytes), or -1 */
static long soak_whose(const unsigned char *data, size_t n, int peer, long seq)
{
    long span = (long) DIAG_WINDOWS * soak_window;

    for (long c = seq - span; n > 0 && c <= seq + span; c++) {
        struct soak_msg m;
        size_t probe = n < 64 ? n : 64, i;

        if (c < 0 || c == seq) {
            continue;
        }
        soak_describe(peer, soak_rank, c, 1, &m);
        for (i = 0; m.size == n && i < probe; i++) {
            if (data[i] != loom_pattern_byte(m.key, peer, i)) {
                break;
            }
        }
        if (m.size == n && i == probe) {
            return c;
        }
    }
    return -1;
}

/* what the data of a bad message says about where it came from */
static void soak_explain(char *buf, size_t len, const unsigned char *data, size_t n,
                         int peer, long seq)
{
    long c = soak_whose(data, n, peer, seq);

    if (c < 0) {
        snprintf(buf, len, "the data is no nearby message's: corrupted");
    } else if (c < seq) {
        snprintf(buf, len, "the data is that of seq %ld: an earlier message duplicated "
                 "or overtaken", c);
    } else {
        snprintf(buf, len, "the data is that of seq %ld: seq %ld lost or overtaken", c, seq);
    }
}

static void soak_check_recv(int index, const MPI_Status *status, int err)
{
    struct soak_slot *s = &soak_slots[index];
    struct soak_msg *m = &s->msg;
    int peer = slot_peer(index), count = -1;
    unsigned char *data = s->buf;
    char what[128], why[160];
    long long bad;
    size_t n;

    snprintf(what, sizeof(what), "message seq %ld from rank %d (%zu bytes, %s receive)",
             s->seq, peer, m->size, m->vector ? "vector" : "contiguous");
    if (MPI_SUCCESS != err) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;

        MPI_Error_string(err, msg, &len);
        /* a truncation here is a longer message matching this seq's receive */
        loom_fail("%s: receive failed: %s", what, msg);
    }
    LOOM_CHECK_MPI(MPI_Get_elements(status, s->type, &count));
    if (m->vector) {
        /* the blocks in a row, to check them as one pattern */
        data = loom_malloc(m->size);
        for (int b = 0; b < m->nblocks; b++) {
            memcpy(data + (size_t) b * m->block, s->buf + (size_t) b * m->stride,
                   (size_t) m->block);
        }
    }
    /* a short message is wrong from where it ends, if not before */
    n = (count >= 0 && (size_t) count < m->size) ? (size_t) count : m->size;
    bad = loom_verify_pattern(data, n, m->key, peer, what);
    if (bad < 0 && n != m->size) {
        bad = (long long) n;
    }
    if (bad >= 0) {
        soak_explain(why, sizeof(why), data, n, peer, s->seq);
        loom_fail("%s: %d bytes arrived, first bad offset %lld; %s", what, count, bad, why);
    }
    /* nothing may land between the blocks or past the end */
    for (int b = 0; m->vector && b + 1 < m->nblocks; b++) {
        size_t gap = (size_t) b * m->stride + (size_t) m->block;

        if (loom_verify_byte(s->buf + gap, (size_t) (m->stride - m->block), LOOM_POISON,
                             peer, what) >= 0) {
            loom_fail("%s: bytes written into the gap after block %d (buffer offset %zu)",
                      what, b, gap);
        }
    }
    if (loom_verify_byte(s->buf + m->extent, LOOM_GUARD_SIZE, LOOM_POISON, peer, what) >= 0) {
        loom_fail("%s: bytes written past the end of the data (buffer offset %zu)", what,
                  m->extent);
    }
    if (data != s->buf) {
        free(data);
    }
    soak_received++;
    soak_bytes += m->size;
}

/* a request completed: check it, free it, post the slot's next seq if any */
static void soak_complete(int index, const MPI_Status *status, int err)
{
    struct soak_slot *s = &soak_slots[index];
    long next = s->seq + soak_window;

    if (DIR_RECV == index % 2) {
        soak_check_recv(index, status, err);
    } else if (MPI_SUCCESS != err) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;

        MPI_Error_string(err, msg, &len);
        loom_fail("message seq %ld to rank %d (%zu bytes): send failed: %s", s->seq,
                  slot_peer(index), s->msg.size, msg);
    }
    free(s->buf);
    s->buf = NULL;
    if (MPI_BYTE != s->type) {
        LOOM_CHECK_MPI(MPI_Type_free(&s->type));
    }
    s->seq = -1;
    if (next <= s->last) {
        soak_post(index, next);
    }
}

/*
 * Fail if a message has been in flight for more than stall seconds (one
 * that never came, or whose sending never ends), naming every message
 * still waited for first.
 */
static void soak_watch(double now, double stall)
{
    int nslots = 2 * soak_npeers * soak_window, oldest = -1;
    struct soak_slot *o;

    for (int i = 0; i < nslots; i++) {
        if (soak_slots[i].seq >= 0 &&
            (oldest < 0 || soak_slots[i].posted < soak_slots[oldest].posted)) {
            oldest = i;
        }
    }
    if (oldest < 0 || now - soak_slots[oldest].posted <= stall) {
        return;
    }
    for (int i = 0; i < nslots; i++) {
        struct soak_slot *s = &soak_slots[i];

        if (s->seq >= 0) {
            fprintf(stderr, "test_soak rank %d: %s seq %ld (%zu bytes) %s rank %d in flight "
                    "for %.1f s\n", soak_rank, DIR_RECV == i % 2 ? "receive of" : "send of",
                    s->seq, s->msg.size, DIR_RECV == i % 2 ? "from" : "to", slot_peer(i),
                    now - s->posted);
        }
    }
    o = &soak_slots[oldest];
    loom_fail("%s seq %ld (%zu bytes) %s rank %d not done after %.0f s: lost?",
              DIR_RECV == oldest % 2 ? "receive of" : "send of", o->seq, o->msg.size,
              DIR_RECV == oldest % 2 ? "from" : "to", slot_peer(oldest), now - o->posted);
}

/*
 * Where every slot stops: slot j from rank A to rank B ends with the
 * higher of the seqs A and B have posted on it.  Per slot, not per
 * direction, so that no slot has many messages left to catch up with the
 * others when time is up: the drain is a message or two per slot.
 */
static void soak_agree_last(void)
{
    int nslots = 2 * soak_npeers * soak_window;
    size_t nlast = (size_t) soak_nprocs * soak_nprocs * soak_window;
    long *mine = loom_malloc(nlast * sizeof(*mine));
    long *all = loom_malloc(nlast * sizeof(*all));

    memset(mine, 0, nlast * sizeof(*mine));
    for (int i = 0; i < nslots; i++) {
        int peer = slot_peer(i), j = (i / 2) % soak_window;
        int src = DIR_RECV == i % 2 ? peer : soak_rank;
        int dst = DIR_RECV == i % 2 ? soak_rank : peer;

        mine[((size_t) src * soak_nprocs + dst) * soak_window + j] = soak_slots[i].seq;
    }
    /* the requests in flight progress while we wait here for the others */
    LOOM_CHECK_MPI(MPI_Allreduce(mine, all, (int) nlast, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < nslots; i++) {
        int peer = slot_peer(i), j = (i / 2) % soak_window;
        int src = DIR_RECV == i % 2 ? peer : soak_rank;
        int dst = DIR_RECV == i % 2 ? soak_rank : peer;

        soak_slots[i].last = all[((size_t) src * soak_nprocs + dst) * soak_window + j];
    }
    free(all);
    free(mine);
}

/* after the drain: a message still to be received is one nobody sent */
static void soak_check_extra(void)
{
    MPI_Status status;
    int flag = 0, bytes = 0;

    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    LOOM_CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, soak_comm, &flag, &status));
    if (flag) {
        LOOM_CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &bytes));
        loom_fail("an extra message (%d bytes, tag %d) from rank %d after all that were "
                  "sent arrived: duplicated?", bytes, status.MPI_TAG, status.MPI_SOURCE);
    }
}

static void soak_usage(const char *prog)
{
    fprintf(stderr, "usage: %s [-t seconds] [-s max_size[K|M]] [-S seed] [-w window] "
            "[-T stall_seconds]\n", prog);
}

int main(int argc, char **argv)
{
    unsigned long long before[LOOM_TEST_MAX_RAILS], after[LOOM_TEST_MAX_RAILS];
    unsigned long long rail_bytes[LOOM_TEST_MAX_RAILS], mine[4], all[4];
    unsigned long long failures0, refused0;
    double seconds = 60, stall = 60, start, deadline, next_watch, elapsed;
    int nslots, rails, opt, have_seed = 0, stopping = 0;
    MPI_Status *statuses;
    int *indices;
    char *end;

    while (-1 != (opt = getopt(argc, argv, "t:s:S:w:T:"))) {
        switch (opt) {
        case 't':
            seconds = strtod(optarg, &end);
            opt = (end == optarg || '\0' != *end || seconds < 0) ? '?' : opt;
            break;
        case 's':
            opt = loom_parse_size(optarg, &soak_max_size) ? '?' : opt;
            break;
        case 'S':
            soak_seed = strtoull(optarg, &end, 0);
            opt = (end == optarg || '\0' != *end) ? '?' : opt;
            have_seed = 1;
            break;
        case 'w':
            /* the window is the tag space, and every slot holds buffers */
            soak_window = (int) strtol(optarg, &end, 10);
            opt = (end == optarg || '\0' != *end || soak_window < 1 || soak_window > 1024) ?
                  '?' : opt;
            break;
        case 'T':
            stall = strtod(optarg, &end);
            opt = (end == optarg || '\0' != *end || stall <= 0) ? '?' : opt;
            break;
        }
        if ('?' == opt) {
            soak_usage(argv[0]);
            return 2;
        }
    }
    if (optind < argc) {
        soak_usage(argv[0]);
        return 2;
    }
    loom_test_init(&argc, &argv, "test_soak", 2, &soak_rank, &soak_nprocs);
    while (0 != (soak_max_size >> soak_size_bits)) {
        soak_size_bits++;
    }

    /* rank 0's seed for everybody: the sizes must agree */
    if (!have_seed) {
        soak_seed = (unsigned long long) time(NULL) * 1000003ULL ^ (unsigned long long) getpid();
    }
    LOOM_CHECK_MPI(MPI_Bcast(&soak_seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD));
    if (0 == soak_rank) {
        printf("test_soak seed %llu ranks %d seconds %g max_size %zu window %d\n", soak_seed,
               soak_nprocs, seconds, soak_max_size, soak_window);
        fflush(stdout);
    }

    /* the messages on a communicator of their own: nothing else can match them */
    LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &soak_comm));
    soak_npeers = soak_nprocs - 1;
    nslots = 2 * soak_npeers * soak_window;
    soak_slots = loom_malloc(nslots * sizeof(*soak_slots));
    soak_reqs = loom_malloc(nslots * sizeof(*soak_reqs));
    statuses = loom_malloc(nslots * sizeof(*statuses));
    indices = loom_malloc(nslots * sizeof(*indices));
    for (int i = 0; i < nslots; i++) {
        soak_slots[i].seq = -1;
        soak_slots[i].last = LONG_MAX;
        soak_slots[i].buf = NULL;
        soak_slots[i].type = MPI_BYTE;
        soak_reqs[i] = MPI_REQUEST_NULL;
    }

    rails = loom_pvar_read_rails("bytes_received", before);
    failures0 = loom_pvar_rails_total("failures", NULL);
    refused0  = loom_pvar_rails_total("writes_refused", NULL);
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    start = next_watch = MPI_Wtime();
    deadline = start + seconds;

    /* receives first: our own early sends' partners are then ready to match */
    for (int dir = DIR_RECV; dir <= DIR_SEND; dir++) {
        for (int i = dir; i < nslots; i += 2) {
            soak_post(i, (i / 2) % soak_window);
        }
    }
    if (0 == soak_rank) {
        printf("stream started\n");
        fflush(stdout);
    }

    for (;;) {
        double now = MPI_Wtime();
        int outcount = 0, rc;

        if (!stopping && now >= deadline) {
            soak_agree_last();
            stopping = 1;
        }
        rc = MPI_Testsome(nslots, soak_reqs, &outcount, indices, statuses);
        if (MPI_SUCCESS != rc && MPI_ERR_IN_STATUS != rc) {
            loom_mpi_error(__FILE__, __LINE__, "MPI_Testsome", rc);
        }
        if (MPI_UNDEFINED == outcount) {
            break;      /* every slot has done its last message */
        }
        for (int n = 0; n < outcount; n++) {
            soak_complete(indices[n], &statuses[n],
                          MPI_ERR_IN_STATUS == rc ? statuses[n].MPI_ERROR : MPI_SUCCESS);
        }
        /* once a second is enough to notice a message that never comes */
        if (now >= next_watch) {
            soak_watch(MPI_Wtime(), stall);
            next_watch = now + 1;
        }
    }
    soak_check_extra();
    elapsed = MPI_Wtime() - start;

    loom_pvar_read_rails("bytes_received", after);
    for (int r = 0; r < LOOM_TEST_MAX_RAILS; r++) {
        after[r] -= before[r];
    }
    mine[0] = soak_received;
    mine[1] = soak_bytes;
    mine[2] = loom_pvar_rails_total("failures", NULL) - failures0;
    mine[3] = loom_pvar_rails_total("writes_refused", NULL) - refused0;
    LOOM_CHECK_MPI(MPI_Reduce(mine, all, 4, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0,
                              MPI_COMM_WORLD));
    LOOM_CHECK_MPI(MPI_Reduce(after, rail_bytes, LOOM_TEST_MAX_RAILS, MPI_UNSIGNED_LONG_LONG,
                              MPI_SUM, 0, MPI_COMM_WORLD));
    if (0 == soak_rank) {
        printf("rail_bytes");
        for (int r = 0; r < rails; r++) {
            printf(" %llu", rail_bytes[r]);
        }
        printf("\nrail_failures %llu writes_refused %llu\n", all[2], all[3]);
        fflush(stdout);
    }
    LOOM_CHECK_MPI(MPI_Comm_free(&soak_comm));
    free(indices);
    free(statuses);
    free(soak_reqs);
    free(soak_slots);
    loom_test_pass_msg("messages %llu bytes %llu seconds %.1f", all[0], all[1], elapsed);
}
