# faults_lib.sh — sourced by the test_faults_*.sh tests after lib.sh: a
# `shape broker` with its fault-control socket, and the report rows.
#
# Why: every fault test starts the embedded broker with --control, sends it
# commands mid-run and records what it observed, so docs/RELIABILITY.md can
# be regenerated from the tests themselves (tests/emulator/reliability-report.sh).
# How:
#   faults_broker_up ARGS...  start `shape broker --control $TEST_TMP/ctl ARGS`
#                             (lib.sh's cleanup stops it); sets BOOTSTRAP, BROKER_PID.
#   ctl WORDS...              send one command over the socket (python3: no nc
#                             here), fail unless the reply is "ok".
#   ctl_reply WORDS...        print the reply line, whatever it is.
#   report FAULT INJECTION LOST DUPS EXIT NOTE
#                             append a row (tab-separated) to $SHAPE_FAULT_REPORT if set.
[ -z "${SHAPE_TEST_KAFKA:-}" ] || { echo "SKIP: fault tests need the embedded broker (SHAPE_TEST_KAFKA is set)"; exit 77; }
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"
command -v python3 >/dev/null || fail "python3 is needed to talk to the control socket"
CTL=$TEST_TMP/ctl

faults_broker_up() {
  "$SHAPE_BIN" broker --control "$CTL" --bootstrap-file "$TEST_TMP/bootstrap" "$@" \
    >"$TEST_TMP/broker.out" 2>"$TEST_TMP/broker.err" &
  BROKER_PID=$!
  local i
  for i in $(seq 1 100); do
    [ -s "$TEST_TMP/bootstrap" ] && [ -S "$CTL" ] && break
    kill -0 "$BROKER_PID" 2>/dev/null || fail "shape broker exited: $(cat "$TEST_TMP/broker.err")"
    sleep 0.1
  done
  [ -S "$CTL" ] || fail "shape broker made no control socket in 10 s"
  BOOTSTRAP=$(head -n 1 "$TEST_TMP/bootstrap")
}

faults_broker_down() {  # stop it (SIGTERM) and check it went cleanly
  kill -TERM "$BROKER_PID"
  local rc=0
  wait "$BROKER_PID" || rc=$?
  BROKER_PID=
  [ $rc -eq 0 ] || fail "shape broker exited $rc on SIGTERM: $(tail -3 "$TEST_TMP/broker.err")"
  [ ! -e "$CTL" ] || fail "the control socket $CTL outlived the broker"
  rm -f "$TEST_TMP/bootstrap"
}

ctl_reply() {
  python3 - "$CTL" "$*" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
buf = b""
while not buf.endswith(b"\n"):
    chunk = s.recv(4096)
    if not chunk:
        break
    buf += chunk
print(buf.decode().rstrip("\n"))
PY
}

ctl() {
  local r
  r=$(ctl_reply "$@") || fail "control command '$*' could not be sent"
  [ "$r" = ok ] || fail "control command '$*' answered '$r'"
}

report() {
  [ -n "${SHAPE_FAULT_REPORT:-}" ] || return 0
  local IFS=$'\t'
  echo "$*" >>"$SHAPE_FAULT_REPORT"
}
