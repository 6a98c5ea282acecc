/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * The point-to-point calls other than plain Send/Recv, each with sizes that
 * go eager, by send-in-place and by RDMA rendezvous through loom: persistent
 * requests (Send_init/Recv_init, Startall, restarted), buffered sends
 * (Bsend, Ibsend with an attached buffer), ready sends (Rsend after the
 * receive is posted), Sendrecv_replace, matched probes (Mprobe/Mrecv,
 * Improbe/Imrecv), zero-byte messages carrying only a tag, cancelling a
 * receive that never matches, and MPI_PROC_NULL.  Every byte is verified,
 * with the guard after each receive buffer untouched.
 *
 * Ranks pair up (0<->1, 2<->3, ...); an odd rank out only takes part in
 * the collective steps.
 */
#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t sizes[] = { 0, 1, 100, 4095, 65536, 300001, 4 * MIB };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define ROUNDS 3 /* persistent requests are started this many times */

static unsigned char *sbuf, *rbuf;

static unsigned seed_of(int mode, size_t i, int round)
{
    return (unsigned)(mode * 1000 + i * 10 + round);
}

/* the received message of mode, size index i, round: pattern and guard */
static void check_received(const MPI_Status *status, size_t i, int mode, int round,
                           int peer, const char *what)
{
    char label[128];

    snprintf(label, sizeof(label), "%s, %zu bytes, round %d", what, sizes[i], round);
    loom_check_count(status, MPI_BYTE, (int)sizes[i], peer, label);
    loom_check_recv(rbuf, sizes[i], seed_of(mode, i, round), peer, label);
}

static void poison(size_t size)
{
    memset(rbuf, LOOM_POISON, size + LOOM_GUARD_SIZE);
}

/* Send_init/Recv_init both ways, started ROUNDS times with new contents. */
static void test_persistent(int rank, int peer)
{
    MPI_Request reqs[2];
    MPI_Status statuses[2];
    size_t i;
    int round;

    for (i = 0; i < NSIZES; ++i) {
        LOOM_CHECK_MPI(MPI_Recv_init(rbuf, (int)sizes[i], MPI_BYTE, peer, 7, MPI_COMM_WORLD,
                                     &reqs[0]));
        LOOM_CHECK_MPI(MPI_Send_init(sbuf, (int)sizes[i], MPI_BYTE, peer, 7, MPI_COMM_WORLD,
                                     &reqs[1]));
        for (round = 0; round < ROUNDS; ++round) {
            poison(sizes[i]);
            loom_fill_pattern(sbuf, sizes[i], seed_of(1, i, round), rank);
            LOOM_CHECK_MPI(MPI_Startall(2, reqs));
            LOOM_CHECK_MPI(MPI_Waitall(2, reqs, statuses));
            check_received(&statuses[0], i, 1, round, peer, "persistent Recv_init");
        }
        LOOM_CHECK_MPI(MPI_Request_free(&reqs[0]));
        LOOM_CHECK_MPI(MPI_Request_free(&reqs[1]));
    }
}

/* Bsend and Ibsend from an attached buffer; the sender may overwrite its
 * buffer as soon as the call returns, and the receiver still gets what
 * was there at the call. */
static void test_buffered(int rank, int peer)
{
    size_t i, need = 0;
    MPI_Request req;
    MPI_Status status;
    void *attached;
    int size, nonblocking;

    for (i = 0; i < NSIZES; ++i) {
        LOOM_CHECK_MPI(MPI_Pack_size((int)sizes[i], MPI_BYTE, MPI_COMM_WORLD, &size));
        need += (size_t)size + MPI_BSEND_OVERHEAD;
    }
    need *= 2; /* room for a pass while the last one's copies are released */
    attached = loom_malloc(need);
    LOOM_CHECK_MPI(MPI_Buffer_attach(attached, (int)need));
    for (nonblocking = 0; nonblocking < 2; ++nonblocking) {
        for (i = 0; i < NSIZES; ++i) {
            loom_fill_pattern(sbuf, sizes[i], seed_of(2, i, nonblocking), rank);
            if (nonblocking) {
                LOOM_CHECK_MPI(MPI_Ibsend(sbuf, (int)sizes[i], MPI_BYTE, peer, 8,
                                          MPI_COMM_WORLD, &req));
                LOOM_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
            } else {
                LOOM_CHECK_MPI(MPI_Bsend(sbuf, (int)sizes[i], MPI_BYTE, peer, 8,
                                         MPI_COMM_WORLD));
            }
            memset(sbuf, 0, sizes[i]); /* the copy in the buffer is what goes */
            poison(sizes[i]);
            LOOM_CHECK_MPI(MPI_Recv(rbuf, (int)sizes[i], MPI_BYTE, peer, 8, MPI_COMM_WORLD,
                                    &status));
            check_received(&status, i, 2, nonblocking, peer,
                           nonblocking ? "Ibsend" : "Bsend");
        }
    }
    LOOM_CHECK_MPI(MPI_Buffer_detach(&attached, &size));
    free(attached);
}

