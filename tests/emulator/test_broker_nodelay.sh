# `shape broker` sets TCP_NODELAY on every client connection, as a Kafka
# broker does (src/cli/tcp_nodelay.c): without it a response written in
# pieces waits up to 40 ms for the client's delayed ACK (seen as ~45 ms
# stalls at the end of produce sends and in paced lateness).
# How: the broker runs under strace, a client (kcat -L) connects, and every
# TCP connection the broker accepted must have had TCP_NODELAY set on it.
source "$(dirname "$0")/lib.sh"
skip_on_real_kafka "tests shape broker itself (TCP_NODELAY on its sockets)"
command -v strace >/dev/null || fail "strace is not installed (scripts/install-deps installs it)"
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"
strace -f -qq -e trace=accept,accept4,setsockopt -o "$TEST_TMP/trace" \
  "$SHAPE_BIN" broker --topic nd:2 --bootstrap-file "$TEST_TMP/bootstrap" >"$TEST_TMP/broker.out" 2>"$TEST_TMP/broker.err" &
BROKER_PID=$!
for _ in $(seq 1 100); do [ -s "$TEST_TMP/bootstrap" ] && break; sleep 0.1; done
[ -s "$TEST_TMP/bootstrap" ] || fail "shape broker did not start under strace: $(cat "$TEST_TMP/broker.err")"
kcat -b "$(cat "$TEST_TMP/bootstrap")" -L -t nd | grep -q 'topic "nd" with 2 partitions' || fail "kcat -L did not see the topic"
# Stop the broker itself (strace's child); strace ends with it.
broker=$(pgrep -P "$BROKER_PID" -x shape || true)
[ -n "$broker" ] || fail "no shape broker process under strace"
kill -TERM "$broker"
timeout 20 tail --pid="$BROKER_PID" -f /dev/null || fail "strace did not end after the broker stopped"
wait "$BROKER_PID" 2>/dev/null || true; BROKER_PID=
python3 - "$TEST_TMP/trace" <<'PY' || fail "a client connection of shape broker has no TCP_NODELAY: $(grep -E 'accept|NODELAY' "$TEST_TMP/trace" | head -5)"
import re, sys
accepted, nodelay = set(), set()
for line in open(sys.argv[1]):
    m = re.search(r'\baccept4?\(\d+, \{sa_family=AF_INET6?,.*\) = (\d+)$', line)
    if m: accepted.add(int(m.group(1)))
    m = re.search(r'setsockopt\((\d+), SOL_TCP, TCP_NODELAY, \[1\], 4\) = 0', line)
    if m and int(m.group(1)) in accepted: nodelay.add(int(m.group(1)))
assert accepted, "no TCP connection was accepted"
assert nodelay == accepted, (sorted(accepted), sorted(nodelay))
print("ok: %d connections accepted, each with TCP_NODELAY" % len(accepted))
PY
