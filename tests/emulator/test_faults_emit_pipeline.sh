#!/usr/bin/env bash
# test_faults_emit_pipeline.sh — a delivery failure while several sends of
# `shape emit --sink kafka://` are in flight: the checkpoint never runs ahead
# of what the broker acknowledged in order.
#
# Why: issue 19 — the runtime pipelines its sends into a Kafka destination
# (the next group is produced while the earlier ones are acknowledged,
# plugin ABI 6 submit/complete). Acknowledgements of later groups may then
# arrive before an earlier group fails; a checkpoint that took the furthest
# acknowledgement, or counted the groups still in flight when the run
# stopped, would skip the failed events on resume (data lost).
# How: the broker answers slowly (`ctl rtt 1 50`; with --queue-batches 4 a
# merged send is one 250-event batch, four in flight) and, pushed before
# the run, lets 8 produce requests through (`ctl fail Produce NO_ERROR 8`)
# and answers the 9th MSG_SIZE_TOO_LARGE, which the emitter reports REFUSED
# (counting requests, not time: where the failure lands does not depend on
# the machine's speed). Without --dead-letter the run stops with exit 2
# naming the first refused event. Then: the checkpoint is at or before
# that event's stream position, every event before the checkpoint is on
# the topic, and events after the failed request were delivered too (sends
# were in flight behind it: the check would show nothing otherwise). A
# rerun of the same command without the fault completes, and the union on
# the topic is every key of the stream, none invented, repeats only of keys
# at or past the checkpoint.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faults_lib.sh"
cd "$TEST_TMP"
export SHAPE_CONFIRM_REMOTE=0
N=12000
cmd=("$SHAPE_BIN" emit retail --scale medium --max-events $N --batch-events 250 --queue-batches 4 --checkpoint pipe.ck
     --checkpoint-every 250 --no-progress --json)
"$SHAPE_BIN" emit retail --scale medium --max-events $N --no-progress 2>/dev/null |
  python3 -c 'import json,sys; [print("%s/%d" % (d["_shape_table"], d["_shape_seq"])) for d in map(json.loads, sys.stdin)]' \
  >order.keys
[ "$(wc -l <order.keys)" -eq $N ] || fail "console run gave $(wc -l <order.keys) keys, not $N"
faults_broker_up --topic pipe:3
ctl rtt 1 50
ctl fail Produce NO_ERROR 8
ctl fail Produce MSG_SIZE_TOO_LARGE 1
ck_offset() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["offset"])' pipe.ck 2>/dev/null || echo 0; }
rc=0; "${cmd[@]}" --sink "kafka://$BOOTSTRAP/pipe" >run1.json 2>run1.err || rc=$?
ctl rtt 1 0
ctl clear
[ $rc -eq 2 ] || fail "the run with a refused request exited $rc (expected 2): $(tail -2 run1.err)"
first=$(sed -n 's/^shape: error: the destination rejected [0-9]* events\{0,1\} (first \([^:]*\): MSG_SIZE_TOO_LARGE).*/\1/p' run1.err)
[ -n "$first" ] || fail "no 'rejected ... (first KEY: MSG_SIZE_TOO_LARGE)' error: $(tail -2 run1.err)"
kept=$(ck_offset)
kcat -b "$BOOTSTRAP" -t pipe -C -e -q -f '%k\n' >keys.1 2>kcat.err || fail "kcat: $(cat kcat.err)"
read -r at before_missing after <<<"$(python3 - "$first" "$kept" <<'PY'
import sys
order = open("order.keys").read().split()
pos = {k: i for i, k in enumerate(order)}
first, kept = sys.argv[1], int(sys.argv[2])
seen = set(open("keys.1").read().split())
at = pos.get(first, -1)
missing = sum(1 for k in order[:kept] if k not in seen)
after = sum(1 for k in order[at + 1:] if k in seen) if at >= 0 else 0
print(at, missing, after)
PY
)"
echo "refused from $first (stream position $at): checkpoint at $kept, $before_missing keys before it missing," \
  "$after keys after the refused one on the topic"
[ "$at" -ge 0 ] || fail "the refused key $first is not in the stream"
[ "$kept" -le "$at" ] || fail "checkpoint $kept runs ahead of the refused event at position $at ($first)"
[ "$before_missing" -eq 0 ] || fail "$before_missing keys before checkpoint $kept are not on the topic"
[ "$after" -gt 0 ] || fail "nothing after the refused event was delivered: no send was in flight behind it"
rc=0; "${cmd[@]}" --sink "kafka://$BOOTSTRAP/pipe" >run2.json 2>run2.err || rc=$?
[ $rc -eq 0 ] || fail "the rerun exited $rc: $(tail -2 run2.err)"
kcat -b "$BOOTSTRAP" -t pipe -C -e -q -f '%k\n' >keys.2 2>kcat.err || fail "kcat: $(cat kcat.err)"
read -r lost invented bad dups <<<"$(python3 - "$kept" <<'PY'
import sys, collections
order = open("order.keys").read().split()
pos = {k: i for i, k in enumerate(order)}
kept = int(sys.argv[1])
got = collections.Counter(open("keys.2").read().split())
lost = sum(1 for k in order if k not in got)
invented = sum(1 for k in got if k not in pos)
bad = sum(1 for k, c in got.items() if c > 1 and pos.get(k, 0) < kept)
print(lost, invented, bad, sum(c - 1 for c in got.values()))
PY
)"
echo "rerun: lost $lost, invented $invented, duplicates $dups ($bad of keys before the checkpoint)"
report "emit: refused produce request while sends are in flight, resumed" \
  "ctl 'rtt 1 50'; ctl 'fail Produce NO_ERROR 8'; ctl 'fail Produce MSG_SIZE_TOO_LARGE 1'; rerun" "$lost" "$dups" "2 then $rc" \
  "checkpoint $kept <= refused position $at; $after later keys already delivered"
[ "$lost" -eq 0 ] || fail "$lost keys lost"
[ "$invented" -eq 0 ] || fail "$invented keys invented"
[ "$bad" -eq 0 ] || fail "$bad keys before the checkpoint delivered twice"
faults_broker_down
echo "ok: a refused request mid-pipeline stops the run with its checkpoint behind it, and the rerun completes"
