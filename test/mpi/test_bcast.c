/*
 * MPI_Bcast, every byte checked: sizes 0 B to 16 MiB, every root, bytes and
 * a contiguous derived type (coll loom's pushes) and a vector type (which
 * coll loom leaves to the next component), on MPI_COMM_WORLD, a duplicate,
 * a split, and a communicator freed and made again on the same buffers.
 * With LOOM_EXPECT_COLL_LOOM=1 the pushes themselves are counted (btl
 * loom's pvars): coll loom must have carried the large broadcasts.  With
 * LOOM_BCAST_FAILURE=1 only failure() runs.
 */
#include "loom_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t sizes[] = {0, 1, 4096, 65535, 65536, 65537, 262151, MIB,
                               4 * MIB + 3, 16 * MIB};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static unsigned char *buf;
static int expect_loom; /* LOOM_EXPECT_COLL_LOOM=1: coll loom takes the large ones */

/* One broadcast of bytes from root, checked at every rank. */
static void bcast_bytes(MPI_Comm comm, size_t bytes, int root, unsigned seed, const char *what)
{
    int rank;

    MPI_Comm_rank(comm, &rank);
    if (rank == root) {
        loom_fill_pattern(buf, bytes, seed, root);
    } else {
        memset(buf, LOOM_POISON, bytes);
    }
    memset(buf + bytes, LOOM_POISON, LOOM_GUARD_SIZE);
    LOOM_CHECK_MPI(MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, comm));
    loom_check_recv(buf, bytes, seed, root, what);
}

/* Every size from one root; every root at one size. */
static void sweep(MPI_Comm comm, const char *name)
{
    char what[96];
    int size, root;
    size_t i;

    MPI_Comm_size(comm, &size);
    for (i = 0; i < NSIZES; ++i) {
        snprintf(what, sizeof(what), "%s: %zu bytes from rank %d", name, sizes[i], size - 1);
        bcast_bytes(comm, sizes[i], size - 1, (unsigned)(i + 1), what);
    }
    for (root = 0; root < size; ++root) {
        snprintf(what, sizeof(what), "%s: 1 MiB + 5 bytes from rank %d", name, root);
        bcast_bytes(comm, MIB + 5, root, 100u + (unsigned)root, what);
    }
    /* the same buffer again and again (registrations from the cache) */
    for (i = 0; i < 20; ++i) {
        snprintf(what, sizeof(what), "%s: repeated 300000 bytes, call %zu", name, i);
        bcast_bytes(comm, 300000, (int)i % size, 200u + (unsigned)i, what);
    }
}

/* A derived type of 3 ints (contiguous) and a vector of every other int. */
static void datatypes(MPI_Comm comm)
{
    const int count = 100000;
    MPI_Datatype three, every_other;
    unsigned long long fallbacks;
    int rank, *ints = (int *)buf, i;

    MPI_Comm_rank(comm, &rank);
    LOOM_CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &three));
    LOOM_CHECK_MPI(MPI_Type_commit(&three));
    for (i = 0; i < 3 * count; ++i) {
        ints[i] = (0 == rank) ? i * 7 + 1 : -1;
    }
    LOOM_CHECK_MPI(MPI_Bcast(ints, count, three, 0, comm));
    for (i = 0; i < 3 * count; ++i) {
        if (ints[i] != i * 7 + 1) {
            loom_fail("contiguous type: int %d is %d, expected %d", i, ints[i], i * 7 + 1);
        }
    }
    LOOM_CHECK_MPI(MPI_Type_vector(count, 1, 2, MPI_INT, &every_other));
    LOOM_CHECK_MPI(MPI_Type_commit(&every_other));
    for (i = 0; i < 2 * count; ++i) {
        ints[i] = (0 == rank) ? i * 3 + 2 : -1;
    }
    fallbacks = expect_loom ? loom_pvar_counter("coll_loom_fallbacks") : 0;
    LOOM_CHECK_MPI(MPI_Bcast(ints, 1, every_other, 0, comm));
    if (expect_loom && loom_pvar_counter("coll_loom_fallbacks") != fallbacks + 1) {
        loom_fail("vector type: coll loom did not count the broadcast it left to the next "
                  "component");
    }
    for (i = 0; i < 2 * count; ++i) {
        int want = (0 == rank || 0 == i % 2) ? i * 3 + 2 : -1;
        if (ints[i] != want) {
            loom_fail("vector type: int %d is %d, expected %d", i, ints[i], want);
        }
    }
    MPI_Type_free(&three);
    MPI_Type_free(&every_other);
}

/* LOOM_BCAST_FAILURE=1, run with a low btl_loom_push_waiting and small
 * segments: a broadcast whose forwarding pushes the inner nodes refuse must
 * fail at every rank, not hang; the next one (few segments) works. */
static void failure(void)
{
    int rank, rc, all_failed = 0, failed;

    unsigned long long failures = loom_pvar_counter("coll_loom_failures");

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (0 == rank) {
        loom_fill_pattern(buf, 16 * MIB, 400, 0);
    }
    rc = MPI_Bcast(buf, (int)(16 * MIB), MPI_BYTE, 0, MPI_COMM_WORLD);
    failed = (MPI_SUCCESS != rc) && loom_pvar_counter("coll_loom_failures") == failures + 1;
    LOOM_CHECK_MPI(MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (!all_failed) {
        loom_fail("a broadcast beyond btl_loom_push_waiting returned %d here: every rank "
                  "should have failed, and counted it (coll_loom_failures)", rc);
    }
    bcast_bytes(MPI_COMM_WORLD, 128 * KIB, 0, 401, "the broadcast after a failed one");
}

int main(int argc, char **argv)
{
    const char *expect = getenv("LOOM_EXPECT_COLL_LOOM");
    unsigned long long before, after;
    MPI_Comm dup, half;
    int rank, size, i;

    loom_test_init(&argc, &argv, "test_bcast", 2, &rank, &size);
    expect_loom = NULL != expect && 0 == strcmp(expect, "1");
    buf = loom_malloc(16 * MIB + 4096 + LOOM_GUARD_SIZE);
    before = loom_pushes_requested();
    if (NULL != getenv("LOOM_BCAST_FAILURE")) {
        failure();
        free(buf);
        loom_test_pass_msg("(a broadcast failed at every rank, the next one passed)");
    }
    sweep(MPI_COMM_WORLD, "world");
    datatypes(MPI_COMM_WORLD);
    LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    sweep(dup, "dup");
    LOOM_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half));
    sweep(half, "split");
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    /* made again on the same buffers */
    for (i = 0; i < 2; ++i) {
        LOOM_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        bcast_bytes(dup, 2 * MIB, size / 2, 300u + (unsigned)i, "a communicator made again");
        MPI_Comm_free(&dup);
    }
    after = loom_pushes_requested();
    if (NULL != expect && 0 == strcmp(expect, "1") && after == before) {
        loom_fail("coll loom was expected to carry the broadcasts, but no push was asked for");
    }
    free(buf);
    loom_test_pass_msg("(%llu pushes)", after - before);
}
