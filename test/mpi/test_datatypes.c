/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Non-contiguous datatypes between rank pairs (0<->1, 2<->3, ...):
 * MPI_Type_vector (incl. > 1 MiB of payload), MPI_Type_indexed, a struct
 * with gaps and a resized type.  Each type is sent non-contiguous ->
 * contiguous, contiguous -> non-contiguous and non-contiguous ->
 * non-contiguous, in both directions; vectors also by MPI_Bsend (whose
 * packed data the BTL's send-immediate gets, up to the eager limit).
 * Every byte of the receive buffer is
 * compared with an image built by hand from the type's layout: data where
 * the type has data, untouched poison in the gaps.
 */

#include "loom_test_util.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the sender's gaps hold this, so gap bytes leaking across are caught */
#define SEND_GAP_BYTE 0x3c

/* one element of a test type: its data blocks in type-map order */
struct layout {
    char name[64];
    MPI_Datatype type;      /* the non-contiguous type */
    MPI_Datatype packed;    /* same type signature, no gaps */
    int nblocks;
    MPI_Aint *offsets;      /* byte offset of each block in the element */
    int *lengths;           /* elements of base[i] in each block */
    MPI_Datatype *bases;
    MPI_Aint extent;
    size_t packed_size;     /* data bytes of one element */
};

struct sample {
    double d;
    char c;
    int i[3];
    short s;
};

static void layout_alloc(struct layout *l, const char *name, int nblocks)
{
    snprintf(l->name, sizeof(l->name), "%s", name);
    l->nblocks = nblocks;
    l->offsets = loom_malloc(nblocks * sizeof(MPI_Aint));
    l->lengths = loom_malloc(nblocks * sizeof(int));
    l->bases = loom_malloc(nblocks * sizeof(MPI_Datatype));
}

static void layout_free(struct layout *l)
{
    MPI_Type_free(&l->type);
    MPI_Type_free(&l->packed);
    free(l->offsets);
    free(l->lengths);
    free(l->bases);
}

/* derive packed type, extent and packed size once type and blocks are set */
static void layout_commit(struct layout *l)
{
    MPI_Aint lb, *disp = loom_malloc(l->nblocks * sizeof(MPI_Aint));
    int uniform = 1, total = 0, type_size;

    l->packed_size = 0;
    for (int i = 0; i < l->nblocks; i++) {
        int base_size;

        LOOM_CHECK_MPI(MPI_Type_size(l->bases[i], &base_size));
        disp[i] = (MPI_Aint) l->packed_size;
        l->packed_size += (size_t) l->lengths[i] * base_size;
        total += l->lengths[i];
        uniform = uniform && l->bases[i] == l->bases[0];
    }
    if (uniform) {
        LOOM_CHECK_MPI(MPI_Type_contiguous(total, l->bases[0], &l->packed));
    } else {
        MPI_Datatype tmp;

        LOOM_CHECK_MPI(MPI_Type_create_struct(l->nblocks, l->lengths, disp,
                                              l->bases, &tmp));
        LOOM_CHECK_MPI(MPI_Type_create_resized(tmp, 0,
                                               (MPI_Aint) l->packed_size,
                                               &l->packed));
        MPI_Type_free(&tmp);
    }
    free(disp);
    LOOM_CHECK_MPI(MPI_Type_commit(&l->type));
    LOOM_CHECK_MPI(MPI_Type_commit(&l->packed));
    LOOM_CHECK_MPI(MPI_Type_get_extent(l->type, &lb, &l->extent));
    LOOM_CHECK_MPI(MPI_Type_size(l->type, &type_size));
    if (0 != lb || (size_t) type_size != l->packed_size) {
        loom_fail("%s: unexpected lb %ld / size %d (want 0 / %zu)", l->name,
                  (long) lb, type_size, l->packed_size);
    }
}

static void make_vector(struct layout *l, int count, int blocklen, int stride)
{
    layout_alloc(l, "vector", count);
    snprintf(l->name, sizeof(l->name), "vector(%d x %d every %d doubles)",
             count, blocklen, stride);
    for (int i = 0; i < count; i++) {
        l->offsets[i] = (MPI_Aint) i * stride * sizeof(double);
        l->lengths[i] = blocklen;
        l->bases[i] = MPI_DOUBLE;
    }
    LOOM_CHECK_MPI(MPI_Type_vector(count, blocklen, stride, MPI_DOUBLE,
                                   &l->type));
    layout_commit(l);
}

static void make_indexed(struct layout *l)
{
    static int blocklens[] = { 1, 3, 2, 5, 1 };
    static int displs[] = { 0, 2, 8, 12, 19 };     /* in doubles */

    layout_alloc(l, "indexed", 5);
    for (int i = 0; i < 5; i++) {
        l->offsets[i] = (MPI_Aint) displs[i] * sizeof(double);
        l->lengths[i] = blocklens[i];
        l->bases[i] = MPI_DOUBLE;
    }
    LOOM_CHECK_MPI(MPI_Type_indexed(5, blocklens, displs, MPI_DOUBLE,
                                    &l->type));
    layout_commit(l);
}

/* struct sample without its padding, and without i[2]: gaps inside too */
static void make_struct(struct layout *l)
{
    MPI_Datatype tmp;

    layout_alloc(l, "struct", 4);
    l->offsets[0] = offsetof(struct sample, d);
    l->offsets[1] = offsetof(struct sample, c);
    l->offsets[2] = offsetof(struct sample, i);
    l->offsets[3] = offsetof(struct sample, s);
    l->lengths[0] = 1;
    l->lengths[1] = 1;
    l->lengths[2] = 2;
    l->lengths[3] = 1;
    l->bases[0] = MPI_DOUBLE;
    l->bases[1] = MPI_CHAR;
    l->bases[2] = MPI_INT;
    l->bases[3] = MPI_SHORT;
    LOOM_CHECK_MPI(MPI_Type_create_struct(4, l->lengths, l->offsets, l->bases,
                                          &tmp));
    LOOM_CHECK_MPI(MPI_Type_create_resized(tmp, 0, sizeof(struct sample),
                                           &l->type));
    MPI_Type_free(&tmp);
    layout_commit(l);
}

/* 3 ints stretched to an extent of 20 bytes: 8 byte gap per element */
static void make_resized(struct layout *l)
{
    MPI_Datatype tmp;

    layout_alloc(l, "resized", 1);
    l->offsets[0] = 0;
    l->lengths[0] = 3;
    l->bases[0] = MPI_INT;
    LOOM_CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &tmp));
    LOOM_CHECK_MPI(MPI_Type_create_resized(tmp, 0, 20, &l->type));
    MPI_Type_free(&tmp);
    layout_commit(l);
}

