# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# The latency of the layers under loom and pml ucx, for loom-bench.sh
# --layers (sourced; uses its rails, ucx_tls, ucx_devices, bindir, outdir,
# rounds, bench_args, loom_extra and say).  More configurations, run once
# per round beside the MPI ones:
#   uct     ucx_perftest -t am_lat over loom's rail (UCT's own floor)
#   engine  bench_am_lat: loom's engine alone, the same ping-pong with no MPI;
#           its rounds alternate with raw UCT messages over the same
#           connection, inline (raw) and by copy as loom sends (rawcopy):
#           UCT's floor without ucx_perftest's clock reads
#   ucp     ucx_perftest -t tag_lat with pml ucx's UCX_TLS and devices
#   put     ucx_perftest -t put_lat -D zcopy over loom's rail, with loom's
#           tcp segment, at 512 KiB and 1 MiB (those up to --max): how long
#           UCT itself takes to move the bytes one way, with no protocol
#           around them, the floor of every stack on UCT at the sizes where
#           a rendezvous's handshake no longer dominates
# The 8 B table then splits each MPI figure into its transport and what the
# MPI layers on top add: loom - engine (ob1 and the BTL glue) against
# ucx - ucp (pml ucx), and engine - uct against ucp - uct; the put table
# sets every stack's whole message beside UCT's put of the same size.

layers_size=8
layers_iters=${LOOM_BENCH_LAYER_ITERS:-20000}
layers_put_iters=${LOOM_BENCH_PUT_ITERS:-1000}
layers_engine="$bindir/../unit/bench_am_lat"

