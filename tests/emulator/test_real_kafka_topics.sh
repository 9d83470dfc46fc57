#!/usr/bin/env bash
# test_real_kafka_topics.sh — what only a real Apache Kafka shows: a topic
# that does not exist (no auto-creation), topics made through the Admin API,
# aborted and open transactions (control records, gaps in offsets), retention that
# really deletes old segments and compaction.
#
# Why: issue 25 — shape broker creates unknown topics on first use, keeps
# ~5 MB a partition and has no real transaction log, so none of these can
# show against it. Each case says what shape must do:
#   - missing topic: stream-read, stream-profile and emit exit 2 with one
#     `shape: error:` line naming the topic, and the topic is not created
#     (emit: at open, from the topic's metadata, before any event is made);
#   - Admin API (tests/emulator/kafka_topic): 5 partitions as asked, every one
#     read, creating it again is no error;
#   - transactions (kafka_txn_produce): commit 50, abort 30, commit 20, then an
#     abort last: reads give the 70 committed rows, ids 0-49 and 80-99, and
#     the checkpoint sits at the high watermark (markers and aborted records
#     counted in offsets, never as rows); a resumed read gets only what was
#     committed after it; with a transaction still open a bounded read ends
#     at the last stable offset (what read_committed may see), and the resume
#     after the commit reads the rest;
#   - retention (retention.bytes=1, segments rolled by segment.ms): a
#     checkpoint taken before the old segment is deleted resumes at the first
#     record left, with a warning that names the skipped offsets, and reads
#     the rest exactly once;
#   - compaction (cleanup.policy=compact, cleaned within seconds): a read in
#     two runs (checkpoint after 10 rows) gives exactly kcat's (offset, id)
#     pairs, the latest value of every key, and ends at the high watermark.
# How: against the tier's node (SHAPE_TEST_KAFKA, topics unique to the run);
# skipped on shape broker.
source "$(dirname "$0")/lib.sh"
skip_on_mock "needs a real Kafka's topic handling (no auto-creation, transactions, retention)"
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"
cd "$TEST_TMP"
export SHAPE_CONFIRM_REMOTE=0
admin=$(unique_topic admin); txn=$(unique_topic txn); ret=$(unique_topic retention); missing=$(unique_topic missing)
opentx=$(unique_topic opentx); comp=$(unique_topic compacted)
kafka_up "$admin:5" "$txn:1"
ids() { sed -n 's/^{"id":\([0-9]*\).*/\1/p'; }
topic_exists() { kcat -b "$BOOTSTRAP" -L -t "$1" 2>/dev/null | grep -q "topic \"$1\" with [1-9]"; }

# --- a topic that does not exist -------------------------------------------------------
one_error() {  # NAME RC: exit 2, nothing on stdout, one error line naming the topic
  [ "$2" -eq 2 ] && [ ! -s "$1.out" ] && [ "$(wc -l <"$1.err")" -eq 1 ] &&
    grep -q "^shape: error: .*'$missing'" "$1.err" || fail "$1 on a missing topic: exit $2, $(head -c 300 "$1.err")"
  echo "missing topic, $1: exit $2: $(cat "$1.err")"
}
rc=0; "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$missing" >read.out 2>read.err || rc=$?
one_error read $rc
rc=0; "$SHAPE_BIN" stream-profile "kafka://$BOOTSTRAP/$missing" -o m.json >profile.out 2>profile.err || rc=$?
one_error profile $rc
[ ! -e m.json ] || fail "stream-profile wrote a profile of a missing topic"
t0=$SECONDS
rc=0; "$SHAPE_BIN" emit retail --max-events 100 --sink "kafka://$BOOTSTRAP/$missing" --no-progress >emit.out 2>emit.err || rc=$?
one_error emit $rc
# Refused at open from the topic's metadata (not after the delivery retries
# that once took ~31 s: "delivery failed after 3 retries ... _UNKNOWN_TOPIC")
grep -q "^shape: error: kafka: topic '$missing' does not exist" emit.err || fail "emit on a missing topic: $(cat emit.err)"
echo "missing topic, emit: refused at open after $((SECONDS - t0)) s"
topic_exists "$missing" && fail "a read or emit created the missing topic $missing"

# --- topics made with the Admin API ------------------------------------------------------
n=$(kcat -b "$BOOTSTRAP" -L -t "$admin" | grep -c "partition [0-9]*, leader")
[ "$n" -eq 5 ] || fail "Admin API topic $admin has $n partitions, not 5"
"$SHAPE_KAFKA_TOPIC_TOOL" "$BOOTSTRAP" "$admin" 5 || fail "creating an existing topic again is an error"
"$SHAPE_BIN" emit retail --table customer --max-events 1000 --sink "kafka://$BOOTSTRAP/$admin" --no-progress \
  >/dev/null 2>emit.err || fail "emit into the Admin API topic: $(cat emit.err)"
