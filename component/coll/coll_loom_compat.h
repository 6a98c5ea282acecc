/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * What differs between the Open MPI series coll loom builds against: 4.1
 * (coll component 2.0.0) and 5.0 (2.4.0), and where opal's mutex is
 * declared (opal/threads/ in 4.1, opal/mca/threads/ in 5.0).  The module's
 * functions, the next component's functions it keeps and calls, and
 * everything else it calls in Open MPI are the same in both.
 */
#ifndef MCA_COLL_LOOM_COMPAT_H
#define MCA_COLL_LOOM_COMPAT_H

#include "ompi_config.h"
#include "ompi/mca/coll/coll.h"
#include "common/loom_compat.h"

#if OMPI_MAJOR_VERSION >= 5
#include "opal/mca/threads/mutex.h"
typedef mca_coll_base_component_2_4_0_t mca_coll_loom_base_component_t;
#define MCA_COLL_LOOM_BASE_VERSION MCA_COLL_BASE_VERSION_2_4_0
#define MCA_COLL_LOOM_INTERFACE    "coll component 2.4.0"
#define MCA_COLL_LOOM_DECLSPEC     OMPI_DECLSPEC
#else
#include "opal/threads/mutex.h"
typedef mca_coll_base_component_2_0_0_t mca_coll_loom_base_component_t;
#define MCA_COLL_LOOM_BASE_VERSION MCA_COLL_BASE_VERSION_2_0_0
#define MCA_COLL_LOOM_INTERFACE    "coll component 2.0.0"
#define MCA_COLL_LOOM_DECLSPEC     OMPI_MODULE_DECLSPEC
#endif

#endif