layers_check() {
    if [[ "$rails" == *,* ]]; then
        echo "error: --layers measures one rail; --rails $rails has several" >&2
        exit 2
    fi
    if ! command -v ucx_perftest > /dev/null; then
        echo "error: --layers needs ucx_perftest (Debian package ucx-utils)" >&2
        exit 1
    fi
    if [ ! -x "$layers_engine" ]; then
        echo "error: $layers_engine not found (it is built with the MPI benchmarks)" >&2
        exit 1
    fi
    layers_tl=${rails%%:*}
    layers_dev=${rails#*:}
    layers_put_setup
    # the server on the second core, the client on the first, as mpirun
    # --bind-to core places ranks 1 and 0
    if [ "${LOOM_BENCH_BIND:-core}" = none ]; then
        layers_server_bind=()
        layers_client_bind=()
        layers_cores=none
    else
        layers_server_bind=(-c 1)
        layers_client_bind=(-c 0)
        layers_cores=0,1
    fi
}

layers_say_commands() {
    local common="-s $layers_size -n $layers_iters"
    say "#   uct: ucx_perftest [127.0.0.1] -t am_lat -x $layers_tl -d $layers_dev $common" \
        "${layers_server_bind[*]:+(server ${layers_server_bind[*]}, client ${layers_client_bind[*]})}"
    say "#   engine: LOOM_BENCH_RAILS=$rails LOOM_BENCH_CORES=$layers_cores" \
        "$layers_engine $layers_size $layers_iters 1" \
        "(raw, rawcopy: its rounds of UCT am_short, am_bcopy)"
    say "#   ucp: UCX_TLS=$ucx_tls UCX_NET_DEVICES=$ucx_devices ucx_perftest [127.0.0.1]" \
        "-t tag_lat $common"
    if [ "${#layers_put_sizes[@]}" -gt 0 ]; then
        say "#   put: ${layers_put_env[*]:+${layers_put_env[*]} }ucx_perftest [127.0.0.1]" \
            "${layers_put_args[*]} -s SIZE -n $layers_put_iters (SIZE ${layers_put_sizes[*]})"
    fi
}

# A size as the benchmarks and MCA parameters take it (a number, or with a
# K, M or G suffix) in bytes, or nothing if it is neither.
layers_bytes() {
    local num=${1%[kKmMgG]} shift_by=0
    case "$1" in
    *[kK]) shift_by=10 ;;
    *[mM]) shift_by=20 ;;
    *[gG]) shift_by=30 ;;
    esac
    if [[ "$num" =~ ^[0-9]+$ ]]; then
        echo $((10#$num << shift_by))
    fi
}

# The sizes of the put layer (those the MPI runs reach; none on rails
# without a put, ud) and, on tcp, the segment loom's rail has
# (btl_loom_tcp_seg_size, default 1 MiB as in btl_loom_params.c, from
# LOOM_BENCH_LOOM_ARGS or the environment), so that UCT's put moves the
# bytes as it does under loom.
layers_put_setup() {
    local max=4194304 seg=${OMPI_MCA_btl_loom_tcp_seg_size:-1048576} i size word
    if [ "${#bench_args[@]}" -ge 2 ]; then
        max=$(layers_bytes "${bench_args[1]}")
    fi
    for ((i = 0; i < ${#loom_extra[@]}; i++)); do
        word=${loom_extra[i]}
        if [ "$word" = btl_loom_tcp_seg_size ] && [ $((i + 1)) -lt ${#loom_extra[@]} ]; then
            seg=${loom_extra[i + 1]}
        elif [[ "$word" == OMPI_MCA_btl_loom_tcp_seg_size=* ]]; then
            seg=${word#*=}
        fi
    done
    seg=$(layers_bytes "$seg")
    layers_put_sizes=()
    if [ -z "$max" ] || [ -z "$seg" ]; then
        echo "WARNING: --layers: cannot read --max or btl_loom_tcp_seg_size as a size;" \
            "the put layer is left out" >&2
        return
    fi
    if [[ "$layers_tl" != ud* ]]; then
        for size in 524288 1048576; do
            if [ "$size" -le "$max" ]; then
                layers_put_sizes+=("$size")
            fi
        done
    fi
    layers_put_env=()
    if [ "$layers_tl" = tcp ] && [ "$seg" -ne 0 ]; then
        # loom's receive segment holds at least 64 KiB (rail_iface.c)
        layers_put_env=("UCX_TCP_TX_SEG_SIZE=$seg"
                        "UCX_TCP_RX_SEG_SIZE=$((seg < 65536 ? 65536 : seg))")
    fi
    layers_put_args=(-t put_lat -D zcopy -x "$layers_tl" -d "$layers_dev")
}

# One ucx_perftest ping-pong of size $2, $3 iterations, between a server
# and a client process on loopback; its one-way latency (us) goes to $1.
# The client tries again while the server is not listening yet.
layers_perftest() {
    local out=$1 size=$2 iters=$3 port=$((20000 + RANDOM % 20000)) try server rc=1
    shift 3
    timeout -k 5 300 ucx_perftest -p "$port" ${layers_server_bind[@]+"${layers_server_bind[@]}"} \
        -s "$size" -n "$iters" "$@" > "$out.server" 2>&1 &
    server=$!
    for try in $(seq 1 50); do
        rc=0
        timeout -k 5 300 ucx_perftest 127.0.0.1 -p "$port" \
            ${layers_client_bind[@]+"${layers_client_bind[@]}"} \
            -s "$size" -n "$iters" "$@" > "$out.client" 2>&1 || rc=$?
        if [ "$rc" -eq 0 ] || ! grep -q "Connection refused" "$out.client"; then
            break
        fi
        sleep 0.2
    done
    if [ "$rc" -ne 0 ]; then
        kill "$server" 2> /dev/null # it would wait for a client for good
    fi
    wait "$server"
    # Final: iterations, median, average, overall average (us), ...
    awk '$1 == "Final:" { print $5 }' "$out.client" > "$out"
    [ -s "$out" ]
}

# UCT's put one way at each size of the put layer, as "size us" lines in
# $1; a size that fails is left out with a warning, and the layer fails
# only if every size did.
layers_put() {
    local out=$1 size
    : > "$out.all"
    for size in "${layers_put_sizes[@]}"; do
        if (
            for var in ${layers_put_env[@]+"${layers_put_env[@]}"}; do
                export "${var?}"
            done
            layers_perftest "$out.$size" "$size" "$layers_put_iters" "${layers_put_args[@]}"
        ); then
            echo "$size $(cat "$out.$size")" >> "$out.all"
        else
            say "WARNING: layer 'put' failed at $size B; output in $out.$size.*"
        fi
    done
    mv -f "$out.all" "$out"
    [ -s "$out" ]
}

# Round $1 of the layer configurations; a failed one is left out of its
# median with a warning, as the MPI ones are.
layers_round() {
    local round=$1 cfg file rc
    for cfg in uct engine ucp put; do
        if [ "$cfg" = put ] && [ "${#layers_put_sizes[@]}" -eq 0 ]; then
            continue
        fi
        file="$outdir/layer-$cfg.r$round.txt"
        echo "round $round/$rounds: running the $cfg layer ..." >&2
        rc=0
        case "$cfg" in
        uct) layers_perftest "$file" "$layers_size" "$layers_iters" \
                 -t am_lat -x "$layers_tl" -d "$layers_dev" || rc=$? ;;
        ucp) UCX_TLS=$ucx_tls UCX_NET_DEVICES=$ucx_devices \
                 layers_perftest "$file" "$layers_size" "$layers_iters" -t tag_lat || rc=$? ;;
        put) layers_put "$file" || rc=$? ;;
        engine)
            LOOM_BENCH_RAILS=$rails LOOM_BENCH_CORES=$layers_cores timeout -k 5 300 \
                "$layers_engine" "$layers_size" "$layers_iters" 1 > "$file.out" 2>&1 || rc=$?
            sed -n 's/^bench_am_lat: .* B one-way \([0-9.]*\) us.*/\1/p' "$file.out" > "$file"
            sed -n 's/^bench_am_lat: .* raw UCT one-way \([0-9.]*\) us.*/\1/p' "$file.out" \
                > "$outdir/layer-raw.r$round.txt"
            sed -n 's/^bench_am_lat: .* raw UCT by copy one-way \([0-9.]*\) us.*/\1/p' \
                "$file.out" > "$outdir/layer-rawcopy.r$round.txt"
            if [ "$rc" -eq 0 ] && [ ! -s "$file" ]; then
                rc=1
            fi ;;
        esac
        if [ "$rc" -ne 0 ]; then
            say "WARNING: layer '$cfg' failed (exit $rc, round $round), left out of its" \
                "median; output in $file.*"
            rm -f "$file"
        fi
    done
}

# Every round's 8 B one-way latency as "name 8 us" lines: the layers' own
# files, and the MPI stacks' 8 B rows.
layers_values() {
    local name
    for name in uct raw rawcopy engine ucp; do
        cat "$outdir/layer-$name".r*.txt 2>/dev/null |
            awk -v name="$name" 'NF { print name, 8, $1 }'
    done
    for name in loom ucx; do
        cat "$outdir/latency-$name".r*.txt 2>/dev/null |
            awk -v name="$name" '$1 == 8 && NF >= 2 { print name, 8, $2 }'
    done
}

layers_table() {
    local name size us uct=n/a raw=n/a rawcopy=n/a engine=n/a loom=n/a ucp=n/a ucx=n/a
    while read -r name size us; do
        printf -v "$name" '%s' "$us"
    done < <(layers_values | medians)
    awk -v uct="$uct" -v raw="$raw" -v rawcopy="$rawcopy" -v engine="$engine" -v ucp="$ucp" -v loom="$loom" -v ucx="$ucx" \
        -v rounds="$rounds" -v tl="$layers_tl" '
        function ok(x) { return x != "n/a" && x != "" }
        function ratio(a, b) { return (ok(a) && ok(b) && b + 0 > 0) ? sprintf("%.2f", a / b) : "n/a" }
        function diff(a, b) { return (ok(a) && ok(b)) ? sprintf("%+.2f", a - b) : "n/a" }
        BEGIN {
            printf "\n# 8 B one-way latency by layer (us), median of %d runs\n", rounds
            printf "%-44s %10s %10s %10s\n", "# layer", "us", "x uct", "added"
            printf "%-44s %10s %10s %10s\n", "uct: UCT am_lat over " tl, uct, "1.00", ""
            printf "%-44s %10s %10s %10s\n", "raw: UCT am_short in the engine bench", raw,
                   ratio(raw, uct), diff(raw, uct)
            printf "%-44s %10s %10s %10s\n", "rawcopy: the same by am_bcopy, as loom", rawcopy,
                   ratio(rawcopy, uct), diff(rawcopy, raw)
            printf "%-44s %10s %10s %10s\n", "engine: loom engine alone", engine,
                   ratio(engine, uct), diff(engine, ok(rawcopy) ? rawcopy : uct)
            printf "%-44s %10s %10s %10s\n", "loom: pml ob1 + btl loom on the engine", loom,
                   ratio(loom, uct), diff(loom, engine)
            printf "%-44s %10s %10s %10s\n", "ucp: UCP tag_lat", ucp, ratio(ucp, uct),
                   diff(ucp, uct)
            printf "%-44s %10s %10s %10s\n", "ucx: pml ucx on UCP", ucx, ratio(ucx, uct),
                   diff(ucx, ucp)
        }'
}

# Every round's one-way latency at the put layer's sizes as "name size us"
# lines: UCT's put, and each MPI stack's message of that size.
layers_put_values() {
    cat "$outdir"/layer-put.r*.txt 2>/dev/null | awk 'NF == 2 { print "put", $1, $2 }'
    runs_of bench_latency | awk -v sizes="${layers_put_sizes[*]}" '
        BEGIN { n = split(sizes, sz, " "); for (i = 1; i <= n; i++) { want[sz[i]] = 1 } }
        $2 in want'
}

layers_put_table() {
    if [ "${#layers_put_sizes[@]}" -eq 0 ]; then
        return
    fi
    layers_put_values | medians |
        awk -v rounds="$rounds" -v configs="${configs[*]}" -v sizes="${layers_put_sizes[*]}" \
            -v tl="$layers_tl" '
        function ok(x) { return x != "n/a" && x != "" }
        function val(c, s) { return ((c, s) in v) ? v[c, s] : "n/a" }
        function ratio(a, b) { return (ok(a) && ok(b) && b + 0 > 0) ? sprintf("%.2f", a / b) : "n/a" }
        { v[$1, $2] = $3 }
        END {
            nc = split(configs, cfgs, " ")
            ns = split(sizes, sz, " ")
            printf "\n# one-way latency (us) beside UCT'"'"'s own put over %s of the same size\n", tl
            printf "# (ucx_perftest put_lat: the bytes alone, no rendezvous), median of %d runs\n",
                   rounds
            printf "%-10s %10s", "# Size", "put"
            for (c = 1; c <= nc; c++) { printf " %10s %8s", cfgs[c], "x put" }
            printf "\n"
            for (i = 1; i <= ns; i++) {
                printf "%-10s %10s", sz[i], val("put", sz[i])
                for (c = 1; c <= nc; c++) {
                    stack = val(cfgs[c], sz[i])
                    printf " %10s %8s", stack, ratio(stack, val("put", sz[i]))
                }
                printf "\n"
            }
        }'
}
