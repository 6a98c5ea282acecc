/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Measured selection's rule (coll_loom_select.c), free of Open MPI types so
 * that a unit test can drive it: a size class of a collective on a
 * communicator is measured in pairs of calls, one through coll loom and one
 * through the next component, each pair timed at its slowest rank; after
 * each pair the rule says whether it knows which is faster.  The first pair
 * only warms both up: on the virtual cluster a class's first broadcast
 * through coll loom took 2-4x its later ones (a chain's first pushes
 * between ranks that had not talked yet), and decided every class wrongly.
 */
#ifndef MCA_COLL_LOOM_CHOICE_H
#define MCA_COLL_LOOM_CHOICE_H

#include <stdint.h>

/* A pair this lopsided (either way) decides at once: one more pair would
 * cost more than a wrong guess could, and noise on a loaded node stays
 * well below it. */
#define MCA_COLL_LOOM_CHOICE_CLEAR 2.0

/* A call through coll loom that failed weighs this much: never finishing. */
#define MCA_COLL_LOOM_CHOICE_FAILED_US 1e30

enum {
    MCA_COLL_LOOM_CHOICE_MEASURING = 0,
    MCA_COLL_LOOM_CHOICE_LOOM      = 1,  /* coll loom takes the class */
    MCA_COLL_LOOM_CHOICE_NEXT      = -1, /* the next component does */
};

typedef struct mca_coll_loom_choice {
    double   loom_us;    /* coll loom's best call of the pairs */
    double   next_us;    /* the next component's */
    double   pending_us; /* this rank's time of the current pair's coll loom call */
    uint16_t pairs;      /* pairs measured */
    uint8_t  second;     /* 1: the current pair's next call is the next component's */
    uint8_t  warm;       /* 1: the warm-up pair is behind */
    int8_t   decided;    /* MCA_COLL_LOOM_CHOICE_* */
} mca_coll_loom_choice_t;

/* Adds a pair (each side its slowest rank's time, the same at every rank)
 * and returns the decision: coll loom where its best time was below the
 * next component's best weighed by (100 + margin) percent (margin 0: only
 * where it was faster, the next component on a tie), the next component at
 * once where coll loom failed; measuring after the warm-up pair, and while
 * pairs < max_pairs and neither best was twice the other. */
int mca_coll_loom_choice_add(mca_coll_loom_choice_t *choice, double loom_us, double next_us,
                             unsigned max_pairs, int margin);

/* The size class of a call of this many bytes: its bit length. */
unsigned mca_coll_loom_choice_class(uint64_t bytes);

#endif
