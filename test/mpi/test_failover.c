/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * A stream of large messages from rank 0 to rank 1, every byte verified at
 * rank 1, for -t seconds, while a script takes a rail down underneath.
 * Rank 1 prints, every 100 ms, the bytes each rail has brought in so far
 * (btl_loom_rail<N>_bytes_received: the data of a per-rail throughput plot),
 * then the longest gap between two
 * completed messages (the stall), the chunks re-driven after a failure
 * (btl_loom_rail<N>_failovers, rank 1's own, where the gets run), the
 * messages sent again and the rails that came back (btl_loom_rail<N>_resent
 * and _rejoins, both ranks), the bytes each rail brought in during the
 * last 2 s of the stream, and the messages both ranks wrote into eager
 * rings in those 2 s (btl_loom_eager_ring_sent: rings that came back with
 * their rail carry messages again).
 *
 * With -m the sizes cycle from 1 B to the -s size (eager messages, single
 * RDMA transfers, striped ones), so that a failure hits every path.
 *
 * Usage: test_failover [-t seconds] [-s message_size] [-m]
 * Output lines: "stream started" (rank 0, as its first send begins),
 *               "start_epoch <unix time of t=0>",
 *               "sample <t> <bytes rail0> <bytes rail1> ...",
 *               "stall <seconds>", "failovers <count>", "messages <n>",
 *               "resent <count>", "rejoins <count>",
 *               "late <bytes rail0> <bytes rail1> ...", "late_ring <messages>",
 *               "rails_out <rails out of use for some peer>".
 */

#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    double seconds = 8, start, last, stall = 0, next_sample = 0;
    size_t size = 4 * MIB;
    unsigned long long bytes[LOOM_TEST_MAX_RAILS], before[LOOM_TEST_MAX_RAILS], total = 0;
    unsigned long long resent_before[LOOM_TEST_MAX_RAILS], rejoins_before[LOOM_TEST_MAX_RAILS];
    unsigned long long late_from[LOOM_TEST_MAX_RAILS] = {0}, mine[3], both[3];
    unsigned long long ring_from = 0;
    int late_taken = 0;
    int rank, nprocs, rails, opt, go = 1, mixed = 0;
    unsigned char *buf;
    long n = 0;

    while (-1 != (opt = getopt(argc, argv, "t:s:m"))) {
        switch (opt) {
        case 't': seconds = atof(optarg); break;
        case 's': size = (size_t) atol(optarg); break;
        case 'm': mixed = 1; break;
        default: fprintf(stderr, "usage: %s [-t seconds] [-s size] [-m]\n", argv[0]); return 2;
        }
    }
    loom_test_init(&argc, &argv, "test_failover", 2, &rank, &nprocs);
    rails = loom_pvar_read_rails("bytes_received", bytes);
    loom_pvar_read_rails("failovers", before); /* counters read relative to their first read */
    loom_pvar_read_rails("resent", resent_before);
    loom_pvar_read_rails("rejoins", rejoins_before);
    if (rails < 2) {
        loom_test_skip("failover needs at least two rails");
    }
    buf = loom_malloc(size + LOOM_GUARD_SIZE);
    LOOM_CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    start = last = MPI_Wtime();
    if (1 == rank) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        printf("start_epoch %.3f\n", ts.tv_sec + ts.tv_nsec * 1e-9);
    }
    while (go) {
        /* with -m: 1 B, 100 B, 10 KB, ... 1 MB, then the full size (0) */
        static const size_t mixed_sizes[8] = {1, 100, 10000, 60000, 100000, 300000, 1000000, 0};
        size_t len = mixed ? mixed_sizes[n % 8] : 0;
        char what[64];

        len = (0 == len || len > size) ? size : len;
        if (0 == rank) {
            loom_fill_pattern(buf, len, (unsigned) n, rank);
            if (0 == n) {
                printf("stream started\n");
                fflush(stdout);
            }
            LOOM_CHECK_MPI(MPI_Send(buf, (int) len, MPI_BYTE, 1, 0, MPI_COMM_WORLD));
            LOOM_CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            if (2 == go && !late_taken) { /* rank 1's last 2 s began */
                ring_from  = loom_pvar_counter("btl_loom_eager_ring_sent");
                late_taken = 1;
            }
        } else {
            double now;

            memset(buf, LOOM_POISON, size + LOOM_GUARD_SIZE);
            LOOM_CHECK_MPI(MPI_Recv(buf, (int) len, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                                    MPI_STATUS_IGNORE));
            snprintf(what, sizeof(what), "message %ld", n);
            loom_check_recv(buf, len, (unsigned) n, 0, what);
            now = MPI_Wtime();
            stall = (now - last > stall) ? now - last : stall;
            last = now;
            if (now - start >= next_sample) {
                loom_pvar_read_rails("bytes_received", bytes);
                printf("sample %.2f", now - start);
                for (int r = 0; r < rails; r++) {
                    printf(" %llu", bytes[r]);
                }
                printf("\n");
                next_sample += 0.1;
            }
            if (!late_taken && now - start >= seconds - 2) {
                loom_pvar_read_rails("bytes_received", late_from);
                ring_from  = loom_pvar_counter("btl_loom_eager_ring_sent");
                late_taken = 1;
            }
            go = (now - start < seconds) ? 1 + late_taken : 0;
            LOOM_CHECK_MPI(MPI_Send(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
        }
        n++;
    }
    mine[0] = loom_pvar_rails_total("resent", resent_before);
    mine[1] = loom_pvar_rails_total("rejoins", rejoins_before);
    mine[2] = late_taken ? loom_pvar_counter("btl_loom_eager_ring_sent") - ring_from : 0;
    LOOM_CHECK_MPI(MPI_Reduce(mine, both, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 1,
                              MPI_COMM_WORLD));
    if (1 == rank) {
        unsigned long long failed[LOOM_TEST_MAX_RAILS];
        int out = 0;

        loom_pvar_read_rails("bytes_received", bytes);
        printf("late");
        for (int r = 0; r < rails; r++) {
            printf(" %llu", late_taken ? bytes[r] - late_from[r] : 0ull);
        }
        printf("\nlate_ring %llu\nresent %llu\nrejoins %llu\n", both[2], both[0], both[1]);

        total = loom_pvar_rails_total("failovers", before);
        loom_pvar_read_rails("failed_peers", failed); /* a level: read as it is */
        for (int r = 0; r < rails; r++) {
            out += (failed[r] > 0);
        }
        printf("messages %ld\nstall %.3f\nfailovers %llu\nrails_out %d\n", n, stall, total,
               out);
    }
    free(buf);
    loom_test_pass();
}
