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
    # Every C peer runs with the shape command's glibc malloc thresholds: it
    # links the very file that sets them (src/cli/malloc_tuning.c) and calls
    # it first in main(); the peers we do not build (kcat, Python) get the same
    # values through glibc's environment variables ($peer_env, below).
    local tune=(-Isrc src/cli/malloc_tuning.c)
    cc "${cflags[@]}" "${tune[@]}" bench/decode.c "${lib[@]}" -ljansson -o "$bin/decode"
    cc "${cflags[@]}" "${tune[@]}" bench/produce.c -lrdkafka -o "$bin/produce"
    cc "${cflags[@]}" "${tune[@]}" bench/consume.c -lrdkafka -o "$bin/consume"
    local mmap trim
    mmap=$(sed -n 's/^#define MMAP_THRESHOLD_BYTES (\(.*\))$/\1/p' src/cli/malloc_tuning.c)
    trim=$(sed -n 's/^#define TRIM_THRESHOLD_BYTES (\(.*\))$/\1/p' src/cli/malloc_tuning.c)
    [ -n "$mmap" ] && [ -n "$trim" ] ||
        { echo "bench: cannot read the malloc thresholds from src/cli/malloc_tuning.c" >&2; exit 2; }
    peer_env=(env "MALLOC_MMAP_THRESHOLD_=$((mmap))" "MALLOC_TRIM_THRESHOLD_=$((trim))")

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
    # DuckDB (npm @duckdb/node-api, pinned by bench/duckdb/package-lock.json;
    # scripts/install-deps runs `npm ci` there): a peer when it loads.
    duckdb_ok=0
    if command -v node >/dev/null && node bench/duckdb/run.mjs --version >"$tmp/duckdb.version" 2>"$tmp/duckdb.err"; then
        duckdb_ok=1
    else
        log "DuckDB peer SKIPPED: $( (grep -m1 -E '^[A-Za-z]*Error' "$tmp/duckdb.err" || echo 'no node') 2>/dev/null)" \
            "(scripts/install-deps installs it: npm ci in bench/duckdb)"
    fi
    : >"$tmp/mismatch"
    return 0
}

# rotate ROUND ITEM... — the items, starting with the (ROUND-1 mod N)-th:
# each round runs the peers in another order, so that no peer always runs
# right after the same one (a warm page cache, a broker still busy with the
# last reader, a CPU still clocked up) — issue 19, order effects.
rotate() {
    local r=$1; shift
    local n=$# i
    local items=("$@")
    for ((i = 0; i < n; i++)); do printf '%s\n' "${items[$(((r - 1 + i) % n))]}"; done
}

