#!/usr/bin/env bash
# test_faults_control.sh — `shape broker --control`: the command language
# itself, over the socket and on stdin.
#
# Why: the fault controls are a user-facing interface (people test their own
# consumers with them): every command must answer exactly one line, bad
# input must get "error: ..." and never crash or wedge the broker, and the
# broker must still stop cleanly on SIGTERM and remove its socket.
# How: send good and bad commands through the socket and check the replies;
# check that a fault really takes effect (a broker taken down refuses kcat,
# and serves it again once up; an rtt slows a metadata request); drive the
# same language through stdin with `--control -`.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults_lib.sh"
cd "$TEST_TMP"

"$SHAPE_BIN" broker --help | grep -q -- '--control PATH|-' || fail "--help does not list --control"
faults_broker_up --brokers 3 --topic t:3

expect() {  # expect PATTERN WORDS...: the reply must match the extended regex
  local pat=$1 r; shift
  r=$(ctl_reply "$@")
  [[ $r =~ $pat ]] || fail "'$*' answered '$r', expected /$pat/"
}
expect '^ok$' ping
expect '^ok: commands: ' help
expect '^ok$' rtt 2 50
expect '^ok$' rtt 2 0
expect '^ok$' fail Produce NOT_LEADER_OR_FOLLOWER 2
expect '^ok$' fail ProduceRequest 7 1
expect '^ok$' fail fetch REQUEST_TIMED_OUT
expect '^ok$' fail 22 NOT_COORDINATOR 3
expect '^ok$' clear Produce
expect '^ok$' clear
expect '^ok$' leader t 0 3
expect '^ok$' topic-error t NO_ERROR
expect '^error: down wants a broker id from 1 to 3' down 4
expect '^error: down wants a broker id from 1 to 3' down -1
expect '^error: up wants a broker id' up one
expect '^error: rtt wants milliseconds' rtt 1 -5
expect "^error: unknown Kafka API 'Teleport'" fail Teleport REQUEST_TIMED_OUT
expect "^error: unknown Kafka error 'NOPE'" fail Produce NOPE
expect '^error: fail wants a count' fail Produce REQUEST_TIMED_OUT 0
expect '^error: fail wants a count' fail Produce REQUEST_TIMED_OUT 99999999999999999999
expect '^error: the mock cluster refused: UNKNOWN_TOPIC_OR_PART' leader t 99 1
expect '^error: unknown command' launch missiles
expect '^error: unknown command' down
expect '^error: too many words' a b c d e f g h i j
expect '^error: empty command' ''
expect '^error: line longer than 1024 bytes' "$(head -c 5000 /dev/zero | tr '\0' x)"
# several commands on one connection, one reply each, in order; a last line without newline
replies=$(python3 - "$CTL" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
s.sendall(b"ping\nbogus\n\x00\xff\x01\nping")
s.shutdown(socket.SHUT_WR)
buf = b""
while True:
    c = s.recv(4096)
    if not c: break
    buf += c
print(buf.decode(errors="replace").replace("\n", "|"))
PY
)
[[ $replies =~ ^ok\|error:\ unknown\ command.*\|error:\ the\ command\ has\ non-printable\ bytes\|ok\|$ ]] || fail "pipelined replies: $replies"
# connections left open do not stop other clients (or the broker) being served
python3 - "$CTL" <<'PY' &
import socket, sys, time
ss = [socket.socket(socket.AF_UNIX) for _ in range(20)]
for s in ss:
    try: s.connect(sys.argv[1])
    except OSError: pass
time.sleep(3)
PY
idle=$!
sleep 0.5
[[ $(ctl_reply ping) == ok ]] || fail "with 20 idle connections: no answer"
wait $idle
expect '^ok$' ping

# a broker taken down refuses clients; up again, it serves them
echo '{"id":1}' | kcat -b "$BOOTSTRAP" -t t -P -p 0 || fail "produce before down"
ctl down 1; ctl down 2; ctl down 3
if timeout 10 kcat -b "$BOOTSTRAP" -L -m 2 >/dev/null 2>&1; then fail "kcat got metadata from a cluster that is down"; fi
ctl up 1; ctl up 2; ctl up 3
timeout 20 kcat -b "$BOOTSTRAP" -t t -C -e -q -p 0 -o beginning | grep -q '"id":1' || fail "no data after up"
# rtt slows requests down
ctl rtt 1 1500; ctl rtt 2 1500; ctl rtt 3 1500
start=$(date +%s%N)
timeout 20 kcat -b "$BOOTSTRAP" -L >/dev/null 2>&1 || fail "metadata with rtt"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
ctl rtt 1 0; ctl rtt 2 0; ctl rtt 3 0
[ $ms -ge 1400 ] || fail "rtt 1500 ms: a metadata request took only $ms ms"
faults_broker_down
grep -q 'control: down 1 -> ok' "$TEST_TMP/broker.err" || fail "commands are not logged"

# --control - : the same language on stdin, replies on stdout after the bootstrap line
mkfifo in
"$SHAPE_BIN" broker --control - --brokers 2 <in >std.out 2>std.err &
BROKER_PID=$!
exec 4>in
printf 'ping\ndown 2\nup 2\ndown 9\nwhat\n' >&4
for _ in $(seq 1 50); do [ "$(wc -l <std.out)" -ge 6 ] && break; sleep 0.1; done
exec 4>&-   # stdin at its end: the broker keeps running until a signal
sleep 0.3
kill -0 $BROKER_PID || fail "the broker stopped when stdin ended"
kill -TERM $BROKER_PID; rc=0; wait $BROKER_PID || rc=$?; BROKER_PID=
[ $rc -eq 0 ] || fail "stdin mode: exit $rc on SIGTERM"
tail -n +2 std.out | tr '\n' '|' | grep -Eq '^ok\|ok\|ok\|error: down wants a broker id from 1 to 2.*\|error: unknown command.*\|$' ||
  fail "stdin replies: $(cat std.out)"

# a path that is not a socket is never replaced
echo keep >notasocket
rc=0; "$SHAPE_BIN" broker --control notasocket >/dev/null 2>err || rc=$?
[ $rc -eq 2 ] && grep -q 'exists and is not a socket' err && [ "$(cat notasocket)" = keep ] || fail "non-socket path: rc $rc $(cat err)"
report "broker control: bad commands, 20 idle connections, stdin end" "test_faults_control.sh" 0 0 0 "every line answered; SIGTERM clean; socket removed"
echo "ok: shape broker --control: command language, socket and stdin"
