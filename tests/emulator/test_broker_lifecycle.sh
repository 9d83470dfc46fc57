# `shape broker` as a process: first stdout line is the bootstrap list, the
# bootstrap file appears atomically and goes on stop, SIGINT and SIGTERM both
# stop it with exit 0, several brokers and auto-created topics work, and bad
# arguments are refused before anything listens.
source "$(dirname "$0")/lib.sh"
skip_on_real_kafka "tests shape broker itself (its options, start-up and shutdown)"

start() { # start ARGS... : sets PID, waits for the bootstrap file
  rm -f "$TEST_TMP/bs"
  "$SHAPE_BIN" broker "$@" --bootstrap-file "$TEST_TMP/bs" >"$TEST_TMP/out" 2>"$TEST_TMP/err" &
  PID=$!
  for _ in $(seq 1 100); do [ -s "$TEST_TMP/bs" ] && return 0; sleep 0.1; done
  fail "no bootstrap file: $(cat "$TEST_TMP/err")"
}
stop_with() { # stop_with SIGNAL : the broker exits 0 and removes its file
  kill -"$1" "$PID"
  local rc=0
  wait "$PID" || rc=$?
  [ "$rc" -eq 0 ] || fail "broker exited $rc on $1: $(cat "$TEST_TMP/err")"
  [ ! -e "$TEST_TMP/bs" ] || fail "bootstrap file left behind after $1"
  grep -q "stopping on $1" "$TEST_TMP/err" || fail "no stop message on $1"
}

start --brokers 3 --topic orders:4
bs=$(cat "$TEST_TMP/bs")
[ "$(head -n 1 "$TEST_TMP/out")" = "$bs" ] || fail "first stdout line is not the bootstrap list"
[ "$(echo "$bs" | tr ',' '\n' | grep -c '^127\.0\.0\.1:[0-9][0-9]*$')" -eq 3 ] || fail "expected 3 loopback brokers, got '$bs'"
meta=$(kcat -b "$bs" -L)
echo "$meta" | grep -q ' 3 brokers:' || fail "metadata does not list 3 brokers"
echo "$meta" | grep -q 'topic "orders" with 4 partitions' || fail "orders:4 not created"
echo hello | kcat -b "$bs" -t auto-created -P
[ "$(kcat -b "$bs" -t auto-created -C -e -q)" = hello ] || fail "auto-created topic did not round-trip"
stop_with SIGTERM

start
stop_with SIGINT

# Refusals: exit 2, one error line, nothing printed on stdout, no file left.
for bad in "--brokers 0" "--brokers 17" "--topic bad!name" "--topic t:0" "--topic t:x" "--topic :3"; do
  rc=0
  # shellcheck disable=SC2086
  "$SHAPE_BIN" broker $bad --bootstrap-file "$TEST_TMP/bad" >"$TEST_TMP/out" 2>"$TEST_TMP/err" || rc=$?
  [ "$rc" -eq 2 ] || fail "'$bad' exited $rc, expected 2"
  [ ! -s "$TEST_TMP/out" ] || fail "'$bad' printed on stdout"
  [ "$(wc -l <"$TEST_TMP/err")" -eq 1 ] && grep -q '^shape: error: ' "$TEST_TMP/err" || fail "'$bad' error is not one line: $(cat "$TEST_TMP/err")"
  [ ! -e "$TEST_TMP/bad" ] || fail "'$bad' left a bootstrap file"
done
rc=0
"$SHAPE_BIN" broker --bootstrap-file /nonexistent-dir/bs >/dev/null 2>"$TEST_TMP/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q 'cannot write bootstrap file /nonexistent-dir/bs' "$TEST_TMP/err" || fail "unwritable bootstrap file not refused: rc=$rc $(cat "$TEST_TMP/err")"
echo "ok: broker lifecycle"
