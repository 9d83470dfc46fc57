#!/usr/bin/env bash
# test_kafka_gap.sh — records the broker removes under a running bounded read
# (issue 25: shape must report the gap, not lose its place).
#
# Why: a slow reader's next offset can be deleted before it is fetched
# (retention, DeleteRecords). librdkafka's default then jumps to the end of
# the partition and the read exited 0 with the rows before the gap only and
# nothing said. What shape must do: go on at the first record left (the new
# low watermark), count the offsets skipped (a warning naming topic,
# partition and offsets, and "N offsets lost" in the summary), keep its
# place (the checkpoint past the gap, so a rerun reports nothing twice); with
# --on-error raise stop there with exit 2, one error line, the checkpoint
# before the gap.
# How: stream-read with tiny fetches writes a checkpoint after its first
# batch and is stopped (SIGSTOP); the partition's first 1000 offsets are then
# removed and the read continued (SIGCONT). On a real Apache Kafka by
# retention (retention.bytes=1: the segment rolled by segment.ms is deleted
# within a second); on shape broker by its ~5 MB per-partition limit (8 MB
# more produced drops the oldest). Whatever the broker, the rows read plus
# the offsets reported lost are the 1000 records that were there.
source "$(dirname "$0")/lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps installs it)"
cd "$TEST_TMP"
export SHAPE_CONFIRM_REMOTE=0
kafka_up
small='config={"fetch.max.bytes":"1024","message.max.bytes":"1024","max.partition.fetch.bytes":"256","queued.max.messages.kbytes":"1"}'
pad=$(head -c 1000 /dev/zero | tr '\0' x)
low_of() { kcat -b "$BOOTSTRAP" -Q -t "$1:0:-2" 2>/dev/null | awk '{print $NF}'; }

# gap_run NAME [READ OPTIONS...]: a topic of 1000 records read until its
# first checkpoint, then the first 1000 offsets removed, then the read goes on.
gap_run() {
  local name=$1 topic p low=0
  shift
  topic=$(unique_topic "$name")
  if on_real_kafka; then
    "$SHAPE_KAFKA_TOPIC_TOOL" "$BOOTSTRAP" "$topic" 1 retention.bytes=1 segment.ms=1000 || fail "create $topic"
  fi  # (shape broker creates it on the first produce)
  # One record a produce request, so a fetch of 256 bytes brings a few.
  seq 0 999 | sed 's/.*/{"id":&}/' | kcat -b "$BOOTSTRAP" -t "$topic" -P -p 0 -X batch.num.messages=1
  "$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$topic" --batch-size 10 --checkpoint "$name.ck" --option "$small" "$@" \
    >"$name.rows" 2>"$name.err" &
  p=$!
  # The read runs in slices of ~10 ms, stopped while the checkpoint is looked for: a whole
  # read of the 1000 records takes a few tens of ms, so polling while it ran freely could
  # miss its first checkpoint and find it finished (seen once on an idle CI machine).
  for _ in $(seq 1 3000); do
    kill -STOP $p 2>/dev/null || break
    [ -s "$name.ck" ] && break
    kill -CONT $p
    sleep 0.01
  done
  [ -s "$name.ck" ] && kill -0 $p 2>/dev/null ||
    fail "$name: the read ended before its first checkpoint: $(cat "$name.err")"
  if on_real_kafka; then
    sleep 1.5  # past segment.ms: the next record rolls the segment holding 0-999, which retention deletes
    seq 1000 1099 | sed 's/.*/{"id":&}/' | kcat -b "$BOOTSTRAP" -t "$topic" -P -p 0
  else
    seq 1000 8999 | sed "s/.*/{\"id\":&,\"pad\":\"$pad\"}/" | kcat -b "$BOOTSTRAP" -t "$topic" -P -p 0
  fi
  for _ in $(seq 1 300); do
    low=$(low_of "$topic")
    [ "${low:-0}" -ge 1000 ] && break
    sleep 0.1
  done
  [ "${low:-0}" -ge 1000 ] || { kill -KILL $p; fail "$name: the broker kept offsets below 1000 (low watermark '$low')"; }
  kill -CONT $p
  rc=0; wait $p || rc=$?
  GAP_TOPIC=$topic
}
ids() { sed -n 's/^{"id":\([0-9]*\).*/\1/p'; }