/* Rsend: legal only once the receive is posted; a zero-byte exchange
 * says it is. */
static void test_ready(int rank, int peer)
{
    MPI_Request req;
    MPI_Status status;
    size_t i;

    for (i = 0; i < NSIZES; ++i) {
        poison(sizes[i]);
        loom_fill_pattern(sbuf, sizes[i], seed_of(3, i, 0), rank);
        LOOM_CHECK_MPI(MPI_Irecv(rbuf, (int)sizes[i], MPI_BYTE, peer, 9, MPI_COMM_WORLD, &req));
        LOOM_CHECK_MPI(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 10, NULL, 0, MPI_BYTE, peer, 10,
                                    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        LOOM_CHECK_MPI(MPI_Rsend(sbuf, (int)sizes[i], MPI_BYTE, peer, 9, MPI_COMM_WORLD));
        LOOM_CHECK_MPI(MPI_Wait(&req, &status));
        check_received(&status, i, 3, 0, peer, "Rsend");
    }
}

/* Sendrecv_replace: the buffer goes out and the peer's comes back in it. */
static void test_replace(int rank, int peer)
{
    MPI_Status status;
    size_t i;

    for (i = 0; i < NSIZES; ++i) {
        loom_fill_pattern(rbuf, sizes[i], seed_of(4, i, 0), rank);
        memset(rbuf + sizes[i], LOOM_POISON, LOOM_GUARD_SIZE);
        LOOM_CHECK_MPI(MPI_Sendrecv_replace(rbuf, (int)sizes[i], MPI_BYTE, peer, 11, peer, 11,
                                            MPI_COMM_WORLD, &status));
        check_received(&status, i, 4, 0, peer, "Sendrecv_replace");
    }
}

/* Mprobe/Mrecv and Improbe/Imrecv: the probed message is the one received,
 * even with another of the same tag behind it. */
static void test_matched_probe(int rank, int peer)
{
    MPI_Request reqs[2], rreq;
    MPI_Message message;
    MPI_Status status;
    size_t i;
    int count, flag, pass, k;

    for (pass = 0; pass < 2; ++pass) {
        for (i = 0; i < NSIZES; ++i) {
            /* two messages of the same tag: sizes[i], then a 3-byte one */
            unsigned char tail[3] = { 0x11, 0x22, (unsigned char)i }, got[3] = { 0 };

            loom_fill_pattern(sbuf, sizes[i], seed_of(5, i, pass), rank);
            LOOM_CHECK_MPI(MPI_Isend(sbuf, (int)sizes[i], MPI_BYTE, peer, 12, MPI_COMM_WORLD,
                                     &reqs[0]));
            LOOM_CHECK_MPI(MPI_Isend(tail, 3, MPI_BYTE, peer, 12, MPI_COMM_WORLD, &reqs[1]));
            if (0 == pass) {
                LOOM_CHECK_MPI(MPI_Mprobe(peer, 12, MPI_COMM_WORLD, &message, &status));
            } else {
                do {
                    LOOM_CHECK_MPI(MPI_Improbe(peer, 12, MPI_COMM_WORLD, &flag, &message,
                                               &status));
                } while (!flag);
            }
            LOOM_CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &count));
            if ((size_t)count != sizes[i]) {
                loom_fail("matched probe of the %zu-byte message from %d saw %d bytes",
                          sizes[i], peer, count);
            }
            poison(sizes[i]);
            if (0 == pass) {
                LOOM_CHECK_MPI(MPI_Mrecv(rbuf, count, MPI_BYTE, &message, &status));
            } else {
                LOOM_CHECK_MPI(MPI_Imrecv(rbuf, count, MPI_BYTE, &message, &rreq));
                LOOM_CHECK_MPI(MPI_Wait(&rreq, &status));
            }
            check_received(&status, i, 5, pass, peer, pass ? "Imrecv" : "Mrecv");
            LOOM_CHECK_MPI(MPI_Recv(got, 3, MPI_BYTE, peer, 12, MPI_COMM_WORLD, &status));
            loom_check_count(&status, MPI_BYTE, 3, peer, "the message behind the probed one");
            for (k = 0; k < 3; ++k) {
                if (got[k] != tail[k]) {
                    loom_fail("the message behind the probed one (%zu bytes) from %d: byte %d "
                              "is %#x, expected %#x", sizes[i], peer, k, got[k], tail[k]);
                }
            }
            LOOM_CHECK_MPI(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
        }
    }
}

