# `shape broker` says when its partitions drop messages (issue 24 item 14).
#
# Why: librdkafka's mock keeps only about the last 5 MB of each partition and
# drops older messages silently; a reader then gets fewer than were sent.
# How: 100,000 messages of ~100 bytes (~10 MB) into one partition: the broker
# prints one warning line for the partition, whose count plus what a read
# gets back is exactly 100,000; a second partition, given 100 messages, gets
# no line. Then `shape emit retail` (21,750 events, ~7 MB) into a 1-partition
# topic warns once, before sending, that the stream cannot fit (what to do
# with it), and into an 8-partition topic does not.
source "$(dirname "$0")/lib.sh"
skip_on_real_kafka "tests shape broker's own drop warnings (a real Kafka keeps what its retention says)"
source "$(dirname "$0")/faults_lib.sh"

# said up front: in --help (and README.md's "shape broker" section)
"$SHAPE_BIN" broker --help | tr '\n' ' ' | grep -q 'keeps only about its last 5 MB: older messages are DROPPED' ||
  fail "shape broker --help does not say that partitions keep only ~5 MB"
grep -q 'keeps only about the last 5 MB' "$SHAPE_SOURCE_DIR/README.md" || fail "README.md does not say that shape broker's partitions keep only ~5 MB"
kafka_up d:2 r1:1 r8:8 early:1 brief:1
python3 -c "
for i in range(100000): print('{\"i\":%d,\"pad\":\"%s\"}' % (i, 'x' * 80))" | kcat -b "$BOOTSTRAP" -t d -P -p 0
seq 1 100 | sed 's/.*/{"i":&}/' | kcat -b "$BOOTSTRAP" -t d -P -p 1
# The line comes once the partition has been quiet for 2 s (polls every 0.5 s).
for _ in $(seq 1 150); do grep -q 'topic d partition 0 dropped' "$TEST_TMP/broker.err" && break; sleep 0.1; done
line=$(grep 'topic d partition 0 dropped' "$TEST_TMP/broker.err") || fail "no drop warning within 15 s: $(cat "$TEST_TMP/broker.err")"
echo "$line" | grep -q 'keeps only about the last 5 MB of each partition' || fail "the warning does not say why: $line"
dropped=$(echo "$line" | sed -E 's/.* dropped ([0-9]+) messages.*/\1/')
kept=$("$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/d" --partitions 0 --format null 2>&1 | sed -nE 's/.*: ([0-9]+) messages,.*/\1/p')
[ $((dropped + kept)) -eq 100000 ] || fail "dropped $dropped + read back $kept is not the 100000 sent"
[ "$dropped" -gt 0 ] && [ "$kept" -gt 0 ] || fail "dropped $dropped, kept $kept"
! grep -q 'topic d partition 1 ' "$TEST_TMP/broker.err" || fail "partition 1 (100 messages) reported a drop"

"$SHAPE_BIN" emit retail --seed 3 --sink "kafka://$BOOTSTRAP/r1" >/dev/null 2>"$TEST_TMP/emit1.err" || fail "emit r1: $(cat "$TEST_TMP/emit1.err")"
# said before sending, with what to do (issue 24 item 14), and once: not again when the partition
# passes the window
warn1="warning: kafka: this run sends about 7.[0-9] MB to topic 'r1', 7.[0-9] MB all into its one partition, but the embedded broker"
[ "$(grep -c "$warn1" "$TEST_TMP/emit1.err")" -eq 1 ] && [ "$(wc -l <"$TEST_TMP/emit1.err")" -eq 1 ] ||
    fail "emit into a 1-partition topic gave no single warning before sending: $(cat "$TEST_TMP/emit1.err")"
grep -q "use a real Kafka, a topic of 2 or more partitions (shape broker --topic r1:2), or fewer events (--max-events; about 1[4-8][0-9][0-9][0-9] fit)" \
    "$TEST_TMP/emit1.err" || fail "the warning does not say what to do: $(cat "$TEST_TMP/emit1.err")"
# before sending: a paced run into another 1-partition topic warns while the topic is still far
# from 5 MB (it used to warn only once ~16,000 events had been acknowledged)
"$SHAPE_BIN" emit retail --seed 3 --realtime --rate 500 --sink "kafka://$BOOTSTRAP/early" --no-progress \
    >/dev/null 2>"$TEST_TMP/early.err" &
early=$!
for _ in $(seq 1 400); do grep -q "this run sends about" "$TEST_TMP/early.err" && break; sleep 0.05; done
sent=$(kcat -b "$BOOTSTRAP" -t early -C -e -q -f '%k\n' 2>/dev/null | wc -l)
kill -INT $early; wait $early || fail "the paced run did not stop on SIGINT with exit 0: $(cat "$TEST_TMP/early.err")"
grep -q "this run sends about 7.[0-9] MB to topic 'early'" "$TEST_TMP/early.err" ||
    fail "no warning within 20 s of starting a paced run: $(cat "$TEST_TMP/early.err")"
[ "$sent" -lt 10000 ] || fail "the warning came only after $sent events were in the topic"
"$SHAPE_BIN" emit retail --seed 3 --sink "kafka://$BOOTSTRAP/r8" >/dev/null 2>"$TEST_TMP/emit8.err" || fail "emit r8: $(cat "$TEST_TMP/emit8.err")"
! grep -q 'warning' "$TEST_TMP/emit8.err" || fail "emit into 8 partitions warned: $(cat "$TEST_TMP/emit8.err")"
# a paced run whose --duration sends far less than the whole preset (~1 s of
# 2,000/s, ~0.6 MB) fits one partition: no warning
"$SHAPE_BIN" emit retail --seed 3 --realtime --rate 2000 --duration 1 --sink "kafka://$BOOTSTRAP/brief" --no-progress \
    >/dev/null 2>"$TEST_TMP/brief.err" || fail "emit brief: $(cat "$TEST_TMP/brief.err")"
! grep -q 'warning' "$TEST_TMP/brief.err" || fail "a 1 s paced run warned of the whole preset: $(cat "$TEST_TMP/brief.err")"
for _ in $(seq 1 150); do grep -q 'topic r1 partition 0 dropped' "$TEST_TMP/broker.err" && break; sleep 0.1; done
grep -q 'topic r1 partition 0 dropped' "$TEST_TMP/broker.err" || fail "the broker did not report r1's drop"
! grep -q 'topic r8 ' "$TEST_TMP/broker.err" || fail "the broker reported a drop on r8"
report "shape broker: a partition past the mock's ~5 MB" "100,000 messages of ~100 bytes into one partition (kcat); emit retail (21,750 events) into 1 and into 8 partitions" \
    "$dropped (announced)" 0 0 "one warning line: $dropped dropped + $kept read back = 100000; emit warned once before sending on 1 partition, not on 8"
echo "ok: partition 0 of d dropped $dropped of 100000 (read back $kept), announced once; emit warned on 1 partition, not on 8"