"$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$admin" --with-offsets >admin.rows 2>/dev/null || fail "read $admin"
parts=$(sed -n 's/.*"_shape_partition":"\([0-9]*\)".*/\1/p' admin.rows | sort -u | tr '\n' ' ')
[ "$(wc -l <admin.rows)" -eq 1000 ] && [ "$parts" = "0 1 2 3 4 " ] ||
  fail "Admin API topic: $(wc -l <admin.rows) rows from partitions '$parts'"
echo "Admin API topic: 5 partitions, 1000 rows emitted and read from all of them"

# --- aborted transactions ----------------------------------------------------------------
tx() { "$SHAPE_KAFKA_TXN_TOOL" "$BOOTSTRAP" "$txn" 0 "$@" || fail "transactional produce $*"; }
tx 50 commit 0
tx 30 abort 50
tx 20 commit 80
tx 10 abort 100
wait_stable "$txn" 0 114  # 110 records, 4 markers
t0=$(date +%s%N)
timeout 30 "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$txn" --checkpoint tx.ck >tx.rows 2>tx.err || fail "read $txn: $(cat tx.err)"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
want=$( (seq 0 49; seq 80 99) | tr '\n' ' ')
[ "$(ids <tx.rows | sort -n | tr '\n' ' ')" = "$want" ] || fail "transactions: rows $(ids <tx.rows | tr '\n' ' ')"
grep -q '"offset":{"0":114}' tx.ck || fail "transactions: checkpoint $(cat tx.ck)"
timeout 30 "$SHAPE_BIN" stream-profile "kafka://$BOOTSTRAP/$txn" -o tx.json >/dev/null 2>tx.err || fail "profile $txn: $(cat tx.err)"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["tables"]["stream"]["rows"]; assert r == 70, r' tx.json ||
  fail "transactions: the profile does not count 70 rows"
tx 5 commit 200
wait_stable "$txn" 0 120
timeout 30 "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$txn" --checkpoint tx.ck >tx2.rows 2>tx.err || fail "resume $txn: $(cat tx.err)"
[ "$(ids <tx2.rows | tr '\n' ' ')" = "200 201 202 203 204 " ] || fail "transactions: resumed rows $(ids <tx2.rows | tr '\n' ' ')"
grep -q '"offset":{"0":120}' tx.ck || fail "transactions: checkpoint after the resume $(cat tx.ck)"
echo "transactions: 70 committed of 110 records (offsets to 114, an abort last) read in $ms ms, profiled as 70 rows;" \
  "the resumed read got the 5 committed after it, checkpoint 120"

# --- a transaction still open: a bounded read ends at the last stable offset --------------
kafka_up "$opentx:1"
seq 0 9 | sed 's/.*/{"id":&}/' | kcat -b "$BOOTSTRAP" -t "$opentx" -P -p 0
SHAPE_TXN_HOLD_MS=8000 "$SHAPE_KAFKA_TXN_TOOL" "$BOOTSTRAP" "$opentx" 0 30 commit 10 >hold.out 2>hold.err &
hold=$!
for _ in $(seq 1 100); do [ -s hold.out ] && break; sleep 0.1; done
[ -s hold.out ] || fail "the held transaction did not open: $(cat hold.err)"
timeout 30 "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$opentx" --checkpoint open.ck >open1.rows 2>open.err ||
  fail "read with a transaction open: $(cat open.err)"
kill -0 $hold 2>/dev/null || fail "the transaction was committed before the read ended (test not effective)"
wait $hold || fail "the held transaction failed: $(cat hold.err)"
wait_stable "$opentx" 0 41
timeout 30 "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$opentx" --checkpoint open.ck >open2.rows 2>open.err ||
  fail "resume after the commit: $(cat open.err)"
[ "$(ids <open1.rows | tr '\n' ' ')" = "$(seq 0 9 | tr '\n' ' ')" ] &&
  [ "$(ids <open2.rows | tr '\n' ' ')" = "$(seq 10 39 | tr '\n' ' ')" ] && grep -q '"offset":{"0":41}' open.ck ||
  fail "open transaction: rows '$(ids <open1.rows | tr '\n' ' ')' then '$(ids <open2.rows | tr '\n' ' ')', checkpoint $(cat open.ck)"
echo "open transaction: the read ended at the last stable offset (10 rows), the resume after the commit read its 30"

