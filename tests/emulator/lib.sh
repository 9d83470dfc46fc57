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
set -euo pipefail

: "${SHAPE_BIN:?SHAPE_BIN must point at build/shape}"
TEST_TMP=$(mktemp -d)
BROKER_PID=
cleanup() {
  if [ -n "$BROKER_PID" ] && kill -0 "$BROKER_PID" 2>/dev/null; then
    kill -TERM "$BROKER_PID" 2>/dev/null || true
    wait "$BROKER_PID" 2>/dev/null || true
  fi
  rm -rf "$TEST_TMP"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

on_real_kafka() { [ -n "${SHAPE_TEST_KAFKA:-}" ]; }
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
