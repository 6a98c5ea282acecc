# Copyright (c) 2026 The loom developers.  SPDX-License-Identifier: BSD-3-Clause
# Sourced by test/mpich/mpich-tests.sh (not run; test/mpich-check.sh calls that script):
# fetching, building and choosing the entries of the MPICH test suite.

# $1 a directory: Debian's mpich source tarball downloaded into it, through
# the machine's own apt sources turned into deb-src ones (in a private apt
# state, so that the machine's own lists and sources stay as they are).
mpich_fetch_source() {
    local dest=$1 apt=$1/apt f
    mkdir -p "$apt/sources.list.d" "$apt/lists/partial" "$apt/cache/archives/partial"
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] && sed 's/^Types:.*/Types: deb-src/' "$f" >"$apt/sources.list.d/${f##*/}"
    done
    [ -f /etc/apt/sources.list ] &&
        sed -n 's/^deb[ \t]/deb-src /p' /etc/apt/sources.list >"$apt/sources.list"
    touch "$apt/sources.list"
    local opts=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts="$apt/sources.list.d"
                -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o Debug::NoLocking=1
                -o APT::Sandbox::User=root)
    apt-get -q "${opts[@]}" update >"$dest/apt-update.log" 2>&1 &&
        (cd "$dest" && apt-get -q "${opts[@]}" source --download-only mpich >"$dest/apt-source.log" 2>&1)
}

# $1 the work directory, then the suite directories to build: prints the
# suite's test/mpi directory, fetched, configured and built (once; a later
# call builds only what is missing).  Says on stderr why not, and fails, when
# it cannot be.
mpich_suite_ready() {
    local work=$1
    shift
    mkdir -p "$work" || { echo "SKIP: cannot make the suite's directory $work" >&2; return 1; }
    # one preparation at a time: the test command starts one in the background
    (flock 9 && mpich_suite_prepare "$work" "$@") 9>"$work/.lock"
}

mpich_suite_prepare() {
    local work=$1 tarball suite d rc
    shift
    tarball=$(ls "$work"/mpich_*.orig.tar.* 2>/dev/null | head -n 1)
    if [ -z "$tarball" ]; then
        echo "mpich-tests: fetching Debian's mpich source into $work" >&2
        if ! mpich_fetch_source "$work"; then
            echo "SKIP: Debian's mpich source could not be fetched (logs in $work)" >&2
            return 1
        fi
        tarball=$(ls "$work"/mpich_*.orig.tar.* | head -n 1)
    fi
    suite=$(ls -d "$work"/mpich-*/test/mpi 2>/dev/null | head -n 1)
    if [ -z "$suite" ]; then
        tar -C "$work" -xf "$tarball" --wildcards 'mpich-*/test/mpi' || {
            echo "SKIP: $tarball would not unpack" >&2
            return 1
        }
        suite=$(ls -d "$work"/mpich-*/test/mpi | head -n 1)
    fi
    if [ ! -f "$suite/config.status" ]; then
        echo "mpich-tests: configuring the suite against $(command -v mpicc)" >&2
        # Open MPI 4.1 declares the MPI-1 names MPI-3 removed (the suite's
        # datatype pools use them) only when asked to; its library has them.
        if ! (cd "$suite" && ./configure CC=mpicc CFLAGS="-O2 -DOMPI_OMIT_MPI1_COMPAT_DECLS=0" \
                  --with-mpi="$(dirname "$(dirname "$(command -v mpicc)")")" --enable-strictmpi \
                  --enable-fortran=no --disable-cxx --disable-romio --disable-spawn \
                  --disable-ft-tests --disable-checkerrors MPIEXEC=mpirun) >"$work/configure.log" 2>&1; then
            echo "SKIP: the suite would not configure (see $work/configure.log)" >&2
            return 1
        fi
    fi
    for d in util dtpools "$@"; do
        [ -f "$suite/$d/.loom-built" ] && continue
        # -k: some programs call MPI-4 functions Open MPI 4.1 lacks; the rest build
        rc=0
        make -C "$suite/$d" -k -j"$(nproc)" >"$work/build-$d.log" 2>&1 || rc=$?
        if [ "$rc" -ne 0 ] && { [ "$d" = util ] || [ "$d" = dtpools ]; }; then
            echo "SKIP: the suite's $d would not build (see $work/build-$d.log)" >&2
            return 1
        fi
        touch "$suite/$d/.loom-built"
    done
    echo "$suite"
}

# $1 a suite directory, $2 its name, $3 the expected-failures file, $4 the
# largest rank count (0: any), $5 1 to keep only the expected failures:
# prints the entries of its testlist to run; on stderr a line for each one
# left out: "not built", "expected" (with the reason), "over" the rank count,
# or "same" (it differs from an entry before it only in MPICH's own tuning
# variables).
mpich_select() {
    local dir=$1 name=$2 expected=$3 max_np=$4 expected_only=$5
    awk -v dir="$dir" -v name="$name" -v max_np="$max_np" -v only="$expected_only" -v expected="$expected" '
        BEGIN {                         # the expected failures: "dir entry | why"
            while ((getline line < expected) > 0) {
                if (line ~ /^[ \t]*(#|$)/) continue
                split(line, part, "|")
                key = part[1]; sub(/[ \t]+$/, "", key); gsub(/[ \t]+/, " ", key)
                why[key] = part[2]; sub(/^[ \t]+/, "", why[key])
            }
        }
        /^[ \t]*(#|$)/ { next }
        {
            entry = ""
            for (i = 1; i <= NF; i++)
                if ($i !~ /^env=MPIR_/) entry = entry (entry == "" ? "" : " ") $i
            key = name " " entry
            if (seen[key]++) { print "same " key > "/dev/stderr"; next }
            prog = $1
            if (prog ~ /\//) sub(/.*\//, "", prog)
            if (system("test -x \"" dir "/" prog "\"") != 0 && system("test -d \"" dir "/" $1 "\"") != 0) {
                print "not built " key > "/dev/stderr"; next
            }
            if ((key in why) != only) {
                if (!only) print "expected " key " | " why[key] > "/dev/stderr"
                next
            }
            if (max_np > 0 && $2 + 0 > max_np) { print "over " key > "/dev/stderr"; next }
            print entry
        }' "$dir/testlist"
}