# --- retention that deletes a segment ----------------------------------------------------
"$SHAPE_KAFKA_TOPIC_TOOL" "$BOOTSTRAP" "$ret" 1 retention.bytes=1 segment.ms=1000 || fail "create $ret"
seq 0 999 | sed 's/.*/{"id":&}/' | kcat -b "$BOOTSTRAP" -t "$ret" -P -p 0
"$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$ret" --max-events 300 --checkpoint ret.ck >/dev/null 2>ret.err ||
  fail "first read of $ret: $(cat ret.err)"
grep -q '"offset":{"0":300}' ret.ck || fail "retention: first checkpoint $(cat ret.ck)"
sleep 1.5  # past segment.ms: the next record rolls the segment holding 0-999
seq 1000 1999 | sed 's/.*/{"id":&}/' | kcat -b "$BOOTSTRAP" -t "$ret" -P -p 0
low=0
for _ in $(seq 1 300); do
  low=$(kcat -b "$BOOTSTRAP" -Q -t "$ret:0:-2" 2>/dev/null | awk '{print $NF}')
  [ "${low:-0}" -gt 0 ] && break
  sleep 0.1
done
[ "${low:-0}" -eq 1000 ] || fail "retention did not delete the first segment in 30 s (low watermark '$low')"
"$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$ret" --checkpoint ret.ck >ret.rows 2>ret.err || fail "resume $ret: $(cat ret.err)"
[ "$(ids <ret.rows | tr '\n' ' ')" = "$(seq 1000 1999 | tr '\n' ' ')" ] ||
  fail "retention: the resumed read is not exactly ids 1000-1999 ($(wc -l <ret.rows) rows, first $(head -1 ret.rows))"
grep -q '"offset":{"0":2000}' ret.ck || fail "retention: final checkpoint $(cat ret.ck)"
grep -q "^shape: warning: kafka: $ret partition 0: offsets 300 to 999 are no longer on the broker" ret.err ||
  fail "retention: the gap is not reported: $(cat ret.err)"
echo "retention: $(grep '^shape: warning' ret.err)"
# --- a compacted topic: offsets with gaps, the latest value of every key ------------------
"$SHAPE_KAFKA_TOPIC_TOOL" "$BOOTSTRAP" "$comp" 1 cleanup.policy=compact segment.ms=500 min.cleanable.dirty.ratio=0.01 \
  delete.retention.ms=0 min.compaction.lag.ms=0 || fail "create $comp"
for r in 0 1 2 3 4; do seq 0 99 | awk -v r=$r '{ printf "k%d:{\"id\":%d,\"round\":%d}\n", $1, $1, r }'; done |
  kcat -b "$BOOTSTRAP" -t "$comp" -P -p 0 -K: -X batch.num.messages=20
sleep 1  # past segment.ms: the next record rolls the segment, which the cleaner then compacts
echo 'k0:{"id":0,"round":5}' | kcat -b "$BOOTSTRAP" -t "$comp" -P -p 0 -K:
n=501
for _ in $(seq 1 120); do
  n=$(kcat -b "$BOOTSTRAP" -t "$comp" -C -e -q | wc -l)
  [ "$n" -lt 501 ] && break
  sleep 0.25
done
[ "$n" -lt 501 ] || fail "the cleaner did not compact $comp in 30 s"
kcat -b "$BOOTSTRAP" -t "$comp" -C -e -q -f '%o %s\n' | sed 's/,"round".*//; s/{"id"://' >comp.kcat
"$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$comp" --max-events 10 --checkpoint comp.ck --with-offsets >comp1.rows 2>comp.err ||
  fail "first read of $comp: $(cat comp.err)"
"$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$comp" --checkpoint comp.ck --with-offsets >comp2.rows 2>comp.err ||
  fail "resumed read of $comp: $(cat comp.err)"
cat comp1.rows comp2.rows | sed -n 's/^{"id":\([0-9]*\),.*"_shape_offset":\([0-9]*\)}$/\2 \1/p' >comp.shape
cmp -s comp.kcat comp.shape || fail "compacted topic: shape's (offset, id) pairs differ from kcat's ($(wc -l <comp.shape) vs $n)"
grep -q '"offset":{"0":501}' comp.ck || fail "compacted topic: final checkpoint $(cat comp.ck)"
python3 - <<'PY' || fail "compacted topic: not the latest value of every key"
import json
rows = [json.loads(l) for f in ("comp1.rows", "comp2.rows") for l in open(f)]
last = {}
for r in rows:
    last[r["id"]] = r["round"]
assert sorted(last) == list(range(100)), sorted(last)[:5]
assert all(v == 4 for k, v in last.items() if k) and last[0] == 5, last
PY
echo "compacted topic: $n of 501 records left after cleaning; read in two runs exactly as kcat sees them, offsets to 501"
echo "ok: missing topic refused, Admin API topics, transactions, retention and compaction on a real broker"
