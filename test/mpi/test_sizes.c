/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Ping-pong of every interesting message size between rank pairs
 * (0<->1, 2<->3, ...): 0 B and p-1, p, p+1 for every power of two p from
 * 1 B to 16 MiB.  Each size is moved with blocking Send/Recv in both
 * directions, with Isend/Irecv in both directions at once, and for a few
 * sizes with MPI_Ssend.  Every byte is verified, MPI_Get_count is checked
 * and the guard region after the receive buffer must stay poisoned.
 * With LOOM_EXPECT_STREAMED set, where loom checked writes (rails without
 * memory protection) some must have been placed with streaming stores
 * (pvars btl_loom_rail<N>_writes_checked, _writes_streamed); set to "some",
 * not all of them: the ping-pong's buffer, written again at once, keeps
 * ordinary stores (btl_loom_tcp_stream_reuse).
 */

#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POW (24)                        /* 16 MiB */
#define MAX_SIZE (((size_t) 1 << MAX_POW) + 1)
#define MAX_SIZES (3 * (MAX_POW + 1) + 1)

enum { MODE_BLOCKING, MODE_NONBLOCKING, MODE_SSEND };

static const char *mode_name[] = { "Send/Recv", "Isend/Irecv", "Ssend/Recv" };

static unsigned char *sbuf, *rbuf;

/* sorted list of distinct sizes: 0 and p-1, p, p+1 for p = 1 .. 16 MiB */
static int make_sizes(size_t *sizes)
{
    int n = 0;

    sizes[n++] = 0;
    for (int i = 0; i <= MAX_POW; i++) {
        size_t p = (size_t) 1 << i;

        for (size_t s = p - 1; s <= p + 1; s++) {
            if (s > sizes[n - 1]) {
                sizes[n++] = s;
            }
        }
    }
    return n;
}

static int use_ssend(size_t size)
{
    return 0 == size || 1 == size || 4096 == size || 65537 == size ||
           MIB + 1 == size || 16 * MIB == size;
}

/* seed of the data sent for (size, mode, direction) */
static unsigned size_seed(size_t size, int mode, int dir)
{
    return (unsigned) (size * 4 + (size_t) mode * 2 + (size_t) dir);
}

static void recv_and_check(size_t size, int peer, int mode, int dir)
{
    char what[96];
    MPI_Status status;

    snprintf(what, sizeof(what), "%s size %zu dir %d", mode_name[mode],
             size, dir);
    memset(rbuf, LOOM_POISON, size + LOOM_GUARD_SIZE);
    LOOM_CHECK_MPI(MPI_Recv(rbuf, (int) size, MPI_BYTE, peer, dir,
                            MPI_COMM_WORLD, &status));
    loom_check_count(&status, MPI_BYTE, (int) size, peer, what);
    loom_check_recv(rbuf, size, size_seed(size, mode, dir), peer, what);
}

static void send_one(size_t size, int peer, int mode, int dir, int rank)
{
    loom_fill_pattern(sbuf, size, size_seed(size, mode, dir), rank);
    if (MODE_SSEND == mode) {
        LOOM_CHECK_MPI(MPI_Ssend(sbuf, (int) size, MPI_BYTE, peer, dir,
                                 MPI_COMM_WORLD));
    } else {
        LOOM_CHECK_MPI(MPI_Send(sbuf, (int) size, MPI_BYTE, peer, dir,
                                MPI_COMM_WORLD));
    }
}

/* even rank sends first (direction 0), odd rank answers (direction 1) */
static void ping_pong(size_t size, int rank, int peer, int mode)
{
    if (0 == (rank & 1)) {
        send_one(size, peer, mode, 0, rank);
        recv_and_check(size, peer, mode, 1);
    } else {
        recv_and_check(size, peer, mode, 0);
        send_one(size, peer, mode, 1, rank);
    }
}

/* both ranks send and receive at the same time */
static void exchange(size_t size, int rank, int peer)
{
    int my_dir = rank & 1, peer_dir = peer & 1;
    MPI_Request reqs[2];
    MPI_Status status[2];
    char what[96];

    snprintf(what, sizeof(what), "%s size %zu dir %d",
             mode_name[MODE_NONBLOCKING], size, peer_dir);
    memset(rbuf, LOOM_POISON, size + LOOM_GUARD_SIZE);
    loom_fill_pattern(sbuf, size, size_seed(size, MODE_NONBLOCKING, my_dir),
                      rank);
    LOOM_CHECK_MPI(MPI_Irecv(rbuf, (int) size, MPI_BYTE, peer, peer_dir,
                             MPI_COMM_WORLD, &reqs[0]));
    LOOM_CHECK_MPI(MPI_Isend(sbuf, (int) size, MPI_BYTE, peer, my_dir,
                             MPI_COMM_WORLD, &reqs[1]));
    LOOM_CHECK_MPI(MPI_Waitall(2, reqs, status));
    loom_check_count(&status[0], MPI_BYTE, (int) size, peer, what);
    loom_check_recv(rbuf, size, size_seed(size, MODE_NONBLOCKING, peer_dir),
                    peer, what);
}

int main(int argc, char **argv)
{
    size_t sizes[MAX_SIZES];
    int rank, nprocs, peer, nsizes;
    unsigned long long checked, streamed;
    const char *expect;

    loom_test_init(&argc, &argv, "test_sizes", 2, &rank, &nprocs);
    peer = loom_pair_peer(rank, nprocs);
    nsizes = make_sizes(sizes);
    sbuf = loom_malloc(MAX_SIZE);
    rbuf = loom_malloc(MAX_SIZE + LOOM_GUARD_SIZE);
    (void)loom_pvar_rails_total("writes_checked", NULL); /* count from here */
    (void)loom_pvar_rails_total("writes_streamed", NULL);

    for (int i = 0; i < nsizes && peer >= 0; i++) {
        ping_pong(sizes[i], rank, peer, MODE_BLOCKING);
        exchange(sizes[i], rank, peer);
        if (use_ssend(sizes[i])) {
            ping_pong(sizes[i], rank, peer, MODE_SSEND);
        }
    }

    free(sbuf);
    free(rbuf);
    checked  = loom_pvar_rails_world_total("writes_checked");
    streamed = loom_pvar_rails_world_total("writes_streamed");
    expect = getenv("LOOM_EXPECT_STREAMED");
    if (NULL != expect && 0 != checked && 0 == streamed) {
        loom_fail("none of %llu checked write segments was placed with streaming stores "
                  "(pvar btl_loom_rail<N>_writes_streamed)", checked);
    }
    if (NULL != expect && 0 == strcmp(expect, "some") && streamed >= checked) {
        loom_fail("all %llu checked write segments were placed with streaming stores, also "
                  "into the ping-pong's buffer written again at once", checked);
    }
    loom_test_pass_msg("(%llu checked write segments, %llu placed with streaming stores)",
                       checked, streamed);
}
