# bench/lib.sh — what `make bench` (bench/run) and `make bench-check`
# (bench/check) share: the Release build, timing a process from outside,
# recording its result, and the embedded broker. Sourced, not run.
#
# Why: the regression guard must measure exactly the way the full benchmark
# does (same build, same timing, same peers), or its ratios could not be
# compared with the full run's; one copy of the method keeps them the same.
# How: the caller sets $root (the checkout) and $build (the Release tree)
# and calls bench_setup, which builds, compiles the C peers of bench/ into
# $bin and makes $tmp (removed on exit) with $results (JSON lines). Then
# `measure GROUP NAME ROUND KEEP|NULL [k=v...] -- CMD...` runs CMD once under
# /usr/bin/time (wall clock around the process, peak RSS, user+sys CPU) and
# appends one JSON object to $results; broker_start/broker_stop run ONE
# `shape broker`.

log() { printf 'bench: %s %s\n' "$(date +%T)" "$*" >&2; }

# Build the Release tree and the C peers (bench/decode, produce, consume).
bench_setup() {
    jobs=$(nproc 2>/dev/null || echo 2)
    for tool in kcat python3 /usr/bin/time; do
        command -v "$tool" >/dev/null || { echo "bench: needs $tool (scripts/install-deps)" >&2; exit 2; }
    done
    log "building a Release tree in $build"
    [ -f "$build/CMakeCache.txt" ] ||
        cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSHAPE_TESTS=OFF >/dev/null
    # Others may be mid-edit in a shared tree: one retry after a pause before giving up.
    cmake --build "$build" -j "$jobs" >"$build/.bench-build.log" 2>&1 ||
        { sleep 20; cmake --build "$build" -j "$jobs" >"$build/.bench-build.log" 2>&1; } ||
        { tail -30 "$build/.bench-build.log" >&2; exit 2; }
    shape=$root/$build/shape
    bin=$root/$build/bench
    mkdir -p "$bin"
    cflags=(-O2 -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -Iinclude "-I$build/include")
    lib=("-L$build/lib" -lshape "-Wl,-rpath,$root/$build/lib")
    cc "${cflags[@]}" bench/decode.c "${lib[@]}" -ljansson -o "$bin/decode"
    cc "${cflags[@]}" bench/produce.c -lrdkafka -o "$bin/produce"
    cc "${cflags[@]}" bench/consume.c -lrdkafka -o "$bin/consume"

    tmp=$(mktemp -d /tmp/shape-bench.XXXXXX)
    results=$tmp/results.jsonl
    : >"$results"
    broker_pid=
    reg_pid=
    trap bench_cleanup EXIT
    # The Python peer needs confluent_kafka: Debian's python3 has it
    # (python3-confluent-kafka); a pyenv python3 first on PATH may not.
    peer_python=python3
    python3 -c 'import confluent_kafka' 2>/dev/null || peer_python=/usr/bin/python3
    python_ok=0; "$peer_python" -c 'import confluent_kafka' 2>/dev/null && python_ok=1
    return 0
}

bench_cleanup() {
    [ -z "${reg_pid:-}" ] || { kill -TERM "$reg_pid" 2>/dev/null || true; wait "$reg_pid" 2>/dev/null || true; }
    broker_stop
    rm -rf "$tmp"
}

# (help text first, then grep: `shape help | grep -q` fails under pipefail
# when grep exits before shape has written everything)
has_command() { grep -qE "^  $1 " <<<"$("$shape" help 2>/dev/null)"; }

# broker_start TOPIC[:PARTITIONS]... — ONE `shape broker`; sets $bs.
broker_start() {
    local args=() t
    for t in "$@"; do args+=(--topic "$t"); done
    log "starting shape broker"
    rm -f "$tmp/bootstrap"
    "$shape" broker "${args[@]}" --bootstrap-file "$tmp/bootstrap" >/dev/null 2>"$tmp/broker.log" &
    broker_pid=$!
    for _ in $(seq 1 200); do [ -s "$tmp/bootstrap" ] && break; sleep 0.1; done
    [ -s "$tmp/bootstrap" ] || { echo "bench: shape broker did not start" >&2; cat "$tmp/broker.log" >&2; exit 2; }
    bs=$(cat "$tmp/bootstrap")
}