# --- skip (the default): go on at the first record left, report the gap ------------------
gap_run skip
topic=$GAP_TOPIC
[ $rc -eq 0 ] || fail "the read across the gap: exit $rc, $(cat skip.err)"
rows=$(wc -l <skip.rows)
[ "$(ids <skip.rows | tr '\n' ' ')" = "$(seq 0 $((rows - 1)) | tr '\n' ' ')" ] || fail "rows before the gap: $(ids <skip.rows | head -c 200)"
line=$(grep "^shape: warning: kafka: $topic partition 0: offsets $rows to 999 are no longer on the broker" skip.err) ||
  fail "the gap is not reported: $(cat skip.err)"
[ "$(grep -c '^shape: warning: kafka' skip.err)" -eq 1 ] || fail "the gap is reported more than once: $(cat skip.err)"
lost=$((1000 - rows))
echo "$line" | grep -q "$lost records skipped, continuing at 1000" || fail "gap line: $line"
grep -q "^shape stream-read: $rows messages, $rows rows, 0 undecodable, 0 rejected, $lost offsets lost" skip.err ||
  fail "the summary does not count the offsets lost: $(tail -1 skip.err)"
grep -q '"offset":{"0":1000' skip.ck || fail "the checkpoint is not past the gap: $(cat skip.ck)"
echo "skip: $rows rows, then: $line"
# The rerun from the checkpoint reads what is left after the gap; what the
# broker removed since the first read's end (the mock keeps ~5 MB) is a new
# gap, reported once.
"$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$topic" --checkpoint skip.ck >rerun.rows 2>rerun.err || fail "rerun: $(cat rerun.err)"
low=$(low_of "$topic")
if [ "$low" -gt 1000 ]; then
  grep -q "offsets 1000 to $((low - 1)) are no longer on the broker" rerun.err || fail "rerun: $(cat rerun.err)"
else
  ! grep -q "^shape: warning" rerun.err || fail "the rerun reported the gap again: $(cat rerun.err)"
fi
[ "$(ids <rerun.rows | head -1)" = "$low" ] || fail "the rerun did not start at the first record left ($low): $(head -1 rerun.rows)"
echo "rerun: $(wc -l <rerun.rows) rows from offset $low"

# --- a checkpoint below the low watermark: the same gap, at open ------------------------
printf '{"format":"shape-stream-read-checkpoint-v1","version":1,"uri":"kafka://%s/%s","offset":{"0":5}}\n' \
  "$BOOTSTRAP" "$topic" >old.ck
"$SHAPE_BIN" stream-read "kafka://$BOOTSTRAP/$topic" --checkpoint old.ck --max-events 1 >/dev/null 2>old.err ||
  fail "resume from an old checkpoint: $(cat old.err)"
grep -q "offsets 5 to $((low - 1)) are no longer on the broker (retention or deleted records); $((low - 5)) records skipped, resuming at $low" old.err ||
  fail "a resume below the low watermark: $(cat old.err)"

# --- --on-error raise: stop at the gap, exit 2, the checkpoint before it -----------------
gap_run raise --on-error raise
topic=$GAP_TOPIC
rows=$(wc -l <raise.rows)
[ $rc -eq 2 ] || fail "--on-error raise across a gap: exit $rc, $(cat raise.err)"
grep -q "^shape: error: kafka: $topic partition 0: offsets $rows to 999 were removed by the broker (retention or deleted records) before they were read: $((1000 - rows)) records lost" raise.err ||
  fail "--on-error raise: $(cat raise.err)"
[ "$(grep -c '^shape: error' raise.err)" -eq 1 ] || fail "--on-error raise: more than one error line: $(cat raise.err)"
grep -q "\"offset\":{\"0\":$rows[,}]" raise.ck || fail "--on-error raise: checkpoint $(cat raise.ck), not at the $rows rows read"
echo "raise: exit 2 after $rows rows: $(grep '^shape: error' raise.err)"
echo "ok: records removed under a read are reported (skip) or stop it (raise), and the read keeps its place"