# counts_verdict — after the last measure: fail loudly when any reader read
# another number of messages than there were (a rate over messages that were
# not read is no rate). Prints every mismatch; returns 1 if there was one.
counts_verdict() {
    [ -s "$tmp/mismatch" ] || return 0
    {
        echo "bench: MESSAGE COUNT MISMATCH — these runs read another number of messages than expected;"
        echo "bench: their rates are left out of the report and this run fails:"
        sed 's/^/bench:   /' "$tmp/mismatch"
    } >&2
    return 1
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

# consume_peer NAME ROUND — one reader of the topic `orders` ($bs) once:
# floor_w4 (bench/consume -w 4: shape's way), floor_all (bench/consume:
# every partition prefetched, arrival order), kcat and kcat_fw10 (defaults,
# and -X fetch.wait.max.ms=10 as the floor and shape have it), stream_read
# (${stream_read_format[@]}), stream_read_jsonl, stream_profile, python
# (bench/consume.py), recorded in group $consume_group (default consume;
# bench/real_kafka.sh: real_consume). Every count is checked against $con_events (expect=):
# a rate over messages that were not read is no rate. kcat writes every
# message (its default format) into `wc -l`, which counts them: the one way
# to know what kcat read; the pipe and wc cost it a little CPU (counted in
# its CPU column, which sums the pipeline's processes).
consume_peer() {
    local n=$1 r=$2 c=(events="$con_events" expect="$con_events") g=${consume_group:-consume}
    case $n in
    floor_w4) measure "$g" floor_w4 "$r" KEEP "${c[@]}" -- "$bin/consume" -b "$bs" -t orders -w 4 ;;
    floor_all) measure "$g" floor_all "$r" KEEP "${c[@]}" -- "$bin/consume" -b "$bs" -t orders ;;
    kcat) measure "$g" kcat "$r" KEEP "${c[@]}" -- "${peer_env[@]}" bash -c \
        'set -o pipefail; kcat -b "$1" -C -t orders -e -o beginning -q | wc -l' kcat "$bs" ;;
    kcat_fw10) measure "$g" kcat_fw10 "$r" KEEP "${c[@]}" -- "${peer_env[@]}" bash -c \
        'set -o pipefail; kcat -b "$1" -C -t orders -e -o beginning -q -X fetch.wait.max.ms=10 | wc -l' kcat "$bs" ;;
    stream_read) measure "$g" stream_read "$r" NULL "${c[@]}" -- "$shape" stream-read "${stream_read_format[@]}" "kafka://$bs/orders" ;;
    stream_read_jsonl) measure "$g" stream_read_jsonl "$r" NULL "${c[@]}" -- "$shape" stream-read "kafka://$bs/orders" ;;
    # the Arrow IPC writer's cost: the same read with every batch written as an IPC message to /dev/null
    stream_read_arrow) measure "$g" stream_read_arrow "$r" NULL "${c[@]}" -- "$shape" stream-read --format arrow "kafka://$bs/orders" ;;
    # --split-by on the retail topic (split_events events of nine tables, emitted by shape) vs one table
    split_unsplit) measure split unsplit "$r" KEEP events="$split_events" expect="$split_events" -- \
        "$shape" stream-profile "kafka://$bs/retail-split" -o "$tmp/retail-unsplit.json" ;;
    split_split) measure split split "$r" KEEP events="$split_events" expect="$split_events" -- \
        "$shape" stream-profile "kafka://$bs/retail-split" --split-by header:shape-table -o "$tmp/retail-split.json" ;;
    stream_profile) measure "$g" stream_profile "$r" KEEP "${c[@]}" -- "$shape" stream-profile "kafka://$bs/orders" -o "$tmp/profile.json" ;;
    # windows: the skew cap above the hour keeps every row in a window (each
    # partition is in order), so both do the whole work
    stream_profile_tumbling) rm -f "$tmp/tumbling.jsonl"
        measure "$g" stream_profile_tumbling "$r" KEEP "${c[@]}" -- "$shape" stream-profile "kafka://$bs/orders" \
            --window tumbling --size 1m --max-partition-skew 2h --windows "$tmp/tumbling.jsonl" ;;
    stream_profile_sliding) rm -f "$tmp/sliding.jsonl"
        measure "$g" stream_profile_sliding "$r" KEEP "${c[@]}" -- "$shape" stream-profile "kafka://$bs/orders" \
            --window sliding --size 5m --slide 1m --max-partition-skew 2h --windows "$tmp/sliding.jsonl" ;;
    python) measure "$g" python "$r" KEEP "${c[@]}" -- "${peer_env[@]}" "$peer_python" bench/consume.py "$bs" orders ;;
    esac
}

# emit_prepare — the first $emit_events events of `retail --scale medium`
# rendered once by `shape emit --sink file`, keyed "<table>/<seq>" as shape
# keys them, into $tmp/keyed.txt for kcat -P and bench/produce; sets
# $emitted, the producer settings $pset (the same for every producer) and
# the headers $hset: shape sends two with every event (shape-table,
# shape-synthetic), the peers send the same two (kcat -H takes one value for
# all messages); kcat without headers is measured too, as a second row.
emit_prepare() {
    "$shape" emit retail --scale medium --max-events "$emit_events" --sink file -o "$tmp/events.jsonl" \
        --fresh --no-progress >/dev/null
    python3 - "$tmp/events.jsonl" "$tmp/keyed.txt" <<'PY'
import json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as out:
    for line in f:
        d = json.loads(line)
        out.write("%s/%d\t%s" % (d["_shape_table"], d["_shape_seq"], line))
PY
    emitted=$(wc -l <"$tmp/keyed.txt")
    pset=(-X acks=all -X enable.idempotence=true -X linger.ms=5)
    hset=(-H shape-table=order_line -H shape-synthetic=true)
}