/* image of count elements of l: packed data (pattern of seed/rank) placed
 * at the type's blocks, gap_byte elsewhere */
static void build_image(unsigned char *image, const struct layout *l,
                        int count, unsigned seed, int rank,
                        unsigned char gap_byte)
{
    size_t pos = 0;

    memset(image, gap_byte, (size_t) count * l->extent);
    for (int e = 0; e < count; e++) {
        for (int b = 0; b < l->nblocks; b++) {
            unsigned char *dst = image + (size_t) e * l->extent + l->offsets[b];
            int base_size;

            MPI_Type_size(l->bases[b], &base_size);
            for (size_t k = 0; k < (size_t) l->lengths[b] * base_size; k++) {
                dst[k] = loom_pattern_byte(seed, rank, pos++);
            }
        }
    }
}

enum { NC_TO_C, C_TO_NC, NC_TO_NC, NUM_MODES };

static const char *mode_names[] = { "noncontig->contig", "contig->noncontig",
                                    "noncontig->noncontig" };

/* send by MPI_Bsend instead of MPI_Send */
static int buffered;

static void run_case(const struct layout *l, int count, int mode, int dir,
                     int rank, int peer)
{
    int sender = (0 == dir) == (0 == (rank & 1));
    int send_nc = NC_TO_C == mode || NC_TO_NC == mode;
    int recv_nc = C_TO_NC == mode || NC_TO_NC == mode;
    int nc = sender ? send_nc : recv_nc;
    MPI_Datatype type = nc ? l->type : l->packed;
    size_t len = (size_t) count * (nc ? (size_t) l->extent : l->packed_size);
    unsigned seed = (unsigned) (count * 16 + mode * 2 + dir);
    /* receive buffers (and their images) end in a poisoned guard region */
    unsigned char *buf = loom_malloc(len + LOOM_GUARD_SIZE), *image;
    MPI_Status status;
    char what[128];

    snprintf(what, sizeof(what), "%s count %d %s dir %d%s", l->name, count,
             mode_names[mode], dir, buffered ? " (Bsend)" : "");
    if (sender) {
        if (nc) {
            build_image(buf, l, count, seed, rank, SEND_GAP_BYTE);
        } else {
            loom_fill_pattern(buf, len, seed, rank);
        }
        if (buffered) {
            LOOM_CHECK_MPI(MPI_Bsend(buf, count, type, peer, mode, MPI_COMM_WORLD));
        } else {
            LOOM_CHECK_MPI(MPI_Send(buf, count, type, peer, mode, MPI_COMM_WORLD));
        }
        free(buf);
        return;
    }

    image = loom_malloc(len + LOOM_GUARD_SIZE);
    if (nc) {
        build_image(image, l, count, seed, peer, LOOM_POISON);
    } else {
        loom_fill_pattern(image, len, seed, peer);
    }
    memset(image + len, LOOM_POISON, LOOM_GUARD_SIZE);
    memset(buf, LOOM_POISON, len + LOOM_GUARD_SIZE);
    LOOM_CHECK_MPI(MPI_Recv(buf, count, type, peer, mode, MPI_COMM_WORLD,
                            &status));
    loom_check_count(&status, type, count, peer, what);
    if (loom_verify_image(buf, image, len + LOOM_GUARD_SIZE, peer, what) >= 0) {
        loom_fail("%s: received %zu byte buffer from peer %d is wrong "
                  "(data, or a gap or the guard after it that should be "
                  "0x%02x)", what, len, peer, LOOM_POISON);
    }
    free(image);
    free(buf);
}

