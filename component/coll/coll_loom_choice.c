/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * Measured selection's rule (coll_loom_choice.h).
 */
#include "coll_loom_choice.h"

int mca_coll_loom_choice_add(mca_coll_loom_choice_t *choice, double loom_us, double next_us,
                             unsigned max_pairs, int margin)
{
    if (loom_us >= MCA_COLL_LOOM_CHOICE_FAILED_US) {
        choice->decided = MCA_COLL_LOOM_CHOICE_NEXT;
        return choice->decided;
    }
    if (!choice->warm) {
        choice->warm = 1;
        return choice->decided;
    }
    /* Other work only ever adds time to a call: the best of each side is
     * its own cost, and one call slowed by another process weighs nothing */
    if (0 == choice->pairs || loom_us < choice->loom_us) {
        choice->loom_us = loom_us;
    }
    if (0 == choice->pairs || next_us < choice->next_us) {
        choice->next_us = next_us;
    }
    choice->pairs++;
    if (choice->pairs >= max_pairs ||
        choice->loom_us >= MCA_COLL_LOOM_CHOICE_CLEAR * choice->next_us ||
        choice->next_us >= MCA_COLL_LOOM_CHOICE_CLEAR * choice->loom_us) {
        choice->decided = (choice->loom_us < choice->next_us * (100.0 + margin) / 100.0)
                              ? MCA_COLL_LOOM_CHOICE_LOOM
                              : MCA_COLL_LOOM_CHOICE_NEXT;
    }
    return choice->decided;
}

unsigned mca_coll_loom_choice_class(uint64_t bytes)
{
    unsigned bits = 0;

    while (0 != bytes) {
        bytes >>= 1;
        ++bits;
    }
    return bits;
}