/* Zero-byte messages of many tags, received out of tag order. */
static void test_zero_bytes(int peer)
{
    enum { NTAGS = 64 };
    MPI_Request reqs[NTAGS];
    MPI_Status status;
    int tag;

    for (tag = 0; tag < NTAGS; ++tag) {
        LOOM_CHECK_MPI(MPI_Isend(NULL, 0, MPI_BYTE, peer, 100 + tag, MPI_COMM_WORLD,
                                 &reqs[tag]));
    }
    for (tag = NTAGS - 1; tag >= 0; --tag) {
        LOOM_CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, peer, 100 + tag, MPI_COMM_WORLD, &status));
        loom_check_count(&status, MPI_BYTE, 0, peer, "zero-byte message");
        if (status.MPI_TAG != 100 + tag || status.MPI_SOURCE != peer) {
            loom_fail("zero-byte message with tag %d came as tag %d from %d", 100 + tag,
                      status.MPI_TAG, status.MPI_SOURCE);
        }
    }
    LOOM_CHECK_MPI(MPI_Waitall(NTAGS, reqs, MPI_STATUSES_IGNORE));
}

/* A receive nobody sends to is cancelled; traffic after it is unharmed. */
static void test_cancel(int rank, int peer)
{
    MPI_Request req;
    MPI_Status status;
    int cancelled;

    poison(64);
    LOOM_CHECK_MPI(MPI_Irecv(rbuf, 64, MPI_BYTE, peer, 13, MPI_COMM_WORLD, &req));
    LOOM_CHECK_MPI(MPI_Cancel(&req));
    LOOM_CHECK_MPI(MPI_Wait(&req, &status));
    LOOM_CHECK_MPI(MPI_Test_cancelled(&status, &cancelled));
    if (!cancelled) {
        loom_fail("a receive that nothing could match was not cancelled");
    }
    if (-1 != loom_verify_byte(rbuf, 64, LOOM_POISON, peer, "cancelled receive buffer")) {
        loom_fail("a cancelled receive wrote its buffer");
    }
    /* both cancelled before either sends on the tag */
    LOOM_CHECK_MPI(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 14, NULL, 0, MPI_BYTE, peer, 14,
                                MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    /* the tag is free again: a message of it goes to the next receive */
    loom_fill_pattern(sbuf, 64, seed_of(6, 0, 0), rank);
    LOOM_CHECK_MPI(MPI_Sendrecv(sbuf, 64, MPI_BYTE, peer, 13, rbuf, 64, MPI_BYTE, peer, 13,
                                MPI_COMM_WORLD, &status));
    loom_check_count(&status, MPI_BYTE, 64, peer, "message after a cancelled receive");
    loom_check_recv(rbuf, 64, seed_of(6, 0, 0), peer, "message after a cancelled receive");
}

static void test_proc_null(void)
{
    MPI_Status status;
    int count;

    LOOM_CHECK_MPI(MPI_Send(sbuf, 10, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    LOOM_CHECK_MPI(MPI_Recv(rbuf, 10, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &status));
    LOOM_CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &count));
    if (MPI_PROC_NULL != status.MPI_SOURCE || 0 != count) {
        loom_fail("a receive from MPI_PROC_NULL gave source %d, %d bytes", status.MPI_SOURCE,
                  count);
    }
}

int main(int argc, char **argv)
{
    size_t max = sizes[NSIZES - 1];
    int rank, size, peer;

    loom_test_init(&argc, &argv, "test_p2p_modes", 2, &rank, &size);
    sbuf = loom_malloc(max);
    rbuf = loom_malloc(max + LOOM_GUARD_SIZE);
    peer = loom_pair_peer(rank, size);
    if (peer >= 0) {
        test_persistent(rank, peer);
        test_buffered(rank, peer);
        test_ready(rank, peer);
        test_replace(rank, peer);
        test_matched_probe(rank, peer);
        test_zero_bytes(peer);
        test_cancel(rank, peer);
    }
    test_proc_null();
    free(sbuf);
    free(rbuf);
    loom_test_pass();
}
