/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * What btl loom's and coll loom's performance variables have in common: a
 * read-only unsigned long, readable at any time, bound to no object.  A
 * header of its own because the two components are separate objects that
 * link nothing of each other.
 */
#ifndef LOOM_PVAR_H
#define LOOM_PVAR_H

#include "opal/mca/base/mca_base_pvar.h"

/* Register one such variable of component (its name is prefixed with the
 * component's), of var_class (MCA_BASE_PVAR_CLASS_COUNTER or _LEVEL), read
 * by read with ctx as the variable's ctx. */
static inline void loom_pvar_register(const mca_base_component_t *component, const char *name,
                                      const char *description, int var_class,
                                      mca_base_get_value_fn_t read, void *ctx)
{
    (void)mca_base_component_pvar_register(component, name, description, OPAL_INFO_LVL_4,
                                           var_class, MCA_BASE_VAR_TYPE_UNSIGNED_LONG, NULL,
                                           MCA_BASE_VAR_BIND_NO_OBJECT,
                                           MCA_BASE_PVAR_FLAG_READONLY |
                                           MCA_BASE_PVAR_FLAG_CONTINUOUS,
                                           read, NULL, NULL, ctx);
}

#endif
