# lib.sh — shared by the emulator tests: a Kafka endpoint for one test.
#
# kafka_up [--topic NAME:PARTS]...  sets BOOTSTRAP. With SHAPE_TEST_KAFKA set it
#   uses that cluster and creates the topics through the Admin API; otherwise it
#   starts `shape broker` with a bootstrap file, waits for it, and stops it
#   (SIGTERM, then checks it exited cleanly) when the test exits.
# fail MESSAGE                      print and exit 1.
# on_real_kafka                     true when the test runs against SHAPE_TEST_KAFKA.
# skip_on_real_kafka REASON         on SHAPE_TEST_KAFKA: print the reason, exit 77
#                                   (ctest's SKIP_RETURN_CODE); else nothing.
# Every test says which broker it ran on (the first line kafka_up prints).
# wait_stable TOPIC PARTITION OFFSET
#                                   wait (10 s at most) until the partition's last
#                                   stable offset is OFFSET: a real broker writes a
#                                   commit's markers after EndTxn has answered, so
#                                   a read right after a commit may still stop
#                                   before it (read_committed reads to the LSO).
# kafka_node_up [--topic NAME:PARTS]...
#                                   (test_real_kafka_*.sh, which kill the broker) a
#                                   private Apache Kafka node of scripts/kafka in
#                                   $KAFKA_NODE, stopped when the test exits; sets
#                                   BOOTSTRAP. Skips the test unless the real-broker
#                                   tier runs (SHAPE_TEST_KAFKA set: make emulator-kafka).
# kafka_node kill|start|stop        kill -9 it / start it again on the same port and
#                                   storage (prints the start-up time) / stop it.
# schema_registry_up [ARGS...]      start `shape schema-registry` (ARGS: its options) on
#                                   a free loopback port, stopped when the test exits;
#                                   sets REG_URL.
set -euo pipefail

: "${SHAPE_BIN:?SHAPE_BIN must point at build/shape}"
TEST_TMP=$(mktemp -d)
BROKER_PID=
KAFKA_NODE=
SCHEMA_REGISTRY_PIDS=()
cleanup() {
  local p
  for p in "${SCHEMA_REGISTRY_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  [ -z "$KAFKA_NODE" ] || "$SHAPE_SOURCE_DIR/scripts/kafka" stop "$KAFKA_NODE" || true
  if [ -n "$BROKER_PID" ] && kill -0 "$BROKER_PID" 2>/dev/null; then
    kill -TERM "$BROKER_PID" 2>/dev/null || true
    wait "$BROKER_PID" 2>/dev/null || true
  fi
  rm -rf "$TEST_TMP"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

schema_registry_up() {
  local f="$TEST_TMP/registry-${#SCHEMA_REGISTRY_PIDS[@]}"
  "$SHAPE_BIN" schema-registry --listen 127.0.0.1:0 --url-file "$f.url" "$@" 2>"$f.err" &
  SCHEMA_REGISTRY_PIDS+=($!)
  local _
  for _ in $(seq 1 100); do [ -s "$f.url" ] && break; sleep 0.05; done
  [ -s "$f.url" ] || fail "schema registry did not start: $(cat "$f.err")"
  REG_URL=$(cat "$f.url")
}

on_real_kafka() { [ -n "${SHAPE_TEST_KAFKA:-}" ]; }
skip_on_mock() {  # the other way round: a test only a real cluster can run
  on_real_kafka && return 0
  echo "SKIP on shape broker: $*"
  exit 77
}
skip_on_real_kafka() {
  on_real_kafka || return 0
  echo "SKIP on $SHAPE_TEST_KAFKA (SHAPE_TEST_KAFKA): $*"
  exit 77
}

# A topic name unique to this run, so a shared real cluster never mixes runs.
unique_topic() { echo "$1-$$-$RANDOM"; }

kafka_up() {
  local topics=("$@")
  if [ -n "${SHAPE_TEST_KAFKA:-}" ]; then
    BOOTSTRAP=$SHAPE_TEST_KAFKA
    echo "broker: $BOOTSTRAP (SHAPE_TEST_KAFKA${SHAPE_TEST_KAFKA_NAME:+: $SHAPE_TEST_KAFKA_NAME})"
    local spec
    for spec in "${topics[@]}"; do
      "$SHAPE_KAFKA_TOPIC_TOOL" "$BOOTSTRAP" "${spec%%:*}" "${spec##*:}" || fail "cannot create topic $spec"
    done
    return 0
  fi
  local args=() spec
  for spec in "${topics[@]}"; do args+=(--topic "$spec"); done
  "$SHAPE_BIN" broker "${args[@]}" --bootstrap-file "$TEST_TMP/bootstrap" \
    >"$TEST_TMP/broker.out" 2>"$TEST_TMP/broker.err" &
  BROKER_PID=$!
  local i
  for i in $(seq 1 100); do
    [ -s "$TEST_TMP/bootstrap" ] && break
    kill -0 "$BROKER_PID" 2>/dev/null || fail "shape broker exited: $(cat "$TEST_TMP/broker.err")"
    sleep 0.1
  done
  [ -s "$TEST_TMP/bootstrap" ] || fail "shape broker wrote no bootstrap file in 10 s"
  BOOTSTRAP=$(head -n 1 "$TEST_TMP/bootstrap")
  echo "broker: $BOOTSTRAP (shape broker: librdkafka's mock cluster)"
}

wait_stable() {
  local lso= i
  for i in $(seq 1 100); do
    lso=$(kcat -b "$BOOTSTRAP" -Q -t "$1:$2:-1" 2>/dev/null | awk '{print $NF}')
    [ "$lso" = "$3" ] && return 0
    sleep 0.1
  done
  fail "$1 [$2]: last stable offset $lso, not $3, after 10 s"
}

kafka_node() { "$SHAPE_SOURCE_DIR/scripts/kafka" "$1" "$KAFKA_NODE" "${@:2}"; }

kafka_node_up() {
  skip_on_mock "kills and restarts a real Apache Kafka node (make emulator-kafka runs it)"
  : "${SHAPE_SOURCE_DIR:?SHAPE_SOURCE_DIR must point at the source tree (ctest sets it)}"
  KAFKA_NODE=$TEST_TMP/node
  export SHAPE_TOPIC_TOOL=${SHAPE_TOPIC_TOOL:-$SHAPE_KAFKA_TOPIC_TOOL}
  BOOTSTRAP=$(kafka_node start "$@") || fail "could not start a Kafka node (scripts/kafka start)"
  echo "broker: $BOOTSTRAP (a private Apache Kafka node of this test, scripts/kafka; the tier's is $SHAPE_TEST_KAFKA)"
}