broker_stop() {
    if [ -n "${broker_pid:-}" ]; then
        log "stopping shape broker"
        kill -TERM "$broker_pid" 2>/dev/null || true
        wait "$broker_pid" 2>/dev/null || true
    fi
    broker_pid=
}

# registry_start — `shape schema-registry` on loopback (when the plugin has
# it); sets $reg_url, or leaves it empty.
registry_start() {
    reg_url=
    has_command schema-registry || return 0
    "$shape" schema-registry --listen 127.0.0.1:0 --url-file "$tmp/registry.url" 2>/dev/null &
    reg_pid=$!
    for _ in $(seq 1 100); do [ -s "$tmp/registry.url" ] && break; sleep 0.05; done
    reg_url=$(cat "$tmp/registry.url" 2>/dev/null || true)
}

registry_stop() {
    [ -z "${reg_pid:-}" ] || { kill -TERM "$reg_pid" 2>/dev/null || true; wait "$reg_pid" 2>/dev/null || true; }
    reg_pid=
}

# record GROUP NAME ROUND STATUS WALL RSS_KB OUTFILE [key=value...]
# appends one JSON line; OUTFILE's last line is parsed when it holds
# key=value pairs or a JSON object (our programs and `shape emit --json`).
record() {
    python3 - "$@" >>"$results" <<'PY'
import json, sys
group, name, rnd, status, wall, rss, outfile = sys.argv[1:8]
rec = {"group": group, "name": name, "round": int(rnd), "status": int(status),
       "wall": float(wall), "rss_kb": int(rss or 0)}
for kv in sys.argv[8:]:
    k, v = kv.split("=", 1)
    try: rec[k] = float(v)
    except ValueError: rec[k] = v
try:
    lines = [l for l in open(outfile).read().splitlines() if l.strip()]
except OSError:
    lines = []
if lines:
    last = lines[-1]
    data = {}
    if last.startswith("{"):
        try: data = json.loads(last)
        except ValueError: pass
    elif "=" in last:
        for kv in last.split():
            if "=" in kv:
                k, v = kv.split("=", 1)
                try: data[k] = float(v)
                except ValueError: data[k] = v
    rec["out"] = data
print(json.dumps(rec))
PY
}

# measure GROUP NAME ROUND KEEP|NULL [key=value...] -- CMD...
# runs CMD once, timed from outside; KEEP keeps stdout for record(), NULL
# sends it to /dev/null (stderr always goes to a log). For a command that
# runs several processes (bench/together), the peak RSS is the largest
# process's and the CPU time the sum of all (getrusage of the children).
measure() {
    local group=$1 name=$2 rnd=$3 keep=$4
    shift 4
    local extra=()
    while [ "$1" != "--" ]; do extra+=("$1"); shift; done
    shift
    local o=$tmp/out.$group.$name.$rnd e=$tmp/err.$group.$name.$rnd
    local dest=$o
    [ "$keep" = NULL ] && dest=/dev/null
    local t0 t1 st=0
    t0=$(date +%s.%N)
    /usr/bin/time -f '%M %U %S' -o "$tmp/rss" "$@" >"$dest" 2>"$e" || st=$?
    t1=$(date +%s.%N)
    [ "$st" = 0 ] || { log "$group/$name round $rnd failed ($st):"; tail -3 "$e" >&2; }
    [ "$keep" = NULL ] && : >"$o"
    local rss usr sys
    read -r rss usr sys < <(tail -1 "$tmp/rss")
    record "$group" "$name" "$rnd" "$st" "$(python3 -c "print($t1 - $t0)")" "$rss" "$o" "cpu=$(python3 -c "print(${usr:-0} + ${sys:-0})")" "${extra[@]}"
}
