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
#   report FAULT INJECTION LOST DUPS EXIT NOTE, report_input INPUT TEST ASSERTS
#                             the rows of docs/RELIABILITY.md (tests/support/reliability_rows.sh).
#   fill_rows TOPIC N PAD [KCAT ARGS...]
#                             rows 0..N-1 (id, amount, kind, flag, note and a PAD-digit
#                             pad) into TOPIC's 3 partitions, row i in partition i % 3.
#   profile_diff CLEAN OUT ROWS TOL
#                             "equal", or the first differences of two stream-profile
#                             documents: every field equal, both of ROWS rows, mean, m2
#                             and the variances within TOL relative.
# A test that uses none of the mock's fault control sets FAULTS_ANY_BROKER=1
# before sourcing this file; the others skip on a real cluster, saying why.
[ "${FAULTS_ANY_BROKER:-0}" = 1 ] ||
  skip_on_real_kafka "injects faults through shape broker's --control socket (ctl down/fail/rtt), which a real" \
    "cluster has not; the real-broker counterparts are test_real_kafka_*.sh"
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
  echo "broker: $BOOTSTRAP (shape broker --control: librdkafka's mock cluster)"
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

# report and report_input: tests/support/reliability_rows.sh
source "$(dirname "${BASH_SOURCE[0]}")/../support/reliability_rows.sh"

fill_rows() {
  local topic=$1 n=$2 pad=$3 p
  shift 3
  for p in 0 1 2; do
    awk -v p=$p -v n="$n" -v pad="$pad" 'BEGIN { for (i = p; i < n; i += 3)
      printf "{\"id\":%d,\"amount\":%d.5,\"kind\":\"k%d\",\"flag\":%s,\"note\":%s,\"pad\":\"%0*d\"}\n",
        i, (i * 7919) % 1000, i % 11, (i % 2 ? "true" : "false"), (i % 5 ? "\"n\"" : "null"), pad, i }' |
      kcat -b "$BOOTSTRAP" -t "$topic" -P -p $p "$@"
  done
}

profile_diff() {
  python3 - "$@" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
rows, tol = int(sys.argv[3]), float(sys.argv[4])
ta, tb = a.pop("tables")["stream"], b.pop("tables")["stream"]
bad = ["document header"] if a != b else []
if ta["rows"] != tb["rows"] or ta["rows"] != rows:
    bad.append("rows %s vs %s" % (ta["rows"], tb["rows"]))
for x, y in zip(ta["columns"], tb["columns"]):
    for k in set(x) | set(y):
        if k in ("mean", "m2", "variance_population", "variance_sample") and x.get(k) is not None:
            if y.get(k) is None or abs(x[k] - y[k]) > tol * max(1.0, abs(x[k])):
                bad.append("%s.%s %s vs %s" % (x["name"], k, x[k], y.get(k)))
        elif x.get(k) != y.get(k):
            bad.append("%s.%s %s vs %s" % (x["name"], k, str(x.get(k))[:60], str(y.get(k))[:60]))
print("; ".join(bad[:5]) if bad else "equal")
PY
}
