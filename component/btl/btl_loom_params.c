/*
 * Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
 *
 * loom's MCA parameters.  Every one is visible with
 * `ompi_info --param btl loom --level 9`; bad values are refused by name.
 */
#include "btl_loom.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static char *mca_btl_loom_rails_default = "auto";

/* A read-only parameter btl_loom_<name> of the given type; storage holds
 * its default. */
void mca_btl_loom_param_register(const char *name, const char *desc, mca_base_var_type_t type,
                                 int level, void *storage)
{
    (void)mca_base_component_var_register(&mca_btl_loom_component.super.btl_version, name, desc,
                                          type, NULL, 0, 0, level, MCA_BASE_VAR_SCOPE_READONLY,
                                          storage);
}

static void mca_btl_loom_reg_int(const char *name, const char *desc, int level, int *storage)
{
    mca_btl_loom_param_register(name, desc, MCA_BASE_VAR_TYPE_INT, level, storage);
}

/* Open MPI 4.1.0-4.1.4: osc rdma deadlocks on a dynamic window whose owner
 * is on another node when a BTL offers atomics (issue 10328, fixed in
 * 4.1.5); the version loom runs in, not the one it was built against. */
static bool mca_btl_loom_osc_deadlocks(void)
{
    int major = 0, minor = 0, release = 0;

    if (sscanf(opal_version_string, "%d.%d.%d", &major, &minor, &release) < 2) {
        return 4 == OPAL_MAJOR_VERSION; /* unknown: as the series built for */
    }
    return 4 == major && 1 == minor && release < 5;
}

