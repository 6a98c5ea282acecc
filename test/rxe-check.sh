#!/bin/bash
# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# loom over real rc_verbs: boots the soft-RoCE guest (building it once, cached
# outside the clone) and runs test/rxe-guest-suite.sh there.  Skips (77),
# with a SKIP line saying why, when the guest cannot run here (not root, no
# qemu).
set -u
src=${LOOM_SRCDIR:?run through make check}
"$src/contrib/rxe-guest-run.sh" -t "${LOOM_RXE_TIMEOUT:-1500}" "$src/test/rxe-guest-suite.sh"
exit $?