# emit_peer NAME ROUND — one producer once, after emit_prepare: null
# (`shape emit retail ${null_sel[@]} --sink null`), null_faults (the same with
# every fault of issue 21 at 1 %: late, anomaly, duplicate, poison), null_et (the same
# without faults, with `--order event-time`), shape (into emit-shape), kcat and
# kcat_plain (kcat -P of the same keyed events, with and without the
# headers), floor (bench/produce, same headers), avro (against $reg_url); in
# group $emit_group (default emit; bench/real_kafka.sh: real_emit).
# shape's and bench/produce's counts of delivered events are checked; kcat
# -P reports none (it fails on a delivery error), and reading the topics
# back cannot count them: the embedded broker keeps ~5 MB per partition.
emit_peer() {
    local n=$1 r=$2 g=${emit_group:-emit}
    case $n in
    avro) measure "$g" avro "$r" KEEP events="$emitted" expect="$emitted" -- "$shape" emit retail --scale medium \
        --max-events "$emit_events" --sink "kafka://$bs/emit-avro" --event-format avro \
        --sink-config "kafka.schema_registry_url=$reg_url" kafka.subject_strategy=record \
        --no-progress --json ;;
    null) measure "$g" null "$r" KEEP -- "$shape" emit retail "${null_sel[@]}" --sink null --no-progress --json ;;
    null_faults) measure "$g" null_faults "$r" KEEP -- "$shape" emit retail "${null_sel[@]}" --sink null --no-progress \
        --json --out-of-order 0.01 --anomaly-fraction 0.01 --duplicate-fraction 0.01 --poison-fraction 0.01 ;;
    null_et) measure "$g" null_et "$r" KEEP -- "$shape" emit retail "${null_sel[@]}" --order event-time --sink null \
        --no-progress --json ;;
    shape) measure "$g" shape "$r" KEEP events="$emitted" expect="$emitted" -- "$shape" emit retail --scale medium \
        --max-events "$emit_events" --sink "kafka://$bs/emit-shape" --no-progress --json ;;
    kcat) measure "$g" kcat "$r" NULL events="$emitted" -- "${peer_env[@]}" kcat -b "$bs" -t emit-kcat -P -K $'\t' \
        "${pset[@]}" "${hset[@]}" -l "$tmp/keyed.txt" ;;
    kcat_plain) measure "$g" kcat_plain "$r" NULL events="$emitted" -- "${peer_env[@]}" kcat -b "$bs" -t emit-kcat -P \
        -K $'\t' "${pset[@]}" -l "$tmp/keyed.txt" ;;
    floor) measure "$g" floor "$r" KEEP events="$emitted" expect="$emitted" -- "$bin/produce" -b "$bs" -t emit-floor \
        -f "$tmp/keyed.txt" -K "${pset[@]}" "${hset[@]}" ;;
    esac
}
# record GROUP NAME ROUND STATUS WALL RSS_KB OUTFILE ERRFILE [key=value...]
# appends one JSON line; OUTFILE's last line is parsed when it holds
# key=value pairs or a JSON object (our programs and `shape emit --json`).
# What the process says it read or sent becomes `count`, from the first of:
# `messages=` or `events` on its last stdout line, a bare number there
# (`| wc -l`), `shape stream-read: N messages` or a JSON object with
# `events` on its last stderr line (stream-read, stream-profile). With
# expect=N among the key=value pairs, a count other than N (or none) makes
# the record a failure (status 3, count_mismatch) written to $tmp/mismatch.
record() {
    python3 - "$tmp/mismatch" "$@" >>"$results" <<'PY'
import json, re, sys
mismatch = sys.argv[1]
group, name, rnd, status, wall, rss, outfile, errfile = sys.argv[2:10]
rec = {"group": group, "name": name, "round": int(rnd), "status": int(status),
       "wall": float(wall), "rss_kb": int(rss or 0)}
for kv in sys.argv[10:]:
    k, v = kv.split("=", 1)
    try: rec[k] = float(v)
    except ValueError: rec[k] = v


def last_line(path):
    try:
        lines = [l for l in open(path, errors="replace").read().splitlines() if l.strip()]
    except OSError:
        lines = []
    return lines[-1].strip() if lines else ""


def parse(last):
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
    return data if isinstance(data, dict) else {}


last = last_line(outfile)
if last:
    rec["out"] = parse(last)
out = rec.get("out", {})
count = None
if isinstance(out.get("messages"), float): count = out["messages"]
elif isinstance(out.get("events"), (int, float)): count = float(out["events"])
elif re.fullmatch(r"\d+", last): count = float(last)
if count is None:
    err = last_line(errfile)
    m = re.match(r"shape [a-z-]+: (\d+) messages", err)
    ev = parse(err).get("events") if err.startswith("{") else None
    if m: count = float(m.group(1))
    elif isinstance(ev, (int, float)): count = float(ev)
if count is not None:
    rec["count"] = count
if "expect" in rec and rec["status"] == 0 and count != rec["expect"]:
    rec["status"] = 3
    rec["count_mismatch"] = True
    line = "%s/%s round %s: %s, expected %d" % (
        group, name, rnd, "no count found" if count is None else "read %d messages" % count, rec["expect"])
    print("bench: MESSAGE COUNT MISMATCH: " + line, file=sys.stderr)
    with open(mismatch, "a") as f:
        f.write(line + "\n")
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
    record "$group" "$name" "$rnd" "$st" "$(python3 -c "print($t1 - $t0)")" "$rss" "$o" "$e" "cpu=$(python3 -c "print(${usr:-0} + ${sys:-0})")" "${extra[@]}"
}