/* btl_loom_atomics 0 where osc rdma would then abort (btl_loom_compat.h). */
static int mca_btl_loom_check_atomics_off(int setting)
{
    if (0 == setting && !MCA_BTL_LOOM_ATOMICS_MAY_BE_OFF) {
        opal_output(0, "btl loom: btl_loom_atomics 0 is refused on Open MPI %s: osc rdma would "
                    "then run MPI one-sided communication through its active-message emulation "
                    "over loom, which needs the sender of each message and aborts without it; "
                    "use -1 (the default) or 1", OPAL_VERSION);
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}

/* btl_loom_atomics (-1 auto, 0, 1): whether the BTL offers its atomics. */
static bool mca_btl_loom_atomics_on(int setting)
{
    return 1 == setting || (-1 == setting && !mca_btl_loom_osc_deadlocks());
}

/* Refuse a value outside [min, max], naming the parameter. */
int mca_btl_loom_check_range(const char *name, int value, int min, int max)
{
    if (value < min || value > max) {
        LOOM_HELP_SHOW(&mca_btl_loom_help, "param out of range",
                       "btl loom: invalid value %d for MCA parameter btl_loom_%s: must be "
                       "between %d and %d", value, name, min, max);
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}

int mca_btl_loom_params_register(void)
{
    mca_btl_loom_component_t *c = &mca_btl_loom_component;
    mca_btl_base_module_t *m = &mca_btl_loom_module_template.super;
    int rc = OPAL_SUCCESS;

    c->rails = mca_btl_loom_rails_default;
    mca_btl_loom_param_register("rails",
        "Rails (UCT interfaces) loom drives, as a comma separated list of "
        "transport:device, e.g. \"tcp:lo\", \"tcp:eth1,tcp:eth2\" or "
        "\"rc_verbs:rxe0:1,rc_verbs:rxe1:1\" (list them with `ucx_info -d`). Every "
        "process of a job must name the same transports in the same order. \"auto\" "
        "takes RDMA transports (rc_mlx5, dc_mlx5, rc_verbs) first, then TCP devices, "
        "never loopback or shared memory, preferring devices near the process, up to "
        "btl_loom_max_rails", MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_3, &c->rails);

    c->max_rails = 4;
    mca_btl_loom_reg_int("max_rails", "Largest number of rails btl_loom_rails=auto "
                         "selects (1-8)", OPAL_INFO_LVL_5, &c->max_rails);

    c->verbose = 0;
    mca_btl_loom_reg_int("verbose", "Verbosity of loom's diagnostics: 0 errors and "
                         "warnings only, 20 also rail choices, set-up and protocol fallbacks "
                         "(eager rings given up, messages dropped, rails back), 30 debug "
                         "(0-100)",
                         OPAL_INFO_LVL_9, &c->verbose);

    c->force_connect_to_ep = false;
    mca_btl_loom_param_register("connect_to_ep",
        "Connect rails endpoint to endpoint (addresses exchanged over loom's own "
        "messages) even where the transport can connect to interfaces; for testing the "
        "path that connect-to-ep transports such as rc_verbs always take",
        MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_9, &c->force_connect_to_ep);

    c->rails_repeat = false;
    mca_btl_loom_param_register("rails_repeat",
        "Testing: let btl_loom_rails name a device more than once (e.g. \"tcp:lo,tcp:lo\": "
        "several rails on one host without a second network device)",
        MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_9, &c->rails_repeat);

    c->tcp_seg_size = 1048576;
    mca_btl_loom_reg_int("tcp_seg_size", "On tcp rails, the largest message UCT sends in one "
                         "segment: bounds each checked write of a put or a served get (larger "
                         "segments mean fewer, cheaper writes) and, up to 512 KiB of data, loom's "
                         "eager limit and send size (0: UCX's default of 8 KiB; 1024-4194304)",
                         OPAL_INFO_LVL_5, &c->tcp_seg_size);
    c->atomics = -1;
    mca_btl_loom_reg_int("atomics",
        "Offer the BTL's atomics (run by the target's CPU), so that Open MPI's osc rdma runs "
        "MPI one-sided communication over loom: 1 on, 0 off, -1 on unless the Open MPI loom "
        "runs in is 4.1.0-4.1.4, whose osc rdma deadlocks on dynamic windows whose owner is "
        "on another node with any BTL that offers atomics (Open MPI issue 10328, fixed in "
        "4.1.5); off, osc rdma steps aside and one-sided communication needs osc pt2pt "
        "(4.1; on Open MPI 5.0, which has none, 0 is refused)", OPAL_INFO_LVL_4, &c->atomics);
    c->tcp_trust_network = false;
    mca_btl_loom_param_register("tcp_trust_network",
        "Rails whose NIC checks no memory keys (tcp) take raw puts: the target does not "
        "check where they write (a wrong or stale address, a forged key or a late write of "
        "a failed connection lands anyway). Off: loom checks every remote write at the "
        "target against its registered regions before placing a byte",
        MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_5, &c->tcp_trust_network);
    c->tcp_stream_copy = 512 << 10;
    mca_btl_loom_reg_int("tcp_stream_copy", "Checked writes of at least this many bytes "
                         "(rails without memory protection: loom copies each into place) are "
                         "copied with streaming stores, which bypass the cache: more bandwidth "
                         "into memory that is not in the cache, more latency into memory that "
                         "is (a buffer used again at once; see btl_loom_tcp_stream_reuse) (0: "
                         "never; else 65536-1073741824)",
                         OPAL_INFO_LVL_5, &c->tcp_stream_copy);
    c->tcp_stream_reuse = 16 << 20;
    mca_btl_loom_reg_int("tcp_stream_reuse", "A checked write that btl_loom_tcp_stream_copy "
                         "would stream is copied with ordinary stores if a write started at the "
                         "same address at most this many bytes of such writes before, and so is "
                         "probably still in the cache (a ping-pong's buffer, not a window of "
                         "many receives); the distance counts the write before it, so it is at "
                         "least btl_loom_tcp_stream_copy (0: stream every one; else up to "
                         "1073741824)",
                         OPAL_INFO_LVL_5, &c->tcp_stream_reuse);
    c->zcopy_threshold = 32768;
    mca_btl_loom_reg_int("zcopy_threshold", "Messages of at least this many bytes, from "
                         "contiguous memory, are sent from where they lie (zero-copy active "
                         "message) on rails that need no registration for it (tcp), unless "
                         "several rails keep copies to send again; smaller ones are copied "
                         "out at once (0: always copy; 512-1073741824)", OPAL_INFO_LVL_5,
                         &c->zcopy_threshold);
    c->tcp_sockbuf = 0;
    mca_btl_loom_reg_int("tcp_sockbuf", "On tcp rails, the send and receive buffer size "
                         "every socket asks for, in bytes, fixed (the kernel caps the request "
                         "at net.core.wmem_max and rmem_max, loom warns when it does, then "
                         "doubles it); 0: the kernel sizes them by each connection's traffic, "
                         "as btl tcp leaves them by default. Where ranks share cores, the "
                         "kernel's sizing after one pattern of bursts can slow later transfers "
                         "of another on the same connections; below the bandwidth-delay "
                         "product a fixed size slows every large transfer "
                         "(0 or 65536-1073741824)", OPAL_INFO_LVL_5, &c->tcp_sockbuf);
    c->tcp_keepalive = 20;
    mca_btl_loom_reg_int("tcp_keepalive", "On tcp rails, seconds after which a connection "
                         "with nothing to send, whose peer host stopped answering the "
                         "kernel's keepalive probes, fails (a peer busy computing still "
                         "answers them; 0: UCX's settings; else 4-3600)",
                         OPAL_INFO_LVL_5, &c->tcp_keepalive);

    c->yield_after = 50;
    mca_btl_loom_reg_int("yield_after", "Microseconds of progress that finds nothing to do "
                         "after which each further empty progress call yields the CPU "
                         "(sched_yield): on tcp and soft-RoCE rails the kernel's network "
                         "processing may be waiting for this core, and a rank spinning on it "
                         "starves the very transfers it waits for (0: never yield; else "
                         "1-1000000)", OPAL_INFO_LVL_5, &c->yield_after);

    c->progress_thread = false;
    mca_btl_loom_param_register("progress_thread",
        "Run a thread that sleeps on the rails' event descriptors and moves what loom does by "
        "itself (RDMA it serves or places, acknowledgements, the rail watch) while the "
        "application computes, so that a large send overlaps computation on tcp rails; "
        "messages, completions and peers' atomics still wait for the application's threads",
        MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_4, &c->progress_thread);
    c->block_when_idle = -1;
    mca_btl_loom_reg_int("block_when_idle", "A waiting rank whose progress found nothing to do "
                         "for btl_loom_block_after us sleeps on the rails' event descriptors "
                         "(up to 1 ms at a time) instead of polling, never inside MPI_Test, "
                         "MPI_Iprobe and the like (the application works between them) nor in "
                         "one-sided synchronization (osc's own progress moves it): -1 when "
                         "Open MPI runs the node oversubscribed (mpi_yield_when_idle), 0 never, "
                         "1 always",
                         OPAL_INFO_LVL_4, &c->block_when_idle);
    c->block_after = 200;
    mca_btl_loom_reg_int("block_after", "Microseconds a rank must wait, calling progress "
                         "without pause and finding nothing, before btl_loom_block_when_idle "
                         "puts it to sleep; calls more than 20 us apart, with as much of the "
                         "thread's CPU time between them (work, not time off the core), start "
                         "the count again.  Work of other components (osc pt2pt on a window of the "
                         "rank's own) looks idle to loom, and each sleep costs it up to 1 ms "
                         "(1-1000000)", OPAL_INFO_LVL_5, &c->block_after);

    c->stripe_threshold = 262144;
    mca_btl_loom_reg_int("stripe_threshold", "Puts and gets of at least this many bytes are "
                         "cut into chunks striped over every rail to the peer (0: never "
                         "stripe; else 4096-1073741824)", OPAL_INFO_LVL_4, &c->stripe_threshold);
    c->stripe_chunk = 131072;
    mca_btl_loom_reg_int("stripe_chunk", "Bytes per striped chunk (4096-67108864; capped by "
                         "the rails' RDMA limit)", OPAL_INFO_LVL_4, &c->stripe_chunk);
    c->stripe_depth = 4;
    mca_btl_loom_reg_int("stripe_depth", "Striped chunks in flight per rail and peer "
                         "(1-64)", OPAL_INFO_LVL_4, &c->stripe_depth);
    c->stripe_queue = 5000;
    mca_btl_loom_reg_int("stripe_queue", "Microseconds of data a rail keeps queued to one "
                         "peer at most, at its measured rate: a slow rail takes fewer than "
                         "stripe_depth chunks at once (one at least), so that what follows "
                         "them on the rail does not wait long (0: stripe_depth on every rail; "
                         "0-10000000)", OPAL_INFO_LVL_4, &c->stripe_queue);

    c->rail_timeout = 1000;
    mca_btl_loom_reg_int("rail_timeout", "Milliseconds a rail may have striped chunks in "
                         "flight to a peer without any landing, while other rails to it do, "
                         "before loom takes it out of use for that peer and re-drives its "
                         "chunks on the other rails; a peer silent on every rail (busy, or "
                         "not calling MPI) is never failed for it; a rail whose port or "
                         "device is down leaves use at once (0: only when the transport "
                         "reports the failure; else 10-600000)",
                         OPAL_INFO_LVL_4, &c->rail_timeout);
    c->am_rail = -1;
    mca_btl_loom_reg_int("am_rail", "Rail that carries messages (and small transfers) to "
                         "every peer while it works; -1 spreads peers over the rails",
                         OPAL_INFO_LVL_5, &c->am_rail);

    c->am_policy = "fixed";
    mca_btl_loom_param_register("am_policy",
        "How messages to a peer pick their rail: \"fixed\" (one rail per peer, as "
        "btl_loom_am_rail says; keeps the eager rings in use) or \"round_robin\" (each "
        "message on the next rail; the receiver restores the order; messages then go by "
        "active message, not by eager ring)", MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_5,
        &c->am_policy);

    c->msg_window = 64;
    mca_btl_loom_reg_int("msg_window", "With several rails: messages to a peer kept until "
                         "it acknowledged them, so that they can be sent again on another "
                         "rail if theirs fails; more wait until acknowledgements come (0: "
                         "keep none, messages on a failing rail may be lost; else 4-65536)",
                         OPAL_INFO_LVL_5, &c->msg_window);
    c->rail_rejoin = 2000;
    mca_btl_loom_reg_int("rail_rejoin", "Milliseconds between attempts to bring a failed "
                         "rail back into use for a peer, on a fresh connection: probed (rails "
                         "that connect to interfaces, such as tcp) or with a fresh endpoint's "
                         "address announced (rails that connect endpoint to endpoint, such as "
                         "rc_verbs) (0: never; else 10-600000)",
                         OPAL_INFO_LVL_5, &c->rail_rejoin);

    c->free_list_num = 8;
    mca_btl_loom_reg_int("free_list_num", "Send fragments allocated at start-up (>= 0)",
                         OPAL_INFO_LVL_9, &c->free_list_num);
    c->free_list_max = -1;
    mca_btl_loom_reg_int("free_list_max", "Most send fragments ever allocated (-1: no "
                         "limit)", OPAL_INFO_LVL_9, &c->free_list_max);
    c->free_list_inc = 32;
    mca_btl_loom_reg_int("free_list_inc", "Send fragments allocated at a time when "
                         "more are needed (>= 1)", OPAL_INFO_LVL_9, &c->free_list_inc);

    /* The generic BTL parameters: 0 for eager_limit, max_send_size, latency and
     * bandwidth means "derive from the rails" at init. */
    m->btl_exclusivity       = MCA_BTL_EXCLUSIVITY_DEFAULT;
    m->btl_eager_limit       = 0;
    m->btl_rndv_eager_limit  = 0;
    m->btl_max_send_size     = 0;
    m->btl_rdma_pipeline_send_length = 0;
    m->btl_rdma_pipeline_frag_size   = 0;
    m->btl_min_rdma_pipeline_size    = 0;
    m->btl_latency           = 0;
    m->btl_bandwidth         = 0;
    m->btl_flags             = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_PUT | MCA_BTL_FLAGS_GET |
                               MCA_BTL_FLAGS_SEND_INPLACE | MCA_BTL_FLAGS_ATOMIC_OPS |
                               MCA_BTL_FLAGS_ATOMIC_FOPS;
    /* run by the target's CPU: coherent with its own CPU atomics (GLOB) */
    m->btl_atomic_flags      = MCA_BTL_ATOMIC_SUPPORTS_ADD | MCA_BTL_ATOMIC_SUPPORTS_AND |
                               MCA_BTL_ATOMIC_SUPPORTS_OR | MCA_BTL_ATOMIC_SUPPORTS_XOR |
                               MCA_BTL_ATOMIC_SUPPORTS_LAND | MCA_BTL_ATOMIC_SUPPORTS_LOR |
                               MCA_BTL_ATOMIC_SUPPORTS_LXOR | MCA_BTL_ATOMIC_SUPPORTS_SWAP |
                               MCA_BTL_ATOMIC_SUPPORTS_MIN | MCA_BTL_ATOMIC_SUPPORTS_MAX |
                               MCA_BTL_ATOMIC_SUPPORTS_CSWAP | MCA_BTL_ATOMIC_SUPPORTS_32BIT |
                               MCA_BTL_ATOMIC_SUPPORTS_GLOB;
    rc = mca_btl_base_param_register(&c->super.btl_version, m);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (!mca_btl_loom_atomics_on(c->atomics)) {
        m->btl_flags       &= ~(MCA_BTL_FLAGS_ATOMIC_OPS | MCA_BTL_FLAGS_ATOMIC_FOPS);
        m->btl_atomic_flags = 0;
    }

    if (OPAL_SUCCESS != mca_btl_loom_check_range("max_rails", c->max_rails, 1,
                                                 LOOM_MAX_RAILS) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("verbose", c->verbose, 0, 100) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("atomics", c->atomics, -1, 1) ||
        OPAL_SUCCESS != mca_btl_loom_check_atomics_off(c->atomics) ||
        (0 != c->tcp_seg_size &&
         OPAL_SUCCESS != mca_btl_loom_check_range("tcp_seg_size", c->tcp_seg_size, 1024,
                                                  1 << 22)) ||
        (0 != c->tcp_sockbuf &&
         OPAL_SUCCESS != mca_btl_loom_check_range("tcp_sockbuf", c->tcp_sockbuf, 65536,
                                                  1 << 30)) ||
        (0 != c->zcopy_threshold &&
         OPAL_SUCCESS != mca_btl_loom_check_range("zcopy_threshold", c->zcopy_threshold, 512,
                                                  1 << 30)) ||
        (0 != c->tcp_keepalive &&
         OPAL_SUCCESS != mca_btl_loom_check_range("tcp_keepalive", c->tcp_keepalive, 4,
                                                  3600)) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("yield_after", c->yield_after, 0, 1000000) ||
        (0 != c->tcp_stream_copy &&
         OPAL_SUCCESS != mca_btl_loom_check_range("tcp_stream_copy", c->tcp_stream_copy, 65536,
                                                  1 << 30)) ||
        (0 != c->tcp_stream_reuse &&
         OPAL_SUCCESS != mca_btl_loom_check_range("tcp_stream_reuse", c->tcp_stream_reuse,
                                                  (0 != c->tcp_stream_copy) ? c->tcp_stream_copy
                                                                            : 65536,
                                                  1 << 30)) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("block_when_idle", c->block_when_idle, -1, 1) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("block_after", c->block_after, 1, 1000000) ||
        (0 != c->stripe_threshold &&
         OPAL_SUCCESS != mca_btl_loom_check_range("stripe_threshold", c->stripe_threshold,
                                                  4096, 1 << 30)) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("stripe_chunk", c->stripe_chunk, 4096,
                                                 1 << 26) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("stripe_depth", c->stripe_depth, 1, 64) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("stripe_queue", c->stripe_queue, 0, 10000000) ||
        (0 != c->rail_timeout &&
         OPAL_SUCCESS != mca_btl_loom_check_range("rail_timeout", c->rail_timeout, 10,
                                                  600000)) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("am_rail", c->am_rail, -1,
                                                 LOOM_MAX_RAILS - 1) ||
        (0 != c->msg_window &&
         OPAL_SUCCESS != mca_btl_loom_check_range("msg_window", c->msg_window, 4, 65536)) ||
        (0 != c->rail_rejoin &&
         OPAL_SUCCESS != mca_btl_loom_check_range("rail_rejoin", c->rail_rejoin, 10,
                                                  600000)) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("free_list_num", c->free_list_num, 0,
                                                 1 << 20) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("free_list_max", c->free_list_max, -1,
                                                 1 << 30) ||
        OPAL_SUCCESS != mca_btl_loom_check_range("free_list_inc", c->free_list_inc, 1,
                                                 1 << 20)) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL == c->am_policy ||
        (0 != strcmp(c->am_policy, "fixed") && 0 != strcmp(c->am_policy, "round_robin"))) {
        LOOM_HELP_SHOW(&mca_btl_loom_help, "param am policy",
                       "btl loom: invalid value \"%s\" for MCA parameter btl_loom_am_policy: "
                       "give \"fixed\" or \"round_robin\"",
                       NULL != c->am_policy ? c->am_policy : "");
        return OPAL_ERR_BAD_PARAM;
    }
    if (NULL == c->rails || '\0' == c->rails[0]) {
        LOOM_HELP_SHOW(&mca_btl_loom_help, "rails empty",
                       "btl loom: MCA parameter btl_loom_rails is empty: give \"auto\" "
                       "or a list of transport:device");
        return OPAL_ERR_BAD_PARAM;
    }
    return OPAL_SUCCESS;
}

/* A number as Open MPI reads one (base 0, an optional k, m or g after
 * it): false for anything else, and for a number the type cannot hold. */
static bool mca_btl_loom_raw_number_ok(const char *raw, mca_base_var_type_t type)
{
    bool is_int = MCA_BASE_VAR_TYPE_INT == type || MCA_BASE_VAR_TYPE_INT32_T == type;
    unsigned long long value;
    const char *p = raw;
    char *end;
    int shift = 0;

    while (' ' == *p || '\t' == *p) {
        ++p;
    }
    if ('-' == *p) {
        /* only signed parameters take one, and loom's take -1 at most */
        return is_int && 0 == strcmp(p, "-1");
    }
    errno = 0;
    value = strtoull(p, &end, 0);
    if (end == p || ERANGE == errno) {
        return false;
    }
    switch (*end) {
    case 'g': case 'G': shift = 30; ++end; break;
    case 'm': case 'M': shift = 20; ++end; break;
    case 'k': case 'K': shift = 10; ++end; break;
    default: break;
    }
    if ('\0' != *end || (0 != shift && value > (ULLONG_MAX >> shift))) {
        return false;
    }
    value <<= shift;
    return !is_int || value <= (unsigned long long)INT_MAX;
}

/*
 * Open MPI turns a numeric parameter's value that is no number ("abc") or
 * that overflows into 0 or -1 without a word, and loom would take that for
 * "the default".  The values as the user gave them (mpirun's --mca and the
 * environment both end up in OMPI_MCA_ variables) are checked here, and a
 * bad one is refused by name.  Values from parameter files are read by
 * Open MPI alone.
 */
int mca_btl_loom_check_raw_numbers(void)
{
    static const char prefix[] = "OMPI_MCA_btl_loom_";
    const mca_base_var_t *var;
    char name[128];
    const char *eq;
    char **env;
    size_t len;
    int index;

    for (env = environ; NULL != env && NULL != *env; ++env) {
        if (0 != strncmp(*env, prefix, sizeof(prefix) - 1) ||
            NULL == (eq = strchr(*env, '='))) {
            continue;
        }
        len = (size_t)(eq - *env) - (sizeof(prefix) - 1);
        if (len >= sizeof(name)) {
            continue;
        }
        memcpy(name, *env + sizeof(prefix) - 1, len);
        name[len] = '\0';
        index = mca_base_var_find("opal", "btl", "loom", name);
        if (index < 0 || OPAL_SUCCESS != mca_base_var_get(index, &var) ||
            MCA_BASE_VAR_TYPE_STRING == var->mbv_type ||
            MCA_BASE_VAR_TYPE_BOOL == var->mbv_type ||
            MCA_BASE_VAR_TYPE_DOUBLE == var->mbv_type || NULL != var->mbv_enumerator) {
            continue; /* not one of loom's numbers: Open MPI checks it */
        }
        if (!mca_btl_loom_raw_number_ok(eq + 1, var->mbv_type)) {
            LOOM_HELP_SHOW(&mca_btl_loom_help, "param not a number",
                           "btl loom: invalid value \"%s\" for MCA parameter btl_loom_%s: "
                           "not a number this parameter can hold", eq + 1, name);
            return OPAL_ERR_BAD_PARAM;
        }
    }
    return OPAL_SUCCESS;
}
