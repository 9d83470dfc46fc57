# bench/real_kafka.sh — the consume, profile and emit benchmarks of bench/run
# on a real Apache Kafka node too, beside the same runs on shape broker
# (issue 25, item 3). Sourced by bench/run after its broker sections: it
# uses bench/lib.sh's helpers and bench/run's settings ($runs, $con_events,
# $parts, $emit_events, $have_profile, $have_emit).
#
# Why: every other broker figure rests on librdkafka's mock cluster, whose
# serving cost (the same 2 cores as the reader) shapes every ratio. A real
# broker serves otherwise; and it is a process of its own, so the reader's
# CPU and the broker's can be told apart.
# How: real_kafka_bench starts one node (scripts/kafka: KRaft, a fixed heap,
# SHAPE_KAFKA_HEAP), creates the topics with tests/emulator/kafka_topic
# (compiled into $bin), fills `orders` with the same documents as the mock's,
# then runs $runs rounds of the consume peers (floor_w4, kcat, stream-read,
# stream-profile: group real_consume) and the emit peers (shape, kcat,
# bench/produce: group real_emit), each with bench/lib.sh's consume_peer /
# emit_peer, so the commands are the mock's exactly. Around each process the
# JVM's CPU time (utime + stime of /proc/PID/stat) is taken and recorded as
# broker_cpu beside the reader's own cpu. Skipped, with the reason in
# $real_kafka_note (bench/report.py prints it), when java or the jars are
# missing (scripts/install-deps fetches them) or with BENCH_REAL_KAFKA=0.

real_kafka_dir=
real_kafka_note=

real_kafka_stop() {
    [ -z "$real_kafka_dir" ] || { log "stopping Apache Kafka"; "$root/scripts/kafka" stop "$real_kafka_dir" || true; }
    real_kafka_dir=
}

# The JVM's CPU seconds so far (user + system).
real_kafka_cpu() {
    awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f\n", ($14 + $15) / hz }' "/proc/$real_kafka_pid/stat" 2>/dev/null || echo 0
}

# with_broker_cpu CMD...: run CMD (one measure), then add broker_cpu to the
# record it appended (the last line of $results).
with_broker_cpu() {
    local c0 c1
    c0=$(real_kafka_cpu)
    "$@"
    c1=$(real_kafka_cpu)
    python3 - "$results" "$c0" "$c1" <<'PY'
import json, sys
path, c0, c1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
lines = open(path).read().splitlines()
rec = json.loads(lines[-1])
rec["broker_cpu"] = round(c1 - c0, 3)
lines[-1] = json.dumps(rec)
open(path, "w").write("\n".join(lines) + "\n")
PY
}

real_kafka_bench() {
    if [ "${BENCH_REAL_KAFKA:-1}" = 0 ]; then real_kafka_note="skipped (BENCH_REAL_KAFKA=0)"; return 0; fi
    command -v java >/dev/null || { real_kafka_note="skipped: no java (scripts/install-deps installs it)"; return 0; }
    cc -O2 tests/emulator/kafka_topic.c -lrdkafka -o "$bin/kafka_topic"
    real_kafka_dir=$tmp/kafka
    trap 'real_kafka_stop; bench_cleanup' EXIT
    local mock_bs=$bs out
    if ! out=$(SHAPE_TOPIC_TOOL=$bin/kafka_topic "$root/scripts/kafka" start "$real_kafka_dir" \
            --topic "orders:$parts" --topic emit-shape:6 --topic emit-kcat:6 --topic emit-floor:6 2>"$tmp/kafka.start"); then
        real_kafka_note="skipped: the node did not start: $(tail -1 "$tmp/kafka.start")"
        log "Apache Kafka $real_kafka_note"
        real_kafka_dir=
        return 0
    fi
    bs=$(head -1 <<<"$out")
    real_kafka_pid=$(cat "$real_kafka_dir/pid")
    local version
    version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' ci/kafka/pom.xml)
    real_kafka_note="Apache Kafka $version, one KRaft node (scripts/kafka), heap ${SHAPE_KAFKA_HEAP:-512m}"
    log "real Kafka: $real_kafka_note at $bs; filling orders ($parts partitions) with $con_events documents"
    "$bin/decode" dump "$con_events" >"$tmp/orders.jsonl"
    with_broker_cpu measure real_setup produce_orders 1 KEEP events="$con_events" -- \
        "$bin/produce" -b "$bs" -t orders -f "$tmp/orders.jsonl" -p "$parts" -X linger.ms=5 -X batch.num.messages=10000 \
        -T $((3600000000 / con_events))
    rm -f "$tmp/orders.jsonl"
    # One unrecorded read first: the JVM's first pass over the new segments
    # (JIT, page cache) is not charged to whichever reader happens to run first.
    "$bin/consume" -b "$bs" -t orders >/dev/null 2>&1 || true
    local peers=(floor_w4 kcat stream_read) r n
    [ "$have_profile" = 1 ] && peers+=(stream_profile)
    log "real Kafka: consume, $runs rounds: ${peers[*]}"
    for r in $(seq 1 "$runs"); do
        for n in $(rotate "$r" "${peers[@]}"); do consume_group=real_consume with_broker_cpu consume_peer "$n" "$r"; done
    done
    if [ "$have_emit" = 1 ]; then
        emit_prepare
        log "real Kafka: emit ($emit_events events), $runs rounds: shape kcat floor"
        for r in $(seq 1 "$runs"); do
            for n in $(rotate "$r" shape kcat floor); do emit_group=real_emit with_broker_cpu emit_peer "$n" "$r"; done
        done
        rm -f "$tmp/events.jsonl" "$tmp/keyed.txt"
    fi
    real_kafka_stop
    bs=$mock_bs
}