static void run_all_modes(struct layout *l, int count, int rank, int peer)
{
    for (int mode = 0; mode < NUM_MODES; mode++) {
        for (int dir = 0; dir < 2; dir++) {
            run_case(l, count, mode, dir, rank, peer);
        }
    }
}

int main(int argc, char **argv)
{
    static const int vector_counts[] = { 1, 5, 1000, 300000 };
    static const int indexed_counts[] = { 1, 10, 20000 };
    static const int struct_counts[] = { 1, 100, 70000 };
    static const int resized_counts[] = { 1, 1000, 100000 };
    /* packed 8 KB (above what loom packs on the stack), 160 KB and 480 KB
     * (eager on one tcp rail) and 2.4 MB (rendezvous) */
    static const int bsend_counts[] = { 1000, 20000, 60000, 300000 };
    int rank, nprocs, peer, bsend_size = 8 << 20;
    struct layout l;
    void *bsend_buf;

    loom_test_init(&argc, &argv, "test_datatypes", 2, &rank, &nprocs);
    peer = loom_pair_peer(rank, nprocs);

    for (int i = 0; i < 4 && peer >= 0; i++) {
        /* 1 of every 2 doubles: 2.4 MB of data for 300000 */
        make_vector(&l, vector_counts[i], 1, 2);
        run_all_modes(&l, 1, rank, peer);
        layout_free(&l);
        /* blocks of 3 doubles every 7 */
        make_vector(&l, vector_counts[i] / 2 + 1, 3, 7);
        run_all_modes(&l, 1, rank, peer);
        layout_free(&l);
    }
    for (int i = 0; i < 3 && peer >= 0; i++) {
        make_indexed(&l);
        run_all_modes(&l, indexed_counts[i], rank, peer);
        layout_free(&l);
        make_struct(&l);
        run_all_modes(&l, struct_counts[i], rank, peer);
        layout_free(&l);
        make_resized(&l);
        run_all_modes(&l, resized_counts[i], rank, peer);
        layout_free(&l);
    }
    bsend_buf = loom_malloc((size_t) bsend_size);
    LOOM_CHECK_MPI(MPI_Buffer_attach(bsend_buf, bsend_size));
    buffered = 1;
    for (int i = 0; i < 4 && peer >= 0; i++) {
        make_vector(&l, bsend_counts[i], 1, 2);
        run_all_modes(&l, 1, rank, peer);
        layout_free(&l);
    }
    LOOM_CHECK_MPI(MPI_Buffer_detach(&bsend_buf, &bsend_size));
    free(bsend_buf);
    loom_test_pass();
}
